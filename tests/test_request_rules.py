"""The parser and the grammar read a request the same way: every ``tool_choice`` / ``reasoning`` /
``tools`` / schema-mode variant below is accepted by both ``ToolParser`` and ``grammar.plan`` (on
a one-call-at-a-time format and on Beam's per-turn plan), or refused by both with the same
message, which says what the request broke."""

from __future__ import annotations

import json
from typing import Any

import pytest
import toolwire

grammar = pytest.importorskip("toolwire.grammar")

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
TIME = {"type": "function", "function": {"name": "get_time", "strict": True, "parameters": {"type": "object", "properties": {}}}}
NOTES = {"type": "custom", "custom": {"name": "notes", "format": {"type": "text"}}}
TOOLS = [WEATHER, TIME, NOTES]


def named(name: str, kind: str = "function") -> dict[str, Any]:
    return {"type": kind, kind: {"name": name}}


def allowed(mode: Any, *names: str) -> dict[str, Any]:
    return {"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": [named(n) for n in names]}}


#: (label, tool_choice, expected refusal or None): with TOOLS.
CHOICES = [
    ("unset", None, None),
    ("auto", "auto", None),
    ("none", "none", None),
    ("required", "required", None),
    ("any", "any", 'unknown tool_choice "any"; say "required"'),
    ("unknown string", "sometimes", 'unknown tool_choice "sometimes"'),
    ("number", 3, "tool_choice must be a string or an object, not 3"),
    ("list", ["auto"], "tool_choice must be a string or an object"),
    ("named", named("get_time"), None),
    ("named, flat", {"type": "function", "name": "get_time"}, None),
    ("named, no type", {"function": {"name": "get_time"}}, None),
    ("named custom", named("notes", "custom"), None),
    ("named unknown", named("nope"), 'tool_choice names "nope", which is not among the tools'),
    ("named without a name", {"type": "function", "function": {}}, "a named tool_choice needs a non-empty name"),
    ("named empty name", named(""), "a named tool_choice needs a non-empty name"),
    ("named wrong kind", named("get_time", "custom"), 'names the custom tool "get_time", but "get_time" is a function tool'),
    ("unknown type", {"type": "banana"}, 'unknown tool_choice type "banana"'),
    ("allowed auto", allowed("auto", "get_time"), None),
    ("allowed required", allowed("required", "get_weather", "get_time"), None),
    ("allowed, responses shape", {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_time"}]}, None),
    ("allowed unknown tool", allowed("auto", "nope"), 'allowed_tools names tools that are not declared: ["nope"]'),
    ("allowed bad mode", allowed("sometimes", "get_time"), 'unknown allowed_tools mode "sometimes"'),
    ("allowed without tools", {"type": "allowed_tools", "allowed_tools": {"mode": "auto"}}, "allowed_tools needs a list of tools"),
    ("allowed required, none listed", allowed("required"), 'allowed_tools with mode "required" needs at least one tool'),
    ("allowed ref without a name", {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function"}]}, "allowed_tools.tools[0] has no name"),
]

#: (label, tools, tool_choice, expected refusal or None).
TOOL_LISTS = [
    ("no tools, unset", None, None, None),
    ("no tools, auto", [], "auto", None),
    ("no tools, required", [], "required", 'tool_choice "required" needs at least one tool'),
    ("no tools, named", None, named("get_time"), 'tool_choice names "get_time", which is not among the tools'),
    ("bare function dict", [{"name": "f", "parameters": {"type": "object"}}], "required", None),
    ("duplicate names", [WEATHER, WEATHER], None, 'tools[1] repeats the name "get_weather" of tools[0]; tool names must be unique'),
    ("function and custom share a name", [TIME, {"type": "custom", "custom": {"name": "get_time"}}], None, 'tools[1] repeats the name "get_time" of tools[0]'),
    ("empty name", [{"type": "function", "function": {"name": ""}}], None, "tools[0] has an empty name"),
    ("empty custom name", [{"type": "custom", "custom": {"name": ""}}], None, "tools[0] has an empty name"),
    ("no name", [{"type": "function", "function": {"parameters": {}}}], None, "tools[0] has no name"),
    ("name not a string", [{"type": "function", "function": {"name": 7}}], None, "tools[0] has no name"),
    ("entry not an object", [WEATHER, "get_time"], None, "tools[1] is not an object"),
    ("tools not a list", {"get_time": TIME}, None, "tools must be a list"),
    ("unsupported type", [{"type": "web_search"}], None, 'tools[0] has unsupported type "web_search"'),
    ("function not an object", [{"type": "function", "function": "get_time"}], None, "tools[0].function is not an object"),
    ("strict as a string", [{"type": "function", "function": {"name": "f", "strict": "true"}}], None, 'tool "f" has strict "true"; it must be true, false or null'),
    ("strict null", [{"type": "function", "function": {"name": "f", "strict": None}}], None, None),
    ("custom grammar format", [{"type": "custom", "custom": {"name": "sql", "format": {"type": "grammar"}}}], None, 'custom tool "sql" has a "grammar" format; only text custom tools are supported'),
    ("custom without a format", [{"type": "custom", "custom": {"name": "notes"}}], "required", None),
]

#: (reasoning, expected refusal or None).
REASONING = [
    (None, None),
    (False, None),
    (True, None),
    ("none", None),
    ("off", None),
    ("disabled", None),
    ("think", None),
    ("paired", None),
    ("native", None),
    ("auto", None),
    ("optional", None),
    ("closing_only", None),
    ("enabled", None),
    ("sometimes", 'unknown reasoning "sometimes"'),
    (3, "reasoning must be None, a bool or a string, not 3"),
    (["think"], 'reasoning must be None, a bool or a string, not ["think"]'),
]

#: (schema mode, expected refusal or None): the grammar's alone (the parser has no schema mode).
SCHEMA_MODES = [("auto", None), ("strict", None), ("lax", 'unknown schema mode "lax"; expected "auto" or "strict"'), (3, "unknown schema mode 3")]

#: One format with a one-call-at-a-time tag and Beam, whose every turn has its own plan.
PLAN_FORMATS = ["hermes", "beam"]


def outcome(build) -> str | None:
    """None when ``build()`` accepts the request, the error text when it refuses it."""
    try:
        build()
    except toolwire.ToolwireError as e:
        return str(e)
    return None


def parser_outcome(fmt: str, tools: Any, tool_choice: Any = None, reasoning: Any = None) -> str | None:
    return outcome(lambda: toolwire.ToolParser(fmt, tools, tool_choice=tool_choice, reasoning=reasoning))


def plan_outcome(fmt: str, tools: Any, tool_choice: Any = None, reasoning: Any = None, schema: Any = "auto") -> str | None:
    request: dict[str, Any] = {"tools": tools}
    if tool_choice is not None:
        request["tool_choice"] = tool_choice
    return outcome(lambda: grammar.plan(request, fmt, reasoning=reasoning, schema=schema))


def assert_agree(expected: str | None, parser: str | None, planned: dict[str, str | None]) -> None:
    if expected is None:
        assert parser is None, f"ToolParser refused: {parser}"
    else:
        assert parser is not None and expected in parser, f"ToolParser gave {parser!r}, expected {expected!r}"
    for fmt, got in planned.items():
        assert got == parser, f"grammar.plan on {fmt} gave {got!r}, ToolParser {parser!r}"


@pytest.mark.parametrize("label,tool_choice,expected", CHOICES, ids=[c[0] for c in CHOICES])
def test_tool_choice_variants(label, tool_choice, expected):
    parser = parser_outcome("hermes", TOOLS, tool_choice)
    assert_agree(expected, parser, {fmt: plan_outcome(fmt, TOOLS, tool_choice) for fmt in PLAN_FORMATS})


@pytest.mark.parametrize("label,tools,tool_choice,expected", TOOL_LISTS, ids=[c[0] for c in TOOL_LISTS])
def test_tool_list_variants(label, tools, tool_choice, expected):
    parser = parser_outcome("hermes", tools, tool_choice)
    assert_agree(expected, parser, {fmt: plan_outcome(fmt, tools, tool_choice) for fmt in PLAN_FORMATS})
    if tools is not None:
        # ToolSet (what a server compiles once and shares) refuses the same lists.
        assert outcome(lambda: toolwire.ToolSet(tools)) == (parser if tool_choice is None else None)


@pytest.mark.parametrize("reasoning,expected", REASONING, ids=[repr(r[0]) for r in REASONING])
def test_reasoning_variants(reasoning, expected):
    parser = parser_outcome("hermes", TOOLS, "required", reasoning)
    assert_agree(expected, parser, {fmt: plan_outcome(fmt, TOOLS, "required", reasoning) for fmt in PLAN_FORMATS})


@pytest.mark.parametrize("schema,expected", SCHEMA_MODES, ids=[repr(s[0]) for s in SCHEMA_MODES])
def test_schema_modes_are_checked_by_every_plan(schema, expected):
    for tool_choice in ("auto", "none", "required"):
        got = {fmt: plan_outcome(fmt, TOOLS, tool_choice, schema=schema) for fmt in PLAN_FORMATS}
        got["structural_tag"] = outcome(lambda: grammar.structural_tag("hermes", TOOLS, tool_choice, schema=schema))
        for where, text in got.items():
            if expected is None:
                assert text is None, f"{where} under {tool_choice}: {text}"
            else:
                assert text is not None and expected in text, f"{where} under {tool_choice}: {text!r}"


@pytest.mark.parametrize("fmt", toolwire.formats())
def test_every_format_takes_every_reasoning_mode_on_both_sides(fmt):
    # A format without its own reasoning delimiters reads (and the grammar writes) <think>.
    for reasoning in (True, "think", "auto", "closing_only", "disabled"):
        assert parser_outcome(fmt, TOOLS, "required", reasoning) is None
        assert plan_outcome(fmt, TOOLS, "required", reasoning) is None, (fmt, reasoning)


def test_think_means_the_think_block_in_the_grammar_as_in_the_parser():
    # seed_oss's own block is <seed:think>; "think" asks for <think> on both sides.
    def block(reasoning: str) -> tuple[str, str]:
        tag = json.loads(grammar.plan({"tools": TOOLS, "tool_choice": "required"}, "seed_oss", reasoning=reasoning).payload_json())
        optional_block = tag["format"]["elements"][0]
        assert optional_block["type"] == "optional"
        opening = optional_block["content"]["elements"][0]
        return opening["begin"], opening["end"]

    assert block("think") == ("<think>", "</think>")
    assert block("native") == block("auto") == ("<seed:think>", "</seed:think>")
    msg = toolwire.ToolParser("seed_oss", TOOLS, reasoning="think").parse("<think>hm</think>ok")
    assert (msg.reasoning_content, msg.content) == ("hm", "ok")


def test_allowed_tools_hold_the_parser_and_the_plan_to_the_same_tools():
    choice = allowed("required", "get_time")
    plan = grammar.plan({"tools": TOOLS, "tool_choice": choice}, "hermes")
    assert [t.get("function", t.get("custom", {})).get("name") for t in plan.tools] == ["get_time"]
    assert plan.constraint == "structural_tag"
    parser = toolwire.ToolParser("hermes", TOOLS, tool_choice=choice)
    other = parser.parse('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>')
    assert [(i.kind, i.detail) for i in other.issues] == [("not_allowed_by_tool_choice", 'allowed_tools allows only ["get_time"]')]
    assert [i.kind for i in parser.parse("no call").issues] == ["missing_tool_call"]
    kept = parser.parse('<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')
    assert kept.issues == [] and [c.name for c in kept.tool_calls] == ["get_time"]
