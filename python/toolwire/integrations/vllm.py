"""toolwire as vLLM's tool-call parser.

Importing this module registers one vLLM ``ToolParser`` subclass per toolwire format with vLLM's
``ToolParserManager``, under ``toolwire_<format>`` (``toolwire_hermes``, ``toolwire_qwen3_coder``,
...; aliases too: ``toolwire_qwen25``). Serve with::

    vllm serve MODEL --enable-auto-tool-choice \\
        --tool-parser-plugin toolwire.integrations.vllm --tool-call-parser toolwire_hermes

The parsers implement vLLM's interface: ``extract_tool_calls(model_output, request)`` returns
vLLM's ``ExtractedToolCallInformation``, and ``extract_tool_calls_streaming(previous_text,
current_text, delta_text, previous_token_ids, current_token_ids, delta_token_ids, request)``
returns vLLM's ``DeltaMessage`` (or None when there is nothing to send yet). They are
``engine_based_streaming`` parsers: vLLM calls ``finish_streaming()`` at the end of the stream,
which releases text toolwire held back because it could have been the start of a marker.

``toolwire_auto`` serves the format :func:`toolwire.detect_format` finds in the model's tokenizer
(its chat template and special tokens). vLLM builds the parser with the tokenizer when the server
starts (``ParserManager.validate_parser_tokenizer``), so a tokenizer whose format cannot be decided
stops the start with a ``ToolwireError`` naming the candidates. Every toolwire parser warns once,
at that point, when the tokenizer has the format's markers as special tokens (vLLM strips them
with ``skip_special_tokens=True``, its default); ``adjust_request`` turns it off for requests with
tools when the spec or the tokenizer says a marker is a special token.

Reasoning: leave it to a vLLM ``--reasoning-parser`` (the toolwire parsers are built with
``reasoning=None``, so reasoning markup that reaches them stays content), except for formats whose
reasoning is part of the call syntax (harmony's analysis channel), whose reasoning toolwire reports
in ``DeltaMessage.reasoning``. :func:`parser_class` builds a parser with another ``reasoning=``.

Works with vLLM 0.33 (``vllm.tool_parsers``) and with older layouts
(``vllm.entrypoints.openai.tool_parsers``, protocol types in ``vllm.entrypoints.openai.protocol``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import toolwire
from toolwire.integrations.common import (
    AUTO,
    StreamFeeder,
    detected_format,
    merge,
    registered_name,
    tool_dicts,
    warn_stripped_markers,
)

try:  # vLLM >= 0.12
    from vllm.tool_parsers import ToolParser, ToolParserManager
except ImportError:  # older vLLM
    from vllm.entrypoints.openai.tool_parsers import ToolParser, ToolParserManager  # type: ignore

try:  # vLLM >= 0.2x
    from vllm.entrypoints.generate.base.protocol import (
        DeltaFunctionCall,
        DeltaMessage,
        DeltaToolCall,
        ExtractedToolCallInformation,
        FunctionCall,
        ToolCall,
    )
except ImportError:  # older vLLM
    from vllm.entrypoints.openai.protocol import (  # type: ignore
        DeltaFunctionCall,
        DeltaMessage,
        DeltaToolCall,
        ExtractedToolCallInformation,
        FunctionCall,
        ToolCall,
    )

__all__ = ["ToolwireAutoToolParser", "ToolwireToolParser", "parser_class", "register", "registered_names"]

logger = logging.getLogger(__name__)


def _has_special_markers(fmt: str) -> bool:
    return any(m["special_token"] for m in toolwire.format_info(fmt)["markers"])


def _function_call(name: str, arguments: str, call_id: str) -> Any:
    try:
        return FunctionCall(name=name, arguments=arguments, id=call_id)
    except Exception:  # a vLLM whose FunctionCall has no id field
        return FunctionCall(name=name, arguments=arguments)


class ToolwireToolParser(ToolParser):
    """Base class: a vLLM tool parser backed by a toolwire parser. Subclasses set
    ``toolwire_format`` (and optionally ``toolwire_reasoning``); :func:`parser_class` makes them.
    """

    toolwire_format: str = ""
    toolwire_reasoning: Any = None
    # toolwire holds back text that may start a marker; vLLM must call finish_streaming() at the
    # end of the stream to get it.
    engine_based_streaming = True

    def __init__(self, tokenizer: Any = None, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> None:
        try:
            super().__init__(tokenizer, tools)
        except TypeError:  # older vLLM: __init__(self, tokenizer)
            super().__init__(tokenizer)
        if not self.toolwire_format:
            raise TypeError("use toolwire.integrations.vllm.parser_class(format) or a registered toolwire_* parser")
        self._init_tools = tools
        self._stripped = warn_stripped_markers(
            "vLLM", self.toolwire_format, tokenizer, logger, "toolwire sets skip_special_tokens=False on requests with tools."
        )
        self._parser: toolwire.ToolParser | None = None
        self._feeder: StreamFeeder | None = None
        self._call_slot: dict[int, int] = {}
        #: The stream's last message (complete calls and issues) once streaming has started.
        self.toolwire_message: toolwire.ParsedMessage | None = None

    # -- toolwire parser ----------------------------------------------------------------------

    def toolwire_parser(self, request: Any = None) -> toolwire.ToolParser:
        """The toolwire parser for this request's tools (built once per vLLM parser instance,
        which vLLM makes per request)."""
        if self._parser is None:
            tools = self._init_tools or getattr(request, "tools", None) or getattr(self, "tools", None)
            self._parser = toolwire.ToolParser(
                self.toolwire_format, tool_dicts(tools, functions_only=True), reasoning=self.toolwire_reasoning
            )
        return self._parser

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        # Markers that are special tokens must survive detokenization.
        if getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none":
            special = self._stripped or _has_special_markers(self.toolwire_format)
            if special and hasattr(request, "skip_special_tokens"):
                request.skip_special_tokens = False
        return request

    # -- one shot -----------------------------------------------------------------------------

    def extract_tool_calls(self, model_output: str, request: Any) -> Any:
        message = self.toolwire_parser(request).parse(model_output)
        self.toolwire_message = message
        for issue in message.issues:
            logger.debug("toolwire %s: %s %s", self.toolwire_format, issue.kind, issue.detail)
        calls = [
            ToolCall(id=call.id, type="function", function=_function_call(call.name, call.arguments, call.id))
            for call in message.tool_calls
        ]
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=message.content)

    # -- streaming ----------------------------------------------------------------------------

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> Any:
        if self._feeder is None:
            self._feeder = StreamFeeder(self.toolwire_parser(request))
        # delta_text is exactly the new text in both of vLLM's modes: cumulative current_text
        # (legacy parsers) and engine-based (current_text == delta_text, previous_text == ""), and
        # when the tool phase starts after reasoning (delta_text = all the content so far).
        return self._delta_message(self._feeder.feed(delta_text))

    def finish_streaming(self) -> Any:
        """End of the stream: the held-back text and any call completed by the end of output."""
        if self._feeder is None:
            return None
        return self._delta_message(self._feeder.finish())

    def _delta_message(self, deltas: list[Any]) -> Any:
        merged = merge(deltas)
        if self._feeder is not None:
            self.toolwire_message = self._feeder.stream.message()
        if merged.empty:
            return None
        tool_calls = []
        for index, call in sorted(merged.calls.items()):
            if call.id is not None:
                # vLLM's bookkeeping: the serving layer reads these at the end of the stream
                # (get_remaining_unstreamed_args); arguments are kept as the streamed text, so
                # nothing is ever re-sent.
                self._call_slot[index] = len(self.prev_tool_call_arr)
                self.prev_tool_call_arr.append({"name": call.name, "arguments": ""})
                self.streamed_args_for_tool.append("")
                self.current_tool_id = self._call_slot[index]
                self.current_tool_name_sent = True
            slot = self._call_slot.get(index)
            if slot is not None:
                self.streamed_args_for_tool[slot] += call.arguments
                self.prev_tool_call_arr[slot]["arguments"] = self.streamed_args_for_tool[slot]
            function = DeltaFunctionCall(name=call.name, arguments=call.arguments)
            if call.id is not None:
                tool_calls.append(DeltaToolCall(index=index, id=call.id, type="function", function=function))
            else:
                tool_calls.append(DeltaToolCall(index=index, function=function))
        return DeltaMessage(
            content=merged.content or None,
            reasoning=merged.reasoning or None,
            tool_calls=tool_calls,
        )


class ToolwireAutoToolParser(ToolwireToolParser):
    """``toolwire_auto``: the format :func:`toolwire.detect_format` finds in the tokenizer vLLM
    builds the parser with (decided once per tokenizer)."""

    def __init__(self, tokenizer: Any = None, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> None:
        if tokenizer is None:
            raise TypeError("toolwire_auto detects the format from the tokenizer: vLLM must build the parser with one")
        key = id(tokenizer)
        if key not in _DETECTED:
            detection = detected_format(tokenizer)
            logger.info("toolwire_auto: %s detected from the chat template", detection)
            _DETECTED[key] = (tokenizer, detection.require())
        self.toolwire_format = _DETECTED[key][1]
        super().__init__(tokenizer, tools, *args, **kwargs)


_DETECTED: dict[int, tuple[Any, str]] = {}  # the tokenizer is kept so its id stays its own
_CLASSES: dict[tuple[str, Any], type[ToolwireToolParser]] = {}


def parser_class(fmt: str, *, reasoning: Any = None) -> type[ToolwireToolParser]:
    """The vLLM ``ToolParser`` class for a toolwire format (or alias) and ``reasoning=`` choice."""
    canonical = toolwire.format_info(fmt)["name"]
    key = (canonical, reasoning)
    if key not in _CLASSES:
        name = "Toolwire" + "".join(part.title() for part in canonical.split("_")) + "ToolParser"
        _CLASSES[key] = type(
            name,
            (ToolwireToolParser,),
            {"toolwire_format": canonical, "toolwire_reasoning": reasoning, "__module__": __name__},
        )
    return _CLASSES[key]


def registered_names() -> dict[str, str]:
    """``{vLLM parser name: toolwire format}`` for every format and alias."""
    names: dict[str, str] = {}
    for fmt in toolwire.formats():
        names[registered_name(fmt)] = fmt
        for alias in toolwire.format_info(fmt)["aliases"]:
            names.setdefault(registered_name(alias), fmt)
    return names


def register(force: bool = True) -> dict[str, str]:
    """Register every format (and alias) with vLLM's ``ToolParserManager``, and ``toolwire_auto``;
    returns the names of the formats."""
    names = registered_names()
    for name, fmt in names.items():
        ToolParserManager.register_module(name=name, force=force, module=parser_class(fmt))
    ToolParserManager.register_module(name=AUTO, force=force, module=ToolwireAutoToolParser)
    return names


register()
