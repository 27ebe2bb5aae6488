"""A/B of two versions of ``toolwire.grammar`` in one process, alternating traces.

    python benches/composed_ab.py PREV_GRAMMAR_DIR [--new NEW_GRAMMAR_DIR] [--format hermes] [--batch 16] [--warm 64] [--traces 100]

Runs in separate processes moved by up to 5% between minutes on the 2-core machine, more than
most changes to the composed path's Python are worth. Here the working tree's
``toolwire.grammar`` (or ``--new``) and a copy of another version's ``python/toolwire/grammar``
directory (loaded as a second module, ``toolwire.grammar_prev``, with its own module caches) each
get a ``ComposedMasker``; both serve ``--warm`` traces untimed, then the same ``--traces`` traces,
in alternating order, each after a full ``gc.collect()`` (as ``bench_composed`` does). Two copies
of one version measure 0.99-1.00x. Both use the installed extension (``toolwire._core``), so this
compares Python changes only; a change to the extension needs two processes
(``composed_breakdown.py --plain`` with ``PYTHONPATH``, alternated, many traces).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import bench_composed as bc  # noqa: E402
import xgrammar as xgr  # noqa: E402


def load_grammar(directory: str, name: str) -> tuple[ModuleType, ModuleType]:
    """``composed`` and ``composed_batch`` of the grammar package in ``directory``, loaded as
    ``toolwire.<name>`` (its relative imports stay inside it)."""
    spec = importlib.util.spec_from_file_location(f"toolwire.{name}", str(Path(directory) / "__init__.py"), submodule_search_locations=[directory])
    if spec is None or spec.loader is None:
        raise SystemExit(f"no grammar package in {directory}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"toolwire.{name}"] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"toolwire.{name}.composed"), importlib.import_module(f"toolwire.{name}.composed_batch")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prev", help="a copy of another version's python/toolwire/grammar directory")
    ap.add_argument("--new", help="a grammar directory to compare instead of the working tree's")
    ap.add_argument("--format", default="hermes")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--warm", type=int, default=64, help="untimed traces first")
    ap.add_argument("--traces", type=int, default=100, help="timed traces after them")
    args = ap.parse_args(argv)
    if args.new:
        new = load_grammar(args.new, "grammar_new")
    else:
        from toolwire.grammar import composed, composed_batch

        new = (composed, composed_batch)
    versions = {"new": new, "prev": load_grammar(args.prev, "grammar_prev")}
    info, tool_list = bc.qwen_info(), bc.tools(128, "p")
    sides: dict[str, tuple[Any, Any]] = {}
    for name, (composed_mod, batch_mod) in versions.items():
        grammar = composed_mod.compose(args.format, tool_list, info, "auto", True, "strict")
        grammar.prefetch()
        sides[name] = (grammar, batch_mod.ComposedMasker(info))
    bitmask = xgr.allocate_token_bitmask(args.batch, bc.QWEN_VOCAB_SIZE)

    def run(name: str, seqs: list[list[int]], timed: bool) -> tuple[float, int]:
        grammar, masker = sides[name]
        steps = bc.step_lists(seqs, [masker.new_request(grammar) for _ in seqs])
        if timed:
            gc.collect()
        start, rows = time.process_time(), 0
        for live, requests, tokens in steps:
            masker.fill(requests, bitmask, live)
            masker.accept(requests, tokens)
            rows += len(live)
        return time.process_time() - start, rows

    for k in range(args.warm):
        seqs = bc.trace(args.format, tool_list, args.batch, args.batch * 1000 + k)
        for name in sides:
            run(name, seqs, False)
    spent, rows = {"new": 0.0, "prev": 0.0}, 0
    for k in range(args.warm, args.warm + args.traces):
        seqs = bc.trace(args.format, tool_list, args.batch, args.batch * 1000 + k)
        for name in ("new", "prev") if k % 2 else ("prev", "new"):
            took, rows_here = run(name, seqs, True)
            spent[name] += took
        rows += rows_here
    misses = {name: masker.misses for name, (_, masker) in sides.items()}
    print(f"{args.format}, batch {args.batch}, {rows} rows a side: prev {spent['prev'] / rows * 1e6:.3f}, new {spent['new'] / rows * 1e6:.3f} µs a row "
          f"(new / prev {spent['new'] / spent['prev']:.3f}); misses prev {misses['prev']}, new {misses['new']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
