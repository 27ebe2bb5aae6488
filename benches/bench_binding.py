"""What the Python binding adds to each streamed chunk: toolwire-core timed in Rust next to the
same parser driven through ``ToolStream.feed`` from Python, on the same chunks.

    python benches/bench_binding.py --label after [--rounds 21] [--skip-build]

The Rust side is the race harness of ``benches/rust_peers/`` built without its peers
(``--no-default-features``) and run on a few formats with ``RACE_INPUTS=1``, so that it writes
the tools and every cell's chunks (realistic calls rendered by toolwire at 1/8/64 calls, 4-character
chunks, special markers whole) next to its times. This script then feeds those chunks to
``toolwire.ToolParser(format)`` and ``ToolParser(format, tools)`` the way a serving loop does
(``stream = parser.stream()``, ``stream.feed(chunk)`` per chunk, ``stream.finish()``) and times it
the way the harness does: this thread's CPU time, each sample repeated to ~0.3 ms, min over
interleaved rounds. It also times the same loop calling a trivial builtin per chunk, the floor any
Python-driven parser pays. Before timing, each parser's calls are checked (count, no issues).

Runs are kept in ``benches/report/binding.json`` under ``--label`` (a run at another commit, such
as ``before``, stays), and ``benches/report/binding.md`` shows every label side by side.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import toolwire

HERE = pathlib.Path(__file__).resolve().parent
RACE = HERE / "rust_peers"
REPORT = HERE / "report"
FORMATS = ("hermes", "qwen3_coder", "deepseek_v3_2", "kimi_k2", "harmony")
SAMPLE_NS = 300_000
# How Python drives the parser, and the harness implementation it is compared with: without tools,
# with the five tools (every call validated), and with tools plus `Delta.to_openai()` on every
# delta, as a server building OpenAI chunks does (Rust builds no such objects: that column
# is the cost of the dicts on top of the binding).
VARIANTS = {"plain": "toolwire", "tools": "toolwire+schema", "openai": "toolwire+schema"}


def rust_cells(rounds: int, build: bool) -> dict:
    """The harness's report for FORMATS, toolwire only, with its inputs."""
    env = dict(os.environ, RACE_FORMATS=",".join(FORMATS), RACE_INPUTS="1")
    env.setdefault("CARGO_BUILD_JOBS", "1")
    if build:
        subprocess.run([sys.executable, "patch_harmony.py"], cwd=RACE, check=True)
        cargo = ["nice", "-n", "19", "cargo", "build", "--release", "--no-default-features"]
        subprocess.run(cargo, cwd=RACE, env=env, check=True)
    out = RACE / "target" / "binding_race.json"
    binary = RACE / "target" / "release" / "rust-peers-race"
    subprocess.run([str(binary), str(rounds), str(out)], cwd=RACE, env=env, check=True)
    return json.loads(out.read_text())


def cpu_ns(op, reps: int) -> float:
    start = time.thread_time_ns()
    for _ in range(reps):
        op()
    return (time.thread_time_ns() - start) / reps


def request(parser: toolwire.ToolParser, chunks: list[str]):
    def run():
        stream = parser.stream()
        feed = stream.feed
        for chunk in chunks:
            feed(chunk)
        stream.finish()

    return run


def openai_request(parser: toolwire.ToolParser, chunks: list[str]):
    def run():
        stream = parser.stream()
        feed = stream.feed
        for chunk in chunks:
            for delta in feed(chunk):
                delta.to_openai()
        for delta in stream.finish():
            delta.to_openai()

    return run


def floor(chunks: list[str]):
    def run():
        call = len
        for chunk in chunks:
            call(chunk)

    return run


def check(parser: toolwire.ToolParser, chunks: list[str], calls: int, where: str) -> None:
    stream = parser.stream()
    for chunk in chunks:
        stream.feed(chunk)
    stream.finish()
    message = stream.message()
    if len(message.tool_calls) != calls or not message.valid:
        raise SystemExit(f"{where}: {len(message.tool_calls)} calls (want {calls}), issues {message.issues}")


def python_times(race: dict, rounds: int) -> list[dict]:
    tools = race["tools"]
    cells = []
    for cell in race["cells"]:
        chunks = cell["chunk_texts"]
        plain, with_tools = toolwire.ToolParser(cell["format"]), toolwire.ToolParser(cell["format"], tools)
        for variant, parser in (("plain", plain), ("tools", with_tools)):
            check(parser, chunks, cell["calls"], f"{cell['format']}/{cell['calls']} {variant}")
        ops = {
            "stream_plain": request(plain, chunks),
            "stream_tools": request(with_tools, chunks),
            "stream_openai": openai_request(with_tools, chunks),
            "setup_plain": plain.stream,
            "setup_tools": with_tools.stream,
            "floor": floor(chunks),
        }
        cells.append({"cell": cell, "ops": ops, "reps": {}, "best": dict.fromkeys(ops, float("inf"))})
    for round_index in range(rounds):
        gc.collect()
        for entry in cells:
            for key, op in entry["ops"].items():
                if round_index == 0:
                    once = max(cpu_ns(op, 1), 1.0)
                    entry["reps"][key] = int(min(max(SAMPLE_NS / once, 1), 100_000))
                op()
                entry["best"][key] = min(entry["best"][key], cpu_ns(op, entry["reps"][key]))
        print(f"python round {round_index + 1}/{rounds}", file=sys.stderr)
    return [row(entry["cell"], entry["best"]) for entry in cells]


def row(cell: dict, best: dict) -> dict:
    n = len(cell["chunk_texts"])
    rust = {e["implementation"]: e for e in cell["entries"]}
    out = {"format": cell["format"], "calls": cell["calls"], "chunks": n, "floor_ns": round(best["floor"] / n, 1)}
    for variant, label in VARIANTS.items():
        out[f"rust_{variant}_ns"] = rust[label]["stream_ns_per_chunk"]
        out[f"python_{variant}_ns"] = round(best[f"stream_{variant}"] / n, 1)
    for variant in ("plain", "tools"):
        out[f"rust_setup_{variant}_ns"] = rust[VARIANTS[variant]]["setup_ns"]
        out[f"python_setup_{variant}_ns"] = round(best[f"setup_{variant}"], 1)
    return out


def added_ns(row: dict, variant: str) -> float | None:
    """Python minus Rust; None where the harness did not time toolwire (its calls differed)."""
    rust, python = row[f"rust_{variant}_ns"], row.get(f"python_{variant}_ns")
    return None if rust is None or python is None else python - rust


def mean(values) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def cell_ns(value: float | None, missing: str = "differs") -> str:
    return missing if value is None else f"{value:.0f}"


def commit() -> str:
    run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "rust"], cwd=HERE, capture_output=True, text=True)
    return run.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def markdown(runs: dict, command: str) -> str:
    labels = list(runs)
    lines = [
        "# The binding's cost per chunk",
        "",
        "toolwire-core streaming in Rust (`benches/rust_peers/`, toolwire only) next to the same parser",
        "driven through `ToolStream.feed` from Python, on the same chunks: realistic calls rendered at",
        "1/8/64 calls, 4-character chunks with special markers whole, per-request setup included",
        "(`parser.stream()`, `finish()`). ns per chunk, this thread's CPU time, min over interleaved",
        "rounds. `plain`: `ToolParser(format)`; `tools`: `ToolParser(format, tools)` with five tools, every",
        "call validated against its schema; `openai`: `tools` plus `delta.to_openai()` on every delta, as a",
        "server building OpenAI chunks does (against Rust `tools`, which builds no such objects).",
        "`added` is Python minus Rust; `floor` is the same Python loop",
        "calling `len(chunk)`, the cost any Python-driven parser pays per chunk before parsing anything.",
        "`differs`: the harness times only parsers whose calls match the rendered ones, and qwen3_coder",
        'without tools reads its XML values as strings (`"days": "3"`); means are over the timed cells.',
        "",
        f"Produced by `{command}`.",
        "",
    ]
    for label in labels:
        meta = runs[label]["meta"]
        lines.append(
            f"- `{label}`: commit {meta['commit']}, {meta['date']}, {meta['rounds']} rounds, "
            f"load average {meta['load']} on {meta['cpus']} CPUs, Python {meta['python']}"
            + (f". {meta['note']}" if meta.get("note") else "")
        )
    lines.append("")
    summary = [
        "| run |" + "".join(f" added, {v} |" for v in VARIANTS) + "".join(f" Python, {v} |" for v in VARIANTS),
        "|---|" + "---|" * 2 * len(VARIANTS),
    ]
    for label in labels:
        rows = runs[label]["rows"]
        added = [mean(added_ns(r, v) for r in rows if f"python_{v}_ns" in r) for v in VARIANTS]
        python = [mean(r.get(f"python_{v}_ns") for r in rows) for v in VARIANTS]
        summary.append(f"| {label} |" + "".join(f" {cell_ns(x, '–')} |" for x in added + python))
    lines += ["## Summary (mean ns per chunk over the cells)", "", *summary, ""]
    base = runs[labels[0]]["rows"]
    for variant in VARIANTS:
        header = "| format | calls | chunks | floor |" + "".join(
            f" {label} Rust | {label} Python | {label} added |" for label in labels
        )
        lines += [f"## Per cell, {variant} (ns per chunk)", "", header, "|---|---|---|---|" + "---|---|---|" * len(labels)]
        for index, first in enumerate(base):
            line = f"| {first['format']} | {first['calls']} | {first['chunks']} | {first['floor_ns']:.0f} |"
            for label in labels:
                r = runs[label]["rows"][index]
                line += f" {cell_ns(r[f'rust_{variant}_ns'])} | {cell_ns(r.get(f'python_{variant}_ns'), '–')} |"
                line += f" {cell_ns(added_ns(r, variant))} |"
            lines.append(line)
        lines.append("")
    lines += [
        "## Per-request setup (ns)",
        "",
        "Rust: `StreamParser::new(config.clone())`; Python: `parser.stream()`.",
        "",
        "| format | calls |"
        + "".join(
            f" {label} Rust plain | {label} Python plain | {label} Rust tools | {label} Python tools |" for label in labels
        ),
        "|---|---|" + "---|---|---|---|" * len(labels),
    ]
    for index, first in enumerate(base):
        line = f"| {first['format']} | {first['calls']} |"
        for label in labels:
            r = runs[label]["rows"][index]
            for variant in ("plain", "tools"):
                line += f" {cell_ns(r[f'rust_setup_{variant}_ns'])} | {r[f'python_setup_{variant}_ns']:.0f} |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--label", required=True, help="name of this run in the report (before, after, ...)")
    args.add_argument("--note", default="", help="what this run's code changed, for the report")
    args.add_argument("--rounds", type=int, default=21)
    args.add_argument("--skip-build", action="store_true", help="reuse the harness binary already built")
    args.add_argument("--out", type=pathlib.Path, default=REPORT / "binding.md")
    opts = args.parse_args()
    race = rust_cells(opts.rounds, build=not opts.skip_build)
    rows = python_times(race, opts.rounds)
    store = opts.out.with_suffix(".json")
    runs = json.loads(store.read_text()) if store.exists() else {}
    runs[opts.label] = {
        "meta": {
            "commit": commit(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "rounds": opts.rounds,
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "note": opts.note,
        },
        "rows": rows,
    }
    store.write_text(json.dumps(runs, indent=1) + "\n")
    command = f"python benches/bench_binding.py --label LABEL --rounds {opts.rounds}"
    opts.out.write_text(markdown(runs, command))
    print(opts.out.read_text())


if __name__ == "__main__":
    main()
