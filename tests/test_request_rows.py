"""The batch-step calls over request objects (``_core.unsafe_fill_request_rows``,
``unsafe_store_request_rows``, ``feed_requests``): what they read from each request, and misuse
answered by an exception (the composed differential suite covers the masks they serve)."""

from __future__ import annotations

import array

import pytest
from toolwire import ToolwireError
from toolwire._core import (
    CallSteps,
    MaskCache,
    StateKeyPlan,
    TokenTable,
    feed_requests,
    unsafe_fill_request_rows,
    unsafe_store_request_rows,
)

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
    left, allowed, taken, stepped = feed_requests(table, cache, b"ns", [reqs[0], None, reqs[3]], [0, 0, 0])
    assert (left, allowed, taken, stepped) == ([2], [], 1, 0) and reqs[0]._accept_key.deferred_tokens == 1
    assert feed_requests(table, cache, b"ns", [Req(keyer())], [2]) == ([0], [], 0, 0)


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
        (0b101, [1, 2, 0], ([0, 1], [1], 1, 0)),  # <a> allowed, the stop token y not
        (0b011, [1, 2, 0], ([0, 1], [0], 1, 0)),  # the stop token allowed, <a> not
    ]:
        cache, first = MaskCache(), Req(free_text_keyer())
        missed, copies, _, _ = unsafe_fill_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0])
        buf[0] = row
        assert unsafe_store_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0], missed, copies) == 1
        reqs = [Req(free_text_keyer()) for _ in tokens]
        assert feed_requests(table, cache, b"ns", reqs, tokens) == expected
        assert [r._accept_key.deferred_tokens for r in reqs] == [0, 0, 1]
        assert [r._accept_key.mode for r in reqs[:2]] == ["free", "free"]


def test_a_known_step_gives_the_request_its_next_keyer_and_journals_the_old_one() -> None:
    """A token the keyer does not take alone, where ``CallSteps`` knows a step for the keyer's
    state and the token and the cached row allows the token: the request gets the step's next
    keyer (moving on to a kept keyer, or closing back to the scaffold's keyer it resumes, fed
    the close) or, for a stop, none and ``terminated``; the old keyer and the token go to its
    journal. Where the row refuses the token, or no step is known, it is left."""

    def free_text_keyer():
        k = StateKeyPlan.from_tag(b"0123456789abcdef", TAG).keyer()
        k.label(b"F", free_text_only=True)
        return k

    steps = CallSteps(1 << 20)

    class StepReq(Req):
        def __init__(self, keyer) -> None:
            super().__init__(keyer)
            self._steps, self._serial, self._journal, self.terminated = steps, 7, [], False

    table = TokenTable([b"x", b"y", b"<a>"], [1])
    scaffold = free_text_keyer()
    scaffold.accept(0, b"x")

    def in_call(resumed=scaffold):
        k = free_text_keyer()
        k.set_resume(resumed, b"<a>")
        return k

    buf, ptr = buffer(1)
    cache, first = MaskCache(), StepReq(in_call())
    missed, copies, _, _ = unsafe_fill_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0])
    buf[0] = 0b111
    assert unsafe_store_request_rows(cache, b"ns", [first], ptr, 1, WORDS, [0], missed, copies) == 1
    kept = StateKeyPlan.opaque(b"fedcba9876543210").keyer()
    probe = in_call()
    steps.within(steps.key(7, probe, 2), kept)  # <a>: a keyer that follows free text only leaves it
    steps.close(steps.key(7, probe, 0))  # x would be taken alone: never asked
    steps.stop(steps.key(7, probe, 1))
    reqs = [StepReq(in_call()) for _ in range(3)]
    olds = [r._accept_key for r in reqs]
    assert feed_requests(table, cache, b"ns", reqs, [2, 1, 0]) == ([], [], 1, 2)
    assert reqs[0]._journal == [(olds[0], 2)] and reqs[0]._fill_key is reqs[0]._accept_key
    assert reqs[0]._accept_key.key() == kept.key() and reqs[0]._accept_key.resumes and not reqs[0].terminated
    assert reqs[1]._journal == [(olds[1], 1)] and reqs[1].terminated and reqs[1]._accept_key is reqs[1]._fill_key is None
    assert reqs[2]._journal == [] and reqs[2]._accept_key.deferred_tokens == 1
    # closing (a call that began elsewhere: another step): back to the scaffold's keyer the call
    # resumes, fed the close
    elsewhere = free_text_keyer()
    elsewhere.accept(0, b"<a>x")
    assert steps.key(7, in_call(elsewhere), 2) != steps.key(7, probe, 2)
    steps.close(steps.key(7, in_call(elsewhere), 2))
    closing = StepReq(in_call(elsewhere))
    assert len(steps) == 4 and feed_requests(table, cache, b"ns", [closing], [2])[3] == 1
    elsewhere.accept(0, b"<a>")
    assert closing._accept_key.key() == elsewhere.key() and not closing._accept_key.resumes
    # a row that refuses the token: the step is not taken
    refused = StepReq(in_call())
    buf[0] = 0b011
    cache2 = MaskCache()
    missed, copies, _, _ = unsafe_fill_request_rows(cache2, b"ns", [refused], ptr, 1, WORDS, [0])
    assert unsafe_store_request_rows(cache2, b"ns", [refused], ptr, 1, WORDS, [0], missed, copies) == 1
    assert feed_requests(table, cache2, b"ns", [refused], [2]) == ([0], [], 0, 0) and refused._journal == []


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
        left, allowed, n, _ = feed_requests(table, cache, b"ns", [req], [token])
        assert (n == 1, left == [0]) == (taken, not taken), (fed, token)
