"""Thousands of samples per format under toolwire's structural tags, each parsed back and checked.

    python benches/grammar_property.py --samples 2000 [--formats hermes qwen3_coder] \
        [--out benches/report/grammar_property.md]

The sampler and the checks are ``tests/_grammar_sampling.py`` (the test suite runs the same with
fewer samples and modes): random tokens among those the grammar allows on the real Qwen
vocabulary, every mode of ``MODES`` (auto, required, named, each with and without parallel calls,
and two reasoning modes where the format has reasoning), the text parsed by ``toolwire.ToolParser``
and its calls validated with ``jsonschema``. Writes a markdown report: samples, valid %, failures
(with the texts of the first few), time."""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import _grammar_sampling as S  # noqa: E402
import toolwire  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=2000, help="samples per format")
    ap.add_argument("--formats", nargs="*", default=None)
    ap.add_argument("--seed", default="bench")
    ap.add_argument("--builtin-samples", type=int, default=None, help="samples per family under xgrammar's builtin tags (default: --samples; 0 skips)")
    ap.add_argument("--out", type=Path, default=ROOT / "benches" / "report" / "grammar_property.md")
    args = ap.parse_args()

    formats = args.formats or toolwire.formats()
    h = S.Harness()
    rows = []
    failures = []
    wall0 = time.time()
    for fmt in formats:
        t0 = time.process_time()
        for label, choice, parallel, reasoning in S.modes_for(fmt):
            h.compiled(fmt, choice, parallel, reasoning)
        compile_s = time.process_time() - t0
        out = h.run(fmt, args.samples, seed=args.seed)
        rows.append((fmt, out, compile_s))
        failures += [(fmt, *f) for f in out.failures if f[1]]
        pct = 100.0 * out.valid / out.checked if out.checked else 0.0
        print(
            f"{fmt:16} checked {out.checked:5d} valid {pct:6.2f}% calls {out.calls:5d} unfinished {out.unfinished:3d} "
            f"non-UTF-8 {out.invalid_utf8:3d} sampling {out.seconds:6.1f}s compile {compile_s:5.1f}s",
            flush=True,
        )
    builtin_rows = []
    n_builtin = args.samples if args.builtin_samples is None else args.builtin_samples
    for key, fmt in S.BUILTIN_SAME_SHAPE.items() if n_builtin else ():
        if args.formats and fmt not in args.formats:
            continue
        try:
            out = h.run(fmt, n_builtin, seed=args.seed, builtin=key)
        except Exception as e:  # the builtin cannot compile this tool set
            builtin_rows.append((key, fmt, None, str(e).splitlines()[0][-160:]))
            print(f"builtin {key:14} does not compile: {e}", flush=True)
            continue
        kinds: dict[str, int] = {}
        for _, _, problems in out.failures:
            kind = S.problem_kind(problems[0])
            kinds[kind] = kinds.get(kind, 0) + 1
        builtin_rows.append((key, fmt, out, kinds))
        pct = 100.0 * out.valid / out.checked if out.checked else 0.0
        print(f"builtin {key:14} as {fmt:14} checked {out.checked:5d} valid {pct:6.2f}%", flush=True)
    wall = time.time() - wall0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(rows, failures, args, wall, builtin_rows), encoding="utf-8")
    print(f"wrote {args.out}")
    return 1 if failures or any(o.failures for _, o, _ in rows) else 0


def report(rows, failures, args, wall: float, builtin_rows=()) -> str:
    total = sum(o.checked for _, o, _ in rows)
    valid = sum(o.valid for _, o, _ in rows)
    lines = [
        "# Grammar property: sampled outputs parse to valid calls",
        "",
        f"`python benches/grammar_property.py --samples {args.samples}` (seed `{args.seed}`), "
        f"{platform.machine()} {platform.system()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}. Wall time {wall / 60:.1f} min on a shared 2-core machine.",
        "",
        "Per format, samples are drawn under the structural tag of each mode in turn (auto, required, "
        "named, each with and without parallel calls; `auto+think` and `required+closing` where the "
        "format has reasoning) on the Qwen vocabulary (151,936 ids), with the tools of "
        "`tests/_grammar_sampling.py` (typed, bounded, nested, enums with quotes and commas, a "
        "no-argument tool and a non-strict one). Each finished sample is parsed by "
        "`toolwire.ToolParser` and checked: no parser issue, only allowed tools, strict arguments valid "
        "under `jsonschema`, at least one call and no text under required/named, at most one call "
        "without parallel calls. *Unfinished*: the sample hit the 500-step cap (not checked). "
        "*Non-UTF-8*: xgrammar let the token bytes end up invalid UTF-8 (a partial character in free "
        "text or a raw value); decoded with U+FFFD, as a detokenizer does, and checked like the rest.",
        "",
        f"**Total: {valid} of {total} checked samples valid ({100.0 * valid / total if total else 0:.2f}%).**",
        "",
        "| format | checked | valid | valid % | calls | unfinished | non-UTF-8 | sampling CPU s | compile CPU s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for fmt, o, compile_s in rows:
        pct = 100.0 * o.valid / o.checked if o.checked else 0.0
        lines.append(
            f"| `{fmt}` | {o.checked} | {o.valid} | {pct:.2f} | {o.calls} | {o.unfinished} | {o.invalid_utf8} | {o.seconds:.1f} | {compile_s:.1f} |"
        )
    lines += ["", "## Failures", ""]
    if not failures:
        lines.append("None.")
    for fmt, mode, text, problems in failures[:30]:
        lines += [f"- `{fmt}` {mode}: {'; '.join(problems[:3])}", "", "  ```", "  " + repr(text[:800]), "  ```", ""]
    if builtin_rows:
        lines += [
            "",
            "## The same sampler under xgrammar's builtin tags",
            "",
            "`xgrammar.get_model_structural_tag(key, tools, tool_choice, reasoning=\"disabled\", "
            "parallel_tool_calls=...)` for the families whose wire shape toolwire writes, the six "
            "non-reasoning modes, the same tools, parsed back by toolwire's parser for that format and "
            "checked the same way. The failure kinds count each invalid sample once, by its first problem.",
            "",
            "| builtin | parsed as | checked | valid | valid % | failure kinds |",
            "|---|---|---|---|---|---|",
        ]
        for key, fmt, o, kinds in builtin_rows:
            if o is None:
                lines.append(f"| `{key}` | `{fmt}` | – | – | – | does not compile: {kinds} |")
                continue
            pct = 100.0 * o.valid / o.checked if o.checked else 0.0
            what = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])) or "none"
            lines.append(f"| `{key}` | `{fmt}` | {o.checked} | {o.valid} | {pct:.2f} | {what} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
