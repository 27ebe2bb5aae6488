"""toolwire as verl's agent-loop tool parser (verl 0.9: ``verl.experimental.agent_loop``).

Importing this module registers one verl ``ToolParser`` per toolwire format with verl's parser
registry, under ``toolwire_<format>``; select one with ``actor_rollout_ref.rollout.multi_turn.
format=toolwire_hermes`` (import the module first, e.g. from a custom agent loop or a
``ray`` worker setup hook).

verl's parsers decode ``response_ids`` to text and run regexes; these parse the ids themselves
(special tokens by id, so a ``<tool_call>`` spelled in ordinary text is not a call) with the
same parser serving would use. Reasoning is parsed out first, so calls inside ``<think>`` are
not calls, and returned at the head of the content in the format's own markers, as verl's
built-in parsers keep it. Calls that do not parse are not returned (verl's loop has no channel
for them); the whole :class:`toolwire.ParsedMessage`, issues included, is on the parser's
``last_message`` for rewards.
"""

from __future__ import annotations

from typing import Any

from verl.experimental.agent_loop.tool_parser import FunctionCall
from verl.experimental.agent_loop.tool_parser import ToolParser as VerlToolParser

import toolwire
from toolwire.integrations.common import registered_name, tool_dicts
from toolwire.rl.tokenizer import ChatTokenizer

__all__ = ["parser_class", "register"]


class ToolwireVerlParser(VerlToolParser):
    """Base of the registered parsers; ``format`` and ``reasoning`` are set per subclass."""

    format = "hermes"
    reasoning: Any = True

    def __init__(self, tokenizer: Any) -> None:
        super().__init__(tokenizer)
        self._chat = ChatTokenizer.of(tokenizer)
        info = toolwire.format_info(self.format)
        self._markers = {m["text"] for m in info["markers"]}
        self._reasoning_markers = info["reasoning_block"] or (
            {"begin": info["reasoning"]["start"], "end": info["reasoning"]["end"]} if info["reasoning"] else None
        )
        pad = getattr(tokenizer, "pad_token_id", None)
        self._trailing = {i for i in (*self._chat.stop_ids, pad) if i is not None and
                          self._chat.token_text(i) not in self._markers}
        self._parsers: dict[str, toolwire.ToolParser] = {}
        self.last_message: toolwire.ParsedMessage | None = None

    def _parser(self, tools: list[dict[str, Any]]) -> toolwire.ToolParser:
        key = toolwire.ToolSet(tools).digest if tools else ""
        parser = self._parsers.get(key)
        if parser is None:
            reasoning = self.reasoning if self._reasoning_markers else None
            parser = self._parsers[key] = toolwire.ToolParser(
                self.format, tools or None, reasoning=reasoning, vocab=self._chat.vocab)
        return parser

    async def extract_tool_calls(self, responses_ids: list[int], tools: Any = None) -> tuple[str, list[FunctionCall]]:
        ids = list(responses_ids)
        while ids and ids[-1] in self._trailing:
            ids.pop()
        stream = self._parser(tool_dicts(tools, functions_only=True)).stream()
        stream.feed_tokens(ids)
        stream.finish()
        message = self.last_message = stream.message()
        content = message.content or ""
        if message.reasoning_content is not None and self._reasoning_markers:
            content = self._reasoning_markers["begin"] + message.reasoning_content + self._reasoning_markers["end"] + content
        calls = [FunctionCall(name=c.name, arguments=c.arguments, tool_call_id=c.id)
                 for c in message.tool_calls if c.type == "function"]
        return content, calls


def parser_class(fmt: str, *, reasoning: Any = True) -> type[ToolwireVerlParser]:
    """A verl parser class for ``fmt`` (``reasoning`` as :class:`toolwire.ToolParser` takes it)."""
    name = toolwire.format_info(fmt)["name"]
    return type(f"Toolwire_{name}_VerlParser", (ToolwireVerlParser,), {"format": name, "reasoning": reasoning})


def register() -> list[str]:
    """Register ``toolwire_<format>`` for every format and alias; returns the names."""
    names = []
    for fmt in toolwire.formats():
        cls = parser_class(fmt)
        for alias in (fmt, *toolwire.format_info(fmt)["aliases"]):
            VerlToolParser.register(registered_name(alias))(cls)
            names.append(registered_name(alias))
    return names


register()
