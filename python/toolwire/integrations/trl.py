"""toolwire as TRL's response parser (TRL 1.16).

TRL's tool-calling loop (``GRPOTrainer`` with ``tools=``) turns each completion's ids into an
assistant message with ``trl.chat_template_utils.parse_response(tokenizer, ids)``, which calls
``tokenizer.parse_response(ids)`` (transformers' response schemas) and falls back to the decoded
text when that raises. :func:`attach` puts toolwire's parser there::

    from toolwire.integrations.trl import attach
    attach(tokenizer, "hermes", tools=tools)
    trainer = GRPOTrainer(model, processing_class=tokenizer, tools=tools, ...)

The ids are parsed as ids (special tokens by id), reasoning first (a call inside ``<think>`` is
not a call; with a ``prefix`` that leaves reasoning open, the completion only closes it), and
arguments come back as dicts, as TRL's chat templates expect. A call that does not parse is not
a call; its issue (kind, raw text) is listed under the message's ``issues`` key, which reward
functions receive with the completion, so an invalid action is a penalty, not a silent no-op.
No module of TRL is imported here: the extension point is the tokenizer attribute.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import toolwire
from toolwire.integrations.common import tool_dicts
from toolwire.rl.tokenizer import ChatTokenizer

__all__ = ["ResponseParser", "attach"]


class ResponseParser:
    """``tokenizer.parse_response(ids, prefix=None, tools=None) -> dict`` backed by toolwire."""

    def __init__(self, tokenizer: Any, format: str, tools: Sequence[Mapping[str, Any]] | None = None) -> None:
        self._chat = ChatTokenizer.of(tokenizer)
        info = toolwire.format_info(format)
        self.format = info["name"]
        self._reasoning = info["reasoning"]
        markers = {m["text"] for m in info["markers"]}
        self._trailing = {i for i in self._chat.stop_ids if self._chat.token_text(i) not in markers}
        self._tools = tool_dicts(tools, functions_only=True) if tools else None
        self._parsers: dict[tuple[str, Any], toolwire.ToolParser] = {}

    def _parser(self, tools: list[dict[str, Any]] | None, reasoning: Any) -> toolwire.ToolParser:
        key = (toolwire.ToolSet(tools).digest if tools else "", reasoning)
        parser = self._parsers.get(key)
        if parser is None:
            parser = self._parsers[key] = toolwire.ToolParser(self.format, tools or None, reasoning=reasoning,
                                                              vocab=self._chat.vocab)
        return parser

    def _reasoning_mode(self, prefix: Sequence[int] | None) -> Any:
        if self._reasoning is None:
            return None
        if prefix:
            tail = self._chat.decode(list(prefix)[-64:])
            if tail.rfind(self._reasoning["start"]) > tail.rfind(self._reasoning["end"]):
                return "closing_only"
        return "think" if self._reasoning["start"] == "<think>" else True

    def __call__(self, ids: Sequence[int], prefix: Sequence[int] | None = None, tools: Any = None) -> dict[str, Any]:
        ids = [int(i) for i in ids]
        while ids and ids[-1] in self._trailing:
            ids.pop()
        chosen = [t for t in tools if isinstance(t, Mapping)] if tools else None
        stream = self._parser(tool_dicts(chosen, functions_only=True) if chosen else self._tools,
                              self._reasoning_mode(prefix)).stream()
        stream.feed_tokens(ids)
        stream.finish()
        message = stream.message()
        out: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
        if message.reasoning_content is not None:
            out["reasoning_content"] = message.reasoning_content
        if message.tool_calls:
            out["tool_calls"] = [{"type": "function", "function": {"name": c.name, "arguments": _arguments(c.arguments)}}
                                 for c in message.tool_calls if c.type == "function"]
        if message.issues:
            out["issues"] = [{"kind": i.kind, "index": i.index, "detail": i.detail, "raw": i.raw} for i in message.issues]
        return out


def _arguments(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


def attach(tokenizer: Any, format: str, *, tools: Sequence[Mapping[str, Any]] | None = None) -> Any:
    """Set ``tokenizer.parse_response`` to toolwire's parser for ``format``; returns the tokenizer.
    ``tools`` (OpenAI dicts) type XML parameters and validate arguments when TRL passes none."""
    tokenizer.parse_response = ResponseParser(tokenizer, format, tools)
    return tokenizer
