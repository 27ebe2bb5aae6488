"""Composed grammars (``toolwire.grammar.composed``) against compiling the whole structural tag.

    python benches/bench_composed.py [--tools 1,16,128,512] [--batches 16,64,256]
        [--formats hermes,qwen3_coder] [--memory-tools 600] [--out benches/report/composed.md]

Qwen vocabulary (151,936 ids), strict tools with 3-8 properties (every third with a nested object
and an array of objects). Three parts, each a ratio within one run:

* time from request to first mask: xgrammar compiling toolwire's whole tag (a fresh compiler,
  its cache off) and xgrammar's builtin ``qwen_3`` tag (hermes), against ``compose`` + matcher +
  first fill, cold (scaffold, tool tags and pieces all new; the tokenizer's byte index is built
  beforehand, once per tokenizer, and reported) and warm (all tools seen). Composed grammars
  compile a tool's piece when its call starts: "first call" is that compile for one tool;
* mask production CPU (``time.process_time``) over traces of replies calling random tools out of
  128, per batch size: ``BatchGrammarMatcher`` fills + ``accept_token`` on the whole tag, against
  :class:`toolwire.masks.BatchMasker` on the whole tag and :class:`ComposedMasker` (pieces
  compiled beforehand), interleaved trace by trace, each on the same process CPU clock over the
  same steps (only the maskers' two calls a step are timed: each step's lists of rows, requests
  and tokens are made before the clock starts, as an engine holds its batch's lists already; the
  loop that made them inside the clock, until session 22, added the same ~3-4 µs a step to every
  side). The maskers' caches start empty ("cold": the first trace) and keep what they
  stored over ``--rounds`` traces of new replies ("warm": the last one), then serve more untimed
  before the traces of ``--steady-measured`` more requests (default 128), measured together
  ("steady": a server's cache after serving earlier requests): ``--steady-requests`` requests
  in all (default 1024, so every batch size is measured after the same traffic), or where that
  is 0, ``--steady`` more traces. One trace of 16 requests alone moved batch 16's steady ratio
  by a third between runs of the same build; 8 of them summed, by a few percent. Each row says how many rows the caches served and how many tokens the
  composed masker took without a matcher. Every reply draws its tools and each optional
  argument at random, so argument states keep missing (a server whose callers repeat their
  argument shapes hits more);
* glibc's allocator: the bench runs itself again with ``GLIBC_TUNABLES`` set (:data:`ALLOCATOR`)
  unless it is set already, so that no side pays page faults for memory it freed a step before
  (which put xgrammar's rows up to 30% higher depending on the order of the runs);
* memory: ``--memory-tools`` distinct tools through a :class:`PieceCache` of 16 MiB: its reported
  bytes, those of the caches of derived values (``composed.cache_stats``) and the process's
  peak RSS, halfway and at the end.

The rows also go to ``composed.json`` beside the report, and the first-mask table is drawn from
it as ``composed.svg`` (a log-log plot, written by hand: no plotting library needed).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import random
import resource
import shlex
import statistics
import sys
import time
from pathlib import Path

import toolwire
import xgrammar as xgr
from toolwire import grammar
from toolwire.grammar import composed as comp
from toolwire.grammar.composed_batch import ComposedMasker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _decode_support import QWEN_VOCAB_SIZE, qwen_encoder, qwen_info, qwen_vocab  # noqa: E402
from toolwire.masks import BatchMasker, _index  # noqa: E402


def tools(n: int, salt: str) -> list[dict]:
    out = []
    for i in range(n):
        props: dict = {
            f"query_{i}": {"type": "string"},
            f"mode_{i}": {"type": "string", "enum": ["fast", "exact", f"m{i}"]},
            f"limit_{i}": {"type": "integer"},
        }
        for k in range(i % 6):
            props[f"extra_{i}_{k}"] = [{"type": "string"}, {"type": "boolean"}, {"type": "number"}][k % 3]
        if i % 3 == 0:
            props[f"where_{i}"] = {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"], "additionalProperties": False}
            props[f"items_{i}"] = {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}, "note": {"type": "string"}}, "required": ["id"], "additionalProperties": False}}
        out.append({"type": "function", "function": {"name": f"fn_{salt}_{i}", "description": "A tool.", "strict": True, "parameters": {"type": "object", "properties": props, "required": list(props)[:3], "additionalProperties": False}}})
    return out


def arguments(rng: random.Random, tool: dict) -> dict:
    out: dict = {}
    for name, schema in tool["function"]["parameters"]["properties"].items():
        if name not in tool["function"]["parameters"]["required"] and rng.random() < 0.5:
            continue
        kind = schema.get("type")
        if "enum" in schema:
            out[name] = rng.choice(schema["enum"])
        elif kind == "string":
            out[name] = rng.choice(["Paris", "the weekly report", "src/main.rs", "hello world"])
        elif kind == "integer":
            out[name] = rng.randrange(1, 500)
        elif kind == "number":
            out[name] = round(rng.uniform(-90, 90), 3)
        elif kind == "boolean":
            out[name] = rng.random() < 0.5
        elif kind == "object":
            out[name] = {"lat": 48.85, "lon": 2.35}
        else:
            out[name] = [{"id": rng.randrange(9)} for _ in range(rng.randrange(1, 3))]
    return out


def trace(fmt: str, tool_list: list[dict], n: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    index, enc = _index(qwen_vocab()), qwen_encoder()
    out = []
    for _ in range(n):
        calls = [{"name": t["function"]["name"], "arguments": arguments(rng, t)} for t in rng.sample(tool_list, rng.choice([1, 1, 2]))]
        text = rng.choice(["Let me look that up.", "Sure, one moment.", "I'll check the files first."]) + "\n"
        out.append(index.encode(text + toolwire.render(fmt, calls), enc.encode) + [151645])
    return out


def _ms(f, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def first_mask(n: int, fmt: str, salt: str) -> dict:
    info = qwen_info()
    tl = tools(n, salt)
    bitmask = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    repeat = 1 if n >= 128 else 3

    def whole() -> None:
        tag = grammar.structural_tag(fmt, tl, "auto", True, "always", "strict")
        compiled = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False).compile_structural_tag(tag)
        xgr.GrammarMatcher(compiled).fill_next_token_bitmask(bitmask, 0)

    def builtin() -> None:
        tag = xgr.get_model_structural_tag("qwen_3", tools=tl, reasoning="disabled")
        compiled = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False).compile_structural_tag(tag)
        xgr.GrammarMatcher(compiled).fill_next_token_bitmask(bitmask, 0)

    def composed(pieces: comp.PieceCache) -> comp.ComposedGrammar:
        g = comp.compose(fmt, tl, info, "auto", True, "strict", pieces=pieces)
        assert g.fallback is None, g.fallback
        g.matcher().fill_next_token_bitmask(bitmask, 0)
        return g

    def cold(scaffold_too: bool) -> None:
        if scaffold_too:
            comp._SCAFFOLDS.clear()
        comp._TOOL_ENTRIES.clear()
        comp._COMPOSED.clear()
        comp._LITERAL_MASKS.clear()
        composed(comp.PieceCache())

    lists = iter(range(10**6))

    def new_list(pieces: comp.PieceCache) -> None:
        k = next(lists) % max(1, n)
        g = comp.compose(fmt, tl[:k] + tl[k + 1 :] or tl, info, "auto", True, "strict", pieces=pieces)
        g.matcher().fill_next_token_bitmask(bitmask, 0)

    row = {"tools": n, "format": fmt, "whole_ms": _ms(whole, repeat)}
    if fmt == "hermes":
        row["builtin_ms"] = _ms(builtin, repeat)
    row["cold_start_ms"] = _ms(lambda: cold(True), 3)
    row["cold_ms"] = _ms(lambda: cold(False), 3)
    pieces = comp.PieceCache()
    g = composed(pieces)
    row["first_call_ms"] = _ms(lambda: comp.PieceCache().get(g.tools[0].key, lambda: g.compiler.compile_structural_tag(comp.StructuralTag(format=g.tools[0].tag))), 3)
    g.prefetch()
    row["warm_ms"] = _ms(lambda: composed(pieces), 5)
    row["warm_new_list_ms"] = _ms(lambda: new_list(pieces), 5)
    return row


def step_lists(seqs: list[list[int]], reqs: list) -> list[tuple[list[int], list, list[int]]]:
    """Each step's live rows, their requests and their tokens (a trace's replies end at
    different steps), made before a clock starts: an engine holds its batch's lists already."""
    out = []
    for step in range(max(map(len, seqs))):
        live = [i for i in range(len(seqs)) if step < len(seqs[i])]
        out.append((live, [reqs[i] for i in live], [seqs[i][step] for i in live]))
    return out


def mask_cpu(fmt: str, batch: int, tl: list[dict], whole_compiled, whole_json: str, g: comp.ComposedGrammar, seed: int, rounds: int, steady: int, steady_traces: int, collect: bool = True) -> dict:
    bitmask = xgr.allocate_token_bitmask(batch, QWEN_VOCAB_SIZE)

    system: dict[str, float] = {}  # each side's system CPU over the measured traces

    def run(seqs, make, fill, accept, side: str = "") -> float:
        # only the two calls a step are timed, on every side alike
        plan = step_lists(seqs, [make() for _ in range(batch)])
        if collect:
            gc.collect()
        sys0 = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        t0 = time.process_time()
        for live, live_reqs, tokens in plan:
            fill(live_reqs, live)
            accept(live_reqs, tokens)
        spent = time.process_time() - t0
        system[side] = resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys0
        return spent

    batcher = xgr.BatchGrammarMatcher("auto")

    def x_accept(ms, toks):
        for m, t in zip(ms, toks):
            assert m.accept_token(t)

    whole = BatchMasker(qwen_info(), vocab=qwen_vocab())
    masker = ComposedMasker(qwen_info())
    def composed_run(seqs):
        return run(seqs, lambda: masker.new_request(g), lambda ms, r: masker.fill(ms, bitmask, r), lambda ms, t: masker.accept(ms, t), "c")

    def whole_run(seqs):
        return run(seqs, lambda: whole.new_request(whole_compiled, whole_json), lambda ms, r: whole.fill(ms, bitmask, r), lambda ms, t: whole.accept(ms, t))

    out: dict = {"format": fmt, "batch": batch, "fallback": g.fallback}
    measured = {0: "cold", rounds - 1: "warm"}
    first_steady = rounds + steady - 1
    for k in range(first_steady + steady_traces):
        seqs = trace(fmt, tl, batch, seed * 1000 + k)
        if rounds - 1 < k < first_steady:  # serving more replies: the caches only
            whole_run(seqs), composed_run(seqs)
            continue
        rows = sum(map(len, seqs))
        before = masker.hits, masker.misses, masker.deferred, whole.hits
        x = run(seqs, lambda: xgr.GrammarMatcher(whole_compiled), lambda ms, r: batcher.batch_fill_next_token_bitmask(ms, bitmask, r), x_accept, "x")
        w = whole_run(seqs)
        c = composed_run(seqs)
        label = measured.get(k, "steady" if k >= first_steady else None)
        if label is None:
            continue
        sums = out.setdefault(label, {"rows": 0, "traces": 0, "traces_before": k, "x": 0.0, "w": 0.0, "c": 0.0, "x_sys": 0.0, "c_sys": 0.0, "composed_hits": 0, "composed_misses": 0, "composed_deferred": 0, "batch_masker_hits": 0})
        sums["x_sys"] += system["x"]
        sums["c_sys"] += system["c"]
        sums["rows"] += rows
        sums["traces"] += 1
        sums["x"] += x
        sums["w"] += w
        sums["c"] += c
        sums["composed_hits"] += masker.hits - before[0]
        sums["composed_misses"] += masker.misses - before[1]
        sums["composed_deferred"] += masker.deferred - before[2]
        sums["batch_masker_hits"] += whole.hits - before[3]
    for sums in (out[label] for label in ("cold", "warm", "steady") if label in out):
        x, w, c, rows = sums.pop("x"), sums.pop("w"), sums.pop("c"), sums["rows"]
        sums.update(xgrammar_us=x / rows * 1e6, batch_masker_us=w / rows * 1e6, composed_us=c / rows * 1e6, ratio=x / c, batch_masker_ratio=x / w,
                    xgrammar_system_us=sums.pop("x_sys") / rows * 1e6, composed_system_us=sums.pop("c_sys") / rows * 1e6)
    return out


def _rss_mb() -> float:
    """The process's resident memory now (Linux), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def memory(n: int, budget: int) -> dict:
    """``n`` distinct tools, one request each (compose, compile the piece, its key plan)."""
    info = qwen_info()
    pieces = comp.PieceCache(budget)
    rss0 = peak_rss = _rss_mb()
    peak = meta_peak = 0
    half_rss = 0.0
    t0 = time.perf_counter()
    for i in range(n):
        tool = {"type": "function", "function": {"name": f"m{i}", "strict": True, "parameters": {"type": "object", "properties": {f"a{i}": {"type": "string"}, f"b{i}": {"type": "integer"}}, "required": [f"a{i}"], "additionalProperties": False}}}
        g = comp.compose("hermes", [tool], info, "required", True, "strict", pieces=pieces)
        g.prefetch()
        g.piece_plan(0)
        peak = max(peak, pieces.nbytes)
        if i % 50 == 0:
            stats = comp.cache_stats(pieces)
            meta_peak = max(meta_peak, sum(v["nbytes"] for k, v in stats.items() if k != "pieces"))
            peak_rss = max(peak_rss, _rss_mb())
        if i == n // 2:
            half_rss = peak_rss - rss0
    return {
        "tools": n, "budget": budget, "peak_cache_bytes": peak, "entries": len(pieces), "evictions": pieces.evictions, "metadata_budget": comp.METADATA_BUDGET,
        "peak_metadata_bytes": meta_peak, "rss_growth_half_mb": half_rss, "rss_growth_mb": max(peak_rss, _rss_mb()) - rss0, "seconds": time.perf_counter() - t0,
    }


SERIES = [("whole_ms", "whole tag (xgrammar compile)", "#c0392b"), ("builtin_ms", "builtin qwen_3 tag", "#e67e22"), ("cold_ms", "composed, cold", "#2471a3"), ("warm_new_list_ms", "composed, warm (new list of seen tools)", "#17a589"), ("warm_ms", "composed, warm (same list)", "#7d3c98")]


def svg(rows: list[dict]) -> str:
    """The first-mask rows as a log-log line plot: tools (x) against milliseconds (y)."""
    w, h, left, right, top, bottom = 720, 400, 60, 270, 20, 44
    xs = sorted({r["tools"] for r in rows})
    ys = [r[k] for r in rows for k, _, _ in SERIES if r.get(k)]
    lo, hi = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    x0, x1 = math.log10(xs[0]), math.log10(xs[-1]) if len(xs) > 1 else math.log10(xs[0]) + 1

    def px(n: float) -> float:
        return left + (math.log10(n) - x0) / ((x1 - x0) or 1) * (w - left - right)

    def py(ms: float) -> float:
        return top + (hi - math.log10(ms)) / ((hi - lo) or 1) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">', f'<rect width="{w}" height="{h}" fill="white"/>']
    for e in range(lo, hi + 1):
        y = py(10.0**e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/><text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0**e:g}</text>')
    for n in xs:
        x = px(n)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{h - bottom}" stroke="#eee"/><text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">{n}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 8}" text-anchor="middle">tools in the request</text>')
    out.append(f'<text transform="translate(14 {(top + h - bottom) / 2}) rotate(-90)" text-anchor="middle">ms, request to first mask</text>')
    for k, (key, label, colour) in enumerate(SERIES):
        points = [(px(r["tools"]), py(r[key])) for r in sorted(rows, key=lambda r: r["tools"]) if r.get(key)]
        if not points:
            continue
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}"/>')
        out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>' for x, y in points]
        ly = top + 14 + 18 * k
        out.append(f'<line x1="{w - right + 12}" y1="{ly - 4}" x2="{w - right + 32}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"/><text x="{w - right + 38}" y="{ly}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


#: glibc hands freed heap back to the system (and serves large blocks by mmap) below thresholds it
#: raises only once a large block has been freed; until then xgrammar's fills fault their
#: scratch memory in again every step: up to 1.3 minor faults and 2-8 µs of system CPU a row,
#: depending on what ran before in the process (the first format's rows 30% dearer than the
#: same trace's after a batch of 256). Set fixed, the thresholds keep every side's freed memory.
ALLOCATOR = "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=1073741824"


def main(argv: list[str] | None = None) -> int:
    if argv is None and "GLIBC_TUNABLES" not in os.environ and sys.platform == "linux":
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "GLIBC_TUNABLES": ALLOCATOR})
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default="1,16,128,512")
    ap.add_argument("--batches", default="16,64,256")
    ap.add_argument("--formats", default="hermes,qwen3_coder,glm47,deepseek_v3_2,kimi_k2")
    ap.add_argument("--rounds", type=int, default=4, help="traces per batch size (the first with empty caches)")
    ap.add_argument("--steady", type=int, default=12, help="more traces through the maskers' caches before a last measured one, where --steady-requests is 0 (0: none)")
    ap.add_argument("--steady-requests", type=int, default=1024, help="requests the maskers' caches serve before the steady trace, at every batch size (0: use --steady)")
    ap.add_argument("--steady-measured", type=int, default=128, help="requests measured together as the steady row, in whole traces (one trace of 16 moved the ratio by a third between runs)")
    ap.add_argument("--gc", choices=("full", "frozen", "none"), default="full", help="full: a full gc.collect() before every timed trace, which also evicts the CPU caches (each side then refills its working set inside the timed loop); frozen: the same, after freezing the heap as it stands once a format's grammars are compiled (gc.freeze(), as vLLM's freeze_gc_heap after startup), so the collection walks only what was allocated since; none: no collection but the automatic ones")
    ap.add_argument("--first-formats", default="hermes")
    ap.add_argument("--memory-tools", type=int, default=600)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "report" / "composed.md"))
    a = ap.parse_args(argv)
    out = Path(a.out)
    t0 = time.perf_counter()
    comp._vocab(qwen_info())
    vocab_s = time.perf_counter() - t0
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    command = f"python benches/bench_composed.py {shlex.join(argv if argv is not None else sys.argv[1:])}"
    lines = ["# Composed grammars vs the whole structural tag", "", f"Command: `{command}` (load average at start: {' '.join(load)}; {len(os.sched_getaffinity(0))} cores).", "", f"Tokenizer byte index (once per tokenizer): {vocab_s * 1000:.0f} ms.", ""]
    data: dict = {"command": command, "first_mask": [], "mask_cpu": [], "memory": None}
    if a.tools:
        lines += ["## Request to first mask (ms)", "", f"Plotted: [{out.with_suffix('.svg').name}]({out.with_suffix('.svg').name}).", "", "| format | tools | whole tag | builtin qwen_3 | composed cold | whole / cold | cold, scaffold too | first call (one piece) | warm, same list | warm, new list of seen tools |", "|---|---|---|---|---|---|---|---|---|---|"]
    for fmt in a.first_formats.split(",") if a.tools else []:
        for n in map(int, a.tools.split(",")):
            r = first_mask(n, fmt, f"{fmt}{n}")
            print(r, flush=True)
            data["first_mask"].append(r)
            b = f"{r['builtin_ms']:.0f}" if "builtin_ms" in r else "–"
            lines.append(f"| {fmt} | {n} | {r['whole_ms']:.0f} | {b} | {r['cold_ms']:.1f} | {r['whole_ms'] / r['cold_ms']:.1f}x | {r['cold_start_ms']:.0f} | {r['first_call_ms']:.0f} | {r['warm_ms']:.2f} | {r['warm_new_list_ms']:.2f} |")
    steady_when = f"the traces of the {a.steady_measured} requests after {a.steady_requests} (`ceil({a.steady_requests} / batch)` traces), summed" if a.steady_requests else f"the traces of {a.steady_measured} requests from the {a.rounds + a.steady}th, summed"
    if a.batches:
        lines += ["", "## Mask production CPU, 128 tools (µs per request-step: fill + accept; caches empty at the first trace)", "",
                  "Ratios are `BatchGrammarMatcher`'s CPU over the other's on the same trace: above 1, less CPU than xgrammar. CPU is user + system, with glibc's allocator told to keep freed memory (`GLIBC_TUNABLES`, see the module docs).", "",
                  f"Cache: \"cold\" is the first trace, \"warm\" the {a.rounds}th, \"steady\" {steady_when} (the caching maskers served the traces between, untimed). Hits: rows copied from the mask cache; deferred: tokens taken by a state keyer alone (the matcher reads them later in one `accept_string`).", "",
                  "| format | batch | steps | cache | BatchGrammarMatcher, whole tag | BatchMasker, whole tag | ComposedMasker | xgrammar / BatchMasker | xgrammar / composed | of which system: xgrammar, composed | BatchMasker hits | composed hits | composed deferred |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tl = tools(128, "trace")
    info = qwen_info()
    for fmt in a.formats.split(",") if a.batches else []:
        tag = grammar.tag_json(grammar.structural_tag(fmt, tl, "auto", True, "always", "strict"))
        whole_compiled = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False).compile_structural_tag(tag)
        g = comp.compose(fmt, tl, info, "auto", True, "strict")
        g.prefetch()
        if a.gc == "frozen":
            gc.collect()
            gc.freeze()
        name = f"{fmt} (fallback: whole tag)" if g.fallback else fmt
        for batch in map(int, a.batches.split(",")):
            steady = max(-(-a.steady_requests // batch), a.rounds) - a.rounds + 1 if a.steady_requests else a.steady
            r = mask_cpu(fmt, batch, tl, whole_compiled, tag, g, seed=batch, rounds=a.rounds, steady=steady, steady_traces=-(-a.steady_measured // batch), collect=a.gc != "none")
            print(r, flush=True)
            data["mask_cpu"].append(r)
            for label in ("cold", "warm", "steady"):
                c = r.get(label)
                if c is None:
                    continue
                pct = lambda n: f"{100 * n / c['rows']:.0f}%"  # noqa: E731
                lines.append(f"| {name} | {batch} | {c['rows']} | {label} | {c['xgrammar_us']:.1f} | {c['batch_masker_us']:.1f} | {c['composed_us']:.1f} | {c['batch_masker_ratio']:.2f}x | {c['ratio']:.2f}x | {c['xgrammar_system_us']:.2f}, {c['composed_system_us']:.2f} | {pct(c['batch_masker_hits'])} | {pct(c['composed_hits'])} | {pct(c['composed_deferred'])} |")
        if a.gc == "frozen":
            gc.unfreeze()  # the next format freezes the heap as it stands then
    if a.memory_tools:
        m = memory(a.memory_tools, 16 << 20)
        print(m, flush=True)
        data["memory"] = m
        lines += ["", "## Memory", "", f"{m['tools']} distinct tools, one request each, through a PieceCache of {m['budget'] >> 20} MiB: peak reported size {m['peak_cache_bytes'] / 2**20:.1f} MiB, {m['entries']} entries kept, {m['evictions']} evicted; the caches of derived values (budget {m['metadata_budget'] >> 20} MiB): peak reported size {m['peak_metadata_bytes'] / 2**20:.1f} MiB; resident memory grew by at most {m['rss_growth_half_mb']:.0f} MiB by tool {m['tools'] // 2} and {m['rss_growth_mb']:.0f} MiB by the last, against {(m['budget'] + m['metadata_budget']) >> 20} MiB of budgets (sampled every 50 tools) ({m['seconds']:.0f} s)."]
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")
    if data["first_mask"]:
        out.with_suffix(".svg").write_text(svg(data["first_mask"]))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
