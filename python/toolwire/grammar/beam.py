"""Per-turn grammars: formats whose every turn is channel messages (Beam).

A Beam turn is messages: the analysis message, then either one message per tool call or the
final message. Holding the whole turn (not only the calls) keeps the channel order the parser
reads, lets a ``response_format`` live inside the final channel behind the analysis, and costs
one compiled grammar per request shape. Everything below reads the markers from the format
spec (its reasoning block, content block and call template).
"""

from __future__ import annotations

import warnings as _py_warnings
from collections.abc import Mapping, Sequence
from typing import Any

from xgrammar.structural_tag import (
    AnyTextFormat,
    JSONSchemaFormat,
    OptionalFormat,
    OrFormat,
    RegexFormat,
    SequenceFormat,
    StructuralTag,
    TagFormat,
)

from toolwire import ToolwireError

from . import format_view
from .calls import _run, _ToolTags
from .format_view import _block_excludes, _Format
from .request import Plan, _check_scope, _fallback_schema, _other_constraint, _tool_dicts
from .subset import _json_strings
from .tools import _read, _reasoning_mode, _Tool


def _response_schema(response_format: Any) -> Any | None:
    """The JSON schema a ``response_format`` asks for: ``{"type": "object"}`` for ``json_object``,
    the declared schema for ``json_schema`` (any JSON when it declares none); None for ``text``,
    no response_format, or a kind that is not JSON."""
    if not isinstance(response_format, Mapping):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {"type": "object"}
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        if not isinstance(spec, Mapping):
            raise ToolwireError("response_format json_schema needs a json_schema object")
        declared = spec.get("schema")
        if declared is None:
            return True
        if not isinstance(declared, (Mapping, bool)):
            raise ToolwireError("response_format json_schema: schema must be an object or a boolean")
        return declared
    return None


def _non_empty_text(excludes: Sequence[str]) -> Any:
    """Text with at least one non-whitespace character that contains none of ``excludes``. The
    first such character is matched by a regex; where it starts an excluded text, the next
    character must not continue one, so no excluded text straddles the regex and the rest."""
    singles = {t for t in excludes if len(t) == 1}
    starts = {t[0] for t in excludes if t}
    seconds = {t[1] for t in excludes if len(t) > 1}

    def cls(chars: set[str]) -> str:
        return "".join("\\" + c if c in "]\\^-[" else c for c in sorted(chars))

    ws = " \t\r\n"
    lead = f"[^{cls(set(ws) | starts)}]"
    pairs = starts - singles
    if pairs:
        lead = f"({lead}|[{cls(pairs)}][^{cls(seconds | starts)}])"
    first = RegexFormat(pattern=f"[{ws}]*{lead}".replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n"))
    return SequenceFormat(elements=[first, AnyTextFormat(excludes=sorted(set(excludes)))])


def _turn_markers(fmt: _Format) -> list[str]:
    """Every special-token marker of the format: none may appear inside a message's text (the
    parser reads the message enders and starters there; the others are control tokens)."""
    return sorted({t for _, t, special in fmt.markers if special and t and t == t.strip()})


def _turn_text(fmt: _Format, end: str) -> list[str]:
    """What a message's text must not contain: the call and block markers, every special marker."""
    return sorted(set(_block_excludes(fmt, end)) | set(_turn_markers(fmt)) | {end})


def _turn_analysis(fmt: _Format, reasoning: Any) -> Any | None:
    """The analysis message that opens the turn, with non-empty text. By the core's reasoning
    mode: not said, ``think`` or ``native``: the whole message; ``closing_only``: the prompt opened
    it, the turn starts inside it; ``optional``: the message may be left out; ``off``: no
    analysis."""
    assert fmt.reasoning_block is not None
    mode, _ = _reasoning_mode(fmt.name, reasoning)
    begin, end = fmt.reasoning_block
    message = TagFormat(begin=begin, content=_non_empty_text(_turn_text(fmt, end)), end=end)
    if mode == "closing_only":
        return TagFormat(begin="", content=message.content, end=end)
    if mode == "optional":
        return OptionalFormat(content=message)
    if mode == "off":
        return None
    return message


def _turn_final(fmt: _Format, final_schema: Any | None, ban_markers: bool) -> TagFormat:
    """The final message: any text without the format's markers, or JSON held to
    ``final_schema`` (a response_format), whose strings exclude the special markers only with
    ``ban_markers`` (xgrammar's string exclusions cost about a second of compile time)."""
    assert fmt.content_block is not None
    begin, end = fmt.content_block
    if final_schema is None:
        return TagFormat(begin=begin, content=AnyTextFormat(excludes=_turn_text(fmt, end)), end=end)
    excludes = _turn_markers(fmt) if ban_markers else []
    body = JSONSchemaFormat(json_schema=_json_strings(final_schema), style="json", max_whitespace_cnt=format_view.MAX_WHITESPACE, excludes=excludes)
    return TagFormat(begin=begin, content=body, end=end)


def _turn_tag(
    fmt: _Format,
    allowed: list[_Tool],
    mode: str,
    parallel: bool,
    schema: str,
    reasoning: Any,
    warnings: list[str] | None,
    ban_markers: bool = False,
    final_schema: Any | None = None,
    tool_tags: _ToolTags | None = None,
) -> StructuralTag:
    """One turn: the analysis message, then tool calls (``required`` / named: only calls; one
    with ``parallel`` False) or, under ``auto``, calls or the final message; ``none`` or no tools:
    the final message. ``final_schema`` holds the final message to JSON."""
    final = _turn_final(fmt, final_schema, ban_markers)
    body: Any
    if mode == "none" or not allowed:
        if mode in ("required", "named"):
            raise ToolwireError(f"tool_choice {mode} needs at least one tool")
        body = final
    else:
        tool_tag = tool_tags or _ToolTags(fmt, schema, warnings, ban_markers)
        tags = [tool_tag(t) for t in allowed]
        calls = _run(fmt, tags, stop_after_first=not parallel)
        body = calls if mode in ("required", "named") else OrFormat(elements=[calls, final])
    analysis = _turn_analysis(fmt, reasoning)
    return StructuralTag(format=body if analysis is None else SequenceFormat(elements=[analysis, body]))


def _serve_strict(tools: list[_Tool], tool_tags: _ToolTags, warnings: list[str]) -> list[_Tool]:
    """Strict tools whose schema the grammar cannot hold exactly, served as non-strict (with a
    warning) instead of refused: a per-turn format constrains every request, so one such tool
    would otherwise fail them all."""
    out = []
    for t in tools:
        if t.strict:
            try:
                tool_tags(t)
            except ToolwireError as e:
                warnings.append(f"tool {t.name!r} is declared strict but {e}; it is served as non-strict on {tool_tags.fmt.name}")
                t = _Tool(t.name, t.parameters, False, t.custom)
        out.append(t)
    return out


def _unstrict(tools_out: list[dict[str, Any]], served: list[_Tool], declared: list[_Tool]) -> list[dict[str, Any]]:
    """``Plan.tools`` with ``strict: false`` on the tools served as non-strict."""
    demoted = {t.name for t, d in zip(served, declared) if d.strict and not t.strict}
    out = []
    for entry in tools_out:
        fn = entry.get("function")
        if entry.get("type", "function") == "function" and isinstance(fn, Mapping) and fn.get("name") in demoted:
            entry = {**entry, "function": {**fn, "strict": False}}
        out.append(entry)
    return out


def _turn_plan(
    request: Mapping[str, Any],
    fmt: _Format,
    *,
    scope: str,
    schema: str,
    exclude_tools_when_tool_choice_none: bool,
    reasoning: Any,
    ban_markers: bool,
    turn_grammar: bool,
) -> Plan:
    """:func:`plan` for a per-turn format (see its docs, "Beam")."""
    raw_tools = request.get("tools") or []
    read = _read(fmt.name, raw_tools, request.get("tool_choice"), reasoning=reasoning, schema=schema)
    _check_scope(scope)
    warnings: list[str] = []
    declared = read.tools
    tool_tags = _ToolTags(fmt, schema, warnings, ban_markers)
    tool_list = _serve_strict(declared, tool_tags, warnings)
    mode, allowed = read.mode, read.allowed_of(tool_list)
    parallel = request.get("parallel_tool_calls") is not False
    final_schema = _response_schema(request.get("response_format"))
    rf_name = f"response_format {request['response_format']['type']}" if final_schema is not None else None
    rest = {k: v for k, v in request.items() if k != "response_format"} if final_schema is not None else request
    other = _other_constraint(rest)
    tool_choice_out: Any = request.get("tool_choice") or ("auto" if tool_list else "none")
    bare = f"turn grammar off: the request's {rf_name} is kept as a bare JSON constraint, outside {fmt.name}'s channels"
    held = turn_grammar and scope != "never" and not other

    if mode == "none":
        tools_out = [] if exclude_tools_when_tool_choice_none else _unstrict([dict(t) for t in raw_tools], tool_list, declared)
        if held:
            tag = _turn_tag(fmt, [], "none", parallel, schema, reasoning, warnings, ban_markers, final_schema)
            return Plan(tools_out, "none", "exclusion", tag, parallel, warnings)
        kept = other or rf_name
        if not tool_list:
            if rf_name and not other:
                warnings.append(bare)
            return Plan(tools_out, "none", None, None, parallel, warnings)
        if kept:
            warnings.append(f"tool_choice none: the call exclusion is dropped in favour of the request's {kept}")
            return Plan(tools_out, "none", None, None, parallel, warnings)
        tag = _turn_tag(fmt, [], "none", parallel, schema, reasoning, warnings, ban_markers)
        return Plan(tools_out, "none", "exclusion", tag, parallel, warnings)

    whole = mode != "named" and len(allowed) == len(tool_list)
    tools_out = _unstrict([dict(t) for t in raw_tools] if whole else _tool_dicts(raw_tools, allowed), tool_list, declared)
    if mode == "auto":
        if held:
            tag = _turn_tag(fmt, allowed, "auto", parallel, schema, reasoning, warnings, ban_markers, final_schema, tool_tags)
            return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)
        if other:
            warnings.append(f"tool_choice auto: no tool constraint, the request's {other} is kept")
            return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
        if rf_name:
            warnings.append(bare)
            return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
        if scope != "never" and (scope == "always" or not parallel or any(t.strict for t in allowed)):
            tag = _turn_tag(fmt, allowed, "auto", parallel, schema, reasoning, warnings, ban_markers, tool_tags=tool_tags)
            return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)
        return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)

    # required / named: the turn holds only calls, whatever else the request asks for.
    if rf_name:
        warnings.append(f"tool_choice {mode}: the request's {rf_name} is ignored; a forced tool choice has no final answer")
    if other:
        warnings.append(f"tool_choice {mode}: the request's {other} is dropped; the tool-call constraint is kept")
    if scope == "never":
        return Plan(tools_out, tool_choice_out, "json_schema", _fallback_schema(allowed, schema, parallel, warnings), parallel, warnings)
    tag = _turn_tag(fmt, allowed, mode, parallel, schema, reasoning, warnings, ban_markers, tool_tags=tool_tags)
    return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)


def _turn_structural_tag(
    fmt: _Format,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any,
    parallel_tool_calls: bool | None,
    scope: str,
    schema: str,
    reasoning: Any,
    ban_markers: bool,
    response_format: Mapping[str, Any] | None,
    turn_grammar: bool,
) -> StructuralTag | None:
    """:func:`structural_tag` for a per-turn format: :func:`plan`'s tag, its warnings raised as
    ``UserWarning``."""
    request: dict[str, Any] = {"tools": list(tools or []), "tool_choice": tool_choice, "parallel_tool_calls": parallel_tool_calls}
    if response_format is not None:
        request["response_format"] = response_format
    result = _turn_plan(
        request,
        fmt,
        scope=scope,
        schema=schema,
        exclude_tools_when_tool_choice_none=True,
        reasoning=reasoning,
        ban_markers=ban_markers,
        turn_grammar=turn_grammar,
    )
    for w in result.warnings:
        _py_warnings.warn(w, UserWarning, stacklevel=3)
    return result.payload if result.constraint in ("structural_tag", "exclusion") else None
