#!/usr/bin/env python3
"""Random-model generations under toolwire's structural tag must all parse into schema-valid calls.

The model is the demo's (``toolwire._demo_live.random_model``: a 2-layer Llama with random
weights over Qwen's 151,936 ids); the tag is ``grammar.structural_tag(format, tools,
tool_choice="required", schema="strict")`` for three tools (strings, an enum, bounded and
unbounded integers, a boolean, an array), bounded for noise (strings capped at 16 characters or,
for Python literals, a few fixed values; whitespace runs at 2). Requests decode in batches:
one forward pass per step, BatchMasker masks applied with ``apply_token_bitmask_``, finished rows
dropped from the KV cache. Every finished output is parsed with ``ToolParser(format, tools,
tool_choice="required")`` and must give at least one call and no issue; an output cut at
``--max-new-tokens`` is counted apart (the grammar did not fail it; the budget ran out).

Usage:
  python benches/random_model_generations.py --per-format 1000 [--formats hermes,qwen3_coder]
                                             [--batch 64] [--markdown OUT]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import toolwire
from toolwire import _demo_live as live


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-format", type=int, default=1000)
    ap.add_argument("--formats", default="all", help="comma-separated, or 'all'")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--max-new-tokens", type=int, default=512)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", help="write the result table here (rewritten after each format)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    try:
        import transformers

        transformers.logging.set_verbosity_error()
    except ImportError:
        pass
    formats = list(toolwire.formats()) if args.formats == "all" else args.formats.split(",")
    model = live.random_model(args.seed)
    lines = [
        f"Random-model generations, {args.per_format} per format (seed {args.seed}, batch {args.batch}, "
        f"at most {args.max_new_tokens} new tokens; CPU, 1 thread)",
        "",
        "| format | outputs | finished | parse failures | calls | output rate | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    failures = 0
    for fmt in formats:
        t0 = time.perf_counter()
        try:
            outputs = live.generate(
                fmt, args.per_format, batch=args.batch, seed=args.seed, max_new_tokens=args.max_new_tokens,
                model=model, progress=live.Progress(args.per_format, fmt),
            )  # fmt: skip
        except toolwire.ToolwireError as e:
            lines.append(f"| {fmt} | – | – | – | – | – | not generated: {e} |")
            print(lines[-1], flush=True)
            continue
        seconds = time.perf_counter() - t0
        bad = live.check_outputs(fmt, outputs)
        failures += len(bad)
        parser = toolwire.ToolParser(fmt, tools=live.GENERATION_TOOLS)
        calls = sum(len(parser.parse(g.text).tool_calls) for g in outputs if g.finished)
        finished = sum(g.finished for g in outputs)
        chars = sum(len(g.text) for g in outputs)
        lines.append(
            f"| {fmt} | {len(outputs)} | {finished} | {len(bad)} | {calls} | {chars / seconds:.0f} chars/s | {seconds:.0f} |"
        )
        print(lines[-1], flush=True)
        for i, why in bad[:3]:
            print(f"#   {fmt} output {i}: {why[:400]}", file=sys.stderr)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write("\n".join(lines) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
