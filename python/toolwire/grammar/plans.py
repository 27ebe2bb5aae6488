"""The constraint for one OpenAI chat request: :func:`plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import xgrammar as xgr

from toolwire import ToolwireError

from .beam import _turn_plan
from .calls import _tool_tag
from .format_view import _format, _turn_channels
from .request import (
    Plan,
    SchemaMode,
    Scope,
    _fallback_schema,
    _other_constraint,
    _tool_dicts,
)
from .tags import _build, exclusion_tag
from .tools import _choice, _tools


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

    Raises:
        ToolwireError: a named tool not in tools, ``required`` without tools, a custom tool with a
            grammar format, a ``strict`` tool whose schema is outside the enforceable subset, an
            unknown format.
    """
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
    tool_list = _tools(raw_tools)
    mode, allowed = _choice(request.get("tool_choice"), tool_list)
    parallel = request.get("parallel_tool_calls") is not False
    if scope not in ("auto", "always", "never"):
        raise ToolwireError(f"unknown scope {scope!r}")
    warnings: list[str] = []
    # Strict tools must be enforceable whatever the choice (the tag is built only sometimes).
    for t in allowed:
        if t.strict:
            _tool_tag(fmt, t, schema, None)
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
            tag = _build(fmt, allowed, mode, parallel, schema, reasoning, warnings, ban_markers_in_strings)
        except ToolwireError as e:
            if not forced or any(t.strict for t in allowed):
                raise
            warnings.append(f"no structural tag ({e}); JSON-schema fallback")
        else:
            return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)
    if forced:
        return Plan(tools_out, tool_choice_out, "json_schema", _fallback_schema(allowed, schema, parallel, warnings), parallel, warnings)
    return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
