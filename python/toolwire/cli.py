"""The `toolwire` command: list formats, parse model output from stdin, print structural tags,
run the demo.

Every misuse (a missing or unreadable file, bad JSON, an unknown format, input that is not UTF-8,
a demo that cannot do what it was asked) is one line on stderr and exit status 2: a command-line
user should never see a traceback for their own mistake.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from typing import Any

import toolwire


class UsageError(Exception):
    """A mistake of the command line's user: printed as one line, exit status 2."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse prints the whole usage; one line is enough
        raise UsageError(f"{self.prog}: {message} (see `{self.prog} --help`)")


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


def _chunk_line(delta: toolwire.Delta, created: int, model: str) -> str:
    from toolwire.openai import chat_completion_chunk

    return json.dumps(chat_completion_chunk(delta, id="chatcmpl-toolwire", model=model, created=created), ensure_ascii=False)


# ------------------------------------------------------------------------------------------------
# Reading what the user gave us


def read_json_file(path: str, what: str) -> Any:
    """The JSON value in ``path``; every way that can fail is a :class:`UsageError`."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} file {path} is a directory") from None
    except OSError as e:
        raise UsageError(f"cannot read {what} file {path}: {e.strerror}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UsageError(f"{what} file {path} is not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{what} file {path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


def load_tools(path: str | None) -> Any:
    """The tools list in ``path``: a list, or a request with a ``tools`` key. The list's shape is
    checked by the API it is passed to, so its errors read the same as there."""
    if path is None:
        return None
    tools = read_json_file(path, "tools")
    if isinstance(tools, dict) and "tools" in tools:
        tools = tools["tools"]
    return tools


def read_stdin_text() -> str:
    """All of stdin as text, decoded before anything is printed (so a bad byte cannot cut a
    stream of chunks half way)."""
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"stdin is not UTF-8 text (byte 0x{raw[e.start]:02x} at offset {e.start})") from None


def format_name(name: str) -> str:
    """``name`` if it is a format or an alias, else a :class:`UsageError` naming the closest."""
    known = {}
    for canonical in toolwire.formats():
        known[canonical] = canonical
        for alias in toolwire.format_info(canonical).get("aliases", []):
            known.setdefault(alias, canonical)
    if name in known:
        return name
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UsageError(f"unknown format {name!r}{hint} (`toolwire formats` lists all {len(toolwire.formats())})")


def tool_choice(text: str) -> Any:
    if text in ("auto", "required", "none"):
        return text
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"--tool-choice is not valid JSON: {e.msg} at column {e.colno}") from None
    return {"type": "function", "function": {"name": text}}


def reasoning_mode(text: str | None) -> Any:
    return True if text in ("true", "native") else text


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


# ------------------------------------------------------------------------------------------------
# The demo


def demo(args: argparse.Namespace) -> int:
    """The live demo when its packages are there; asked-for live work without them is an error,
    and only the plain ``toolwire demo`` falls back to the recorded output."""
    from toolwire import _demo_live

    fmt = format_name(args.format) if args.format else None
    wants_live = args.samples is not None or (fmt is not None and fmt != "hermes")
    if args.replay:
        if wants_live:
            raise UsageError("--replay replays one recorded hermes output; it takes no --samples or other --format")
        return demo_replay(args)
    missing = _demo_live.missing()
    if not missing:
        return demo_live(args, fmt or "hermes")
    if wants_live:
        asked = "--samples" if args.samples is not None else f"--format {fmt}"
        raise UsageError(
            f"`toolwire demo {asked}` generates with a random model and needs {', '.join(missing)}, "
            f"which are not installed: pip install 'toolwire[demo]'"
        )
    print(
        f"# {', '.join(missing)} not installed (pip install 'toolwire[demo]'): replaying a recorded output",
        file=sys.stderr,
    )
    return demo_replay(args)


def demo_samples(args: argparse.Namespace, fmt: str, samples: int) -> int:
    """Many generations at once, with a progress bar on stderr and a summary."""
    from toolwire import _demo_live

    max_new_tokens = args.max_new_tokens or 512
    progress = _demo_live.Progress(samples, f"{fmt}: generating")
    outputs = _demo_live.generate(
        fmt, samples, batch=args.batch, seed=args.seed, max_new_tokens=max_new_tokens, progress=progress
    )
    bad = _demo_live.check_outputs(fmt, outputs)
    finished = [g for g in outputs if g.finished]
    parser = toolwire.ToolParser(fmt, tools=_demo_live.GENERATION_TOOLS)
    calls = sum(len(parser.parse(g.text).tool_calls) for g in finished)
    print(
        f"# {len(outputs)} samples from a random model under the {fmt} structural tag: {len(finished)} finished "
        f"({len(outputs) - len(finished)} cut at {max_new_tokens} tokens), {calls} calls, "
        f"{len(bad)} that do not parse into schema-valid calls",
        file=sys.stderr,
    )
    for i, why in bad[:5]:
        print(f"#   sample {i}: {why[:300]}", file=sys.stderr)
    if finished:
        print(json.dumps(parser.parse(finished[0].text).to_openai(), indent=2, ensure_ascii=False))
    return 1 if bad or not finished else 0


def demo_live(args: argparse.Namespace, fmt: str) -> int:
    from toolwire import _demo_live

    if args.samples is not None or fmt != "hermes":
        return demo_samples(args, fmt, args.samples or 1)

    created = int(time.time())
    emitted = 0

    def emit(delta: toolwire.Delta) -> None:
        nonlocal emitted
        print(_demo_live.chunk_json(delta, created), flush=True)
        emitted += 1

    message = _demo_live.run(DEMO_TOOLS, emit, seed=args.seed, max_new_tokens=args.max_new_tokens or 160)
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
            print(_chunk_line(delta, created, "demo-replay"))
            emitted += 1
    for delta in stream.finish():
        print(_chunk_line(delta, created, "demo-replay"))
        emitted += 1
    message = stream.message()
    print(f"# {emitted} OpenAI chunks; the final message:", file=sys.stderr)
    print(json.dumps(message.to_openai(), indent=2, ensure_ascii=False))
    if not message.valid or len(message.tool_calls) != 2:
        print(f"demo failed: {message!r} {message.issues!r}", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------------------------------------
# formats, parse, tag


def list_formats(args: argparse.Namespace) -> int:
    for name in toolwire.formats():
        info = toolwire.format_info(name)
        aliases = ", ".join(info["aliases"])
        print(f"{name:16} {info['description']}" + (f"  (aliases: {aliases})" if aliases else ""))
    return 0


def _message_json(message: toolwire.ParsedMessage) -> dict[str, Any]:
    out = message.to_openai()
    if message.issues:
        out["issues"] = [{"index": i.index, "kind": i.kind, "detail": i.detail, "raw": i.raw} for i in message.issues]
    return out


def parse(args: argparse.Namespace) -> int:
    parser = toolwire.ToolParser(format_name(args.format), tools=load_tools(args.tools), reasoning=reasoning_mode(args.reasoning))
    text = read_stdin_text()
    if not args.stream:
        print(json.dumps(_message_json(parser.parse(text)), indent=2, ensure_ascii=False))
        return 0
    # JSON Lines: one chat.completion.chunk per delta, then the final message.
    stream = parser.stream()
    created = int(time.time())
    for chunk in _chunks(text):
        for delta in stream.feed(chunk):
            print(_chunk_line(delta, created, args.model))
    for delta in stream.finish():
        print(_chunk_line(delta, created, args.model))
    print(json.dumps(_message_json(stream.message()), ensure_ascii=False))
    return 0


def _tag_extras(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords only some formats take (Beam's turn grammar) or only some requests want."""
    extras: dict[str, Any] = {}
    if args.response_format:
        response_format = read_json_file(args.response_format, "response_format")
        if isinstance(response_format, dict) and "response_format" in response_format:
            response_format = response_format["response_format"]
        extras["response_format"] = response_format
    if args.no_turn_grammar:
        extras["turn_grammar"] = False
    if args.constrained_tools:
        extras["constrained_tools"] = [n.strip() for n in args.constrained_tools.split(",") if n.strip()]
    return extras


def tag(args: argparse.Namespace) -> int:
    fmt, choice, tools = format_name(args.format), tool_choice(args.tool_choice), load_tools(args.tools) or []
    extras = _tag_extras(args)
    try:
        from toolwire import grammar
    except ImportError:
        raise UsageError("`toolwire tag` needs xgrammar: pip install 'toolwire[grammar]'") from None
    result = grammar.structural_tag(
        fmt,
        tools,
        tool_choice=choice,
        parallel_tool_calls=not args.no_parallel,
        scope=args.scope,
        schema=args.schema,
        reasoning=reasoning_mode(args.reasoning),
        **extras,
    )
    if result is None:
        print("null")
        print("# no constraint under this scope (auto choice, no strict tool, parallel calls)", file=sys.stderr)
        return 0
    print(json.dumps(json.loads(result.model_dump_json()), indent=None if args.compact else 2, ensure_ascii=False))
    return 0


# ------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    ap = _ArgumentParser(
        prog="toolwire",
        description="Parse LLM tool calls in any supported wire format into OpenAI-compatible tool_calls, "
        "and print xgrammar structural tags.",
    )
    ap.add_argument("--version", action="version", version=f"toolwire {toolwire.__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser(
        "demo",
        help="generate tool calls with a tiny random model under a structural tag (or replay a recorded output) "
        "and print the OpenAI chunks",
    )
    d.add_argument("--replay", action="store_true", help="replay a recorded hermes output instead of generating")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--max-new-tokens", type=positive_int, default=None, help="default: 160, or 512 with --samples")
    d.add_argument(
        "--samples",
        type=positive_int,
        default=None,
        help="generate this many replies in batches (progress bar on stderr) and check that every one parses",
    )
    d.add_argument(
        "--format",
        default=None,
        help="the format whose structural tag the model writes under (default hermes; another format without "
        "--samples generates one sample)",
    )
    d.add_argument("--batch", type=positive_int, default=32, help="with --samples: requests decoded together")
    d.set_defaults(run=demo)
    sub.add_parser("formats", help="list the supported formats").set_defaults(run=list_formats)
    request = _ArgumentParser(add_help=False)  # what parse and tag both read
    request.add_argument("--format", required=True)
    request.add_argument("--tools", help="JSON file with the OpenAI tools list (or a request with a tools key)")
    request.add_argument("--reasoning", default=None, help="think | paired | closing_only | native")
    p = sub.add_parser("parse", parents=[request], help="parse model output from stdin into an OpenAI message")
    p.add_argument(
        "--stream",
        action="store_true",
        help="stream the input in small chunks; print JSON Lines: one chat.completion.chunk per delta, then the message",
    )
    p.add_argument("--model", default="", help="with --stream: the chunks' model field")
    p.set_defaults(run=parse)
    p = sub.add_parser(
        "tag", parents=[request], help="print the xgrammar structural tag for a tool list (needs toolwire[grammar])"
    )
    p.add_argument(
        "--tool-choice",
        default="auto",
        help="auto | required | none | a tool name | a JSON tool_choice object (default: auto)",
    )
    p.add_argument("--no-parallel", action="store_true", help="parallel_tool_calls=false: stop after one call")
    p.add_argument("--scope", default="always", choices=["auto", "always", "never"], help="default: always")
    p.add_argument("--schema", default="auto", choices=["auto", "strict"])
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
    return ap


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except (UsageError, toolwire.ToolwireError) as e:
        message = str(e)
        print(message if message.startswith("toolwire") else f"toolwire: {message}", file=sys.stderr)
        return 2
