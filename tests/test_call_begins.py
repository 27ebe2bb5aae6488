"""``_core.CallBegins``: which tokens a composed request among several tools' begins may take
without the matcher, and the keyer it makes (key bytes, deferral through ``TokenTable``). The
composed differential suite checks the masks served through it; here the rule itself is checked
against a plain reading of it over every begin."""

from __future__ import annotations

import itertools
import random

from toolwire._core import CallBegins, MaskCache, StateKeyPlan, TokenTable

PLAN = StateKeyPlan.opaque(b"composed literal")


def plain_step(begins: list[bytes], call: bytes, data: bytes) -> bool:
    """The rule as the composed matcher states it: the branches followed are the begins going on
    past ``call``; the step is a literal one when none of them ends within ``data`` and two or
    more go on past ``call + data``."""
    if not data:
        return False
    text = call + data
    followed = [b for b in begins if b.startswith(call) and len(b) > len(call)]
    if any(text.startswith(b) for b in followed):
        return False
    return sum(b.startswith(text) and len(b) > len(text) for b in followed) >= 2


def test_literal_steps_follow_the_plain_rule_on_random_begins() -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(60):
        begins = [bytes(rng.choice(b"ab_") for _ in range(rng.randrange(1, 7))) for _ in range(rng.randrange(1, 8))]
        begins.append(begins[0])  # a tool listed twice is two branches
        cb = CallBegins(begins)
        assert len(cb) == len(begins)
        texts = [bytes(t) for n in range(4) for t in itertools.product(b"ab_", repeat=n)]
        for call in texts:
            assert cb.continuing(call) == sum(b.startswith(call) and len(b) > len(call) for b in begins)
            for data in texts:
                assert cb.literal_step(call, data) == plain_step(begins, call, data), (begins, call, data)
                checked += 1
    assert checked == 60 * 40 * 40


def test_the_keyer_is_named_by_its_text_and_takes_only_literal_steps_its_row_allows() -> None:
    begins = [b'<c>{"name": "get_weather", ', b'<c>{"name": "get_time", ', b'<c>{"name": "search", ']
    tokens = [b"get", b"_", b"weather", b"s", b"x", b"<|end|>"]
    table = TokenTable(tokens, [5])
    cache, ns = MaskCache(), b"ns"
    head = b'<c>{"name": "'
    k = CallBegins(begins).keyer(PLAN, b"L1", head)
    constant = PLAN.keyer().key()
    assert k.key() == b"L1" + head + constant
    assert table.feed_deferred(cache, ns, [k], [0]) == [0], "no row cached: left to the matcher"
    allow_all = b"\xff" * 4
    cache.insert(ns + k.key(), allow_all)
    assert table.feed_deferred(cache, ns, [k], [0]) == []  # "get": both get_ tools go on
    assert k.key() == b"L1" + head + b"get" + constant and k.deferred_tokens == 1
    cache.insert(ns + k.key(), b"\x00\x00\x00\x00")
    assert table.feed_deferred(cache, ns, [k], [1]) == [0], "the row refuses it"
    cache.insert(ns + k.key(), allow_all)
    assert table.feed_deferred(cache, ns, [k], [1]) == []  # "_"
    cache.insert(ns + k.key(), allow_all)
    for token in (2, 3, 4, 5):  # one tool left, none, none, a stop token
        assert table.feed_deferred(cache, ns, [k], [token]) == [0], token
    assert k.take_deferred_run() == (b"get_", [3, 1])
    assert k.key() == b"L1" + head + b"get_" + constant
