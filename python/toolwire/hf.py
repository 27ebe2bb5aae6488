"""Grammar-constrained ``transformers`` generation (needs ``torch``, ``transformers`` and ``xgrammar``).

::

    grammar = xgrammar.GrammarCompiler(info).compile_structural_tag(tag)
    out = model.generate(input_ids, logits_processor=[ToolCallLogitsProcessor(grammar)],
                         eos_token_id=info.stop_token_ids, do_sample=True)

Each step, every row's matcher accepts the token sampled at the previous step, fills its row of
an int32 bitmask, and the bitmask is applied to the scores with
:func:`toolwire.torch.apply_token_bitmask_` (ids past the grammar's vocabulary, such as lm_head
padding, are blocked). Rows whose grammar has ended are left alone: ``generate`` pads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolwire._core import ToolwireError
from toolwire.masks import _xgrammar

try:
    import torch
    from transformers import LogitsProcessor
except ImportError as e:  # pragma: no cover - exercised only without the packages
    raise ImportError("toolwire.hf needs torch and transformers: pip install torch transformers") from e

from toolwire.torch import apply_token_bitmask_

if TYPE_CHECKING:
    import xgrammar

__all__ = ["ToolCallLogitsProcessor"]


class ToolCallLogitsProcessor(LogitsProcessor):
    """A ``LogitsProcessor`` that keeps every row of a ``generate()`` call inside a grammar.

    Arguments:
        compiled_grammar: an xgrammar ``CompiledGrammar`` (a structural tag for tool calls, a JSON
            schema, ...), compiled with the model's tokenizer and lm_head size.
        masker: optional :class:`toolwire.masks.BatchMasker` that fills the bitmask (with its mask
            cache); by default each row's matcher fills its own row.
        tag: with a masker, the structural tag the grammar was compiled from, for anchored cache
            keys (see :meth:`toolwire.masks.BatchMasker.new_request`).

    ``generate()`` applies its own warpers (``top_k``, ``top_p``, ...) before custom processors;
    leave them unset and append them after this processor, or a warper may keep only tokens the
    grammar blocks (this raises rather than sampling from nothing).

    One instance serves one ``generate()`` call (greedy search or sampling; beam search reorders
    rows and is refused). Call :meth:`reset` to reuse it.
    """

    def __init__(self, compiled_grammar: xgrammar.CompiledGrammar, *, masker: Any = None, tag: Any = None) -> None:
        self._xgr = _xgrammar()
        self.grammar = compiled_grammar
        self.vocab_size: int = compiled_grammar.tokenizer_info.vocab_size
        self.masker = masker
        self.tag = tag
        self.reset()

    def reset(self) -> None:
        """Forget the rows of the last ``generate()`` call."""
        self.matchers: list[Any] = []
        self.requests: list[Any] = []
        self._prompt_len = -1
        self._steps = 0
        self._history: torch.Tensor | None = None
        self._bitmask: torch.Tensor | None = None

    @property
    def terminated(self) -> list[bool]:
        """Per row: whether its grammar has ended (a stop token was accepted). The token sampled at
        the last step of ``generate()`` is never shown to a processor, so the row that stops last
        still reads False."""
        return [m.is_terminated() for m in self.matchers]

    def _start(self, input_ids: torch.Tensor) -> None:
        rows = input_ids.shape[0]
        self._prompt_len = input_ids.shape[1]
        if self.masker is not None:
            self.requests = [self.masker.new_request(self.grammar, self.tag) for _ in range(rows)]
            self.matchers = [r.matcher for r in self.requests]
        else:
            self.matchers = [self._xgr.GrammarMatcher(self.grammar) for _ in range(rows)]
        self._bitmask = self._xgr.allocate_token_bitmask(rows, self.vocab_size)
        self._history = input_ids.new_empty((rows, 0))

    def _accept_last(self, input_ids: torch.Tensor) -> None:
        if input_ids.shape[0] != len(self.matchers) or input_ids.shape[1] != self._prompt_len + self._steps:
            raise ToolwireError(
                "input_ids do not continue the previous step (a new generate() call, or beam search); "
                "use a fresh ToolCallLogitsProcessor or call reset()"
            )
        assert self._history is not None
        generated = input_ids[:, self._prompt_len :]
        if not torch.equal(generated[:, :-1], self._history):
            raise ToolwireError("rows were reordered between steps (beam search?); only greedy search and sampling work")
        self._history = generated
        for row, token in enumerate(generated[:, -1].tolist()):
            matcher = self.matchers[row]
            if matcher.is_terminated():
                continue  # generate() pads finished rows
            ok = self.requests[row].accept_token(token) if self.requests else matcher.accept_token(token)
            if not ok:
                raise ToolwireError(
                    f"row {row}: the grammar rejects token {token} at step {self._steps}; "
                    "was the mask overridden by a later processor?"
                )

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        if self._prompt_len < 0:
            self._start(input_ids)
        else:
            self._accept_last(input_ids)
        self._steps += 1
        bitmask = self._bitmask
        assert bitmask is not None
        live = [row for row, m in enumerate(self.matchers) if not m.is_terminated()]
        if not live:
            return scores
        if self.masker is not None:
            self.masker.fill([self.requests[r] for r in live], bitmask, indices=live)
        else:
            for row in live:
                self.matchers[row].fill_next_token_bitmask(bitmask, row)
        if scores.shape[-1] < self.vocab_size:
            raise ToolwireError(f"scores have {scores.shape[-1]} columns, the grammar's vocabulary {self.vocab_size}")
        apply_token_bitmask_(scores, bitmask, indices=live, vocab_size=self.vocab_size)
        dead = ~torch.isfinite(scores[live]).any(dim=-1)
        if bool(dead.any()):
            row = live[int(dead.nonzero()[0, 0])]
            raise ToolwireError(
                f"row {row}: no token the grammar allows is left. generate() runs its own warpers (top_k, "
                "top_p, min_p) before custom processors, so they can remove every allowed token: pass "
                "top_k=None, top_p=None and append those warpers to logits_processor after this one"
            )
        return scores
