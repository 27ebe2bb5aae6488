#!/usr/bin/env python3
"""Benchmark toolwire.masks.BatchMasker (mask cache) against plain xgrammar fills.

A batch of Hermes replies (free text, then 0-2 calls with random arguments, every reply
different) on the Qwen vocabulary (151,936 ids) is replayed step by step: each step fills one
bitmask row per live request, then each request accepts its next token. Reported per run: the
time spent filling, the time spent accepting (the masker's state keyer runs there), hits and
misses. Min over --repeats runs; a fresh cache each run (so hits come from within the batch).

Usage:
  python benches/bench_masks.py [--batch 16] [--repeats 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import torch  # noqa: E402
import xgrammar as xgr  # noqa: E402
from _decode_support import QWEN_VOCAB_SIZE, encode_hermes, hermes_tag, qwen_compiler, qwen_info, qwen_vocab  # noqa: E402
from toolwire.masks import BatchMasker  # noqa: E402

WORDS = "the a weather city time please check now let me look up for you quickly today tomorrow in at".split()
CITIES = ["Paris", "Tokyo", "San Francisco, California", "Reykjavík", "Ho Chi Minh City", "Zürich", "Lagos", "Lima"]
ZONES = ["UTC", "Asia/Tokyo", "Europe/Paris", "America/Lima"]


def replies(n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 25))).capitalize()
        calls = []
        for _ in range(rng.randrange(0, 3)):
            if rng.random() < 0.6:
                args: dict = {"city": rng.choice(CITIES) + " " + " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 6)))}
                if rng.random() < 0.5:
                    args["days"] = rng.randrange(1, 30)
                calls.append(json.dumps({"name": "get_weather", "arguments": args}, ensure_ascii=False))
            else:
                calls.append(json.dumps({"name": "get_time", "arguments": {"timezone": rng.choice(ZONES)}}))
        out.append(encode_hermes(text, calls))
    return out


def run(seqs, grammar, tag, masker: BatchMasker | None):
    batch, steps = len(seqs), max(map(len, seqs))
    bitmask = xgr.allocate_token_bitmask(batch, QWEN_VOCAB_SIZE)
    if masker is not None:
        requests = [masker.new_request(grammar, tag) for _ in seqs]
    else:
        matchers = [xgr.GrammarMatcher(grammar) for _ in seqs]
    fill = accept = 0.0
    for step in range(steps):
        live = [i for i in range(batch) if step < len(seqs[i])]
        t0 = time.perf_counter()
        if masker is not None:
            masker.fill([requests[i] for i in live], bitmask, indices=live)
        else:
            for i in live:
                matchers[i].fill_next_token_bitmask(bitmask, i)
        t1 = time.perf_counter()
        for i in live:
            ok = requests[i].accept_token(seqs[i][step]) if masker is not None else matchers[i].accept_token(seqs[i][step])
            assert ok
        accept += time.perf_counter() - t1
        fill += t1 - t0
    return fill, accept


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    tag = hermes_tag()
    grammar = qwen_compiler().compile_structural_tag(tag)
    seqs = replies(args.batch, args.seed)
    tokens = sum(map(len, seqs))
    plain, cached = [], []
    stats = {}
    for _ in range(args.repeats):
        plain.append(run(seqs, grammar, tag, None))
        masker = BatchMasker(qwen_info(), vocab=qwen_vocab())
        cached.append(run(seqs, grammar, tag, masker))
        stats = masker.stats()
    print(f"# {args.batch} replies, {tokens} tokens; min of {args.repeats} runs; µs per token")
    print("| | fill | accept | total |")
    print("|---|---|---|---|")
    for name, runs in (("xgrammar fills", plain), ("BatchMasker", cached)):
        f, a = min(r[0] for r in runs), min(r[1] for r in runs)
        print(f"| {name} | {f / tokens * 1e6:.1f} | {a / tokens * 1e6:.1f} | {(f + a) / tokens * 1e6:.1f} |")
    print(f"# hits {stats['hits']}, misses {stats['misses']} ({stats['hits'] / tokens:.0%} of steps from the cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
