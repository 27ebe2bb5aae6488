"""Helpers for RL on grammar-constrained rollouts (needs ``xgrammar``).

A token the grammar forced carries no decision of the policy: its log-probability under the
constrained sampler is 0 whatever the weights are, and including it in a loss only adds noise (or,
without the mask at training time, teaches the model scaffolding it never chose).
:func:`forced_token_mask` marks those positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from toolwire._core import ToolwireError, Vocab, unsafe_count_allowed
from toolwire.masks import _xgrammar

if TYPE_CHECKING:
    import xgrammar

__all__ = ["forced_token_mask"]


def _token_bytes(compiled_grammar: Any, vocab: Vocab | Sequence[bytes] | None) -> Any:
    if vocab is None:
        # xgrammar copies the whole table on every access (about a second for 150k ids).
        return compiled_grammar.tokenizer_info.decoded_vocab
    if isinstance(vocab, Vocab):
        return lambda i: vocab.token_bytes(i) or b""
    return vocab


def forced_token_mask(
    compiled_grammar: xgrammar.CompiledGrammar,
    token_ids: Sequence[int],
    *,
    mode: Literal["token", "text"] = "token",
    vocab: Vocab | Sequence[bytes] | None = None,
) -> list[bool]:
    """For each position of ``token_ids``, whether the grammar forced that token.

    An xgrammar matcher is fed the ids one by one; before each, the grammar's mask is filled and
    read.

    Arguments:
        compiled_grammar: the grammar the rollout was sampled under.
        token_ids: the sampled completion (without the prompt), possibly ending with a stop token.
        mode: ``"token"``: True where the grammar allowed exactly one token. ``"text"``: also True
            where the token's text is a prefix of the continuation the grammar forces at that
            point (``find_jump_forward_string``), so only the split into tokens was the model's
            choice. With byte-level BPE a forced string such as ``{"name": "`` can almost always be
            spelled by several tokens (``{``, ``{"``), so ``"token"`` marks only a few positions of
            the scaffolding and ``"text"`` marks all of it.
        vocab: token bytes for ``"text"`` mode: a :class:`toolwire.Vocab` or a list of bytes by
            id. Without it they are read from the grammar's ``TokenizerInfo`` (about a second).

    A stop token at the end is forced only when it was the one token allowed (a grammar whose
    tokenizer has two stop ids allows both). The output may stop anywhere (truncated rollouts are
    fine).

    Raises:
        ToolwireError: when the grammar rejects a token, or a token follows the end of the
            grammar: the ids were not sampled under this grammar.
    """
    xgr = _xgrammar()
    if mode not in ("token", "text"):
        raise ToolwireError(f"mode must be 'token' or 'text', not {mode!r}")
    vocab_size = compiled_grammar.tokenizer_info.vocab_size
    matcher = xgr.GrammarMatcher(compiled_grammar)
    bitmask = xgr.allocate_token_bitmask(1, vocab_size)
    words = bitmask.shape[1]
    ptr = bitmask.data_ptr()
    token_bytes = _token_bytes(compiled_grammar, vocab) if mode == "text" and token_ids else None
    lookup = token_bytes if callable(token_bytes) else (token_bytes.__getitem__ if token_bytes is not None else None)
    out: list[bool] = []
    for pos, token in enumerate(token_ids):
        if not 0 <= token < vocab_size:
            raise ToolwireError(f"token {token} at position {pos} is outside the vocabulary of {vocab_size}")
        if matcher.is_terminated():
            raise ToolwireError(f"token {token} at position {pos} follows the end of the grammar")
        matcher.fill_next_token_bitmask(bitmask)
        forced = unsafe_count_allowed(ptr, 1, words, vocab_size)[0] == 1
        if not forced and lookup is not None:
            text = lookup(token)
            forced = bool(text) and matcher.find_jump_forward_string().encode("utf-8").startswith(text)
        out.append(forced)
        if not matcher.accept_token(token):
            raise ToolwireError(f"the grammar rejects token {token} at position {pos}")
    return out
