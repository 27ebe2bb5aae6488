"""Adapters over peer implementations, for benchmarks and parity checks.

Only SGLang for now: its function-call detectors are pure Python and run on CPU.
SGLang is not a dependency of toolwire; install it as described in benches/README.md
(`pip install --no-deps sglang==0.5.23` plus the `bench` extra).

    import peers                       # with benches/ on sys.path, as bench_parsers.py does
    calls, content = peers.sglang_parse("hermes", tools, text)
    calls, content = peers.sglang_stream("hermes", tools, chunks)

`calls` is a list of `{"name": str, "arguments": str}` (arguments as JSON text), `content` the
text that SGLang hands to the user as normal content.
"""

from __future__ import annotations

import functools
import io
import logging
import sys
from typing import Iterable

# toolwire format name -> SGLang tool-call parser name (a key of
# FunctionCallParser.ToolCallParserEnum in sglang 0.5.23). None: SGLang has no detector for it.
SGLANG_PARSER: dict[str, str | None] = {
    "hermes": "qwen25",          # Qwen2.5/Qwen3 "<tool_call>\n{...}\n</tool_call>" ("hermes" in
                                 # SGLang is the same tags without the newlines)
    "qwen3_coder": "qwen3_coder",
    "llama3_json": "llama3",
    "mistral": "mistral",
    "pythonic": "pythonic",
    "deepseek_v3": "deepseekv3",
    "deepseek_v3_1": "deepseekv31",
    "deepseek_v3_2": "deepseekv32",
    "deepseek_v4": "deepseekv4",
    "kimi_k2": "kimi_k2",
    "glm45": "glm45",
    "glm47": "glm47",
    "minimax_m2": "minimax-m2",
    "minimax_m3": "minimax-m3",
    "gemma4": "gemma4",
    "harmony": "gpt-oss",
    "cohere_command": "cohere_command4",
    "default": None,
    "longcat": None,
    "hunyuan_a13b": None,        # SGLang's "hunyuan" is the Hy3 arg_key format, not A13B's JSON
    "phi4": None,
    "jamba": None,
    "nemotron_deci": None,
    "granite": None,
}

# Aliases a caller may use for a toolwire format name.
_ALIASES = {"qwen25": "hermes", "gpt-oss": "harmony", "gpt_oss": "harmony", "llama3": "llama3_json",
            "deepseekv3": "deepseek_v3", "deepseekv31": "deepseek_v3_1",
            "deepseekv32": "deepseek_v3_2", "minimax-m2": "minimax_m2",
            "cohere_command4": "cohere_command", "cohere": "cohere_command"}


class PeerUnavailable(RuntimeError):
    """The peer library is not installed, or has no parser for this format."""


def canonical(fmt: str) -> str:
    return _ALIASES.get(fmt, fmt)


def sglang_parser_name(fmt: str) -> str:
    """The SGLang parser name for toolwire format `fmt`; PeerUnavailable if there is none."""
    fmt = canonical(fmt)
    name = SGLANG_PARSER.get(fmt)
    if name is None:
        raise PeerUnavailable(f"SGLang has no tool-call parser for format {fmt!r}")
    enum = _sglang()["FunctionCallParser"].ToolCallParserEnum
    if name not in enum:
        raise PeerUnavailable(f"this SGLang has no parser named {name!r}")
    return name


@functools.lru_cache(maxsize=None)
def _sglang() -> dict:
    """Import SGLang's function-call package once (it takes seconds: it pulls in torch)."""
    # SGLang logs every unparsable or unknown call at ERROR/WARNING level; keep the bench quiet.
    logging.getLogger("sglang").setLevel(logging.CRITICAL)
    try:
        # Its import chain prints deprecation chatter on stderr; hide it.
        saved, sys.stderr = sys.stderr, io.StringIO()
        try:
            from sglang.srt.entrypoints.openai.protocol import Function, Tool
            from sglang.srt.function_call.function_call_parser import FunctionCallParser
            import sglang
        finally:
            sys.stderr = saved
    except Exception as e:  # ImportError, or a broken transitive dependency
        raise PeerUnavailable(f"sglang is not importable: {type(e).__name__}: {e}") from e
    return {"Tool": Tool, "Function": Function, "FunctionCallParser": FunctionCallParser,
            "version": getattr(sglang, "__version__", "?")}


def sglang_available() -> bool:
    try:
        _sglang()
        return True
    except PeerUnavailable:
        return False


def sglang_version() -> str:
    return _sglang()["version"]


def sglang_tools(tools: Iterable[dict] | None) -> list:
    """SGLang `Tool` objects from OpenAI tool dicts.

    Accepts `{"type": "function", "function": {name, description, parameters, strict}}` and the
    bare `{"name", "description", "parameters"}` form.
    """
    m = _sglang()
    out = []
    for t in tools or []:
        fn = t.get("function", t) if t.get("type", "function") == "function" else t
        if "name" not in fn:
            raise ValueError(f"tool without a name: {t!r}")
        kw = {"name": fn["name"], "parameters": fn.get("parameters") or {"type": "object",
                                                                         "properties": {}}}
        if fn.get("description") is not None:
            kw["description"] = fn["description"]
        if fn.get("strict") is not None:
            kw["strict"] = fn["strict"]
        out.append(m["Tool"](type="function", function=m["Function"](**kw)))
    return out


def _as_sglang_tools(tools) -> list:
    """Tools already converted (a list of SGLang Tool) pass through; dicts are converted."""
    tools = list(tools or [])
    if tools and not isinstance(tools[0], dict):
        return tools
    return sglang_tools(tools)


def sglang_new_parser(fmt: str, tools):
    """A fresh FunctionCallParser (SGLang keeps streaming state in it: one per request)."""
    m = _sglang()
    return m["FunctionCallParser"](tools=_as_sglang_tools(tools),
                                   tool_call_parser=sglang_parser_name(fmt))


def _collect(items, by_index: dict) -> None:
    for it in items:
        slot = by_index.setdefault(it.tool_index, {"name": None, "arguments": ""})
        if it.name:
            slot["name"] = it.name
        if it.parameters:
            slot["arguments"] += it.parameters


def _ordered(by_index: dict) -> list[dict]:
    return [by_index[i] for i in sorted(by_index)]


def sglang_parse(fmt: str, tools, text: str) -> tuple[list[dict], str]:
    """One-shot parse of a whole model output with SGLang: (calls, content)."""
    parser = sglang_new_parser(fmt, tools)
    content, items = parser.parse_non_stream(text)
    by_index: dict = {}
    for n, it in enumerate(items):
        # Non-streaming items are whole calls; some detectors leave tool_index at -1/0.
        by_index[n] = {"name": it.name, "arguments": it.parameters}
    return _ordered(by_index), content or ""


def sglang_stream(fmt: str, tools, chunks: Iterable[str]) -> tuple[list[dict], str]:
    """Stream `chunks` through SGLang, then flush: (calls, content).

    Calls are assembled the way an OpenAI client does it: by tool_index, the name from the
    first delta that carries one, the arguments concatenated.
    """
    parser = sglang_new_parser(fmt, tools)
    by_index: dict = {}
    content = []
    for piece in chunks:
        text, items = parser.parse_stream_chunk(piece)
        if text:
            content.append(text)
        if items:
            _collect(items, by_index)
    text, items = parser.parse_stream_end()
    if text:
        content.append(text)
    _collect(items, by_index)
    return _ordered(by_index), "".join(content)


def sglang_stream_timed(fmt: str, tools, chunks: list[str], clock=None) -> int:
    """Nanoseconds to stream `chunks` through a fresh SGLang parser and flush it.

    The same work as `sglang_stream` minus the result bookkeeping, so the loop measures
    the parser and not this adapter.
    """
    import time
    clock = clock or time.perf_counter_ns
    tools = _as_sglang_tools(tools)
    cls = _sglang()["FunctionCallParser"]
    name = sglang_parser_name(fmt)
    t0 = clock()
    parser = cls(tools=tools, tool_call_parser=name)
    feed = parser.parse_stream_chunk
    for piece in chunks:
        feed(piece)
    parser.parse_stream_end()
    return clock() - t0


def sglang_parse_timed(fmt: str, tools, text: str, clock=None) -> int:
    """Nanoseconds for one SGLang one-shot parse, parser construction included."""
    import time
    clock = clock or time.perf_counter_ns
    tools = _as_sglang_tools(tools)
    cls = _sglang()["FunctionCallParser"]
    name = sglang_parser_name(fmt)
    t0 = clock()
    cls(tools=tools, tool_call_parser=name).parse_non_stream(text)
    return clock() - t0

