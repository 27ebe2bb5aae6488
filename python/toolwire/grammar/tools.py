"""The request's tools and ``tool_choice``, read into the tools a constraint allows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire import ToolwireError


@dataclass(frozen=True)
class _Tool:
    name: str
    parameters: Any
    strict: bool
    custom: bool = False


def _tools(tools: Sequence[Mapping[str, Any]] | None) -> list[_Tool]:
    out: list[_Tool] = []
    for i, entry in enumerate(tools or []):
        if not isinstance(entry, Mapping):
            raise ToolwireError(f"tools[{i}] is not an object")
        kind = entry.get("type", "function")
        if kind == "function":
            fn = entry.get("function", entry)
            name = fn.get("name")
            if not isinstance(name, str) or not name:
                raise ToolwireError(f"tools[{i}] has no function name")
            params = fn.get("parameters")
            out.append(_Tool(name, params, fn.get("strict") is True))
        elif kind == "custom":
            custom = entry.get("custom", entry)
            name = custom.get("name")
            if not isinstance(name, str) or not name:
                raise ToolwireError(f"tools[{i}] has no custom tool name")
            fmt = custom.get("format") or {"type": "text"}
            if fmt.get("type") != "text":
                raise ToolwireError(
                    f"custom tool {name!r} has a {fmt.get('type')!r} format: custom grammar formats are not supported"
                )
            out.append(_Tool(name, None, False, custom=True))
        else:
            raise ToolwireError(f"tools[{i}] has unsupported type {kind!r}")
    names = [t.name for t in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ToolwireError(f"tool names declared twice: {sorted(dup)}")
    return out


def _choice(tool_choice: Any, tools: list[_Tool]) -> tuple[str, list[_Tool]]:
    """``(mode, tools)``: mode is ``none``, ``auto``, ``required`` or ``named``; tools are the ones
    the constraint allows (one for ``named``)."""
    if tool_choice is None:
        tool_choice = "auto" if tools else "none"
    if isinstance(tool_choice, str):
        if tool_choice not in ("none", "auto", "required"):
            raise ToolwireError(f"unknown tool_choice {tool_choice!r}")
        if tool_choice == "required" and not tools:
            raise ToolwireError('tool_choice "required" needs at least one tool')
        return tool_choice, tools
    if not isinstance(tool_choice, Mapping):
        raise ToolwireError(f"unknown tool_choice {tool_choice!r}")
    kind = tool_choice.get("type")
    if kind == "allowed_tools":
        allowed = tool_choice.get("allowed_tools", tool_choice)
        mode = allowed.get("mode", "auto")
        if mode not in ("auto", "required"):
            raise ToolwireError(f"unknown allowed_tools mode {mode!r}")
        wanted = [_ref_name(r) for r in allowed.get("tools", [])]
        by_name = {t.name: t for t in tools}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            raise ToolwireError(f"allowed_tools names tools that are not declared: {missing}")
        return _choice(mode, [by_name[n] for n in wanted])
    if kind in ("function", "custom"):
        name = _ref_name(tool_choice)
        for t in tools:
            if t.name == name:
                return "named", [t]
        raise ToolwireError(f"tool_choice names {name!r}, which is not in tools")
    raise ToolwireError(f"unknown tool_choice {tool_choice!r}")


def _ref_name(ref: Mapping[str, Any]) -> str:
    kind = ref.get("type", "function")
    inner = ref.get(kind) if isinstance(ref.get(kind), Mapping) else ref
    name = inner.get("name")
    if not isinstance(name, str):
        raise ToolwireError(f"tool reference without a name: {ref!r}")
    return name
