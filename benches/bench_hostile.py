"""Hostile inputs at 1x, 2x and 4x size, for every format: time grows linearly (t4/t1 near 4).

    python benches/bench_hostile.py [--formats hermes,kimi_k2] [--scale 0.25] [--repeat 3]
                                    [--json out.json] [--markdown out.md]

Cases (sizes at 1x; `--scale` multiplies them):

* ``lt``: 1 MB of ``<`` streamed in 4-character chunks (all content);
* ``nested``: a call whose argument is 100,000 nested brackets, parsed one-shot;
* ``big_arg``: a call with a 2.5 MB string argument (10 MB at 4x) streamed in 4-character chunks;
* ``calls``: 25,000 tiny calls (100,000 at 4x) streamed in 64-character chunks;
* ``cut``: the ``big_arg`` input with ``max_call_bytes=65536`` (cut, then dropped).

Each input is built with the format's own renderer (``toolwire.render``). Times are the best of
``--repeat`` runs, wall clock, through the Python bindings (a 4-character feed costs well under a
microsecond of binding overhead). The tests in ``rust/core/tests/hostile.rs`` check the results
and the memory; this file only shows the times.
"""

from __future__ import annotations

import argparse
import json
import time

import toolwire

PLACEHOLDER = "QQPLACEHOLDERQQ"


def one_call(name: str, value: str, as_json: bool = False) -> str:
    text = toolwire.render(name, [{"name": "get_weather", "arguments": {"location": PLACEHOLDER}}])
    quoted = f'"{PLACEHOLDER}"'
    if as_json and quoted in text:
        return text.replace(quoted, value, 1)
    return text.replace(PLACEHOLDER, value, 1)


def feed(parser: toolwire.ToolParser, text: str, chunk: int) -> toolwire.ParsedMessage:
    stream = parser.stream()
    for i in range(0, len(text), chunk):
        stream.feed(text[i : i + chunk])
    stream.finish()
    return stream.message()


def cases(name: str, k: int, scale: float):
    """(case name, parser, input, chunk size or 0 for one-shot) at k times the base size."""
    plain = toolwire.ToolParser(name)
    n = lambda base: max(1, int(base * k * scale))  # noqa: E731
    yield "lt", plain, "<" * n(1 << 20), 4
    depth = n(100_000)
    yield "nested", plain, one_call(name, "[" * depth + "1" + "]" * depth, as_json=True), 0
    big = one_call(name, "x" * n(2_500_000))
    yield "big_arg", plain, big, 4
    calls = [{"name": "f", "arguments": {"i": i}} for i in range(n(25_000))]
    yield "calls", plain, toolwire.render(name, calls), 64
    yield "cut", toolwire.ToolParser(name, max_call_bytes=65536), big, 4


def measure(parser, text, chunk, repeat):
    best = float("inf")
    message = None
    for _ in range(repeat):
        start = time.perf_counter()
        message = parser.parse(text) if chunk == 0 else feed(parser, text, chunk)
        best = min(best, time.perf_counter() - start)
    return best, message


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formats", default="", help="comma-separated (default: every format)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--markdown", help="write a Markdown table here")
    args = ap.parse_args()
    formats = [f for f in args.formats.split(",") if f] or toolwire.formats()

    rows = []
    print(f"{'format':16} {'case':8} {'1x bytes':>10} {'1x s':>8} {'2x s':>8} {'4x s':>8} {'t4/t1':>6}")
    for name in formats:
        per_case: dict[str, list] = {}
        for k in (1, 2, 4):
            for case, parser, text, chunk in cases(name, k, args.scale):
                seconds, message = measure(parser, text, chunk, args.repeat)
                per_case.setdefault(case, []).append(
                    {"k": k, "bytes": len(text.encode()), "seconds": seconds,
                     "calls": len(message.tool_calls), "issues": sorted({i.kind for i in message.issues})}
                )
        for case, runs in per_case.items():
            t1, t2, t4 = (r["seconds"] for r in runs)
            ratio = t4 / t1 if t1 > 0 else float("nan")
            rows.append({"format": name, "case": case, "runs": runs, "ratio": ratio})
            print(f"{name:16} {case:8} {runs[0]['bytes']:>10} {t1:8.3f} {t2:8.3f} {t4:8.3f} {ratio:6.2f}", flush=True)

    worst = max(rows, key=lambda r: r["ratio"])
    print(f"\nworst t4/t1: {worst['ratio']:.2f} ({worst['format']} {worst['case']}); linear is 4")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| format | case | 1x bytes | 1x s | 2x s | 4x s | t4/t1 |\n|---|---|---:|---:|---:|---:|---:|\n")
            for r in rows:
                t = [x["seconds"] for x in r["runs"]]
                f.write(f"| {r['format']} | {r['case']} | {r['runs'][0]['bytes']} | {t[0]:.3f} | {t[1]:.3f} | {t[2]:.3f} | {r['ratio']:.2f} |\n")


if __name__ == "__main__":
    main()
