#!/usr/bin/env python3
"""One command for the benchmark report: parser benchmark (toolwire vs SGLang vs vLLM), the
mask/bitmask benchmarks when the checkout has them, a Markdown report and PNG plots.

    python benches/report.py --out benches/report/ [--quick] [--clock cpu] [--formats a,b]

Writes OUT/report.md, OUT/parsers.json, OUT/parsers.png (cost per chunk against output length,
one small plot per format) and, for each mask benchmark found (bench_masks.py, bench_bitmask.py),
its output and OUT/<name>.png when it writes JSON with numeric results.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MASK_BENCHES = ["bench_masks.py", "bench_bitmask.py"]
COLORS = {"toolwire": "#d62728", "sglang": "#1f77b4", "vllm": "#2ca02c"}
LABELS = {"toolwire": "toolwire", "sglang": "SGLang", "vllm": "vLLM"}


def run_parsers(out: str, a) -> dict:
    import bench_parsers
    argv = ["--json", os.path.join(out, "parsers.json"), "--markdown", os.path.join(out, "parsers.md"),
            "--clock", a.clock, "--calls", a.calls]
    if a.quick:
        argv.append("--quick")
    if a.formats:
        argv += ["--formats", a.formats]
    if a.peers:
        argv += ["--peers", a.peers]
    bench_parsers.main(argv)
    with open(os.path.join(out, "parsers.json")) as f:
        return json.load(f)


def plot_parsers(data: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sides = ["toolwire"] + data["settings"].get("peers", ["sglang"])
    by_case: dict[str, list[dict]] = {}
    for r in data["results"]:
        by_case.setdefault(r["case"], []).append(r)
    cases = list(by_case)
    cols = 6
    rows = math.ceil(len(cases) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 2.6, rows * 2.2), squeeze=False,
                             sharex=True, sharey=True)
    for ax in axes.flat[len(cases):]:
        ax.axis("off")
    for ax, case in zip(axes.flat, cases):
        recs = sorted(by_case[case], key=lambda r: r["chars"])
        for side in sides:
            pts = [(r["chars"], r[side]["stream"]["per_chunk_ns"] / 1e3) for r in recs
                   if r.get(side, {}).get("stream")]
            if not pts:
                continue
            bad = any(r.get(side, {}).get("mismatch") for r in recs)
            ax.plot(*zip(*pts), marker="o", ms=3, lw=1.2, color=COLORS.get(side),
                    ls="--" if bad else "-", label=LABELS.get(side, side))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(case, fontsize=8)
        ax.tick_params(labelsize=6)
        ax.grid(True, which="major", lw=0.3, alpha=0.5)
    for ax in axes[-1]:
        ax.set_xlabel("output chars", fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("µs / chunk", fontsize=7)
    handles = [plt.Line2D([], [], color=COLORS[s], marker="o", label=LABELS[s]) for s in sides]
    handles.append(plt.Line2D([], [], color="gray", ls="--", label="result mismatch"))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.975), ncol=len(handles),
               fontsize=8, frameon=False)
    env = data["environment"]
    fig.suptitle(f"Streaming cost per 4-char chunk vs output length (1/8/64 calls) — toolwire "
                 f"{env['toolwire']}, " + ", ".join(f"{LABELS[s]} {env.get(s)}" for s in sides[1:])
                 + f", {data['settings']['clock']} clock", fontsize=9, y=0.998)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_mask_benches(out: str, a) -> list[dict]:
    """Run each mask benchmark present in benches/ as a subprocess; keep its output."""
    done = []
    for name in MASK_BENCHES:
        script = os.path.join(HERE, name)
        if not os.path.exists(script):
            continue
        stem = name[:-3]
        js = os.path.join(out, stem + ".json")
        cmd = [sys.executable, script] + (["--quick"] if a.quick else [])
        help_text = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True).stdout
        if "--json" in help_text:
            cmd += ["--json", js]
        if "--quick" not in help_text and a.quick:
            cmd.remove("--quick")
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(HERE))
        rec = {"name": name, "cmd": " ".join(os.path.relpath(c) if c.endswith(".py") else c for c in cmd[1:]),
               "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr[-2000:],
               "seconds": time.time() - t0, "json": js if os.path.exists(js) else None}
        if rec["json"]:
            try:
                png = os.path.join(out, stem + ".png")
                if plot_generic(json.load(open(js)), png, stem):
                    rec["png"] = png
            except Exception as e:  # a plot is a bonus; the text output is in the report
                rec["plot_error"] = f"{type(e).__name__}: {e}"
        done.append(rec)
    return done


def plot_generic(data, path: str, title: str) -> bool:
    """Bar chart of the numeric *_ns / *_us fields of a list of result records."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = data.get("results", data) if isinstance(data, dict) else data
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        return False
    keys = [k for k, v in rows[0].items() if isinstance(v, (int, float)) and k.endswith(("_ns", "_us"))]
    if not keys:
        return False
    # Labels: the record's text and integer fields (mask kind, batch size, dtype, ...).
    labels = [" ".join(f"{k}={v}" if isinstance(v, int) and not isinstance(v, bool) else str(v)
                       for k, v in r.items() if k not in keys and isinstance(v, (str, int)))[:40]
              for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 0.5), 4))
    w = 0.8 / len(keys)
    for i, k in enumerate(keys):
        ax.bar([j + i * w for j in range(len(rows))], [r.get(k) or 0 for r in rows], w, label=k)
    ax.set_xticks([j + 0.4 - w / 2 for j in range(len(rows))], labels, rotation=60, ha="right", fontsize=6)
    ax.set_yscale("log")
    ax.set_ylabel("µs per call (log)" if all(k.endswith("_us") for k in keys) else "time (log)", fontsize=8)
    ax.legend(fontsize=7)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def headline(data: dict) -> dict:
    """Median over formats of peer/toolwire streaming per-chunk ratios, per call count."""
    import statistics
    out = {}
    for side in data["settings"].get("peers", []):
        for n in data["settings"]["calls"]:
            ratios, tw = [], []
            for r in data["results"]:
                if r["calls"] != n:
                    continue
                a, b = r["toolwire"].get("stream"), r.get(side, {}).get("stream")
                if a:
                    tw.append(a["per_chunk_ns"])
                if a and b and not r[side].get("mismatch"):
                    ratios.append(b["per_chunk_ns"] / a["per_chunk_ns"])
            if ratios:
                out[(side, n)] = {"median_ratio": statistics.median(ratios), "min_ratio": min(ratios),
                                  "max_ratio": max(ratios), "formats": len(ratios),
                                  "tw_median_us": statistics.median(tw) / 1e3 if tw else None}
    return out


def write_report(out: str, data: dict, masks: list[dict], a, seconds: float) -> str:
    env, st = data["environment"], data["settings"]
    peers_ = st.get("peers", [])
    covered = {p: sorted({r["case"] for r in data["results"] if r.get(p, {}).get("stream")}) for p in peers_}
    lines = ["# toolwire benchmark report",
             "",
             f"Generated by `python benches/report.py --out {os.path.relpath(out, os.path.dirname(HERE))}"
             f"{' --quick' if a.quick else ''} --clock {a.clock}` in {seconds / 60:.1f} min"
             f"{' (quick run: 5 repeats, 0.5 s budget per measurement)' if a.quick else ''}.",
             f"Checkout {env.get('commit')}, toolwire {env['toolwire']}, "
             + ", ".join(f"{LABELS[p]} {env.get(p)}" for p in peers_)
             + f"; Python {env['python']} on {env['machine']}, {env['cpus']} CPUs (shared machine); "
             f"{st['clock']} clock, {st['stat']} of up to {st['repeats']} runs.",
             "",
             "## Headline",
             "",
             "Streaming cost per 4-character chunk, peer / toolwire, over the formats both sides "
             "parse correctly (median, range):",
             "",
             "| peer | calls | formats | median peer/toolwire | range | toolwire µs/chunk (median) |",
             "|---|---:|---:|---:|---:|---:|"]
    for (side, n), h in headline(data).items():
        lines.append(f"| {LABELS[side]} | {n} | {h['formats']} | {h['median_ratio']:.0f}x | "
                     f"{h['min_ratio']:.1f}x-{h['max_ratio']:.0f}x | {h['tw_median_us']:.2f} |")
    lines += ["", "Formats measured per peer: " + "; ".join(
        f"{LABELS[p]} {len(covered[p])} ({', '.join(covered[p])})" for p in peers_) + ".", "",
        "## Streaming cost per chunk against output length", "",
        "![parsers](parsers.png)", "",
        "One panel per format; x: output characters of the 1/8/64-call sample, y: µs per chunk "
        "(stream total / chunks), both log scale. A dashed line means that side's calls did not "
        "match the rendered ones at some size (see the notes below); its time is still shown.", "",
        "## Parser tables", ""]
    with open(os.path.join(out, "parsers.md")) as f:
        body = f.read().split("\n", 2)[2]  # drop the title line
    lines += [body.strip(), ""]
    lines += ["## Mask benchmarks", ""]
    if not masks:
        lines += [f"No mask benchmark in this checkout ({', '.join('benches/' + m for m in MASK_BENCHES)} "
                  "not present); `report.py` runs them and adds their output here when they exist.", ""]
    for m in masks:
        lines += [f"### {m['name']}", "", f"`python {m['cmd']}` — exit {m['rc']}, {m['seconds']:.0f} s", ""]
        if m.get("png"):
            lines += [f"![{m['name']}]({os.path.basename(m['png'])})", ""]
        lines += ["```", m["stdout"].strip()[-6000:], "```", ""]
        if m["rc"] and m["stderr"]:
            lines += ["stderr (tail):", "", "```", m["stderr"].strip(), "```", ""]
    path = os.path.join(out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "report"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    ap.add_argument("--calls", default="1,8,64")
    ap.add_argument("--formats", default=None, help="comma-separated cases (default: all)")
    ap.add_argument("--peers", default=None, help="comma-separated peers (default: sglang,vllm)")
    ap.add_argument("--no-masks", action="store_true", help="skip the mask benchmarks")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    data = run_parsers(a.out, a)
    plot_parsers(data, os.path.join(a.out, "parsers.png"))
    masks = [] if a.no_masks else run_mask_benches(a.out, a)
    path = write_report(a.out, data, masks, a, time.time() - t0)
    print(f"wrote {path} and {os.path.join(a.out, 'parsers.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
