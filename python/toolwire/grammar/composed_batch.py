"""A batch of :class:`~toolwire.grammar.composed.ComposedMatcher` requests, as
:class:`toolwire.masks.BatchMasker` serves whole-tag ones: one bitmask row per request per step,
through a :class:`toolwire.MaskCache`.

Each request names its state with toolwire's state keyer (``toolwire._core.StateKeyer``, the
one ``BatchMasker`` uses): in the scaffold, the scaffold's key; in one tool's piece, the piece's
key, with the scaffold's key where the call began while the call's text ends with a start of its
end (that key decides the tokens that run on past the call's end, the only part of a piece's row
the scaffold has a say in). Scaffold and pieces are shared by every request with the same format settings or
the same tool, so their masks are computed once for all requests and tool lists; where several
tools' begins are followed, the grammar and the call's text name the row. Per step,
:meth:`ComposedMasker.fill` copies the cached rows in one Rust call that reads each request's
current keyer itself (``_core.unsafe_fill_request_rows``: a Python loop over the batch cost as
much as the copies), hands the misses whose mask is one xgrammar matcher's (the scaffold's, or
one tool's piece) to one ``BatchGrammarMatcher`` fill, ORs the run-on tokens of a call's end into
the rows of requests inside one, computes the rest (several tools' begins followed at once) from
the tools' begin texts, and stores the misses; :meth:`ComposedMasker.accept` lets the keyers take
what the cached rows allow in one more call (``_core.feed_requests``), which also makes the
changes of part (a call opened, settled on one tool, closed; the output's end) that an earlier
request made in the same state (``_core.CallSteps``: the request journals them and replays them
when next asked), and visits only the rest.

A grammar that falls back to the whole tag gets a :class:`WholeTagRequest`: xgrammar's matcher
with the whole tag's state keys, cached the same way.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch
import xgrammar as xgr

from toolwire import ToolwireError
from toolwire._core import MaskCache, StateKeyer, StateKeyPlan, feed_requests, unsafe_fill_request_rows, unsafe_store_request_rows

from .composed import _WHOLE_PLANS, ComposedGrammar, _key_plan
from .composed_matcher import ComposedMatcher
from .composed_parts import ComposedMismatch
from .pieces import _vocab

_INT32 = torch.int32


def _not_a_row(index: Any) -> bool:
    try:
        return operator.index(index) < 0
    except TypeError:
        return True


class WholeTagRequest:
    """A fallback request: xgrammar's matcher on the whole tag, with its state keyer (fed every
    accepted token in place; a rollback builds it again from the text). Tokens the keyer took
    alone (``TokenTable.feed_deferred``) reach the matcher in one ``accept_string`` when it is
    next asked, as one xgrammar step that a rollback into it splits."""

    def __init__(self, grammar: ComposedGrammar) -> None:
        text = grammar.whole_tag_json()
        plan: StateKeyPlan | None = _WHOLE_PLANS.get(text)
        if plan is None:
            plan = _key_plan(text)
            _WHOLE_PLANS.put(text, plan)
        self._matcher = xgr.GrammarMatcher(grammar.whole())
        self._plan = plan
        self._set_keyer(self._new_keyer())
        self._text = bytearray()  # what the keyer read
        self._lengths: list[int] = []  # the text's length before each accepted token
        self._runs: list[int] = []  # tokens in each of the matcher's steps
        self._bytes = _vocab(grammar.tokenizer_info).token_bytes
        self._stops = frozenset(self._matcher.stop_token_ids)
        self.in_call = False
        self.terminated = False
        self._steps = None  # no call steps for ``_core.feed_requests`` to take alone

    @property
    def matcher(self) -> xgr.GrammarMatcher:
        """The xgrammar matcher, brought up to date with every accepted token."""
        self._flush()
        return self._matcher

    def _new_keyer(self) -> StateKeyer:
        k = self._plan.keyer()
        k.label(b"W")
        return k

    def _set_keyer(self, k: StateKeyer) -> None:
        # The keyers a batch step reads (``_core.unsafe_fill_request_rows``, ``feed_requests``).
        self._keyer = self._fill_key = self._accept_key = k

    def _flush(self) -> None:
        if not self._keyer.deferred_tokens:
            return
        data, lengths = self._keyer.take_deferred_run()
        if not self._matcher.accept_string(data):
            raise ComposedMismatch(f"the whole tag refused {len(lengths)} tokens its cached masks allowed")
        at = len(self._text)
        for n in lengths:
            self._lengths.append(at)
            at += n
        self._text += data
        self._runs.append(len(lengths))

    def cache_key(self) -> bytes | None:
        return self._keyer.key() if self._keyer.cacheable else None

    def _cache_keyer(self) -> StateKeyer:
        return self._keyer

    _deferrable = _cache_keyer

    def _one_matcher(self) -> xgr.GrammarMatcher:
        return self.matcher

    def _accept_allowed(self, token: int) -> bool:
        return self.accept_token(token)

    def _accept_noted(self, token: int, allowed: bool) -> bool:
        return self.accept_token(token)

    def accept_token(self, token: int) -> bool:
        m = self.matcher
        if not m.accept_token(token):
            return False
        self._lengths.append(len(self._text))
        self._runs.append(1)
        if token in self._stops:
            self.terminated = m.is_terminated()
            if self.terminated:  # see ComposedMatcher._sync_keys
                self._fill_key = self._accept_key = None
        else:
            data = self._bytes[token]
            self._text += data
            self._keyer.accept(token, data)
        return True

    def rollback(self, n: int = 1) -> None:
        m = self.matcher
        if n < 0 or n > len(self._lengths):
            raise ToolwireError(f"cannot roll back {n} tokens ({len(self._lengths)} accepted)")
        if not n:
            return
        left, top = n, len(self._lengths)
        while left:
            size = self._runs.pop()
            m.rollback(1)
            top -= size  # the run's first token
            if size > left:  # keep the run's first tokens, as one shorter run
                m.accept_string(bytes(self._text[self._lengths[top] : self._lengths[top + size - left]]))
                self._runs.append(size - left)
                break
            left -= size
        del self._text[self._lengths[-n] :]
        del self._lengths[-n:]
        self.terminated = False
        self._set_keyer(self._new_keyer())
        if self._text:
            self._keyer.accept(0, bytes(self._text))

    def is_terminated(self) -> bool:
        return self.terminated

    def is_completed(self) -> bool:
        return self.matcher.is_completed()

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> bool:
        return self.matcher.fill_next_token_bitmask(bitmask, index)

    def find_jump_forward_string(self) -> str:
        return self.matcher.find_jump_forward_string()


class ComposedMasker:
    """Fills int32 ``[B, ceil(V / 32)]`` bitmasks for composed requests, and feeds them tokens.

    Arguments:
        tokenizer_info: the xgrammar ``TokenizerInfo`` the composed grammars were made with.
        cache: a :class:`toolwire.MaskCache`; default: a new one of 64 MiB. Maskers that share
            one must share a tokenizer and a namespace.
        namespace: bytes prefixed to every key (default: random).
        batch_threads: ``max_threads`` of the ``BatchGrammarMatcher`` of each step's misses.
        defer_accept: in :meth:`accept`, let a request take a token that the mask cached under
            its state's key allows through its keyer alone (in the scaffold's free text, among
            several tools' begins, inside one tool's piece: the matcher reads the deferred
            tokens in one ``accept_string`` when next asked), and make a change of part that an
            earlier request made in the same state (``_core.CallSteps``); same answers, same
            rollback. False: every token goes through the request's matcher.
    """

    def __init__(
        self,
        tokenizer_info: xgr.TokenizerInfo,
        *,
        cache: MaskCache | None = None,
        namespace: bytes | None = None,
        batch_threads: int | Literal["auto"] = "auto",
        defer_accept: bool = True,
    ) -> None:
        self.tokenizer_info = tokenizer_info
        self.vocab_size: int = tokenizer_info.vocab_size
        self.words = (self.vocab_size + 31) // 32
        self.cache = cache if cache is not None else MaskCache(64 << 20)
        self.namespace = namespace if namespace is not None else os.urandom(8)
        self._batch = xgr.BatchGrammarMatcher(batch_threads)
        self.defer_accept = defer_accept
        self._table = _vocab(tokenizer_info).table()
        self.hits = self.misses = self.deferred = self.stepped = 0
        self._checked: Any = None  # the last bitmask filled, and its data pointer (:meth:`_check_bitmask`)
        self._checked_ptr = 0

    def new_request(self, grammar: ComposedGrammar) -> ComposedMatcher | WholeTagRequest:
        """A matcher for ``grammar``: a :class:`ComposedMatcher`, or a :class:`WholeTagRequest`
        where the grammar is a fallback."""
        if grammar.tokenizer_info.vocab_size != self.vocab_size:
            raise ToolwireError("the grammar was made for another vocabulary size")
        if grammar.fallback is not None:
            return WholeTagRequest(grammar)
        return ComposedMatcher(grammar)

    def fill(self, requests: Sequence[Any], bitmask: Any = None, indices: Sequence[int] | None = None) -> Any:
        """Fill row ``indices[i]`` (default ``i``) for ``requests[i]``; a ``None`` or terminated
        request gets an all-allowed row. Returns the bitmask (allocated when not given)."""
        if bitmask is None:
            bitmask = xgr.allocate_token_bitmask(len(requests), self.vocab_size)
        shape, ptr = bitmask.shape, bitmask.data_ptr()
        if bitmask is not self._checked or ptr != self._checked_ptr:
            self._check_bitmask(bitmask, ptr)
        if len(shape) != 2 or shape[1] != self.words or not bitmask.is_contiguous():
            raise self._wrong_bitmask(bitmask)
        # Their count and range are checked in Rust.
        rows = range(len(requests)) if indices is None else indices if type(indices) is list else [int(i) for i in indices]
        if type(requests) is not list:
            requests = list(requests)
        try:
            missed, copies, unkeyed, hits = unsafe_fill_request_rows(self.cache, self.namespace, requests, ptr, shape[0], self.words, rows)
        except (OverflowError, TypeError):
            if any(map(_not_a_row, rows)):
                raise ToolwireError("indices must be one bitmask row (a non-negative int) per request") from None
            raise
        self.hits += hits
        if missed or unkeyed:
            self._fill_misses(requests, bitmask, ptr, shape[0], rows, missed, copies, unkeyed)
        return bitmask

    def _check_bitmask(self, bitmask: Any, ptr: int) -> None:
        """What a tensor cannot change while it keeps its data (its type and device): checked
        once per tensor and data pointer, where an engine fills one tensor step after step (these
        checks at every step cost ~1% of a steady hermes batch 16 step, ``composed_ab.py``).
        The shape and the layout, which decide the memory written, are checked at every step."""
        if bitmask.dtype is not _INT32 or not bitmask.is_cpu:
            raise self._wrong_bitmask(bitmask)
        self._checked, self._checked_ptr = bitmask, ptr

    def _wrong_bitmask(self, bitmask: Any) -> ToolwireError:
        return ToolwireError(f"the bitmask must be a contiguous CPU [B, {self.words}] int32 tensor, got {bitmask.dtype} {tuple(bitmask.shape)}")

    def _fill_misses(self, requests: list[Any], bitmask: Any, ptr: int, n_rows: int, rows: Sequence[int], missed: list[int], copies: list[tuple[int, int]], unkeyed: list[int]) -> None:
        """The rows the cache did not serve: from the requests' matchers, then stored."""
        self.misses += len(missed) + len(unkeyed)
        matchers, matcher_rows, ends = [], [], []
        words_of = None  # the bitmask as numpy words, made once: indexing the tensor per row costs more
        for i in missed + unkeyed:
            request, row = requests[i], int(rows[i])
            if request.terminated:
                if words_of is None:
                    words_of = bitmask.numpy().view(np.uint32)
                words_of[row] = 0xFFFFFFFF
                continue
            one = request._one_matcher()
            if one is None:
                if words_of is None:
                    words_of = bitmask.numpy().view(np.uint32)
                words_of[row] = request._mask()
                continue
            matchers.append(one)
            matcher_rows.append(row)
            if request.in_call:
                ends.append((request, row))
        if len(matchers) == 1:
            matchers[0].fill_next_token_bitmask(bitmask, matcher_rows[0])
        elif matchers:
            self._batch.batch_fill_next_token_bitmask(matchers, bitmask, matcher_rows)
        for request, row in ends:
            extra = request._end_extras()
            if extra is not None:
                if words_of is None:
                    words_of = bitmask.numpy().view(np.uint32)
                words_of[row] |= extra
        if missed:
            unsafe_store_request_rows(self.cache, self.namespace, requests, ptr, n_rows, self.words, rows, missed, copies)

    def accept(self, requests: Sequence[Any], token_ids: Sequence[int]) -> list[bool]:
        """Accept one token per request (``None`` and terminated requests report True)."""
        if type(token_ids) is not list and hasattr(token_ids, "tolist"):
            token_ids = token_ids.tolist()
        if type(requests) is not list:
            requests = list(requests)
        allowed: Any = ()
        if self.defer_accept:  # one token per request: checked there
            slow, allowed, taken, stepped = feed_requests(self._table, self.cache, self.namespace, requests, token_ids)
            self.deferred += taken
            self.stepped += stepped
        elif len(token_ids) != len(requests):
            raise ToolwireError("accept needs one token per request")
        else:
            slow = [i for i, r in enumerate(requests) if r is not None and not r.terminated]
        out = [True] * len(requests)
        if allowed:
            allowed = set(allowed)
        for i in slow:
            request = requests[i]
            if request.terminated:
                continue
            if not self.defer_accept:  # nothing takes steps alone: none to note
                out[i] = request.accept_token(int(token_ids[i]))
                continue
            # a token the cached row allows needs no matcher to judge it (ComposedMatcher._accept_allowed)
            out[i] = request._accept_noted(int(token_ids[i]), i in allowed)
        return out

    def rollback(self, requests: Sequence[Any], n: int) -> None:
        """Undo the last ``n`` tokens of each request (speculative decoding's rejected drafts)."""
        for r in requests:
            if r is not None:
                r.rollback(n)

    def stats(self) -> dict[str, Any]:
        """Rows served from the cache and computed, tokens taken by a keyer without a matcher, steps
        of a call taken without Python (``CallSteps``), and the cache's own counters."""
        return {"hits": self.hits, "misses": self.misses, "deferred": self.deferred, "stepped": self.stepped, "cache": self.cache.stats()}
