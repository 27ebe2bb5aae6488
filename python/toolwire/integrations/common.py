"""Engine-independent helpers shared by the serving-engine adapters."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import toolwire
from toolwire._detect import special_tokens

PREFIX = "toolwire_"
#: The parser name whose format is detected from the engine's tokenizer (toolwire.detect_format).
AUTO = PREFIX + "auto"


def registered_name(fmt: str) -> str:
    """The name a format is registered under in an engine's parser registry."""
    return PREFIX + fmt


def tool_dicts(tools: Iterable[Any] | None, *, functions_only: bool = False) -> list[dict[str, Any]]:
    """OpenAI chat tool dicts from what an engine holds: pydantic tool models (vLLM's
    ``ChatCompletionToolsParam``, SGLang's ``Tool``, the openai package's Responses
    ``FunctionTool``), or dicts in the Chat (``{"type": "function", "function": {...}}``) or
    Responses (``{"type": "function", "name": ...}``) shape.

    ``functions_only`` keeps function tools only: the engines' tool-call types have no custom
    (freeform) call, so a call to a custom tool is then an ordinary call with its arguments as the
    model wrote them (flagged ``unknown_tool``) instead of a custom call the engine cannot carry."""
    out: list[dict[str, Any]] = []
    for tool in tools or []:
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump(exclude_none=True, by_alias=True)
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type") or "function"
        if functions_only and kind != "function":
            continue
        if isinstance(tool.get(kind), dict):
            out.append({"type": kind, kind: {k: v for k, v in tool[kind].items() if v is not None}})
        elif "name" in tool:
            inner = {k: v for k, v in tool.items() if k != "type" and v is not None}
            out.append({"type": kind, kind: inner})
    return out


@dataclass
class CallState:
    """What has been streamed of one call."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass
class Merged:
    """Several toolwire deltas folded into one update: text concatenated, each call's fragments
    joined (the first fragment of a call carries its id and name)."""

    content: str = ""
    reasoning: str = ""
    calls: dict[int, CallState] = field(default_factory=dict)
    finish_reason: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.content or self.reasoning or self.calls)


def merge(deltas: Iterable[Any]) -> Merged:
    out = Merged()
    for delta in deltas:
        if delta.reasoning_content:
            out.reasoning += delta.reasoning_content
        if delta.content:
            out.content += delta.content
        for call in delta.tool_calls:
            state = out.calls.setdefault(call.index, CallState(call.index))
            if call.id is not None:
                state.id = call.id
            if call.name is not None:
                state.name = call.name
            state.arguments += call.arguments
        if delta.finish_reason is not None:
            out.finish_reason = delta.finish_reason
    return out


class StreamFeeder:
    """A toolwire stream that tolerates the engine's end-of-stream calls: feeding or finishing a
    finished stream returns nothing instead of raising."""

    def __init__(self, parser: toolwire.ToolParser) -> None:
        self.stream = parser.stream()

    def feed(self, text: str) -> list[Any]:
        if not text or self.stream.finished:
            return []
        return self.stream.feed(text)

    def finish(self) -> list[Any]:
        if self.stream.finished:
            return []
        return self.stream.finish()


def format_of(name: str) -> str:
    """The canonical toolwire format for a format name or alias (raises ToolwireError)."""
    return toolwire.format_info(name)["name"]


def detected_format(tokenizer: Any) -> toolwire.Detection:
    """The format of the engine's tokenizer, or a ToolwireError naming the candidates: what
    ``toolwire_auto`` serves, decided once at startup."""
    detection = toolwire.detect_format(tokenizer)
    detection.require()
    return detection


def stripped_markers(fmt: str, tokenizer: Any) -> list[str]:
    """The format's markers that decoding with ``skip_special_tokens=True`` would strip: those the
    tokenizer's vocabulary has as special tokens (as :func:`toolwire.detect_format` reads it)."""
    key = (id(tokenizer), fmt)
    if key not in _STRIPPED:
        special = set(special_tokens(tokenizer))
        markers = list(dict.fromkeys(m["text"] for m in toolwire.format_info(fmt)["markers"] if m["text"] in special))
        _STRIPPED[key] = (tokenizer, markers)
    return _STRIPPED[key][1]


_STRIPPED: dict[tuple[int, str], tuple[Any, list[str]]] = {}  # the tokenizer is kept so its id stays its own
_WARNED: set[tuple[str, str]] = set()


def warn_stripped_markers(engine: str, fmt: str, tokenizer: Any, logger: Any, what_we_do: str) -> list[str]:
    """Warn once per engine and format when the tokenizer has the format's markers as special
    tokens, which the engine strips by default (``skip_special_tokens=True``)."""
    markers = stripped_markers(fmt, tokenizer) if tokenizer is not None else []
    if markers and (engine, fmt) not in _WARNED:
        _WARNED.add((engine, fmt))
        logger.warning(
            "toolwire %s: %s are special tokens of this tokenizer; %s strips them when "
            "skip_special_tokens=True (its default), and then calls cannot be read. %s",
            fmt,
            ", ".join(markers),
            engine,
            what_we_do,
        )
    return markers
