#!/usr/bin/env python3
"""Batch mask production: toolwire's BatchMasker against xgrammar's BatchGrammarMatcher.

One run replays a tool-calling trace at batch 16 and 64 on the Qwen vocabulary (151,936 ids)
under toolwire's own structural tag (``grammar.structural_tag(format, tools, scope="always",
schema="strict")``, five tools of ``samples.py``). Each reply is a sentence or three of prose, then
0-3 calls with varied arguments (cities, search queries, file paths, e-mails, events), written as
the family writes them and tokenised by the Qwen BPE with the markers as their special ids.

Each step of the loop is what a serving engine does per decode step for the live requests:

* xgrammar: ``BatchGrammarMatcher.batch_fill_next_token_bitmask(matchers, bitmask, live)``, then
  ``accept_token`` per matcher (cheaper than ``batch_accept_token``, whose result container is
  slow to read from Python);
* toolwire: ``BatchMasker.fill(requests, bitmask, live)``, then ``BatchMasker.accept(requests,
  tokens)`` (hits copy a cached row, misses go to xgrammar's batch fill). By default the masker
  defers accepts: a token the cached mask allows is taken in Rust and the matcher reads the
  deferred bytes in one ``accept_string`` before its next fill; the column "accept_token per
  step" is the same masker with ``defer_accept=False``.

Both sides create their matchers inside the timed loop, as a server does per request.

Measured: CPU time of the whole process (``time.process_time``, every thread counted, so
xgrammar's worker threads cannot hide cost) over the whole step loop, min and median of
``--repeats`` runs. The cache is measured cold (a new ``MaskCache`` per run: hits come from
within the batch) and warm (the cache kept from a run over a different trace with the same tools,
as in a server that has been up for a while).

Usage:
  python benches/bench_batch_masks.py [--batches 16,64] [--formats hermes,qwen3_coder]
                                      [--repeats 5] [--threads auto] [--markdown OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import toolwire  # noqa: E402
import torch  # noqa: E402
import xgrammar as xgr  # noqa: E402
from _decode_support import QWEN_VOCAB_SIZE, qwen_compiler, qwen_encoder, qwen_info, qwen_vocab  # noqa: E402
from samples import _BODIES, _CITIES, _PATHS, _PEOPLE, _QUERIES, _SUBJECTS, _TITLES, TOOLS  # noqa: E402
from toolwire import grammar  # noqa: E402
from toolwire.masks import BatchMasker, _index  # noqa: E402

SENTENCES = [
    "Sure, I can help with that.",
    "Let me look this up for you.",
    "I'll check the forecast and the latest results before answering.",
    "First I need a bit more context, so I'm going to read the file you mentioned.",
    "Here is what I found so far; one more lookup should settle it.",
    "I'll send a short note to the team and put the review on the calendar.",
    "Based on the numbers above, the second option looks cheaper over a year.",
    "That's a good question — the answer depends on the tokenizer's merges.",
]


def _call(rng: random.Random) -> dict:
    kind = rng.randrange(5)
    if kind == 0:
        args: dict = {"location": rng.choice(_CITIES)}
        if rng.random() < 0.5:
            args["unit"] = rng.choice(["celsius", "fahrenheit"])
        if rng.random() < 0.5:
            args["days"] = rng.randrange(1, 15)
        return {"name": "get_weather", "arguments": args}
    if kind == 1:
        args = {"query": rng.choice(_QUERIES) + rng.choice(["", " 2025", " site:github.com", " explained"])}
        if rng.random() < 0.5:
            args["max_results"] = rng.randrange(1, 20)
        return {"name": "search_web", "arguments": args}
    if kind == 2:
        start = rng.randrange(1, 400)
        return {"name": "read_file", "arguments": {"path": rng.choice(_PATHS), "start_line": start, "end_line": start + rng.randrange(5, 80)}}
    if kind == 3:
        return {"name": "send_email", "arguments": {"to": rng.choice(_PEOPLE), "subject": rng.choice(_SUBJECTS), "body": rng.choice(_BODIES)}}
    return {
        "name": "create_event",
        "arguments": {
            "title": rng.choice(_TITLES),
            "start": f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(10, 29)}T{rng.randrange(8, 18):02d}:{rng.choice(['00', '30'])}:00",
            "duration_minutes": rng.choice([15, 30, 45, 60, 90]),
            "attendees": rng.sample(_PEOPLE, rng.randrange(1, 3)),
        },
    }


def _render(fmt: str, calls: list[dict]) -> str:
    if fmt == "hermes":  # as Qwen writes it: `", "` and `": "` separators
        return "\n".join(
            f'<tool_call>\n{{"name": "{c["name"]}", "arguments": {json.dumps(c["arguments"], ensure_ascii=False)}}}\n</tool_call>'
            for c in calls
        )
    return toolwire.render(fmt, calls)


def trace(fmt: str, n: int, seed: int) -> list[list[int]]:
    """n replies as token ids, each ending with <|im_end|>."""
    rng = random.Random(seed)
    index, enc = _index(qwen_vocab()), qwen_encoder()
    out = []
    for _ in range(n):
        text = " ".join(rng.choice(SENTENCES) for _ in range(rng.randrange(1, 4)))
        calls = [_call(rng) for _ in range(rng.choice([0, 1, 1, 1, 2, 2, 3]))]
        body = text + ("\n\n" + _render(fmt, calls) if calls else "")
        out.append(index.encode(body, enc.encode) + [151645])
    return out


def _steps(seqs):
    batch, steps = len(seqs), max(map(len, seqs))
    for step in range(steps):
        live = [i for i in range(batch) if step < len(seqs[i])]
        yield live, [seqs[i][step] for i in live]


def run_xgrammar(seqs, compiled, threads) -> float:
    bitmask = xgr.allocate_token_bitmask(len(seqs), QWEN_VOCAB_SIZE)
    batch = xgr.BatchGrammarMatcher(threads)
    t0 = time.process_time()
    matchers = [xgr.GrammarMatcher(compiled) for _ in seqs]  # as toolwire's new_request, timed
    for live, tokens in _steps(seqs):
        ms = [matchers[i] for i in live]
        batch.batch_fill_next_token_bitmask(ms, bitmask, live)
        for m, token in zip(ms, tokens):  # cheaper than batch_accept_token, whose result is slow to read
            if not m.accept_token(token):
                raise AssertionError("the trace leaves the grammar")
    return time.process_time() - t0


def run_toolwire(seqs, compiled, tag, masker: BatchMasker) -> float:
    bitmask = xgr.allocate_token_bitmask(len(seqs), QWEN_VOCAB_SIZE)
    t0 = time.process_time()
    requests = [masker.new_request(compiled, tag) for _ in seqs]
    for live, tokens in _steps(seqs):
        rs = [requests[i] for i in live]
        masker.fill(rs, bitmask, live)
        ok = masker.accept(rs, tokens)
        assert all(ok), "the trace leaves the grammar"
    return time.process_time() - t0


def measure(fmt: str, batch: int, repeats: int, threads, seed: int) -> dict:
    tag_object = grammar.structural_tag(fmt, TOOLS, scope="always", schema="strict")
    compiled = qwen_compiler().compile_structural_tag(tag_object)
    tag = tag_object.model_dump_json()  # as a server keeps it (Plan.payload_json())
    seqs = trace(fmt, batch, seed)
    warmup = trace(fmt, batch, seed + 1000)
    tokens = sum(map(len, seqs))
    xg, cold, eager, warm = [], [], [], []
    cold_stats = warm_stats = {}
    for _ in range(repeats):
        xg.append(run_xgrammar(seqs, compiled, threads))
        masker = BatchMasker(qwen_info(), vocab=qwen_vocab(), batch_threads=threads)
        cold.append(run_toolwire(seqs, compiled, tag, masker))
        cold_stats = masker.stats()
        masker = BatchMasker(qwen_info(), vocab=qwen_vocab(), batch_threads=threads, defer_accept=False)
        eager.append(run_toolwire(seqs, compiled, tag, masker))
        masker = BatchMasker(qwen_info(), vocab=qwen_vocab(), batch_threads=threads)
        run_toolwire(warmup, compiled, tag, masker)
        before = masker.stats()
        warm.append(run_toolwire(seqs, compiled, tag, masker))
        after = masker.stats()
        warm_stats = {k: after[k] - before[k] for k in ("hits", "misses")}
    us = lambda xs, f: f(xs) / tokens * 1e6  # noqa: E731
    row = {"format": fmt, "batch": batch, "tokens": tokens}
    for name, xs in (("xgrammar", xg), ("cold", cold), ("eager", eager), ("warm", warm)):
        row[name] = {"min_us": us(xs, min), "median_us": us(xs, statistics.median)}
    row["cold_hit_rate"] = cold_stats["hits"] / (cold_stats["hits"] + cold_stats["misses"])
    row["warm_hit_rate"] = warm_stats["hits"] / (warm_stats["hits"] + warm_stats["misses"])
    return row


def markdown(rows: list[dict], threads, repeats: int) -> str:
    lines = [
        f"CPU µs per token (process time, all threads; xgrammar BatchGrammarMatcher max_threads={threads}; "
        f"min / median of {repeats} runs)",
        "",
        "| format | batch | tokens | xgrammar batch | toolwire cold | ratio | hit rate "
        "| cold, accept_token per step | ratio | toolwire warm | ratio | hit rate |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        x, c, e, w = r["xgrammar"], r["cold"], r["eager"], r["warm"]
        lines.append(
            f"| {r['format']} | {r['batch']} | {r['tokens']} | {x['min_us']:.2f} / {x['median_us']:.2f} "
            f"| {c['min_us']:.2f} / {c['median_us']:.2f} | {x['min_us'] / c['min_us']:.2f}x | {r['cold_hit_rate']:.0%} "
            f"| {e['min_us']:.2f} / {e['median_us']:.2f} | {x['min_us'] / e['min_us']:.2f}x "
            f"| {w['min_us']:.2f} / {w['median_us']:.2f} | {x['min_us'] / w['min_us']:.2f}x | {r['warm_hit_rate']:.0%} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", default="16,64")
    ap.add_argument("--formats", default="hermes,qwen3_coder")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="auto", help="xgrammar max_threads (both sides): 'auto' or a number")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    torch.set_num_threads(1)
    threads = args.threads if args.threads == "auto" else int(args.threads)
    rows = []
    for fmt in args.formats.split(","):
        for batch in map(int, args.batches.split(",")):
            rows.append(measure(fmt, batch, args.repeats, threads, args.seed))
            print(json.dumps(rows[-1]), file=sys.stderr)
    table = markdown(rows, threads, args.repeats)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
