#!/usr/bin/env python3
"""Benchmark toolwire's tool-call parsers against SGLang's, in the same process and run.

For each format and each call count (1, 8, 64 by default) the model output is a sentence of
text followed by the calls, written by hand in the family's native syntax (benches/samples.py).
Both libraries get the same text and the same chunks, and are timed with
time.perf_counter_ns, garbage collection off, the min (or, with --stat median, the median) of N repeats:

  stream   a fresh per-request stream (toolwire: `parser.stream()`; SGLang: a new
           `FunctionCallParser`), every chunk fed, then the end-of-stream flush.
           Reported per chunk: total / number of chunks.
  parse    one-shot parse of the whole output (SGLang: parser construction included, since
           it is built per request; toolwire: `ToolParser.parse` on a parser built once).

Chunks are 4 characters, except that a marker which is a single special token in the
family's vocabulary is one chunk of its own, as a detokenizer would emit it
(`--split-markers` cuts through markers too).

Before timing, both sides' results are checked against the calls that were rendered
(count, names, and arguments compared as JSON); mismatches are printed and flagged in the
table, not fatal. SGLang runs are first probed in a forked child with a time limit, so a
pathological case (the pythonic regex backtracking) is reported instead of hanging.

Usage:
  python benches/bench_parsers.py [--formats hermes,kimi_k2] [--calls 1,8,64] [--quick]
                                  [--json OUT] [--markdown OUT]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peers  # noqa: E402
import samples  # noqa: E402

# Bench case -> toolwire format name. A case is one way of writing a format; "mistral_array"
# is the pre-v11 Mistral JSON-array form, parsed by the same "mistral" parser on both sides.
CASES: dict[str, str] = {
    "hermes": "hermes",
    "qwen3_coder": "qwen3_coder",
    "llama3_json": "llama3_json",
    "mistral": "mistral",
    "mistral_array": "mistral",
    "pythonic": "pythonic",
    "deepseek_v3": "deepseek_v3",
    "deepseek_v3_1": "deepseek_v3_1",
    "deepseek_v3_2": "deepseek_v3_2",
    "deepseek_v4": "deepseek_v4",
    "kimi_k2": "kimi_k2",
    "glm45": "glm45",
    "glm47": "glm47",
    "minimax_m2": "minimax_m2",
    "minimax_m3": "minimax_m3",
    "gemma4": "gemma4",
    "harmony": "harmony",
    "cohere_command": "cohere_command",
}
CASES.update({c: c for c in samples.RENDERERS if c not in CASES})
DEFAULT_CASES = list(CASES)

# Set by --clock: wall time (perf_counter_ns, the default) or this thread's CPU time
# (thread_time_ns), which leaves out the time the process was descheduled on a busy machine.
CLOCKS = {"wall": time.perf_counter_ns, "cpu": time.thread_time_ns}
clock = CLOCKS["wall"]


# --------------------------------------------------------------------------- toolwire side

_TW_ERROR: str | None = None
try:
    import toolwire  # type: ignore
except Exception as e:  # not built yet, or a broken build
    toolwire = None
    _TW_ERROR = f"{type(e).__name__}: {e}"


def toolwire_version() -> str:
    return getattr(toolwire, "__version__", "?") if toolwire else "unavailable"


def tw_parser(fmt: str, tools):
    """A toolwire ToolParser, or raise with the reason it is unavailable."""
    if toolwire is None:
        raise peers.PeerUnavailable(f"toolwire is not importable ({_TW_ERROR})")
    try:
        return toolwire.ToolParser(fmt, tools)
    except Exception as e:
        raise peers.PeerUnavailable(f"toolwire has no parser for {fmt!r}: {type(e).__name__}: {e}")


def _tw_calls(msg) -> list[dict]:
    return [{"name": c.name, "arguments": c.arguments} for c in (msg.tool_calls or [])]


def tw_parse(parser, text: str) -> tuple[list[dict], str]:
    msg = parser.parse(text)
    return _tw_calls(msg), msg.content or ""


def tw_stream(parser, chunks) -> tuple[list[dict], str, list[dict] | None]:
    """(calls from message(), content, calls assembled from the OpenAI-shaped deltas or None)."""
    s = parser.stream()
    deltas = []
    for c in chunks:
        deltas.extend(s.feed(c) or ())
    deltas.extend(s.finish() or ())
    msg = s.message()
    assembled = None
    if deltas and all(hasattr(d, "to_openai") for d in deltas):
        by_index: dict[int, dict] = {}
        for d in deltas:
            for tc in (d.to_openai() or {}).get("tool_calls") or ():
                slot = by_index.setdefault(tc.get("index", 0), {"name": None, "arguments": ""})
                fn = tc.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                if fn.get("arguments"):
                    slot["arguments"] += fn["arguments"]
        assembled = [by_index[i] for i in sorted(by_index)]
    return _tw_calls(msg), msg.content or "", assembled


def tw_stream_timed(parser, chunks) -> int:
    t0 = clock()
    s = parser.stream()
    feed = s.feed
    for c in chunks:
        feed(c)
    s.finish()
    return clock() - t0


def tw_parse_timed(parser, text: str) -> int:
    t0 = clock()
    parser.parse(text)
    return clock() - t0


# --------------------------------------------------------------------------- peers

# side -> (short tag, display name, parser-name lookup, parse, stream, timed stream, timed parse,
#          convert tools once, version)
PEERS = {
    "sglang": dict(tag="sg", label="SGLang", name=peers.sglang_parser_name, parse=peers.sglang_parse,
                   stream=peers.sglang_stream, stream_timed=peers.sglang_stream_timed,
                   parse_timed=peers.sglang_parse_timed, tools=peers.sglang_tools,
                   version=peers.sglang_version, mapping=peers.SGLANG_PARSER),
    "vllm": dict(tag="vl", label="vLLM", name=peers.vllm_parser_name, parse=peers.vllm_parse,
                 stream=peers.vllm_stream, stream_timed=peers.vllm_stream_timed,
                 parse_timed=peers.vllm_parse_timed, tools=peers.vllm_request,
                 version=peers.vllm_version, mapping=peers.VLLM_PARSER),
}
ACTIVE_PEERS = list(PEERS)  # set by --peers
TAGS = {"toolwire": "tw", **{k: v["tag"] for k, v in PEERS.items()}}


def sides() -> list[str]:
    return ["toolwire"] + ACTIVE_PEERS


# --------------------------------------------------------------------------- helpers


def check_calls(got: list[dict], want: list[dict]) -> str | None:
    """None when `got` matches the rendered calls; otherwise a short description."""
    gn = [c.get("name") for c in got]
    wn = [c["name"] for c in want]
    if len(gn) != len(wn):
        return f"{len(gn)} calls instead of {len(wn)} (names: {_short(gn)})"
    if gn != wn:
        i = next(i for i, (a, b) in enumerate(zip(gn, wn)) if a != b)
        return f"call {i} named {gn[i]!r}, expected {wn[i]!r}"
    for i, (g, w) in enumerate(zip(got, want)):
        try:
            args = json.loads(g.get("arguments") or "null")
        except (TypeError, ValueError) as e:
            return f"call {i} arguments are not JSON ({e}): {_short(g.get('arguments'))}"
        if args != w["arguments"]:
            return f"call {i} arguments differ: {_short(g.get('arguments'))}"
    return None


def _short(v, n: int = 90) -> str:
    s = v if isinstance(v, str) else repr(v)
    return s if len(s) <= n else s[:n] + "..."


def run_with_timeout(fn, timeout_s: float):
    """Run fn() in a forked child; (ok, value_or_error). ok is None on timeout."""
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send((True, fn()))
        except BaseException as e:  # report, don't die silently
            send.send((False, f"{type(e).__name__}: {e}"))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()
    if recv.poll(timeout_s):
        try:
            result = recv.recv()
        except EOFError:
            result = (False, "child exited without a result")
        proc.join(5)
        return result
    proc.kill()
    proc.join()
    return None, f"did not finish within {timeout_s:g} s"


def measure(fn, repeats: int, budget_s: float) -> list[int]:
    """Call fn() (which returns elapsed ns) up to `repeats` times, at least once, and stop
    early once `budget_s` of measured time is spent. GC is off while timing."""
    times: list[int] = []
    spent = 0
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        while len(times) < repeats:
            t = fn()
            times.append(t)
            spent += t
            if spent > budget_s * 1e9 and len(times) >= 1:
                break
    finally:
        if was_enabled:
            gc.enable()
    return times


def summarize(times: list[int] | None) -> dict | None:
    if not times:
        return None
    return {"median_ns": int(statistics.median(times)), "min_ns": min(times), "runs": len(times)}


# --------------------------------------------------------------------------- one case


def bench_case(case: str, n_calls: int, args, skip_reasons: dict) -> dict:
    fmt = CASES[case]
    calls = samples.make_calls(n_calls)
    text = samples.render_sample(case, calls)
    markers = () if args.split_markers else samples.SPECIAL_TOKENS.get(case, ())
    chunks = samples.chunk(text, args.chunk_size, markers)
    tools = samples.TOOLS
    rec = {"case": case, "format": fmt, "calls": n_calls, "chars": len(text),
           "chunks": len(chunks), "sglang_parser": peers.SGLANG_PARSER.get(fmt),
           "vllm_parser": peers.VLLM_PARSER.get(fmt),
           "toolwire": {}, "notes": []}

    # ---- toolwire
    tw = None
    try:
        tw = tw_parser(fmt, tools)
    except peers.PeerUnavailable as e:
        rec["toolwire"]["unavailable"] = str(e)
    if tw is not None:
        try:
            pc, _ = tw_parse(tw, text)
            sc, _, assembled = tw_stream(tw, chunks)
            for what, got in (("parse", pc), ("stream", sc), ("stream deltas", assembled)):
                if got is None:
                    continue
                bad = check_calls(got, calls)
                if bad:
                    rec["toolwire"].setdefault("mismatch", []).append(f"{what}: {bad}")
            rec["toolwire"]["stream"] = summarize(
                measure(lambda: tw_stream_timed(tw, chunks), args.repeats, args.budget))
            rec["toolwire"]["parse"] = summarize(
                measure(lambda: tw_parse_timed(tw, text), args.repeats, args.budget))
        except Exception as e:
            rec["toolwire"]["error"] = f"{type(e).__name__}: {e}"
            if args.verbose:
                traceback.print_exc()

    # ---- peers
    for side in ACTIVE_PEERS:
        P = PEERS[side]
        d = rec[side] = {}
        if skip_reasons.get(side):
            d["unavailable"] = skip_reasons[side]
            continue
        try:
            P["name"](fmt)
            ptools = P["tools"](tools)
        except peers.PeerUnavailable as e:
            d["unavailable"] = str(e)
            continue
        ok, res = run_with_timeout(
            lambda: (P["parse"](fmt, tools, text), P["stream"](fmt, tools, chunks)), args.peer_timeout)
        if ok is None:
            d["timeout"] = res
            continue
        if not ok:
            d["error"] = res
            continue
        (pc, _), (sc, _) = res
        for what, got in (("parse", pc), ("stream", sc)):
            bad = check_calls(got, calls)
            if bad:
                d.setdefault("mismatch", []).append(f"{what}: {bad}")
        try:
            d["stream"] = summarize(measure(
                lambda: P["stream_timed"](fmt, ptools, chunks, CLOCKS[args.clock]),
                args.repeats, args.budget))
            d["parse"] = summarize(measure(
                lambda: P["parse_timed"](fmt, ptools, text, CLOCKS[args.clock]),
                args.repeats, args.budget))
        except Exception as e:
            d["error"] = f"{type(e).__name__}: {e}"

    # ---- derived numbers
    for side in sides():
        st = rec.get(side, {}).get("stream")
        if st:
            st["per_chunk_ns"] = st[args.stat_key] / len(chunks)
            st["per_chunk_min_ns"] = st["min_ns"] / len(chunks)
            st["per_chunk_median_ns"] = st["median_ns"] / len(chunks)
    return rec


# --------------------------------------------------------------------------- reporting


def _us(ns: float | None) -> str:
    if ns is None:
        return "-"
    us = ns / 1e3
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:,.0f}"


def _ratio(a, b) -> str:
    return f"{a / b:.1f}x" if a and b else "-"


STAT_KEY = "min_ns"  # set from --stat


def _get(rec, side, kind, key=None):
    key = key or STAT_KEY
    d = rec.get(side, {}).get(kind)
    return d.get(key) if d else None


def _flag(rec, side, kind) -> str:
    """'!' when that side's `kind` result (parse / stream) did not match the rendered calls."""
    return "!" if any(m.startswith(kind) for m in rec.get(side, {}).get("mismatch", ())) else ""


def table_rows(results: list[dict]) -> tuple[list[str], list[list[str]]]:
    ps = ACTIVE_PEERS
    head = (["format", "calls", "chars", "chunks", "tw µs/chunk"]
            + [f"{TAGS[p]} µs/chunk" for p in ps] + [f"{TAGS[p]}/tw stream" for p in ps]
            + ["tw parse µs"] + [f"{TAGS[p]} parse µs" for p in ps] + [f"{TAGS[p]}/tw parse" for p in ps]
            + ["check"])
    rows = []
    for r in results:
        tw_pc, tw_p = _get(r, "toolwire", "stream", "per_chunk_ns"), _get(r, "toolwire", "parse")
        check = []
        for side in sides():
            d, tag = r.get(side, {}), TAGS[side]
            if d.get("mismatch"):
                check.append(f"{tag} MISMATCH")
            elif d.get("timeout"):
                check.append(f"{tag} TIMEOUT")
            elif d.get("error"):
                check.append(f"{tag} ERROR")
            elif d.get("unavailable"):
                check.append(f"{tag} n/a")
        pcs = {p: _get(r, p, "stream", "per_chunk_ns") for p in ps}
        pps = {p: _get(r, p, "parse") for p in ps}
        rows.append([r["case"], str(r["calls"]), str(r["chars"]), str(r["chunks"]),
                     _us(tw_pc) + _flag(r, "toolwire", "stream")]
                    + [_us(pcs[p]) + _flag(r, p, "stream") for p in ps]
                    + [_ratio(pcs[p], tw_pc) for p in ps]
                    + [_us(tw_p) + _flag(r, "toolwire", "parse")]
                    + [_us(pps[p]) + _flag(r, p, "parse") for p in ps]
                    + [_ratio(pps[p], tw_p) for p in ps]
                    + [", ".join(check) or "ok"])
    return head, rows


def linearity(results: list[dict]) -> list[dict]:
    """Per case: total streaming time at the largest call count / at the smallest, raw and
    per character (1.0 = exactly linear in the output length)."""
    out = []
    by_case: dict[str, list[dict]] = {}
    for r in results:
        by_case.setdefault(r["case"], []).append(r)
    for case, recs in by_case.items():
        recs = sorted(recs, key=lambda r: r["calls"])
        if len(recs) < 2:
            continue
        lo, hi = recs[0], recs[-1]
        row = {"case": case, "calls": (lo["calls"], hi["calls"]), "chars": (lo["chars"], hi["chars"])}
        for side in sides():
            a, b = _get(lo, side, "stream"), _get(hi, side, "stream")
            if a and b:
                row[side] = {"ratio": b / a, "per_char_ratio": (b / hi["chars"]) / (a / lo["chars"])}
                pa, pb = _get(lo, side, "parse"), _get(hi, side, "parse")
                if pa and pb:
                    row[side]["parse_ratio"] = pb / pa
                    row[side]["parse_per_char_ratio"] = (pb / hi["chars"]) / (pa / lo["chars"])
        if any(side in row for side in sides()):
            out.append(row)
    return out


def fmt_text_table(head, rows) -> str:
    left = {0} | ({len(head) - 1} if head[-1] == "check" else set())
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]

    def line(cells):
        return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(r) for r in rows])


def fmt_md_table(head, rows) -> str:
    left = {0} | ({len(head) - 1} if head[-1] == "check" else set())
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if i in left else "---:" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def lin_rows(lin: list[dict]) -> tuple[list[str], list[list[str]]]:
    head = ["format", "calls"]
    for side in sides():
        head += [f"{TAGS[side]} stream ratio", f"{TAGS[side]} stream/char"]
    head += [f"{TAGS[side]} parse/char" for side in sides()]
    rows = []
    for row in lin:
        cells = [row["case"], f"{row['calls'][1]}/{row['calls'][0]}"]
        for side in sides():
            d = row.get(side)
            cells += [f"{d['ratio']:.1f}", f"{d['per_char_ratio']:.2f}"] if d else ["-", "-"]
        for side in sides():
            d = row.get(side) or {}
            cells.append(f"{d['parse_per_char_ratio']:.2f}" if "parse_per_char_ratio" in d else "-")
        rows.append(cells)
    return head, rows


def notes_for(results: list[dict]) -> list[str]:
    """One line per distinct problem, with the call counts it was seen at."""
    groups: dict[tuple, list[int]] = {}
    for r in results:
        for side in sides():
            tag = "toolwire" if side == "toolwire" else PEERS[side]["label"]
            d = r.get(side, {})
            if side == "toolwire" and toolwire is None:
                continue  # said once at the top
            msgs = [f"mismatch in {m}" for m in d.get("mismatch", ())]
            msgs += [f"{key}: {d[key]}" for key in ("timeout", "error", "unavailable") if d.get(key)]
            for m in msgs:
                groups.setdefault((r["case"], tag, m), []).append(r["calls"])
    return [f"{case} ({', '.join(map(str, counts))} calls) {tag}: {m}"
            for (case, tag, m), counts in groups.items()]


def environment() -> dict:
    env = {"python": platform.python_version(), "implementation": platform.python_implementation(),
           "machine": platform.machine(), "system": platform.system(),
           "cpus": os.cpu_count(), "toolwire": toolwire_version()}
    try:  # the checkout the bench runs from (toolwire itself may be installed from elsewhere)
        import subprocess
        env["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                       text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                                       timeout=10).stdout.strip() or None
    except Exception:
        env["commit"] = None
    for side, P in PEERS.items():
        try:
            env[side] = P["version"]()
        except peers.PeerUnavailable:
            env[side] = "unavailable"
    return env


# --------------------------------------------------------------------------- main


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formats", default=",".join(DEFAULT_CASES),
                    help=f"comma-separated cases (default: all): {', '.join(CASES)}")
    ap.add_argument("--calls", default="1,8,64", help="comma-separated call counts (default 1,8,64)")
    ap.add_argument("--quick", action="store_true", help="few repeats and a small time budget")
    ap.add_argument("--repeats", type=int, default=None, help="runs per measurement (default 21, quick 5)")
    ap.add_argument("--budget", type=float, default=None,
                    help="stop repeating a measurement after this many seconds (default 3, quick 0.5)")
    ap.add_argument("--chunk-size", type=int, default=4, help="characters per chunk (default 4)")
    ap.add_argument("--split-markers", action="store_true",
                    help="cut special-token markers too (by default each is one chunk)")
    ap.add_argument("--peer-timeout", type=float, default=None,
                    help="seconds allowed for SGLang's first parse+stream of a case (default 20, quick 5)")
    ap.add_argument("--peers", default=",".join(PEERS),
                    help=f"comma-separated peers to compare with (default: {','.join(PEERS)})")
    ap.add_argument("--one-side", action="store_true",
                    help="measure a format even when only one side can parse it")
    ap.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                    help="wall: time.perf_counter_ns (default); cpu: time.thread_time_ns, steadier "
                         "when other processes compete for the CPUs")
    ap.add_argument("--stat", choices=("min", "median"), default="min",
                    help="statistic reported over the runs (default min: the machine is shared; "
                         "both are in the JSON)")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON")
    ap.add_argument("--markdown", metavar="OUT", help="write the tables as Markdown")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    a.repeats = a.repeats or (5 if a.quick else 21)
    a.budget = a.budget if a.budget is not None else (0.5 if a.quick else 3.0)
    a.peer_timeout = a.peer_timeout if a.peer_timeout is not None else (5.0 if a.quick else 20.0)
    a.stat_key = f"{a.stat}_ns"
    a.cases = [c.strip() for c in a.formats.split(",") if c.strip()]
    a.call_counts = sorted({int(x) for x in a.calls.split(",") if x.strip()})
    a.peer_list = [p.strip() for p in a.peers.split(",") if p.strip()]
    if any(p not in PEERS for p in a.peer_list):
        ap.error(f"unknown peer in {a.peers!r}; known: {', '.join(PEERS)}")
    unknown = [c for c in a.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown format(s) {unknown}; known: {', '.join(CASES)}")
    return a


def side_unavailable(case: str) -> tuple[str | None, dict]:
    """(toolwire reason, {peer: reason}) when a side cannot parse this case at all."""
    fmt = CASES[case]
    tw_reason = None
    try:
        tw_parser(fmt, samples.TOOLS)
    except peers.PeerUnavailable as e:
        tw_reason = str(e)
    reasons = {}
    for side in ACTIVE_PEERS:
        try:
            PEERS[side]["name"](fmt)
        except peers.PeerUnavailable as e:
            reasons[side] = str(e)
    return tw_reason, reasons


def main(argv=None) -> int:
    global STAT_KEY, clock, ACTIVE_PEERS
    a = parse_args(argv)
    ACTIVE_PEERS = a.peer_list
    STAT_KEY = a.stat_key
    clock = CLOCKS[a.clock]
    env = environment()
    print(f"toolwire {env['toolwire']}  vs  " + ", ".join(f"{p} {env[p]}" for p in ACTIVE_PEERS) + f"  |  Python {env['python']} "
          f"on {env['machine']}, {env['cpus']} CPUs  |  {a.chunk_size}-char chunks"
          f"{' (markers split)' if a.split_markers else ', special tokens whole'}, "
          f"{a.stat} of <= {a.repeats} runs ({a.budget:g} s budget each), {a.clock} clock")
    if toolwire is None:
        print(f"note: toolwire is not importable: {_TW_ERROR}")

    results = []
    for case in a.cases:
        tw_reason, reasons = side_unavailable(case)
        no_peer = all(p in reasons for p in ACTIVE_PEERS)
        if (tw_reason or no_peer) and not a.one_side:
            print(f"skip {case}: " + "; ".join([r for r in (tw_reason,) if r] + list(reasons.values())))
            continue
        if tw_reason and no_peer:
            print(f"skip {case}: neither side can parse it")
            continue
        skip = dict(reasons)
        for n in a.call_counts:
            t0 = time.perf_counter()
            rec = bench_case(case, n, a, skip)
            results.append(rec)
            for p in ACTIVE_PEERS:
                if rec[p].get("timeout") and not skip.get(p):
                    # Larger outputs will not be faster: don't spend the timeout again.
                    skip[p] = f"skipped: timed out at {n} calls ({rec[p]['timeout']})"
            if a.verbose:
                print(f"  {case} x{n}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    if not results:
        print("nothing measured")
        return 1

    head, rows = table_rows(results)
    lhead, lrows = lin_rows(linearity(results))
    notes = notes_for(results)
    print()
    print(fmt_text_table(head, rows))
    print("\n'!' = that side's result differs from the rendered calls (see notes); ratios > 1 mean "
          "toolwire is faster.")
    if lrows:
        print("\nLinearity: total time at the largest / smallest call count; '/char' divides out the "
              "output length (1.0 = linear in it, > 1 = superlinear):\n")
        print(fmt_text_table(lhead, lrows))
    if notes:
        print("\nNotes:")
        for n in notes:
            print("  - " + n)

    if a.json:
        with open(a.json, "w") as f:
            json.dump({"environment": env, "settings": {
                "chunk_size": a.chunk_size, "split_markers": a.split_markers, "repeats": a.repeats,
                "stat": a.stat, "clock": a.clock, "peers": ACTIVE_PEERS,
                "budget_s": a.budget, "peer_timeout_s": a.peer_timeout, "calls": a.call_counts},
                "results": results, "linearity": linearity(results), "notes": notes}, f, indent=1)
        print(f"\nwrote {a.json}")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"# Tool-call parser benchmark: toolwire {env['toolwire']} vs "
                    + ", ".join(f"{PEERS[p]['label']} {env[p]}" for p in ACTIVE_PEERS) + "\n\n")
            f.write(f"Python {env['python']} on {env['machine']} ({env['cpus']} CPUs). "
                    f"{a.chunk_size}-character chunks"
                    f"{' (markers split)' if a.split_markers else ', special-token markers whole'}; "
                    f"{a.stat} of up to {a.repeats} runs, {a.clock} clock. Times in µs; ratios are "
                    f"peer / toolwire (sg = SGLang, vl = vLLM).\n\n")
            f.write(fmt_md_table(head, rows) + "\n")
            if lrows:
                f.write("\nLinearity: total time at the largest / smallest call count; '/char' divides "
                        "out the output length (1.0 = linear in it, > 1 = superlinear):\n\n")
                f.write(fmt_md_table(lhead, lrows) + "\n")
            if notes:
                f.write("\nNotes:\n\n" + "".join(f"- {n}\n" for n in notes))
        print(f"wrote {a.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
