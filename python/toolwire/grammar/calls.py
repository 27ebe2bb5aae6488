"""One tool's call tag (its header and arguments in the format's argument syntax), and a run of
calls in the format's section.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from xgrammar.structural_tag import (
    AnyTextFormat,
    ConstStringFormat,
    GrammarFormat,
    JSONSchemaFormat,
    OptionalFormat,
    RegexFormat,
    SequenceFormat,
    TagFormat,
    TagsWithSeparatorFormat,
)

from toolwire import ToolwireError

from . import format_view
from .format_view import MARKUP_ROLES, _Format
from .literal_values import _IDENT, _PYTHON, _Gemma, _ValueBuilder
from .subset import ANY_OBJECT, _arguments_schema, _json_strings
from .tools import _Tool
from .xml_values import _XmlBuilder


def _special_markers(fmt: _Format) -> list[str]:
    """The format's special-token call markers: a parser fed token ids reads them as markers even
    inside a JSON string."""
    skip = set(fmt.reasoning or ())
    out = {t for role, t, special in fmt.markers if special and role not in MARKUP_ROLES and not role.startswith("reasoning")}
    return sorted(t for t in out - skip if t and t == t.strip())


def _arguments(fmt: _Format, schema: Any, tool: _Tool, ban_markers: bool = False) -> Any:
    kind = fmt.arguments
    if kind == "json":
        excludes = _special_markers(fmt) if ban_markers else []
        return JSONSchemaFormat(json_schema=_json_strings(schema), style="json", max_whitespace_cnt=format_view.MAX_WHITESPACE, excludes=excludes)
    if kind == "xml_params":
        return _XmlBuilder(fmt, schema, tool.parameters).arguments(schema, f"tool {tool.name!r} parameters")
    if kind == "gemma":
        syntax = _Gemma(fmt)
        b = _ValueBuilder(syntax, schema)
        if schema is ANY_OBJECT:
            return GrammarFormat(grammar=syntax.generic_ebnf("g_object"))
        return b.object(b.resolve(schema, f"tool {tool.name!r}"), f"tool {tool.name!r} parameters", "{", "}", syntax.key, ":")
    if kind == "python_kwargs":
        b = _ValueBuilder(_PYTHON, schema)
        if schema is ANY_OBJECT:
            return GrammarFormat(grammar=_PYTHON.generic_ebnf("g_kwargs"))
        resolved = b.resolve(schema, f"tool {tool.name!r}")
        for k in (resolved.get("properties") or {}) if isinstance(resolved, Mapping) else ():
            if not _IDENT.match(k):
                raise ToolwireError(f"tool {tool.name!r}: {k!r} cannot be a Python keyword argument")
        return b.object(resolved, f"tool {tool.name!r} parameters", "", "", lambda k: k, "=")
    raise ToolwireError(f"format {fmt.name!r}: arguments of kind {kind!r} have no grammar")


def any_arguments(fmt: _Format) -> Any:
    """Any arguments in the format's own syntax (any JSON object, any XML parameters, ...)."""
    return _arguments(fmt, ANY_OBJECT, _Tool(name="any", parameters=None, strict=False))


def _call_tag(fmt: _Format, tool: _Tool, schema: Any, ban_markers: bool = False, *, free: bool = False) -> TagFormat:
    """The tag of one tool's call; ``free``: its arguments are any text up to the call's end
    marker. A call that ends on no marker (on the arguments' own ``}`` or ``)``, or on nothing:
    Mistral v11) has no end that any text could stop at: there a free call takes any arguments
    in the format's syntax."""
    name = tool.name
    if '"{name}"' in fmt.begin:
        name = json.dumps(name, ensure_ascii=False)[1:-1]
    begin = fmt.begin.replace("{name}", name)
    if free:
        ends_on_a_marker = any(text and text in fmt.end for _, text, _ in fmt.markers)
        args = AnyTextFormat() if ends_on_a_marker else any_arguments(fmt)
    else:
        args = _arguments(fmt, schema, tool, ban_markers)
    if "{index}" not in begin:
        return TagFormat(begin=begin, content=args, end=fmt.end)
    head, rest = begin.split("{index}", 1)
    elements: list[Any] = [RegexFormat(pattern=r"0|[1-9][0-9]{0,5}")]
    if rest:
        elements.append(ConstStringFormat(value=rest))
    elements.append(args)
    return TagFormat(begin=head, content=SequenceFormat(elements=elements), end=fmt.end)


def _tool_tag(fmt: _Format, tool: _Tool, schema_mode: str, warnings: list[str] | None, ban_markers: bool = False) -> TagFormat:
    """The tag for one tool; a non-strict tool whose schema the format cannot enforce (schema mode
    ``strict``) falls back to any arguments, with a warning."""
    schema = _arguments_schema(tool, schema_mode, warnings)
    try:
        return _call_tag(fmt, tool, schema, ban_markers)
    except ToolwireError as e:
        if tool.strict or schema is ANY_OBJECT:
            raise
        if warnings is not None:
            warnings.append(f"tool {tool.name!r}: {e}; its arguments are held to any object")
        return _call_tag(fmt, tool, ANY_OBJECT, ban_markers)


class _ToolTags:
    """Each tool's tag, built once for one plan: checking that the strict tools are enforceable
    and assembling the tag then share one build per tool (a strict tool's tag is most of the
    cost of a plan). A build that raises is not kept, nor its warnings."""

    def __init__(self, fmt: _Format, schema_mode: str, warnings: list[str] | None, ban_markers: bool = False):
        self.fmt = fmt
        self.schema_mode = schema_mode
        self.warnings = warnings
        self.ban_markers = ban_markers
        self._built: dict[str, TagFormat] = {}

    def __call__(self, tool: _Tool) -> TagFormat:
        tag = self._built.get(tool.name)
        if tag is None:
            notes: list[str] = []  # kept only if the build succeeds: a failure is its own report
            tag = _tool_tag(self.fmt, tool, self.schema_mode, notes, self.ban_markers)
            self._built[tool.name] = tag
            if self.warnings is not None:
                self.warnings.extend(n for n in notes if n not in self.warnings)
        return tag


def _run(fmt: _Format, tags: list[TagFormat], *, stop_after_first: bool) -> Any:
    """One or more calls (one with ``stop_after_first``) and nothing else, in the format's
    section when it has one."""
    calls = TagsWithSeparatorFormat(tags=tags, separator=fmt.separator, at_least_one=True, stop_after_first=stop_after_first)
    if fmt.section is None:
        return calls
    begin, end = fmt.section
    elements: list[Any] = [ConstStringFormat(value=begin)] if begin else []
    elements.append(calls)
    if end:
        # A section without a begin only closes the calls (gigachat3's message separator): the
        # model may stop before it.
        close = ConstStringFormat(value=end)
        elements.append(close if begin else OptionalFormat(content=close))
    return elements[0] if len(elements) == 1 else SequenceFormat(elements=elements)
