"""Grammar masks for decode loops (needs ``xgrammar``).

``tokenizer_info`` builds an xgrammar ``TokenizerInfo`` from a :class:`toolwire.Vocab`, so the
grammar and the parser read tokens the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolwire._core import ToolwireError, Vocab

if TYPE_CHECKING:
    import xgrammar


def _xgrammar() -> Any:
    try:
        import xgrammar
    except ImportError as e:
        raise ImportError("this part of toolwire needs xgrammar: pip install 'toolwire[grammar]'") from e
    return xgrammar


def tokenizer_info(vocab: Vocab, vocab_size: int, stop_token_ids: Sequence[int]) -> xgrammar.TokenizerInfo:
    """An xgrammar ``TokenizerInfo`` over ``vocab``'s bytes, ``vocab_size`` ids wide.

    Arguments:
        vocab: the tokenizer's vocabulary; special tokens keep their text, so a marker such as
            ``<tool_call>`` matches the grammar both as its single id and spelled out.
        vocab_size: the model's lm_head size (ids without a token become padding, never allowed).
        stop_token_ids: the ids that end generation (e.g. ``<|im_end|>`` and ``<|endoftext|>``);
            pass them explicitly, xgrammar's guess misses chat-template stops.
    """
    xgr = _xgrammar()
    if vocab_size <= 0:
        raise ToolwireError("vocab_size must be positive")
    encoded = [vocab.token_bytes(i) or b"" for i in range(vocab_size)]
    return xgr.TokenizerInfo(
        encoded, xgr.VocabType.RAW, vocab_size=vocab_size, stop_token_ids=list(stop_token_ids)
    )
