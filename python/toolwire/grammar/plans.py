"""The constraint for one OpenAI chat request: :func:`plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import xgrammar as xgr

from toolwire import ToolwireError, Vocab

from .beam import _turn_plan
from .calls import _ToolTags
from .format_view import _format, _turn_channels
from .request import (
    Plan,
    SchemaMode,
    Scope,
    _check_scope,
    _fallback_schema,
    _other_constraint,
    _tool_dicts,
)
from .tags import _build, exclusion_tag
from .tokens import token_markers
from .tools import _read


def plan(
    request: Mapping[str, Any],
    format: str,
    *,
    scope: Scope = "auto",
    schema: SchemaMode = "auto",
    exclude_tools_when_tool_choice_none: bool = True,
    reasoning: Any = None,
    tokenizer_info: xgr.TokenizerInfo | None = None,
    ban_markers_in_strings: bool = False,
    turn_grammar: bool = True,
    vocab: Vocab | None = None,
) -> Plan:
    """Decide the constraint for an OpenAI chat request (``tools``, ``tool_choice``,
    ``parallel_tool_calls``, ``response_format``, guided-decoding fields).

    * ``tool_choice`` defaults to ``none`` without tools and ``auto`` with them; a named choice (or
      ``allowed_tools``) leaves only those tools in ``Plan.tools``.
    * ``required`` / named: a structural tag (scope ``auto`` or ``always``); under scope ``never``
      a JSON-schema constraint, an array of ``{name, parameters}`` (``maxItems`` 1 without
      parallel calls).
    * ``auto``: a structural tag when scope is ``always``, or (scope ``auto``) when a tool is
      ``strict`` or ``parallel_tool_calls`` is false; otherwise no constraint.
    * ``none``: an exclusion tag when the request has tools (``Plan.tools`` is empty when
      ``exclude_tools_when_tool_choice_none``); no constraint without tools.
    * With ``response_format`` (other than text) or a guided-decoding field, only one constraint is
      kept: the tool constraint for ``required``/named, the request's own otherwise; a warning
      says which was dropped.

    ``tokenizer_info`` (optional) lets the exclusion check that special-token markers are single
    tokens of the model's vocabulary (see :func:`exclusion_tag`).

    Beam (a per-turn format, see :func:`structural_tag`): every turn is held to the turn tag,
    ``auto`` included (with or without strict tools) and ``none`` (the final message only, also
    without tools). A ``json_object`` /
    ``json_schema`` ``response_format`` is held inside the final message, behind the analysis;
    ``required`` / named ignore it, with a warning. ``turn_grammar=False`` gives ``auto`` and
    ``none`` the rules above (the ``response_format`` is then kept as a bare JSON constraint, with
    a warning); ``required`` / named keep the turn tag. A ``strict`` tool whose schema is outside
    the enforceable subset is served as non-strict (``strict: false`` in ``Plan.tools``, a
    warning) instead of raising. Other guided-decoding fields follow the rules above.

    ``vocab`` (a :class:`toolwire.Vocab`, the one the parser is fed token ids with): the tag
    writes the format's markers that are special tokens of it as token ids, so the sampler cannot
    spell a call start in ordinary tokens that the id-fed parser would read as text (see
    :mod:`toolwire.grammar.tokens`). Use it whenever the output goes to ``feed_tokens``.

    Raises:
        ToolwireError: what ``ToolParser`` refuses, with its message (an unknown format, invalid
            tools such as duplicate or empty names or a custom tool with a grammar format, a
            named tool not among the tools, ``required`` without tools, ``"any"``, an unknown
            reasoning or schema mode), a ``strict`` tool whose schema is outside the enforceable
            subset.
    """
    result = _plan(request, format, scope=scope, schema=schema, exclude_tools_when_tool_choice_none=exclude_tools_when_tool_choice_none, reasoning=reasoning, tokenizer_info=tokenizer_info, ban_markers_in_strings=ban_markers_in_strings, turn_grammar=turn_grammar)
    if vocab is not None and result.constraint == "structural_tag":
        result.payload = token_markers(result.payload, _format(format), vocab)
    return result


def _plan(
    request: Mapping[str, Any],
    format: str,
    *,
    scope: Scope,
    schema: SchemaMode,
    exclude_tools_when_tool_choice_none: bool,
    reasoning: Any,
    tokenizer_info: xgr.TokenizerInfo | None,
    ban_markers_in_strings: bool,
    turn_grammar: bool,
) -> Plan:
    fmt = _format(format)
    if _turn_channels(fmt):
        return _turn_plan(
            request,
            fmt,
            scope=scope,
            schema=schema,
            exclude_tools_when_tool_choice_none=exclude_tools_when_tool_choice_none,
            reasoning=reasoning,
            ban_markers=ban_markers_in_strings,
            turn_grammar=turn_grammar,
        )
    raw_tools = request.get("tools") or []
    read = _read(fmt.name, raw_tools, request.get("tool_choice"), reasoning=reasoning, schema=schema)
    tool_list, mode, allowed = read.tools, read.mode, read.allowed_of(read.tools)
    parallel = request.get("parallel_tool_calls") is not False
    _check_scope(scope)
    warnings: list[str] = []
    # Strict tools must be enforceable whatever the choice (the tag is built only sometimes).
    tool_tags = _ToolTags(fmt, schema, warnings, ban_markers_in_strings)
    for t in allowed:
        if t.strict:
            tool_tags(t)
    other = _other_constraint(request)
    tool_choice_out: Any = request.get("tool_choice") or ("auto" if tool_list else "none")

    if mode == "none":
        tools_out = [] if exclude_tools_when_tool_choice_none else [dict(t) for t in raw_tools]
        if not tool_list:
            return Plan(tools_out, "none", None, None, parallel, warnings)
        if other:
            warnings.append(f"tool_choice none: the call exclusion is dropped in favour of the request's {other}")
            return Plan(tools_out, "none", None, None, parallel, warnings)
        ban = exclusion_tag(fmt.name, reasoning=reasoning, tokenizer_info=tokenizer_info)
        return Plan(tools_out, "none", "exclusion", ban, parallel, warnings)

    tools_out = _tool_dicts(raw_tools, allowed) if mode == "named" or len(allowed) != len(tool_list) else [dict(t) for t in raw_tools]
    forced = mode in ("required", "named")
    if other and not forced:
        warnings.append(f"tool_choice auto: no tool constraint, the request's {other} is kept")
        return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
    if other and forced:
        warnings.append(f"tool_choice {mode}: the request's {other} is dropped; the tool-call constraint is kept")
    use_tag = scope != "never" and (forced or scope == "always" or not parallel or any(t.strict for t in allowed))
    if use_tag:
        try:
            tag = _build(fmt, allowed, mode, parallel, schema, reasoning, warnings, ban_markers_in_strings, tool_tags=tool_tags)
        except ToolwireError as e:
            if not forced or any(t.strict for t in allowed):
                raise
            warnings.append(f"no structural tag ({e}); JSON-schema fallback")
        else:
            return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)
    if forced:
        return Plan(tools_out, tool_choice_out, "json_schema", _fallback_schema(allowed, schema, parallel, warnings), parallel, warnings)
    return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
