"""Hostile inputs at 1x, 2x and 4x size: CPU time grows linearly (t4/t1 near 4) and the parser's
memory stays a small multiple of the input (or under the ``max_call_bytes`` limit).

    python benches/bench_hostile.py [--formats hermes,kimi_k2|all] [--scale 0.25] [--repeat 3]
                                    [--json out.json] [--markdown out.md]

Cases (sizes at 4x, the issue's sizes; 1x and 2x are a quarter and a half; ``--scale`` multiplies
every size):

* ``lt``: 1 MB of ``<`` streamed in 4-character chunks (all content);
* ``nested``: a call whose argument is 100,000 nested brackets, parsed one-shot (this case and
  the next run at 1x, 2x and 4x the issue's size: see ``build``);
* ``nested_bare``: 100,000 ``{`` and then ``[`` as the whole output, parsed one-shot;
* ``big_arg``: a call with a 10 MB string argument streamed in 4-character chunks;
* ``cut``: the ``big_arg`` input with ``max_call_bytes=65536`` (cut, then dropped);
* ``calls``: 100,000 tiny calls streamed in 64-character chunks;
* ``markers``: a call whose 1 MB string argument repeats every marker of the format, streamed in
  4-character chunks (JSON formats escape nothing here: the markers are plain string text);
* ``utf8``: a call whose 1 MB argument mixes 2-, 3- and 4-byte characters and stray invalid bytes,
  fed as byte-level token ids three at a time (every multi-byte character split across ids).

Each input is built with the format's own renderer (``toolwire.render``). Time is CPU time of
the calling thread (``time.thread_time``), the best of ``--repeat`` runs (a run under 50 ms is
repeated until the batch takes 50 ms, and timed per run), through the Python
bindings (so a 4-character feed includes the binding's call overhead). Memory is the growth of
the process's peak resident set (Linux ``VmHWM``, reset through ``/proc/self/clear_refs``) over
what it held before the first run, with the input already built; at 4x it is reported per input
byte (``mem/in``). Every (format, case, size) runs in a fresh interpreter. The correctness side (results, heap growth by a
counting allocator) is in ``rust/core/tests/hostile.rs``.

By default one format per parser family runs (the same ten as the big case of ``hostile.rs``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import toolwire

PLACEHOLDER = "QQPLACEHOLDERQQ"
FAMILIES = ["hermes", "mistral", "harmony", "qwen3_coder", "glm47", "deepseek_v3_2", "minimax_m3",
            "kimi_k2", "gemma4", "pythonic"]


CASES = ["lt", "nested", "nested_bare", "big_arg", "cut", "calls", "markers", "utf8"]


def one_call(name: str, value: str, as_json: bool = False) -> str:
    text = toolwire.render(name, [{"name": "get_weather", "arguments": {"location": PLACEHOLDER}}])
    quoted = f'"{PLACEHOLDER}"'
    if as_json and quoted in text:
        return text.replace(quoted, value, 1)
    return text.replace(PLACEHOLDER, value, 1)


def feed(stream_of, text: str, chunk: int):
    stream = stream_of()
    for i in range(0, len(text), chunk):
        stream.feed(text[i : i + chunk])
    stream.finish()
    return stream.message()


def feed_ids(stream_of, ids: list[int], group: int):
    stream = stream_of()
    for i in range(0, len(ids), group):
        stream.feed_tokens(ids[i : i + group])
    stream.finish()
    return stream.message()


def byte_vocab(name: str) -> toolwire.Vocab:
    """Ids 0-255 are the bytes; the format's special markers follow as special tokens."""
    specials = sorted({m["text"] for m in toolwire.format_info(name)["markers"] if m["special_token"]})
    pieces = [(b, bytes([b]), False) for b in range(256)]
    pieces += [(256 + k, text, True) for k, text in enumerate(specials)]
    return toolwire.Vocab.from_pieces(pieces)


def markers_of(name: str) -> str:
    info = toolwire.format_info(name)
    texts = {m["text"] for m in info["markers"]} | {t["text"] for t in info["triggers"]}
    return "".join(sorted(t for t in texts if t)) + " "


def repeat_to(unit: str, size: int) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def build(name: str, case: str, k: int, scale: float):
    """The case's input at k quarters of the issue's size, as a function that parses it and
    returns the message and the number of input bytes."""
    n = lambda full: max(1, int(full * k / 4 * scale))  # noqa: E731
    plain = toolwire.ToolParser(name)
    # Nesting is cheap (about 1 ms at the size), so it runs at 1x, 2x and 4x the issue's
    # size: below about 50,000 levels the input still fits the CPU's caches and per-byte time
    # is lower, which a ratio over such tiny times would show as superlinear.
    depth = max(1, int(100_000 * k * scale))
    if case == "lt":
        lt = "<" * n(1 << 20)
        return lambda: (feed(plain.stream, lt, 4), len(lt))
    if case == "nested":
        nested = one_call(name, "[" * depth + "1" + "]" * depth, as_json=True)
        return lambda: (plain.parse(nested), len(nested))
    if case == "nested_bare":
        bare = "{" * (depth // 2) + "[" * (depth // 2)
        return lambda: (plain.parse(bare), len(bare))
    if case in ("big_arg", "cut"):
        big = one_call(name, "x" * n(10 << 20))
        parser = plain if case == "big_arg" else toolwire.ToolParser(name, max_call_bytes=65536)
        return lambda: (feed(parser.stream, big, 4), len(big))
    if case == "calls":
        calls = toolwire.render(name, [{"name": "f", "arguments": {"i": i}} for i in range(n(100_000))])
        return lambda: (feed(plain.stream, calls, 64), len(calls))
    if case == "markers":
        value = repeat_to(markers_of(name), n(1 << 20))
        marked = toolwire.render(name, [{"name": "get_weather", "arguments": {"location": value}}])
        return lambda: (feed(plain.stream, marked, 4), len(marked.encode()))
    if case == "utf8":
        tokened = toolwire.ToolParser(name, vocab=byte_vocab(name))
        head, tail = one_call(name, PLACEHOLDER).split(PLACEHOLDER)
        unit = "é東😀a".encode()
        body = bytearray()
        while len(body) < n(1 << 20):
            body += unit
            if len(body) % 97 < len(unit):
                body += b"\xff"  # a byte that is never valid UTF-8
        ids = list(head.encode()) + list(body) + list(tail.encode())
        return lambda: (feed_ids(tokened.stream, ids, 3), len(ids))
    raise SystemExit(f"no case {case}")


def rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


MIN_BATCH_SECONDS = 0.05


def measure(run, repeat: int):
    """Best of `repeat` batches of CPU time per run; a batch repeats a run that takes under
    MIN_BATCH_SECONDS until it has taken that long (sub-millisecond times are noise alone)."""
    before = rss_kib("VmRSS")
    can_reset = reset_peak()
    start = time.thread_time()
    message, size = run()
    first = time.thread_time() - start
    # The first run only: later ones reuse the memory it freed.
    peak_growth = max(0, rss_kib("VmHWM") - before) * 1024 if can_reset else None
    del message
    per_batch = max(1, int(MIN_BATCH_SECONDS / max(first, 1e-6)) + 1) if first < MIN_BATCH_SECONDS else 1
    best = first if per_batch == 1 else float("inf")
    for _ in range(repeat if per_batch > 1 else repeat - 1):
        start = time.thread_time()
        for _ in range(per_batch):
            run()
        best = min(best, (time.thread_time() - start) / per_batch)
    return best, size, peak_growth


def child(name: str, case: str, k: int, scale: float, repeat: int) -> None:
    """Measure one case in this (fresh) process and print the result as JSON."""
    seconds, size, growth = measure(build(name, case, k, scale), repeat)
    print(json.dumps({"k": k, "bytes": size, "seconds": seconds, "peak_rss_growth": growth}))


def in_fresh_process(name: str, case: str, k: int, scale: float, repeat: int) -> dict:
    """Each measurement runs in its own interpreter, so that memory freed by an earlier case (and
    kept by the allocator) neither hides nor inflates this one's peak."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, case, str(k), str(scale), str(repeat)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def summarize(rows: list[dict]) -> str:
    by_case: dict[str, list[dict]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    out = ["| case | 4x input | formats | 4x CPU s (median, max) | t2/t1 worst | t4/t1 worst | peak RSS growth / input (worst) |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for case, rs in by_case.items():
        t4 = sorted(r["runs"][2]["seconds"] for r in rs)
        worst2 = max(rs, key=lambda r: r["ratio2"])
        worst4 = max(rs, key=lambda r: r["ratio4"])
        mem = [r["mem_per_byte"] for r in rs if r["mem_per_byte"] is not None]
        size = max(r["runs"][2]["bytes"] for r in rs)
        worst_mem = f"{max(mem):.2f}" if mem else "n/a"
        out.append(
            f"| {case} | {size / 1e6:.2f} MB | {len(rs)} | {t4[len(t4) // 2]:.3f}, {t4[-1]:.3f} "
            f"| {worst2['ratio2']:.2f} ({worst2['format']}) | {worst4['ratio4']:.2f} ({worst4['format']}) "
            f"| {worst_mem} |"
        )
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--formats", default="", help="comma-separated, or 'all' (default: one per parser family)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: every case)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--update", action="store_true",
                    help="keep the rows of --json that this run does not measure (with --cases)")
    ap.add_argument("--markdown", help="write a Markdown report here")
    ap.add_argument("--child", nargs=5, metavar=("FORMAT", "CASE", "K", "SCALE", "REPEAT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, case, k, scale, repeat = args.child
        child(name, case, int(k), float(scale), int(repeat))
        return
    formats = toolwire.formats() if args.formats == "all" else [f for f in args.formats.split(",") if f] or FAMILIES
    wanted = {c for c in args.cases.split(",") if c}

    rows = []
    print(f"{'format':16} {'case':12} {'4x bytes':>10} {'1x s':>8} {'2x s':>8} {'4x s':>8} {'t2/t1':>6} {'t4/t1':>6} {'mem/in':>7}")
    for name in formats:
        for case in CASES:
            if wanted and case not in wanted:
                continue
            runs = [in_fresh_process(name, case, k, args.scale, args.repeat) for k in (1, 2, 4)]
            t1, t2, t4 = (r["seconds"] for r in runs)
            ratio2 = t2 / t1 if t1 > 0 else float("nan")
            ratio4 = t4 / t1 if t1 > 0 else float("nan")
            growth = runs[2]["peak_rss_growth"]
            per_byte = growth / runs[2]["bytes"] if growth is not None else None
            rows.append({"format": name, "case": case, "runs": runs, "ratio2": ratio2, "ratio4": ratio4,
                         "mem_per_byte": per_byte})
            mem = f"{per_byte:7.2f}" if per_byte is not None else "    n/a"
            print(f"{name:16} {case:12} {runs[2]['bytes']:>10} {t1:8.3f} {t2:8.3f} {t4:8.3f} {ratio2:6.2f} {ratio4:6.2f} {mem}",
                  flush=True)

    if args.update and args.json and os.path.exists(args.json):
        with open(args.json) as f:
            kept = json.load(f)
        fresh = {(r["format"], r["case"]): r for r in rows}
        rows = [fresh.pop((r["format"], r["case"]), r) for r in kept] + list(fresh.values())
    worst = max(rows, key=lambda r: r["ratio4"])
    print(f"\nworst t4/t1: {worst['ratio4']:.2f} ({worst['format']} {worst['case']}); linear is 4")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"# Hostile inputs\n\n`python benches/bench_hostile.py --repeat {args.repeat}"
                    f"{' --scale ' + str(args.scale) if args.scale != 1 else ''}` on {platform.machine()}, "
                    f"toolwire {toolwire.__version__ if hasattr(toolwire, '__version__') else ''}; formats: "
                    f"{', '.join(formats)}. CPU seconds of the parsing thread through the bindings; "
                    "t4/t1 is 4 for a linear cost; memory is peak RSS growth per input byte at 4x.\n\n")
            f.write(summarize(rows))
            f.write("\n| format | case | 4x bytes | 1x s | 2x s | 4x s | t2/t1 | t4/t1 | mem/in |\n"
                    "|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
            for r in rows:
                t = [x["seconds"] for x in r["runs"]]
                mem = f"{r['mem_per_byte']:.2f}" if r["mem_per_byte"] is not None else "n/a"
                f.write(f"| {r['format']} | {r['case']} | {r['runs'][2]['bytes']} | {t[0]:.3f} | {t[1]:.3f} | "
                        f"{t[2]:.3f} | {r['ratio2']:.2f} | {r['ratio4']:.2f} | {mem} |\n")


if __name__ == "__main__":
    main()
