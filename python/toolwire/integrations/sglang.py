"""toolwire as SGLang's function-call detector.

:class:`ToolwireDetector` implements SGLang's ``BaseFormatDetector`` interface
(``detect_and_parse``, ``parse_streaming_increment``, ``finish``, ``has_tool_call``,
``supports_structural_tag``, ``structure_info``) on a toolwire parser and returns SGLang's own
``StreamingParseResult`` / ``ToolCallItem``. :func:`register` adds one detector class per format
(and alias) to ``FunctionCallParser.ToolCallParserEnum`` as ``toolwire_<format>``, so::

    python -m sglang.launch_server --model-path MODEL --tool-call-parser toolwire_hermes

works once toolwire is registered before SGLang parses its arguments. toolwire declares an SGLang
general plugin (entry point ``sglang.srt.plugins`` ->
:func:`toolwire.integrations.sglang_plugin`), which SGLang's
``launch_server`` loads before parsing arguments; it registers when ``toolwire_`` appears on the
command line or ``TOOLWIRE_SGLANG=1`` is set (so other SGLang processes do not pay for importing
the function-call modules). In Python, call :func:`register` before building the engine.

``toolwire_auto``: SGLang builds detectors without a tokenizer, so the plugin reads the model's
tokenizer itself when the command line names ``toolwire_auto`` (``--tokenizer-path``, else
``--model-path``) and registers the format :func:`toolwire.detect_format` finds there; when it
cannot decide, the server does not start (the error names the candidates). ``register(tokenizer)``
does the same in Python. With the tokenizer known, toolwire warns once when the format's markers are
special tokens of it: SGLang keeps special tokens for requests with tools (its serving layer sets
``skip_special_tokens=False``) and strips them otherwise (``skip_special_tokens=True``, the default).

Semantics follow SGLang's detectors: calls to tools the request did not declare are dropped
unless ``SGLANG_FORWARD_UNKNOWN_TOOLS`` is set (toolwire still reports them in
``detector.toolwire_message.issues``); in ``detect_and_parse`` a call's ``tool_index`` is the
tool's position in the request's tool list (-1 for an unknown, forwarded tool), while streamed
items carry the call's ordinal, as SGLang's serving layer expects. Reasoning belongs to SGLang's
reasoning parser: the detectors run with ``reasoning=None``, and reasoning that toolwire still
recognizes (harmony's analysis channel) is kept out of ``normal_text`` and readable as
``detector.toolwire_message.reasoning_content``.

Structural tags: :meth:`ToolwireDetector.structure_info` builds SGLang's legacy ``StructureInfo``
(begin/end/trigger) from ``format_info(...)["template"]`` for the formats whose template has JSON
arguments; model-native xgrammar tags come from ``toolwire.grammar.structural_tag`` when that
module is installed (see :meth:`ToolwireDetector.get_structural_tag`).
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, StructureInfo, ToolCallItem

import toolwire
from toolwire.integrations import common
from toolwire.integrations.common import StreamFeeder, merge, registered_name, tool_dicts

__all__ = ["ToolwireDetector", "detector_class", "register", "registered_names"]

logger = logging.getLogger(__name__)


def _forward_unknown_tools() -> bool:
    try:
        from sglang.srt.environ import envs

        return bool(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get())
    except Exception:  # an SGLang without the switch
        return False


def _tool_names(tools: Any) -> dict[str, int]:
    names: dict[str, int] = {}
    for i, tool in enumerate(tool_dicts(tools, functions_only=True)):
        inner = tool.get(tool.get("type", "function"), {})
        name = inner.get("name")
        if name and name not in names:
            names[name] = i
    return names


def _grammar_structural_tag() -> Any:
    """``toolwire.grammar.structural_tag`` when the grammar module (and xgrammar) is there."""
    try:
        from toolwire import grammar  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(grammar, "structural_tag", None)


class ToolwireDetector(BaseFormatDetector):
    """An SGLang detector backed by toolwire. ``ToolwireDetector("hermes")``, or a subclass from
    :func:`detector_class` (what the registry holds, since SGLang builds detectors without
    arguments)."""

    toolwire_format: str = ""
    toolwire_reasoning: Any = None

    def __init__(self, format: str | None = None, *, reasoning: Any = None) -> None:
        super().__init__()
        fmt = format or self.toolwire_format
        if not fmt:
            raise TypeError("ToolwireDetector needs a format: ToolwireDetector('hermes') or detector_class('hermes')")
        self.info = toolwire.format_info(fmt)
        self.toolwire_format = self.info["name"]
        if format is not None or reasoning is not None:
            self.toolwire_reasoning = reasoning
        markers = {m["role"]: m["text"] for m in reversed(self.info["markers"])}
        hard = [t["text"] for t in self.info["triggers"] if not t["soft"]]
        # SGLang reads these in a few generic code paths (partial-marker holding, separators).
        self.bot_token = markers.get("call_start") or markers.get("section_start") or (hard[0] if hard else "")
        self.eot_token = markers.get("call_end") or markers.get("section_end") or ""
        self.tool_call_separator = self.info["template"]["separator"] if self.info["template"] else ""
        self._parsers: dict[str, toolwire.ToolParser] = {}
        self._feeder: StreamFeeder | None = None
        self._names: dict[str, int] = {}
        self._forward_unknown = _forward_unknown_tools()
        self._slot: dict[int, int | None] = {}  # toolwire call index -> SGLang call ordinal (None: dropped)
        #: The last parsed message (complete calls, issues, reasoning) of this detector.
        self.toolwire_message: toolwire.ParsedMessage | None = None

    # -- toolwire parser ----------------------------------------------------------------------

    def toolwire_parser(self, tools: Any = None) -> toolwire.ToolParser:
        dicts = tool_dicts(tools, functions_only=True)
        key = repr(dicts)
        parser = self._parsers.get(key)
        if parser is None:
            parser = toolwire.ToolParser(self.toolwire_format, dicts, reasoning=self.toolwire_reasoning)
            self._parsers = {key: parser}
        return parser

    def _keep(self, name: str, names: dict[str, int]) -> bool:
        if name in names or self._forward_unknown:
            return True
        logger.warning("Model attempted to call undefined function: %s", name)
        return False

    # -- one shot -----------------------------------------------------------------------------

    def has_tool_call(self, text: str) -> bool:
        """True when one of the format's triggers is in the text (a trigger that only counts at
        the start of the output must be there)."""
        for trigger in self.info["triggers"]:
            t = trigger["text"]
            if trigger["at_output_start"]:
                if text.lstrip().startswith(t):
                    return True
            elif t in text:
                return True
        return False

    def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
        message = self.toolwire_parser(tools).parse(text)
        self.toolwire_message = message
        names = _tool_names(tools)
        calls = [
            ToolCallItem(tool_index=names.get(call.name, -1), name=call.name, parameters=call.arguments)
            for call in message.tool_calls
            if self._keep(call.name, names)
        ]
        return StreamingParseResult(normal_text=message.content or "", calls=calls)

    # -- streaming ----------------------------------------------------------------------------

    def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
        if self._feeder is None:
            self._feeder = StreamFeeder(self.toolwire_parser(tools))
            self._names = _tool_names(tools)
        return self._result(self._feeder.feed(new_text))

    def finish(self, tools: Any) -> StreamingParseResult:
        """End of the stream: held-back text, and calls completed by the end of output."""
        if self._feeder is None:
            return StreamingParseResult()
        return self._result(self._feeder.finish())

    def _result(self, deltas: list[Any]) -> StreamingParseResult:
        merged = merge(deltas)
        assert self._feeder is not None
        self.toolwire_message = self._feeder.stream.message()
        calls: list[ToolCallItem] = []
        for index, call in sorted(merged.calls.items()):
            if call.name is not None and index not in self._slot:
                if self._keep(call.name, self._names):
                    slot = len(self.prev_tool_call_arr)
                    self._slot[index] = slot
                    self.prev_tool_call_arr.append({"name": call.name, "arguments": ""})
                    self.streamed_args_for_tool.append("")
                    self.current_tool_id = slot
                    self.current_tool_name_sent = True
                else:
                    self._slot[index] = None
            slot = self._slot.get(index)
            if slot is None:
                continue
            # Arguments are kept as the streamed JSON text, so SGLang's end-of-stream check
            # (expected minus streamed arguments) never re-sends anything.
            self.streamed_args_for_tool[slot] += call.arguments
            self.prev_tool_call_arr[slot]["arguments"] = self.streamed_args_for_tool[slot]
            calls.append(ToolCallItem(tool_index=slot, name=call.name, parameters=call.arguments))
        return StreamingParseResult(normal_text=merged.content, calls=calls)

    # -- constrained decoding -----------------------------------------------------------------

    def _legacy_template(self) -> dict[str, Any] | None:
        """The call template when SGLang's legacy tag (begin, JSON arguments, end) can write it:
        JSON arguments, and calls that stand alone (no section around them, no content block, no
        ``{index}`` in the begin)."""
        template = self.info["template"]
        if template is None or self.info["arguments"]["kind"] != "json" or "{index}" in template["begin"]:
            return None
        if self.info.get("section") is not None or self.info.get("content_block") is not None:
            return None
        return template

    def supports_structural_tag(self) -> bool:
        """True when a structural tag can constrain this format's calls: a JSON-argument call
        template (SGLang's legacy tag), or ``toolwire.grammar`` for model-native tags."""
        if self._legacy_template() is not None:
            return True
        return bool(self.info["supports_structural_tag"]) and _grammar_structural_tag() is not None

    def structure_info(self) -> Any:
        """``name -> StructureInfo(begin, end, trigger)`` from the format's call template: the
        text before and after a call's JSON arguments. Only formats whose arguments are a JSON
        object in the template (``style == "json"``) have one; XML-argument formats need
        model-native tags (:meth:`get_structural_tag`)."""
        template = self._legacy_template()
        if template is None:
            raise NotImplementedError(
                f"toolwire format {self.toolwire_format!r} has no JSON-argument call template for a legacy structural tag"
            )
        hard = [t["text"] for t in self.info["triggers"] if not t["soft"]]
        begin_template: str = template["begin"]
        trigger = next((t for t in hard if begin_template.startswith(t)), None) or begin_template.split("{name}")[0]

        def info(name: str) -> StructureInfo:
            return StructureInfo(begin=begin_template.replace("{name}", name), end=template["end"], trigger=trigger)

        return info

    def get_structural_tag(
        self,
        tools: Any = None,
        tool_choice: Any = "auto",
        thinking_mode: bool = False,
        parallel_tool_calls: bool = True,
    ) -> Any:
        """The model-native xgrammar structural tag from ``toolwire.grammar.structural_tag`` (the
        ``grammar`` extra) when that module is there, else None, and SGLang falls back to the
        legacy tag built from :meth:`structure_info`. SGLang asks only when it means to constrain
        (``required``, a named tool, or strict tools), so the tag is built with
        ``scope="always"``."""
        build = _grammar_structural_tag()
        if build is None:
            return None
        choice = tool_choice.model_dump() if hasattr(tool_choice, "model_dump") else tool_choice
        kwargs: dict[str, Any] = {"tool_choice": choice, "parallel_tool_calls": parallel_tool_calls}
        params = inspect.signature(build).parameters
        if "scope" in params:
            kwargs["scope"] = "always"
        if "reasoning" in params:
            kwargs["reasoning"] = True if thinking_mode else None
        return build(self.toolwire_format, tool_dicts(tools, functions_only=True), **kwargs)


_CLASSES: dict[tuple[str, Any], type[ToolwireDetector]] = {}


def detector_class(fmt: str, *, reasoning: Any = None) -> type[ToolwireDetector]:
    """The detector class (no constructor arguments, as SGLang builds them) for a format."""
    canonical = toolwire.format_info(fmt)["name"]
    key = (canonical, reasoning)
    if key not in _CLASSES:
        name = "Toolwire" + "".join(part.title() for part in canonical.split("_")) + "Detector"

        def __init__(self: ToolwireDetector, **_: Any) -> None:
            ToolwireDetector.__init__(self)

        _CLASSES[key] = type(
            name,
            (ToolwireDetector,),
            {"toolwire_format": canonical, "toolwire_reasoning": reasoning, "__init__": __init__, "__module__": __name__},
        )
    return _CLASSES[key]


def registered_names() -> dict[str, str]:
    """``{SGLang parser name: toolwire format}`` for every format and alias."""
    names: dict[str, str] = {}
    for fmt in toolwire.formats():
        names[registered_name(fmt)] = fmt
        for alias in toolwire.format_info(fmt)["aliases"]:
            names.setdefault(registered_name(alias), fmt)
    return names


def register(tokenizer: Any = None) -> dict[str, str]:
    """Add every format (and alias) to SGLang's ``FunctionCallParser.ToolCallParserEnum``; with the
    model's ``tokenizer`` (a tokenizer, or a model directory), also ``toolwire_auto`` for the format
    detected in it (a ``ToolwireError`` naming the candidates when detection cannot decide)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    names = registered_names()
    if tokenizer is not None:
        fmt = common.detected_format(tokenizer).require()
        logger.info("toolwire_auto: %s detected from the chat template", fmt)
        names[common.AUTO] = fmt
        warn_tokenizer(fmt, tokenizer)
    for name, fmt in names.items():
        FunctionCallParser.ToolCallParserEnum[name] = detector_class(fmt)
    return names


def warn_tokenizer(fmt: str, tokenizer: Any) -> list[str]:
    """Warn once when the format's markers are special tokens of the tokenizer; returns them."""
    return common.warn_stripped_markers(
        "SGLang", fmt, tokenizer, logger, "SGLang keeps them only for requests with tools and tool_choice != 'none'."
    )
