"""Where a composed mask row's CPU goes: per-part timers around one steady trace set.

    python benches/composed_breakdown.py [--format hermes] [--batch 16] [--warm 12] [--traces 4] [--plain] [--collect]

Runs ``bench_composed``'s trace for ``--warm`` seeds through one ``ComposedMasker`` untimed (so the
caches are as a serving engine's after a while), then ``--traces`` fresh seeds timed (the
masker's two calls a step: each step's lists are made before the clock, as ``bench_composed``
does), and prints µs per row (``time.process_time``: xgrammar's batch fill may use threads) for the whole step and
for the parts below, each timed around its call (the timers add about half a µs a call, so the
parts add up to more than they cost alone). Parts: ``fill`` and ``accept`` (the masker's two calls a step), inside them the Rust
calls (``unsafe_fill_request_rows``: the cached rows' copies; ``unsafe_store_request_rows``: the
misses' stores; ``feed_requests``: the tokens keyers take alone), xgrammar's batch fill of the
misses, and the ``ComposedMatcher`` methods a step may reach in Python (``accept_token`` for
every token no keyer took, ``_accept_allowed`` for those the cached row allows; within them
``_known_close`` and ``_enter_call``; before a miss
``_one_matcher``, which reads the deferred run, and ``_end_extras``). Also prints the misses and
rows, so a change in the hit rate shows. With ``--plain``, no timers: the whole step's µs a row
alone (many ``--traces`` after ``--warm 64`` give a steady row that moves by a few percent between
runs).

With ``--collect``, a full ``gc.collect()`` (untimed) before each timed trace, as
``bench_composed`` does by default: the heap walk evicts the CPU caches, and at batch 16 the
refill inside the trace costs ~0.6 µs a row (see the report's "Session 21").

For comparing two builds, run it in alternating processes (``PYTHONPATH`` pointing at a copy of
the other build's ``python/toolwire``), since this machine's speed moves between minutes.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import bench_composed as bc  # noqa: E402
import xgrammar as xgr  # noqa: E402
from toolwire.grammar import composed, composed_batch, composed_matcher  # noqa: E402

SPENT: defaultdict[str, float] = defaultdict(float)
MATCHER_PARTS = ("accept_token", "_accept_allowed", "_known_close", "_enter_call", "_one_matcher", "_end_extras")
MODULE_PARTS = ("unsafe_fill_request_rows", "unsafe_store_request_rows", "feed_requests")


def timed(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        start = time.process_time()
        try:
            return f(*args)
        finally:
            SPENT[name] += time.process_time() - start

    return run


def instrument(masker: composed_batch.ComposedMasker) -> None:
    for name in MODULE_PARTS:
        setattr(composed_batch, name, timed(name, getattr(composed_batch, name)))
    for name in MATCHER_PARTS:
        setattr(composed_matcher.ComposedMatcher, name, timed(name, getattr(composed_matcher.ComposedMatcher, name)))
    for name in ("fill", "accept"):
        setattr(composed_batch.ComposedMasker, name, timed(name, getattr(composed_batch.ComposedMasker, name)))
    batch = masker._batch
    batch.batch_fill_next_token_bitmask = timed("xgrammar batch fill", batch.batch_fill_next_token_bitmask)  # type: ignore[method-assign]


def steps_of(masker: composed_batch.ComposedMasker, grammar: Any, seqs: list[list[int]]) -> list[tuple[list[int], list[Any], list[int]]]:
    """A trace's steps for new requests (``bench_composed.step_lists``), made before any clock."""
    return bc.step_lists(seqs, [masker.new_request(grammar) for _ in seqs])


def step_through(masker: composed_batch.ComposedMasker, steps: list[tuple[list[int], list[Any], list[int]]], bitmask: Any) -> int:
    """The masker's two calls a step over ``steps``; returns the rows filled."""
    rows = 0
    for live, requests, tokens in steps:
        masker.fill(requests, bitmask, live)
        masker.accept(requests, tokens)
        rows += len(live)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", default="hermes")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tools", type=int, default=128)
    ap.add_argument("--warm", type=int, default=12, help="untimed traces first")
    ap.add_argument("--traces", type=int, default=4, help="timed traces after them")
    ap.add_argument("--plain", action="store_true", help="no per-part timers: the whole step's cost alone")
    ap.add_argument("--collect", action="store_true", help="a full gc.collect() before each timed trace, as bench_composed does")
    args = ap.parse_args(argv)
    info = bc.qwen_info()
    tool_list = bc.tools(args.tools, "p")
    grammar = composed.compose(args.format, tool_list, info, "auto", True, "strict")
    grammar.prefetch()
    masker = composed_batch.ComposedMasker(info)
    bitmask = xgr.allocate_token_bitmask(args.batch, bc.QWEN_VOCAB_SIZE)
    for k in range(args.warm):
        step_through(masker, steps_of(masker, grammar, bc.trace(args.format, tool_list, args.batch, args.batch * 1000 + k)), bitmask)
    if not args.plain:
        instrument(masker)
    traces = [bc.trace(args.format, tool_list, args.batch, args.batch * 1000 + k) for k in range(args.warm, args.warm + args.traces)]
    misses_before, rows, whole = masker.misses, 0, 0.0
    for seqs in traces:
        steps = steps_of(masker, grammar, seqs)
        if args.collect:
            gc.collect()
        start = time.process_time()
        rows += step_through(masker, steps, bitmask)
        whole += time.process_time() - start
    misses = masker.misses - misses_before
    print(f"{args.format}, batch {args.batch}, {args.tools} tools: {rows} rows, {misses} misses ({misses / rows:.0%}), "
          f"{whole / rows * 1e6:.2f} µs a row" + ("" if args.plain else " with the timers"))
    for name, spent in sorted(SPENT.items(), key=lambda kv: -kv[1]):
        print(f"  {name:28} {spent / rows * 1e6:6.2f} µs a row")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
