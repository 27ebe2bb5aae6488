"""The :class:`Plan` that answers a request, and what a request asks besides its tools (another
constraint, the JSON-schema fallback, the tools kept for the prompt).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import xgrammar as xgr
from xgrammar.structural_tag import (
    StructuralTag,
)

from toolwire import ToolwireError

from .cache import GrammarCache, compile
from .subset import _arguments_schema, _json_strings
from .tools import _Tool

Scope = Literal["auto", "always", "never"]


def _check_scope(scope: str) -> None:
    """Refuse a ``scope`` outside :data:`Scope` (every plan and tag entry point asks this)."""
    if scope not in get_args(Scope):
        raise ToolwireError(f"unknown scope {scope!r}")


SchemaMode = Literal["auto", "strict"]


_OTHER_CONSTRAINTS = ("guided_json", "guided_regex", "guided_grammar", "guided_choice", "regex", "ebnf", "grammar", "structured_outputs", "json_schema")


@dataclass
class Plan:
    """What to do for one request: the tools for the prompt, the tool_choice in effect, and the one
    constraint to decode under.

    ``constraint`` is ``"structural_tag"`` (``payload`` an ``xgrammar.StructuralTag``),
    ``"exclusion"`` (``payload`` an ``xgrammar.StructuralTag`` banning calls), ``"json_schema"``
    (``payload`` a JSON schema dict: an array of ``{name, parameters}`` calls) or None."""

    tools: list[dict[str, Any]]
    tool_choice: Any
    constraint: Literal["structural_tag", "json_schema", "exclusion"] | None
    payload: Any
    parallel_tool_calls: bool = True
    warnings: list[str] = field(default_factory=list)

    def payload_json(self) -> str | None:
        """The payload as JSON text (what an OpenAI-compatible server takes)."""
        if self.payload is None:
            return None
        if isinstance(self.payload, StructuralTag):
            return self.payload.model_dump_json()
        return json.dumps(self.payload)

    def compile(self, tokenizer_info: xgr.TokenizerInfo, *, cache: GrammarCache | None = None) -> xgr.CompiledGrammar | None:
        """The compiled grammar for the constraint (None when there is none), through the cache."""
        if self.constraint in ("structural_tag", "exclusion"):
            return compile(self.payload, tokenizer_info, cache=cache)
        if self.constraint == "json_schema":
            key = {"type": "structural_tag", "format": {"type": "json_schema", "json_schema": self.payload}}
            return compile(key, tokenizer_info, cache=cache)
        return None


def _other_constraint(request: Mapping[str, Any]) -> str | None:
    rf = request.get("response_format")
    if isinstance(rf, Mapping) and rf.get("type") not in (None, "text"):
        return f"response_format {rf.get('type')}"
    for key in _OTHER_CONSTRAINTS:
        if request.get(key) is not None:
            return key
    extra = request.get("extra_body")
    if isinstance(extra, Mapping):
        return _other_constraint(extra)
    return None


def _fallback_schema(fmt_allowed: list[_Tool], schema: str, parallel: bool, warnings: list[str]) -> dict[str, Any]:
    items = []
    for t in fmt_allowed:
        items.append(
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "parameters": _json_strings(_arguments_schema(t, schema, warnings))},
                "required": ["name", "parameters"],
                "additionalProperties": False,
            }
        )
    out: dict[str, Any] = {"type": "array", "items": items[0] if len(items) == 1 else {"anyOf": items}, "minItems": 1}
    if not parallel:
        out["maxItems"] = 1
    return out


def _tool_dicts(tools: Sequence[Mapping[str, Any]], keep: list[_Tool]) -> list[dict[str, Any]]:
    names = {t.name for t in keep}
    out = []
    for entry in tools:
        kind = entry.get("type", "function")
        inner = entry.get(kind, entry) if kind in ("function", "custom") else entry
        if isinstance(inner, Mapping) and inner.get("name") in names:
            out.append(dict(entry))
    return out
