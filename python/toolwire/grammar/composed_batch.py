"""A batch of :class:`~toolwire.grammar.composed.ComposedMatcher` requests, as
:class:`toolwire.masks.BatchMasker` serves whole-tag ones: one bitmask row per request per step.

Per step, :meth:`ComposedMasker.fill` hands every request whose mask is one xgrammar matcher's
(the scaffold's, or one tool's piece) to one ``BatchGrammarMatcher`` fill, ORs the run-on tokens
of a call's end into the rows of requests inside one, and computes the rest (several tools'
begins followed at once) from the tools' begin texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import xgrammar as xgr

from toolwire import ToolwireError

from .composed import ComposedGrammar, ComposedMatcher, _torch_row


class ComposedMasker:
    """Fills int32 ``[B, ceil(V / 32)]`` bitmasks for composed requests, and feeds them tokens.

    Arguments:
        tokenizer_info: the xgrammar ``TokenizerInfo`` the composed grammars were made with.
        batch_threads: ``max_threads`` of the ``BatchGrammarMatcher`` of each step's fill.
    """

    def __init__(self, tokenizer_info: xgr.TokenizerInfo, *, batch_threads: int | Literal["auto"] = "auto") -> None:
        self.tokenizer_info = tokenizer_info
        self.vocab_size: int = tokenizer_info.vocab_size
        self.words = (self.vocab_size + 31) // 32
        self._batch = xgr.BatchGrammarMatcher(batch_threads)

    def new_request(self, grammar: ComposedGrammar) -> Any:
        """A matcher for ``grammar``: a :class:`ComposedMatcher`, or xgrammar's on the whole tag
        where the grammar is a fallback."""
        if grammar.tokenizer_info.vocab_size != self.vocab_size:
            raise ToolwireError("the grammar was made for another vocabulary size")
        return grammar.matcher()

    def fill(self, requests: Sequence[Any], bitmask: Any = None, indices: Sequence[int] | None = None) -> Any:
        """Fill row ``indices[i]`` (default ``i``) for ``requests[i]``; a ``None`` or terminated
        request gets an all-allowed row. Returns the bitmask (allocated when not given)."""
        if bitmask is None:
            bitmask = xgr.allocate_token_bitmask(len(requests), self.vocab_size)
        if tuple(bitmask.shape[1:]) != (self.words,):
            raise ToolwireError(f"the bitmask must be [B, {self.words}], got {tuple(bitmask.shape)}")
        rows = list(range(len(requests))) if indices is None else [int(i) for i in indices]
        if len(rows) != len(requests):
            raise ToolwireError("indices must give one bitmask row per request")
        matchers, matcher_rows, ends = [], [], []
        for request, row in zip(requests, rows):
            if request is None or request.is_terminated():
                bitmask[row].fill_(-1)
                continue
            one = request._one_matcher() if isinstance(request, ComposedMatcher) else request
            if one is None:
                bitmask[row].copy_(_torch_row(request._mask()))
                continue
            matchers.append(one)
            matcher_rows.append(row)
            if isinstance(request, ComposedMatcher) and request.in_call:
                ends.append((request, row))
        if len(matchers) == 1:
            matchers[0].fill_next_token_bitmask(bitmask, matcher_rows[0])
        elif matchers:
            self._batch.batch_fill_next_token_bitmask(matchers, bitmask, matcher_rows)
        for request, row in ends:
            extra = request._end_extras()
            if extra is not None:
                words = bitmask[row].numpy().view(np.uint32)
                words |= extra
        return bitmask

    def accept(self, requests: Sequence[Any], token_ids: Sequence[int]) -> list[bool]:
        """Accept one token per request (``None`` and terminated requests report True)."""
        if hasattr(token_ids, "tolist"):
            token_ids = token_ids.tolist()
        if len(token_ids) != len(requests):
            raise ToolwireError("accept needs one token per request")
        return [True if r is None or r.is_terminated() else r.accept_token(int(t)) for r, t in zip(requests, token_ids)]

    def rollback(self, requests: Sequence[Any], n: int) -> None:
        """Undo the last ``n`` tokens of each request (speculative decoding's rejected drafts)."""
        for r in requests:
            if r is not None:
                r.rollback(n)

