"""Scoring a rollout batch: parse and validate many completions at once.

RL rewards need, per completion, the calls and how many issues (the invalid-action signal) the
serving parser finds. :func:`score_batch` hands the whole batch to Rust, which parses it with the
GIL released on several threads. :func:`count_batch` is the same parse handing back only columns
of counts (calls, issues, issues per kind): what a reward reads, without a Python object per
message (those take a good part of the time at a few hundred bytes per completion). :class:`BatchScorer`
is :func:`score_batch` shaped for Ray Data's ``map_batches`` (a callable class: built once per
worker, called with a dict of columns).

A format's own stop tokens at the end of a completion (``<|im_end|>`` for Hermes: ``stops`` in
:func:`toolwire.format_info`) are dropped by the parser, as a serving engine strips them; only a
stop id the format does not list needs ``strip_ids``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire._core import ParsedMessage, ToolParser, parse_batch, parse_batch_counts

__all__ = ["BatchScorer", "Counts", "Scores", "count_batch", "score_batch"]


@dataclass
class Scores:
    """Per completion, in order."""

    messages: list[ParsedMessage]
    issue_counts: list[int]
    call_counts: list[int]

    @property
    def valid(self) -> list[bool]:
        return [n == 0 for n in self.issue_counts]


def score_batch(
    parser: ToolParser,
    completions: Sequence[str | Sequence[int]],
    *,
    threads: int | None = None,
    finish_reason: str | None = None,
    strip_ids: Iterable[int] = (),
) -> Scores:
    """Parse ``completions`` (texts, or token ids for a parser built with ``vocab=``) with
    ``parser`` on ``threads`` threads (default: every core), the GIL released.

    ``strip_ids``: stop ids the format does not list to drop from the end of id completions
    first, as a serving engine does before its parser sees the output (the format's own are
    dropped by the parser).
    """
    messages, calls, issues = parse_batch(parser, completions, threads=threads, finish_reason=finish_reason,
                                          strip_ids=list(strip_ids))
    return Scores(messages, issues, calls)


@dataclass
class Counts:
    """Per completion, in order: what a reward reads."""

    call_counts: list[int]
    issue_counts: list[int]
    issue_kinds: dict[str, list[int]]
    """Per issue kind found in the batch (``CallIssue.kind``), its count in each completion."""

    @property
    def valid(self) -> list[bool]:
        return [n == 0 for n in self.issue_counts]


def count_batch(
    parser: ToolParser,
    completions: Sequence[str | Sequence[int]],
    *,
    threads: int | None = None,
    finish_reason: str | None = None,
    strip_ids: Iterable[int] = (),
) -> Counts:
    """:func:`score_batch` without the messages: the same parse on ``threads`` threads, the GIL
    released, handing back only counts."""
    calls, issues, kinds = parse_batch_counts(parser, completions, threads=threads, finish_reason=finish_reason,
                                              strip_ids=list(strip_ids))
    return Counts(calls, issues, kinds)


class BatchScorer:
    """A Ray Data ``map_batches`` callable: adds ``tool_calls`` (OpenAI calls as JSON text),
    ``issue_count``, ``issue_kinds`` (comma-separated) and ``valid`` to each batch.

    ::

        ds.map_batches(BatchScorer, fn_constructor_kwargs={"format": "hermes", "tools": tools},
                       concurrency=4, batch_format="numpy")

    Arguments:
        column: the column with the completions (texts, or token-id lists with ``vocab``).
        threads: threads per call (default: every core of the worker).
        parser_options: more :class:`toolwire.ToolParser` arguments (``reasoning``, ``vocab``...).
    """

    def __init__(
        self,
        format: str,
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        column: str = "completion",
        threads: int | None = None,
        strip_ids: Iterable[int] = (),
        **parser_options: Any,
    ) -> None:
        self.parser = ToolParser(format, tools, **parser_options)
        self.column = column
        self.threads = threads
        self.strip_ids = tuple(strip_ids)

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, Any]:
        column = batch[self.column]
        completions = [c if isinstance(c, str) else [int(i) for i in c] for c in column]
        scores = score_batch(self.parser, completions, threads=self.threads, strip_ids=self.strip_ids)
        out = dict(batch)
        out["tool_calls"] = [json.dumps([c.to_openai() for c in m.tool_calls]) for m in scores.messages]
        out["issue_count"] = scores.issue_counts
        out["issue_kinds"] = [",".join(i.kind for i in m.issues) for m in scores.messages]
        out["valid"] = scores.valid
        return out
