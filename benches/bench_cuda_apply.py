#!/usr/bin/env python3
"""CUDA bitmask apply: toolwire.torch.apply_token_bitmask_ against xgrammar's GPU kernels.

The one device check of the decode-loop issue, as a single short script for a machine with an
NVIDIA GPU (the `device` tool): ``[64, 151936]`` float32 and bfloat16 logits on the GPU, masks
from a real Hermes reply on the Qwen vocabulary (``bench_bitmask.trace_masks``: free text, inside
a JSON string, forced scaffolding, and a mix), the bitmask already on the GPU.

First every implementation is checked against a plain reference (``logits[~allowed] = -inf``),
including logits wider than the vocabulary (``vocab_size=151936`` on 152,064 columns: toolwire
blocks the padding columns, xgrammar leaves them, so only the vocabulary's columns are compared
with xgrammar there). Then each is timed with CUDA events, median of ``--repeats`` calls on
fresh copies (the copy is not timed); achieved bandwidth counts the logits read and written once
and the bitmask read once.

Usage (exits 2 when CUDA is not available; ``--device cpu`` is a dry run of the same checks):
  python benches/bench_cuda_apply.py [--repeats 200] [--json OUT] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from bench_bitmask import VOCAB_SIZE, batch_of, trace_masks  # noqa: E402
from toolwire.torch import apply_token_bitmask_  # noqa: E402

BATCH = 64
PADDED = 152_064
DEVICE = "cuda"


def reference(logits: torch.Tensor, bitmask: torch.Tensor, vocab_size: int) -> torch.Tensor:
    shifts = torch.arange(32, dtype=torch.int32, device=bitmask.device)
    bits = ((bitmask.unsqueeze(-1) >> shifts) & 1).reshape(bitmask.shape[0], -1)
    allowed = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    allowed[:, :vocab_size] = bits[:, :vocab_size] == 1
    return logits.masked_fill(~allowed, float("-inf"))


def implementations(xgr) -> dict:
    impls = {"toolwire": lambda lg, bm, v: apply_token_bitmask_(lg, bm, vocab_size=v)}
    if xgr is not None:
        for backend in ("triton", "cuda", "auto"):
            impls[f"xgrammar {backend}"] = (
                lambda lg, bm, v, b=backend: xgr.apply_token_bitmask_inplace(lg, bm, vocab_size=v, backend=b)
            )
    return impls


def check(impls: dict, bitmask: torch.Tensor, dtype: torch.dtype) -> dict[str, str]:
    """'ok', or why an implementation is left out of the timings."""
    verdicts = {}
    for width in (VOCAB_SIZE, PADDED):
        fresh = torch.randn(BATCH, width, device=DEVICE).to(dtype)
        want = reference(fresh, bitmask, VOCAB_SIZE)
        for name, fn in impls.items():
            if verdicts.get(name, "ok") != "ok":
                continue
            logits = fresh.clone()
            try:
                fn(logits, bitmask, VOCAB_SIZE)
            except Exception as e:  # a backend this machine lacks
                verdicts[name] = f"unavailable: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
                continue
            cols = width if name == "toolwire" else VOCAB_SIZE
            same = torch.equal(logits[:, :cols], want[:, :cols])
            verdicts[name] = "ok" if same else f"differs from the reference at width {width}"
    return verdicts


def timed(fn, fresh: torch.Tensor, bitmask: torch.Tensor, repeats: int) -> float:
    logits = fresh.clone()
    for _ in range(5):
        fn(logits, bitmask, VOCAB_SIZE)
    samples = []
    if DEVICE != "cuda":
        for _ in range(repeats):
            logits.copy_(fresh)
            t0 = time.perf_counter_ns()
            fn(logits, bitmask, VOCAB_SIZE)
            samples.append((time.perf_counter_ns() - t0) / 1000.0)
        return statistics.median(samples)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(repeats):
        logits.copy_(fresh)
        start.record()
        fn(logits, bitmask, VOCAB_SIZE)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--device", default="cuda", help="cuda, or cpu for a dry run of the checks")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("CUDA is not available: run this on a machine with an NVIDIA GPU", file=sys.stderr)
        return 2
    try:
        import xgrammar as xgr
    except ImportError:
        xgr = None
    name = torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE
    print(f"# {name}, torch {torch.__version__}, median of {args.repeats}, batch {BATCH}")
    kinds = trace_masks()
    impls = implementations(xgr)
    rows, failed = [], False
    for dtype in (torch.float32, torch.bfloat16):
        for kind in ("free", "json", "forced", "mix"):
            bitmask = batch_of(kinds[kind], BATCH, spread=kind == "mix").to(DEVICE)
            verdicts = check(impls, bitmask, dtype)
            failed |= verdicts["toolwire"] != "ok"
            fresh = torch.randn(BATCH, VOCAB_SIZE, device=DEVICE).to(dtype)
            moved = 2 * fresh.numel() * fresh.element_size() + bitmask.numel() * 4
            for name, fn in impls.items():
                row = {"dtype": str(dtype).removeprefix("torch."), "kind": kind, "impl": name, "check": verdicts[name]}
                if verdicts[name] == "ok":
                    us = timed(fn, fresh, bitmask, args.repeats)
                    row.update(us=us, gb_per_s=moved / us / 1e3)
                rows.append(row)
                shown = f"{row['us']:9.1f} us {row['gb_per_s']:7.0f} GB/s" if "us" in row else row["check"]
                print(f"{row['dtype']:9} {kind:7} {name:18} {shown}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
