"""Adapters over peer implementations, for benchmarks and parity checks.

SGLang's function-call detectors and vLLM's tool parsers; both are pure Python and run on CPU.
Neither is a dependency of toolwire; install them as described in benches/README.md
(`pip install --no-deps sglang==0.5.23 vllm==0.33.0` plus the `bench` extra, or
scripts/install_integration_peers.sh).

    import peers                       # with benches/ on sys.path, as bench_parsers.py does
    calls, content = peers.sglang_parse("hermes", tools, text)
    calls, content = peers.sglang_stream("hermes", tools, chunks)

    calls, content = peers.vllm_parse("hermes", tools, text)
    calls, content = peers.vllm_stream("hermes", tools, chunks)

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
    "deepseek_v4_1": "deepseekv41",
    "beam": "beam",
    "step3": "step3",
    "hunyuan": "hunyuan",        # Hy3: <tool_calls><tool_call>name<tool_sep><arg_key>...
    "apertus": "apertus2509",
    "gigachat3": "gigachat3",
    "lfm2": "lfm2",
    "dots": "dots",
    "iquest_q1": "iquest_q1",
    "default": None,
    "longcat": None,
    "hunyuan_a13b": None,        # SGLang's "hunyuan" is the Hy3 arg_key format, not A13B's JSON
    "phi4": None,
    "jamba": None,
    "nemotron_deci": None,
    "granite": None,
    "xlam": None,
    "internlm": None,            # SGLang's "interns1" is Intern-S1's format, not InternLM2's plugin
    "seed_oss": None,
    "functiongemma": None,
    "hy_v4": None,
    "granite_20b_fc": None,
    "ernie45": None,
}

# toolwire format name -> vLLM 0.33.0 tool parser name (ToolParserManager). None: vLLM has none.
VLLM_PARSER: dict[str, str | None] = {
    "hermes": "hermes",
    "qwen3_coder": "qwen3_coder",
    "llama3_json": "llama3_json",
    "mistral": "mistral",
    "pythonic": "pythonic",
    "deepseek_v3": "deepseek_v3",
    "deepseek_v3_1": "deepseek_v31",
    "deepseek_v3_2": "deepseek_v32",
    "deepseek_v4": "deepseek_v4",
    "deepseek_v4_1": "deepseek_v41",
    "kimi_k2": "kimi_k2",
    "glm45": "glm45",
    "glm47": "glm47",
    "minimax_m2": "minimax_m2",
    "minimax_m3": "minimax_m3",
    "gemma4": "gemma4",
    "harmony": None,             # vLLM's "openai" tool parser is a stub: gpt-oss goes through its
                                 # HarmonyParser (token ids), not the ToolParser interface
    "cohere_command": None,      # "cohere_command4" and "beam" are engine-based parsers with no
    "beam": None,                # extract_tool_calls; vLLM drives them only through its Parser
    "longcat": "longcat",
    "hunyuan_a13b": "hunyuan_a13b",
    "phi4": "phi4_mini_json",
    "jamba": "jamba",
    "granite": "granite",
    "xlam": "xlam",
    "internlm": "internlm",
    "seed_oss": "seed_oss",
    "step3": "step3",
    "functiongemma": "functiongemma",
    "hunyuan": "hy_v3",
    "hy_v4": "hy_v4",
    "apertus": "apertus",
    "gigachat3": "gigachat3",
    "lfm2": "lfm2",
    "dots": "dots",
    "ernie45": "ernie45",
    "granite_20b_fc": "granite-20b-fc",
    "iquest_q1": None,
    "nemotron_deci": None,
    "default": None,
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
            import sglang
            from sglang.srt.entrypoints.openai.protocol import Function, Tool
            from sglang.srt.function_call.function_call_parser import FunctionCallParser
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



# --------------------------------------------------------------------------- vLLM


def vllm_parser_name(fmt: str) -> str:
    """The vLLM tool parser name for toolwire format `fmt`; PeerUnavailable if there is none."""
    fmt = canonical(fmt)
    name = VLLM_PARSER.get(fmt)
    if name is None:
        raise PeerUnavailable(f"vLLM has no tool parser for format {fmt!r}")
    if name not in _vllm()["ToolParserManager"].list_registered():
        raise PeerUnavailable(f"this vLLM has no tool parser named {name!r}")
    return name


@functools.lru_cache(maxsize=None)
def _vllm() -> dict:
    logging.getLogger("vllm").setLevel(logging.CRITICAL)
    try:
        import warnings
        saved, sys.stderr = sys.stderr, io.StringIO()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import vllm
                from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
                from vllm.tool_parsers import ToolParserManager
        finally:
            sys.stderr = saved
    except Exception as e:
        raise PeerUnavailable(f"vllm is not importable: {type(e).__name__}: {e}") from e
    for name in ("vllm", "vllm.tool_parsers"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return {"ChatCompletionRequest": ChatCompletionRequest, "ToolParserManager": ToolParserManager,
            "version": getattr(vllm, "__version__", "?")}


def vllm_available() -> bool:
    try:
        _vllm()
        return True
    except PeerUnavailable:
        return False


def vllm_version() -> str:
    return _vllm()["version"]


class _Vocab(dict):
    """A vocabulary that knows every special token a parser asks for: parsers look their
    markers up at construction (`self.vocab.get("<tool_call>")`) and compare token ids later."""

    def get(self, key, default=None):
        if key not in self:
            self[key] = len(self) + 1
        return dict.get(self, key)

    def __missing__(self, key):
        self[key] = len(self) + 1
        return self[key]


class FakeTokenizer:
    """Stands in for the model tokenizer: vLLM's parsers need only its vocabulary (special-token
    ids). Text chunks get token id 0, a chunk that is exactly a looked-up marker gets its id."""

    def __init__(self):
        self.vocab = _Vocab()
        self.all_special_tokens: list[str] = []

    def get_vocab(self):
        return self.vocab

    def ids_for(self, piece: str) -> list[int]:
        i = dict.get(self.vocab, piece)
        return [i] if i is not None else [0]

    def encode(self, text, add_special_tokens=False, **kw):
        return self.ids_for(text)

    def decode(self, ids, **kw):
        inv = {v: k for k, v in self.vocab.items()}
        return "".join(inv.get(i, "") for i in ids)

    def convert_tokens_to_ids(self, tokens):
        if isinstance(tokens, str):
            return self.vocab.get(tokens)
        return [self.vocab.get(t) for t in tokens]

    def convert_ids_to_tokens(self, ids, **kw):
        inv = {v: k for k, v in self.vocab.items()}
        return [inv.get(i, "") for i in ids]


def vllm_request(tools):
    """The ChatCompletionRequest the serving layer hands the parser (tools included)."""
    m = _vllm()
    return m["ChatCompletionRequest"](model="m", messages=[{"role": "user", "content": "hi"}],
                                      tools=list(tools or []))


def vllm_new_parser(fmt: str, request, tokenizer=None):
    """A fresh vLLM tool parser, built as vLLM's serving layer builds it (one per request)."""
    cls = _vllm()["ToolParserManager"].get_tool_parser(vllm_parser_name(fmt))
    tok = tokenizer or FakeTokenizer()
    try:
        parser = cls(tok, request.tools)
    except TypeError:
        parser = cls(tok)
    return parser, tok


def vllm_parse(fmt: str, tools, text: str) -> tuple[list[dict], str]:
    req = vllm_request(tools)
    parser, _ = vllm_new_parser(fmt, req)
    req = parser.adjust_request(req)
    info = parser.extract_tool_calls(text, req)
    calls = [{"name": c.function.name, "arguments": c.function.arguments} for c in info.tool_calls or ()]
    return calls, info.content or ""


def _vllm_collect(delta, by_index: dict, content: list) -> None:
    if delta is None:
        return
    if delta.content:
        content.append(delta.content)
    for tc in delta.tool_calls or ():
        slot = by_index.setdefault(tc.index, {"name": None, "arguments": ""})
        fn = tc.function
        if fn is None:
            continue
        fn = fn if not isinstance(fn, dict) else type("F", (), fn)
        if getattr(fn, "name", None):
            slot["name"] = fn.name
        if getattr(fn, "arguments", None):
            slot["arguments"] += fn.arguments


def vllm_stream(fmt: str, tools, chunks: Iterable[str]) -> tuple[list[dict], str]:
    """Stream `chunks` through a vLLM tool parser the way the serving layer drives it
    (previous/current/delta text and token ids per step; at the end finish_streaming() for
    engine-based parsers, and get_remaining_unstreamed_args() appended to the last call when the
    final delta carries one, as vLLM's Parser does)."""
    req = vllm_request(tools)
    parser, tok = vllm_new_parser(fmt, req)
    req = parser.adjust_request(req)
    by_index: dict = {}
    content: list[str] = []
    prev_text, prev_ids = "", []
    last = None
    for piece in chunks:
        ids = tok.ids_for(piece)
        cur_text, cur_ids = prev_text + piece, prev_ids + ids
        last = parser.extract_tool_calls_streaming(prev_text, cur_text, piece, prev_ids, cur_ids, ids, req)
        _vllm_collect(last, by_index, content)
        prev_text, prev_ids = cur_text, cur_ids
    if getattr(parser, "engine_based_streaming", False):
        flush = parser.finish_streaming()
        _vllm_collect(flush, by_index, content)
        last = flush or last
    # vLLM's Parser._append_unstreamed_tool_args: only when the final delta carries a tool call.
    if last is not None and last.tool_calls and last.tool_calls[-1].function:
        rest = parser.get_remaining_unstreamed_args()
        if rest:
            by_index[last.tool_calls[-1].index]["arguments"] += rest
    return _ordered(by_index), "".join(content)


def vllm_stream_timed(fmt: str, tools, chunks: list[str], clock=None) -> int:
    """Nanoseconds to build a vLLM parser, stream `chunks` through it as the serving layer does
    (the previous/current text and token-id bookkeeping included) and flush it."""
    import time
    clock = clock or time.perf_counter_ns
    req = tools if not isinstance(tools, list) else vllm_request(tools)
    cls = _vllm()["ToolParserManager"].get_tool_parser(vllm_parser_name(fmt))
    tok = FakeTokenizer()
    cls(tok, req.tools)  # warm the vocabulary so that marker chunks get their ids
    id_lists = [tok.ids_for(p) for p in chunks]
    t0 = clock()
    parser = cls(tok, req.tools)
    feed = parser.extract_tool_calls_streaming
    prev_text, prev_ids = "", []
    for piece, ids in zip(chunks, id_lists):
        cur_text, cur_ids = prev_text + piece, prev_ids + ids
        feed(prev_text, cur_text, piece, prev_ids, cur_ids, ids, req)
        prev_text, prev_ids = cur_text, cur_ids
    if getattr(parser, "engine_based_streaming", False):
        parser.finish_streaming()
    parser.get_remaining_unstreamed_args()
    return clock() - t0


def vllm_parse_timed(fmt: str, tools, text: str, clock=None) -> int:
    """Nanoseconds for one vLLM one-shot extract_tool_calls, parser construction included."""
    import time
    clock = clock or time.perf_counter_ns
    req = tools if not isinstance(tools, list) else vllm_request(tools)
    cls = _vllm()["ToolParserManager"].get_tool_parser(vllm_parser_name(fmt))
    tok = FakeTokenizer()
    t0 = clock()
    cls(tok, req.tools).extract_tool_calls(text, req)
    return clock() - t0
