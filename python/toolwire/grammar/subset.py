"""JSON schemas: the subset a grammar enforces exactly (the strict-tool check), and the schema
each tool's arguments are held to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import xgrammar as xgr

from toolwire import ToolwireError

from .tools import _Tool

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "example",
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "deprecated",
        "readOnly",
        "writeOnly",
        "nullable",
        "discriminator",
    }
)


SUPPORTED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minProperties",
        "maxProperties",
        "unevaluatedProperties",
    }
)


#: Keywords xgrammar 0.2.8 does not enforce (it ignores them, or rejects valid values).
UNSUPPORTED = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "uniqueItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
        "patternProperties",
        "propertyNames",
        "$dynamicRef",
        "$recursiveRef",
        "additionalItems",
    }
)


#: String formats xgrammar 0.2.8 enforces.
FORMATS = frozenset(
    {"date", "date-time", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri", "uri-reference", "json-pointer"}
)


_SCHEMA_MAPS = ("properties", "$defs", "definitions")


_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


_SCHEMA_ONE = ("items", "additionalProperties", "unevaluatedProperties")


def check_schema(schema: Any, *, where: str = "schema") -> None:
    """Raise :class:`ToolwireError` unless a grammar can enforce ``schema`` exactly: the keywords
    xgrammar honours (see ``SUPPORTED``), local ``$ref`` only, ``oneOf`` only over branches of
    disjoint types or with a distinct ``const`` discriminator, ``allOf`` with one member,
    ``multipleOf`` on integers, the string formats in ``FORMATS``."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        raise ToolwireError(f"{where}: a schema must be an object or a boolean")
    stack: list[tuple[Any, str]] = [(schema, where)]
    seen = 0
    while stack:
        node, path = stack.pop()
        seen += 1
        if seen > 10_000:
            raise ToolwireError(f"{where}: schema too large")
        if isinstance(node, bool):
            continue
        if not isinstance(node, Mapping):
            raise ToolwireError(f"{path}: a schema must be an object or a boolean")
        for key, value in node.items():
            if key in UNSUPPORTED:
                if key == "uniqueItems" and value is False:
                    continue
                raise ToolwireError(f"{path}: {key!r} is outside the subset a grammar can enforce")
            if key == "$ref" and not (isinstance(value, str) and value.startswith("#")):
                raise ToolwireError(f"{path}: only local $ref ('#...') is supported, not {value!r}")
            if key == "format" and value not in FORMATS:
                raise ToolwireError(f"{path}: string format {value!r} is not enforced by the grammar")
            if key == "allOf" and isinstance(value, list) and len(value) > 1:
                raise ToolwireError(f"{path}: allOf with more than one member is not enforced by the grammar")
            if key == "oneOf" and isinstance(value, list) and len(value) > 1 and not _one_of_exclusive(value):
                raise ToolwireError(
                    f"{path}: oneOf whose branches may overlap is enforced as anyOf; use anyOf, "
                    "disjoint types, or a const discriminator"
                )
            if key == "multipleOf" and _types(node) != {"integer"}:
                raise ToolwireError(f"{path}: multipleOf is enforced on integers only")
            if key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                raise ToolwireError(f"{path}: boolean {key} (draft 4) is not supported; use a number")
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                stack.extend((v, f"{path}.{key}.{k}") for k, v in value.items())
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                stack.extend((v, f"{path}.{key}[{i}]") for i, v in enumerate(value))
            elif key in _SCHEMA_ONE and isinstance(value, (Mapping, bool)):
                stack.append((value, f"{path}.{key}"))
    try:
        xgr.Grammar.from_json_schema(json.dumps(schema), any_whitespace=True)
    except Exception as e:  # xgrammar raises RuntimeError / its own errors
        raise ToolwireError(f"{where}: xgrammar cannot compile this schema: {_first_line(e)}") from None


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[-1] if text else type(e).__name__


def _types(node: Mapping[str, Any]) -> set[str]:
    t = node.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    if "const" in node:
        return {_json_type(node["const"])}
    if isinstance(node.get("enum"), list):
        return {_json_type(v) for v in node["enum"]}
    return set()


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _one_of_exclusive(branches: list[Any]) -> bool:
    if not all(isinstance(b, Mapping) for b in branches):
        return False
    typesets = []
    for b in branches:
        ts = _types(b)
        if "integer" in ts or "number" in ts:
            ts = ts | {"integer", "number"}
        typesets.append(ts)
    if all(typesets) and all(not (a & b) for i, a in enumerate(typesets) for b in typesets[i + 1 :]):
        return True
    # A discriminator: one required property with a distinct const in every branch.
    props = [b.get("properties") for b in branches]
    if not all(isinstance(p, Mapping) for p in props):
        return False
    for key in props[0]:
        values = []
        for b, p in zip(branches, props):
            s = p.get(key)
            if not isinstance(s, Mapping) or key not in (b.get("required") or []):
                break
            if "const" in s:
                values.append(json.dumps(s["const"], sort_keys=True))
            elif isinstance(s.get("enum"), list) and len(s["enum"]) == 1:
                values.append(json.dumps(s["enum"][0], sort_keys=True))
            else:
                break
        else:
            if len(set(values)) == len(values):
                return True
    return False


ANY_OBJECT: dict[str, Any] = {"type": "object"}


NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _arguments_schema(tool: _Tool, schema_mode: str, warnings: list[str] | None = None) -> Any:
    """The schema a tool's arguments are held to: the declared one for strict tools (schema mode
    ``auto``) or every tool (``strict``), otherwise any object."""
    if schema_mode not in ("auto", "strict"):
        raise ToolwireError(f"unknown schema mode {schema_mode!r}")
    if tool.custom:
        return ANY_OBJECT
    if not (tool.strict or schema_mode == "strict"):
        return ANY_OBJECT
    params = tool.parameters
    if params is None:
        return NO_ARGUMENTS
    try:
        check_schema(params, where=f"tool {tool.name!r} parameters")
    except ToolwireError:
        if tool.strict:
            raise
        if warnings is not None:
            warnings.append(
                f"tool {tool.name!r}: its schema is outside the enforceable subset; arguments are held to any object"
            )
        return ANY_OBJECT
    return params
