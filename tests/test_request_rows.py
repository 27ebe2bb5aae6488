"""The batch-step calls over request objects (``_core.unsafe_fill_request_rows``,
``unsafe_store_request_rows``, ``feed_requests``): what they read from each request, and misuse
answered by an exception (the composed differential suite covers the masks they serve)."""

from __future__ import annotations

import array

import pytest
from toolwire import ToolwireError
from toolwire._core import MaskCache, StateKeyPlan, TokenTable, feed_requests, unsafe_fill_request_rows, unsafe_store_request_rows

WORDS = 2
TAG = '{"type": "triggered_tags", "triggers": ["<a>"], "tags": [{"type": "tag", "begin": "<a>", "content": {"type": "any_text"}, "end": "</a>"}], "at_least_one": false, "stop_after_first": false}'


class Req:
    """The one attribute each call reads (a terminated composed request has no keyers: its
    masker fills and skips it)."""

    def __init__(self, keyer) -> None:
        self._fill_key = self._accept_key = keyer


def buffer(rows: int) -> tuple[array.array, int]:
    buf = array.array("i", [0] * (rows * WORDS))
    return buf, buf.buffer_info()[0]


def keyer():
    k = StateKeyPlan.from_tag(b"0123456789abcdef", TAG).keyer()
    k.label(b"T")
    return k


def test_rows_are_stored_then_served_and_none_rows_allow_everything() -> None:
    cache, table = MaskCache(), TokenTable([b"x", b"y", b"<a>"], [1])
    buf, ptr = buffer(4)
    reqs = [Req(keyer()), None, None, Req(None)]
    missed, copies, unkeyed, hits = unsafe_fill_request_rows(cache, b"ns", reqs, ptr, 4, WORDS, [0, 1, 2, 3])
    assert (missed, copies, unkeyed, hits) == ([0], [], [3], 0)
    assert list(buf[2:6]) == [-1] * 4  # None: all allowed
    buf[0] = 0b1  # the missed row, as a matcher would fill it: token 0 only
    assert unsafe_store_request_rows(cache, b"ns", reqs, ptr, 4, WORDS, [0, 1, 2, 3], missed, copies) == 1
    buf[0] = 0
    assert unsafe_fill_request_rows(cache, b"ns", reqs[:1], ptr, 4, WORDS, [0]) == ([], [], [], 1)
    assert buf[0] == 1
    # Token 0 is allowed by the cached row: taken by the keyer; token 2 is not: left.
    left, allowed, taken = feed_requests(table, cache, b"ns", [reqs[0], None, reqs[3]], [0, 0, 0])
    assert (left, allowed, taken) == ([2], [], 1) and reqs[0]._accept_key.deferred_tokens == 1
    assert feed_requests(table, cache, b"ns", [Req(keyer())], [2]) == ([0], [], 0)


def test_tokens_the_cached_row_allows_but_no_keyer_takes_are_told_apart() -> None:
    """A stop token (never taken by a keyer alone) and, for a free-text-only keyer, a token that
    begins a tag are left to the caller either way; where the cached row allows them the caller
    is told (its matcher would accept them), and the keyer is left as it was."""

    def free_text_keyer():
        k = StateKeyPlan.from_tag(b"0123456789abcdef", TAG).keyer()
        k.label(b"F", free_text_only=True)
        return k

    table = TokenTable([b"x", b"y", b"<a>"], [1])
    buf, ptr = buffer(1)
    for row, tokens, expected in [
        (0b101, [1, 2, 0], ([0, 1], [1], 1)),  # <a> allowed, the stop token y not
        (0b011, [1, 2, 0], ([0, 1], [0], 1)),  # the stop token allowed, <a> not
    ]:
        cache, first = MaskCache(), Req(free_text_keyer())
        missed, copies, _, _ = unsafe_fill_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0])
        buf[0] = row
        assert unsafe_store_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0], missed, copies) == 1
        reqs = [Req(free_text_keyer()) for _ in tokens]
        assert feed_requests(table, cache, b"ns", reqs, tokens) == expected
        assert [r._accept_key.deferred_tokens for r in reqs] == [0, 0, 1]
        assert [r._accept_key.mode for r in reqs[:2]] == ["free", "free"]


def test_misuse_raises() -> None:
    cache, table = MaskCache(), TokenTable([b"x"], [])
    buf, ptr = buffer(1)
    with pytest.raises(ToolwireError):
        unsafe_fill_request_rows(cache, b"", [Req(keyer())], ptr, 1, WORDS, [1])  # row out of range
    with pytest.raises(ToolwireError):
        unsafe_fill_request_rows(cache, b"", [Req(keyer())], ptr, 1, WORDS, [])
    # A store checks every row before it stores any.
    with pytest.raises(ToolwireError, match="out of range"):
        unsafe_store_request_rows(cache, b"", [Req(keyer()), Req(keyer())], ptr, 1, WORDS, [0, 1], [0, 1], [])
    with pytest.raises(ToolwireError, match="one bitmask row per request"):
        unsafe_store_request_rows(cache, b"", [Req(keyer())], ptr, 1, WORDS, [0, 0], [0], [])
    assert len(cache) == 0
    with pytest.raises(ToolwireError):
        feed_requests(table, cache, b"", [Req(keyer())], [])
    with pytest.raises(AttributeError):
        feed_requests(table, cache, b"", [object()], [0])
    with pytest.raises(TypeError):
        feed_requests(table, cache, b"", [Req("not a keyer")], [0])
    shared = Req(keyer())
    with pytest.raises(RuntimeError):  # one keyer twice in a batch is not fed twice
        feed_requests(table, cache, b"", [shared, shared], [0, 0])
    buf, ptr = buffer(2)
    with pytest.raises(RuntimeError):  # nor served twice (a fill hands each keyer its row)
        unsafe_fill_request_rows(cache, b"", [shared, shared], ptr, 2, WORDS, [0, 1])


def test_a_suffix_near_stop_is_keyed_only_while_the_text_ends_with_a_start_of_stop() -> None:
    """``label(..., suffix_near_stop=True)``, as a composed call's piece keyer is labelled: the
    scaffold's key (the suffix) decides a piece's row only where tokens may run on past the call's
    end, so it is in the key only while the text ends with a non-empty proper prefix of the end."""

    def key(text: bytes, suffix_near_stop: bool) -> bytes:
        k = StateKeyPlan.from_tag(b"0123456789abcdef", TAG).keyer()
        if suffix_near_stop:
            k.label(b"P", b"SUFFIX", b"</a>", suffix_near_stop=True)
        else:
            k.label(b"P", stop_at=b"</a>")
        k.accept(0, text)
        return k.key()

    for text, near in [
        (b"<a>x", False),
        (b"<a>x<", True),
        (b"<a>x</", True),
        (b"<a>x</a", True),
        (b"<a>x</a>", False),  # the whole end: nothing runs on from a start of it
        (b"<a>x>", False),  # the end's last byte alone starts nothing
        (b"<a>x/a", False),
    ]:
        assert key(text, True) == key(text, False) + (b"SUFFIX" if near else b""), text


def test_a_token_that_completes_stop_at_is_left_wherever_the_stop_text_starts() -> None:
    """``label(stop_at=...)``: a token completing the stop text is left to the caller, whether the
    text started in earlier tokens or in this one; other tokens the cached row allows are taken."""
    table = TokenTable([b"a>", b"x", b"</a>", b"/a", b">", b"a"], [])
    buf, ptr = buffer(1)
    for fed, token, taken in [
        (b"<a>x</", 0, False),  # "</" + "a>"
        (b"<a>x", 2, False),  # the whole stop text in one token
        (b"<a>x<", 3, True),  # "</a" is not the stop text yet
        (b"<a>x</a", 4, False),
        (b"<a>x</a", 1, True),
        (b"<a>x<", 0, True),  # "<a>" is not "</a>"
        (b"<a>x</", 5, True),
    ]:
        def labelled():
            k = StateKeyPlan.from_tag(b"0123456789abcdef", TAG).keyer()
            k.label(b"P", stop_at=b"</a>")
            k.accept(0, fed)
            return k
        cache, first = MaskCache(), Req(labelled())
        missed, copies, _, _ = unsafe_fill_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0])
        buf[0] = 0b111111  # every token allowed
        assert unsafe_store_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0], missed, copies) == 1
        req = Req(labelled())
        left, allowed, n = feed_requests(table, cache, b"ns", [req], [token])
        assert (n == 1, left == [0]) == (taken, not taken), (fed, token)
