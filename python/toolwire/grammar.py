"""Constrained decoding for tool calls: xgrammar structural tags built from the format spec.

Needs the ``grammar`` extra (``pip install toolwire[grammar]``, xgrammar 0.2.8)::

    from toolwire import grammar

    plan = grammar.plan(request, "hermes")           # tool_choice semantics, one constraint
    if plan.constraint == "structural_tag":
        compiled = grammar.compile(plan.payload, tokenizer_info)   # cached per (tokenizer, tag)

Everything here is derived from :func:`toolwire.format_info`: the call template (``begin`` with
``{name}``/``{index}``, the argument ``style``, ``end``, ``separator``), the layout (a section
around the calls, a content or reasoning block), the markers and the triggers. The grammar writes
one canonical shape of each format; the parser reads that shape (and more) back as the same calls.

Modes (``tool_choice``):

* ``auto``: free text, and a call wherever the format's call (or section) trigger appears. The
  free text cannot contain the format's other call markers, its stray-end markers or its reasoning
  markers, so the parser never sees a call the grammar did not write.
* ``required``: one or more calls and nothing else (no text before or after; up to three
  whitespace characters may lead).
* named (``{"type": "function", "function": {"name": ...}}``): exactly that tool, one or more
  calls of it (one with ``parallel_tool_calls=False``).
* ``parallel_tool_calls=False``: after the first call only the end of the output may follow.
* ``none``: :func:`exclusion_tag`.

Beam holds every turn instead (analysis, then calls or the final message, a ``response_format``
inside the final message): see :func:`structural_tag` and :func:`plan`, switch ``turn_grammar``.
"""

from __future__ import annotations

import json
import re
import threading
import warnings as _py_warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import xgrammar as xgr
from xgrammar.structural_tag import (
    AnyTextFormat,
    AnyTokensFormat,
    ConstStringFormat,
    GrammarFormat,
    JSONSchemaFormat,
    OptionalFormat,
    OrFormat,
    RegexFormat,
    RepeatFormat,
    SequenceFormat,
    StarFormat,
    StructuralTag,
    TagFormat,
    TagsWithSeparatorFormat,
    TriggeredTagsFormat,
)

import toolwire
from toolwire import ToolwireError

__all__ = [
    "GrammarCache",
    "Plan",
    "check_schema",
    "compile",
    "default_cache",
    "exclusion_tag",
    "plan",
    "structural_tag",
    "tag_json",
]

Scope = Literal["auto", "always", "never"]
SchemaMode = Literal["auto", "strict"]

#: Marker roles that wrap content rather than open a call; the parser drops them and keeps the
#: text, so free text may contain them.
MARKUP_ROLES = frozenset({"response_start", "response_end", "answer_start", "answer_end", "turn_end"})

#: Whitespace allowed before the first call when no free text is (``required``, named) and after
#: a reasoning block: Qwen3 writes ``</think>\n\n``, GLM-4.5 a newline before ``<tool_call>``.
LEAD_WS = r"[ \t\n]{0,3}"

#: Consecutive whitespace allowed between JSON tokens (xgrammar's ``max_whitespace_cnt``); None is
#: unbounded. A bound (say 16) stops the whitespace loops strict tool JSON is known for, but
#: doubles the compile time.
MAX_WHITESPACE: int | None = None



# --------------------------------------------------------------------------------------------
# The format, as format_info describes it


@dataclass(frozen=True)
class _Format:
    name: str
    begin: str
    style: str
    end: str
    separator: str
    section: tuple[str, str] | None
    content_block: tuple[str, str] | None
    reasoning_block: tuple[str, str] | None
    content_after_calls: bool
    reasoning: tuple[str, str] | None
    markers: tuple[tuple[str, str, bool], ...]
    triggers: tuple[tuple[str, bool, bool], ...]
    #: (text, at_output_start, soft, confirm pattern) of every trigger
    confirms: tuple[tuple[str, bool, bool, str | None], ...]

    def marker_roles(self, text: str) -> set[str]:
        return {role for role, t, _ in self.markers if t == text}

    def is_special(self, text: str) -> bool:
        return any(t == text and special for _, t, special in self.markers)

    def is_markup(self, text: str) -> bool:
        roles = self.marker_roles(text)
        return bool(roles) and roles <= MARKUP_ROLES

    def trigger_for(self, text: str) -> tuple[str, bool] | None:
        """The trigger that opens ``text`` (its longest prefix among the triggers), preferring one
        that fires anywhere over an ``at_output_start`` one: ``(trigger, at_start_only)``."""
        anywhere = [t for t, at_start, _ in self.triggers if not at_start and text.startswith(t)]
        if anywhere:
            return max(anywhere, key=len), False
        at_start = [t for t, at_start, _ in self.triggers if at_start and text.startswith(t)]
        if at_start:
            return max(at_start, key=len), True
        return None

    @property
    def opener(self) -> str:
        """What opens a run of calls: the section begin, or the call begin up to the name."""
        if self.section is not None and self.section[0]:
            return self.section[0]
        return self.begin.split("{", 1)[0] if "{name}" in self.begin or "{index}" in self.begin else self.begin

    @property
    def at_start_texts(self) -> list[str]:
        return [t for t, at_start, _, confirm in self.confirms if at_start and not confirm]

    def call_triggers(self) -> list[str]:
        """What the parser acts on in content: the triggers that open a call region anywhere
        (content markup aside) and the call/section end markers (a stray one is an issue)."""
        out = [t for t, at_start, _ in self.triggers if not at_start and not self.is_markup(t)]
        out += [t for role, t, _ in self.markers if role in ("call_end", "section_end") and t not in out]
        return out


def _pair(d: Any) -> tuple[str, str] | None:
    return None if d is None else (d["begin"], d["end"])


@lru_cache(maxsize=None)
def _format(name: str) -> _Format:
    info = toolwire.format_info(name)
    t = info.get("template")
    if t is None:
        raise ToolwireError(f"format {info['name']!r} has no call template: no structural tag")
    return _Format(
        name=info["name"],
        begin=t["begin"],
        style=t["style"],
        end=t["end"],
        separator=t["separator"],
        section=_pair(info.get("section")),
        content_block=_pair(info.get("content_block")),
        reasoning_block=_pair(info.get("reasoning_block")),
        content_after_calls=bool(info.get("content_after_calls")),
        reasoning=(info["reasoning"]["start"], info["reasoning"]["end"]) if info.get("reasoning") else None,
        markers=tuple((m["role"], m["text"], bool(m["special_token"])) for m in info["markers"]),
        triggers=tuple((t["text"], bool(t["at_output_start"]), bool(t["soft"])) for t in info["triggers"]),
        confirms=tuple(
            (t["text"], bool(t["at_output_start"]), bool(t["soft"]), t.get("confirm")) for t in info["triggers"]
        ),
    )


# --------------------------------------------------------------------------------------------
# Tools and tool_choice


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


# --------------------------------------------------------------------------------------------
# JSON schemas: the subset a grammar enforces exactly

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


# --------------------------------------------------------------------------------------------
# Argument grammars for the formats whose values are not JSON (gemma4, python_kwargs)


class _Syntax:
    """How one of the non-JSON value syntaxes writes literals."""

    name: str
    true: str
    false: str
    null: str
    obj_open = "{"
    obj_close = "}"
    key_sep: str
    item_sep: str
    #: text a string value must not contain (on top of its closing delimiter)
    string_excludes: tuple[str, ...] = ()
    #: members written in key order (Gemma's chat template sorts them)
    sort_keys = False

    def key(self, k: str) -> str:
        raise NotImplementedError

    def string_const(self, s: str) -> str:
        raise NotImplementedError

    def string(self, schema: Mapping[str, Any], path: str) -> Any:
        raise NotImplementedError

    def generic_ebnf(self, root: str) -> str:
        raise NotImplementedError


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Gemma(_Syntax):
    name = "gemma4"
    sort_keys = True
    true, false, null = "true", "false", "null"
    key_sep, item_sep = ":", ","

    def __init__(self, fmt: _Format):
        quotes = [t for role, t, _ in fmt.markers if role == "string_delimiter"]
        self.Q = quotes[0] if quotes else '<|"|>'
        self.string_excludes = tuple(t for role, t, _ in fmt.markers if t != self.Q and not role.startswith("reasoning"))

    def key(self, k: str) -> str:
        if _IDENT.match(k):
            return k
        if self.Q in k:
            raise ToolwireError(f"gemma4 cannot write the key {k!r}")
        return self.Q + k + self.Q

    def string_const(self, s: str) -> str:
        if self.Q in s or any(x in s for x in self.string_excludes):
            raise ToolwireError(f"gemma4 cannot write the string {s!r}")
        return self.Q + s + self.Q

    def string(self, schema: Mapping[str, Any], path: str) -> Any:
        for k in ("minLength", "maxLength", "format"):
            if k in schema:
                raise ToolwireError(f"{path}: {k!r} is not enforced in gemma4 strings")
        body: Any
        if "pattern" in schema:
            body = RegexFormat(pattern=_unanchor(schema["pattern"]))
        else:
            body = AnyTextFormat(excludes=[self.Q, *self.string_excludes])
        return SequenceFormat(elements=[ConstStringFormat(value=self.Q), body, ConstStringFormat(value=self.Q)])

    def generic_ebnf(self, root: str) -> str:
        ex = ", ".join(_ebnf_str(x) for x in (self.Q, *self.string_excludes))
        return f"""root ::= {root}
g_value ::= g_object | g_array | g_string | g_number | "true" | "false" | "null"
g_object ::= "{{" ( g_member ( "," g_member )* )? "}}"
g_member ::= g_key ":" g_value
g_key ::= [A-Za-z_] [A-Za-z0-9_]{{0,127}} | g_string
g_array ::= "[" ( g_value ( "," g_value )* )? "]"
g_string ::= {_ebnf_str(self.Q)} g_text {_ebnf_str(self.Q)}
g_text ::= TagDispatch(loop_after_dispatch=false, excludes=({ex},))
g_number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [+\\-]? [0-9]+ )?
"""


class _Python(_Syntax):
    name = "python_kwargs"
    true, false, null = "True", "False", "None"
    key_sep, item_sep = ": ", ", "
    #: A double-quoted Python string with JSON-compatible escapes (no lone surrogates), written
    #: right-recursively with a lookahead as xgrammar's own JSON strings are: a ``( ... )*`` loop
    #: made every mask inside a string cost ~50 ms.
    STRING_RULES = r"""g_string ::= "\"" g_dchars | "'" g_schars
g_dchars ::= ("\"" | [^"\\\0-\x1f\x7f] g_dchars | "\\" ["'\\bfnrt] g_dchars | "\\u" g_uesc g_dchars) (= [ ,)\]}:])
g_schars ::= ("'" | [^'\\\0-\x1f\x7f] g_schars | "\\" ["'\\bfnrt] g_schars | "\\u" g_uesc g_schars) (= [ ,)\]}:])
g_uesc ::= [0-9a-cA-Ce-fE-F] g_hex g_hex g_hex | [dD] [0-7] g_hex g_hex | [dD] [89abAB] g_hex g_hex "\\u" [dD] [c-fC-F] g_hex g_hex
g_hex ::= [0-9a-fA-F]
"""

    def key(self, k: str) -> str:
        return self.string_const(k)

    def string_const(self, s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    def string(self, schema: Mapping[str, Any], path: str) -> Any:
        for k in ("minLength", "maxLength", "format", "pattern"):
            if k in schema:
                raise ToolwireError(f"{path}: {k!r} is not enforced in Python string literals")
        return GrammarFormat(grammar="root ::= g_string\n" + self.STRING_RULES)

    def generic_ebnf(self, root: str) -> str:
        return f"""root ::= {root}
g_value ::= g_dict | g_list | g_string | g_number | "True" | "False" | "None"
g_dict ::= "{{" ( g_string ": " g_value ( ", " g_string ": " g_value )* )? "}}"
g_list ::= "[" ( g_value ( ", " g_value )* )? "]"
{self.STRING_RULES}g_number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [+\\-]? [0-9]+ )?
g_kwargs ::= ( g_kwarg ( ", " g_kwarg )* )?
g_kwarg ::= [A-Za-z_] [A-Za-z0-9_]{{0,127}} "=" g_value
"""


def _ebnf_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _unanchor(pattern: str) -> str:
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1]
    return pattern


class _ValueBuilder:
    """Builds structural-tag formats for values in a non-JSON syntax, from a JSON schema.

    Numbers (and integers) are written as JSON numbers in both syntaxes, so they go to xgrammar's
    JSON-schema converter, bounds included. Objects keep the schema's property order; optional
    properties may be left out. Unconstrained values use the syntax's generic EBNF."""

    def __init__(self, syntax: _Syntax, root: Any):
        self.s = syntax
        self.root = root
        self.depth = 0

    def generic(self) -> Any:
        return GrammarFormat(grammar=self.s.generic_ebnf("g_value"))

    def resolve(self, schema: Any, path: str) -> Any:
        seen = 0
        while isinstance(schema, Mapping) and "$ref" in schema:
            seen += 1
            if seen > 32:
                raise ToolwireError(f"{path}: $ref chain too long")
            ref = schema["$ref"]
            target: Any = self.root
            if not (isinstance(ref, str) and ref.startswith("#")):
                raise ToolwireError(f"{path}: only local $ref is supported")
            for part in [p for p in ref[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and part in target:
                    target = target[part]
                elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                    target = target[int(part)]
                else:
                    raise ToolwireError(f"{path}: $ref {ref!r} does not resolve")
            extra = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
            if extra:
                raise ToolwireError(f"{path}: $ref with sibling keywords is not supported here")
            schema = target
        return schema

    def value(self, schema: Any, path: str) -> Any:
        self.depth += 1
        try:
            if self.depth > 24:
                raise ToolwireError(f"{path}: schema nests too deep (recursive $ref is not supported for {self.s.name})")
            return self._value(self.resolve(schema, path), path)
        finally:
            self.depth -= 1

    def _value(self, schema: Any, path: str) -> Any:
        if schema is True or schema == {}:
            return self.generic()
        if schema is False:
            raise ToolwireError(f"{path}: false schema")
        if not isinstance(schema, Mapping):
            raise ToolwireError(f"{path}: a schema must be an object or a boolean")
        keys = set(schema) - ANNOTATIONS
        if "const" in schema:
            return _or(self.spellings(schema["const"], path))
        if "enum" in schema:
            if not isinstance(schema["enum"], list) or not schema["enum"]:
                raise ToolwireError(f"{path}: enum must be a non-empty list")
            return _or([f for v in schema["enum"] for f in self.spellings(v, path)])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                rest = {k: v for k, v in schema.items() if k != key and k not in ANNOTATIONS}
                if rest:
                    raise ToolwireError(f"{path}: {key} with sibling keywords is not supported for {self.s.name}")
                return _or([self.value(b, f"{path}.{key}[{i}]") for i, b in enumerate(schema[key])])
        if "allOf" in schema:
            members = schema["allOf"]
            if len(members) == 1 and not (keys - {"allOf"}):
                return self.value(members[0], f"{path}.allOf[0]")
            raise ToolwireError(f"{path}: allOf is not supported for {self.s.name}")
        types = schema.get("type")
        if types is None:
            if "properties" in schema:
                types = "object"
            elif "items" in schema or "prefixItems" in schema:
                types = "array"
            else:
                return self.generic()
        tlist = [types] if isinstance(types, str) else list(types)
        if schema.get("nullable") is True and "null" not in tlist:
            tlist.append("null")
        return _or([self.typed(t, schema, path) for t in tlist])

    def typed(self, t: str, schema: Mapping[str, Any], path: str) -> Any:
        if t == "string":
            return self.s.string(schema, path)
        if t in ("integer", "number"):
            sub = {k: v for k, v in schema.items() if k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")}
            return JSONSchemaFormat(json_schema={"type": t, **sub})
        if t == "boolean":
            return _or([ConstStringFormat(value=self.s.true), ConstStringFormat(value=self.s.false)])
        if t == "null":
            return ConstStringFormat(value=self.s.null)
        if t == "array":
            return self.array(schema, path)
        if t == "object":
            return self.object(schema, path, self.s.obj_open, self.s.obj_close, self.s.key, self.s.key_sep)
        raise ToolwireError(f"{path}: unknown type {t!r}")

    def array(self, schema: Mapping[str, Any], path: str) -> Any:
        if "prefixItems" in schema:
            raise ToolwireError(f"{path}: prefixItems is not supported for {self.s.name}")
        items = schema.get("items", True)
        item = self.value(items, f"{path}.items")
        lo = int(schema.get("minItems", 0))
        hi = schema.get("maxItems")
        hi = -1 if hi is None else int(hi)
        sep_item = SequenceFormat(elements=[ConstStringFormat(value=self.s.item_sep), item])
        if hi == 0:
            body: Any = ConstStringFormat(value="")
        else:
            rest = RepeatFormat(min=max(lo - 1, 0), max=-1 if hi < 0 else hi - 1, content=sep_item)
            body = SequenceFormat(elements=[item, rest])
            if lo == 0:
                body = OptionalFormat(content=body)
        return SequenceFormat(elements=[ConstStringFormat(value="["), body, ConstStringFormat(value="]")])

    def object(self, schema: Mapping[str, Any], path: str, open_: str, close: str, key, kv_sep: str) -> Any:
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        extra = schema.get("additionalProperties", True)
        if not props:
            if extra is False or "properties" in schema:
                return ConstStringFormat(value=open_ + close)
            if self.s is _PYTHON and open_ == "":
                return GrammarFormat(grammar=self.s.generic_ebnf("g_kwargs"))
            if open_ == "{":
                return GrammarFormat(grammar=self.s.generic_ebnf(self._generic_object_rule()))
            raise ToolwireError(f"{path}: an object without properties")
        for k in ("minProperties", "maxProperties", "patternProperties", "propertyNames"):
            if k in schema:
                raise ToolwireError(f"{path}: {k!r} is not supported for {self.s.name}")
        if self.s.sort_keys:
            props = dict(sorted(props.items()))
        unknown = required - set(props)
        if unknown:
            raise ToolwireError(f"{path}: required properties without a schema: {sorted(unknown)}")
        members = [(k, SequenceFormat(elements=[ConstStringFormat(value=key(k) + kv_sep), self.value(v, f"{path}.{k}")])) for k, v in props.items()]
        return SequenceFormat(elements=[ConstStringFormat(value=open_), self.members(members, required), ConstStringFormat(value=close)])

    def _generic_object_rule(self) -> str:
        return "g_object" if self.s.name == "gemma4" else "g_dict"

    def members(self, members: list[tuple[str, Any]], required: set[str]) -> Any:
        """Members in order, separated by the item separator; optional ones may be left out."""
        sep = ConstStringFormat(value=self.s.item_sep)

        def tail(i: int) -> list[Any]:
            out = []
            for k, m in members[i:]:
                item = SequenceFormat(elements=[sep, m])
                out.append(item if k in required else OptionalFormat(content=item))
            return out

        alternatives = []
        for i, (k, m) in enumerate(members):
            alternatives.append(SequenceFormat(elements=[m, *tail(i + 1)]) if i + 1 < len(members) else m)
            if k in required:
                break
        else:
            alternatives.append(ConstStringFormat(value=""))
        return _or(alternatives)

    def spellings(self, v: Any, path: str) -> list[Any]:
        """``v`` as constant formats: a Python string in either quote style."""
        text = self.literal(v, path)
        if isinstance(v, str) and self.s is _PYTHON:
            single = "'" + json.dumps(v, ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'") + "'"
            return [ConstStringFormat(value=text), ConstStringFormat(value=single)]
        return [ConstStringFormat(value=text)]

    def literal(self, v: Any, path: str) -> str:
        """``v`` written as a literal of this syntax."""
        if v is None:
            return self.s.null
        if v is True:
            return self.s.true
        if v is False:
            return self.s.false
        if isinstance(v, (int, float)):
            return json.dumps(v)
        if isinstance(v, str):
            return self.s.string_const(v)
        if isinstance(v, list):
            return "[" + self.s.item_sep.join(self.literal(x, path) for x in v) + "]"
        if isinstance(v, Mapping):
            return "{" + self.s.item_sep.join(self.s.key(k) + self.s.key_sep + self.literal(x, path) for k, x in v.items()) + "}"
        raise ToolwireError(f"{path}: cannot write {v!r}")


_PYTHON = _Python()


def _or(elements: list[Any]) -> Any:
    return elements[0] if len(elements) == 1 else OrFormat(elements=elements)


# --------------------------------------------------------------------------------------------
# Building the tag


def _xml_excludes(fmt: _Format) -> list[str]:
    """Text an XML parameter value must not contain: every marker of the format but the reasoning
    and markup ones (the parser ends a value at the next tag or message marker), and what it acts
    on in content. xgrammar refuses exclusions with outer whitespace."""
    out = {t for role, t, _ in fmt.markers if role not in MARKUP_ROLES and not role.startswith("reasoning")}
    out.update(fmt.call_triggers())
    return sorted(t for t in out if t and t == t.strip())


@dataclass(frozen=True)
class _XmlStyle:
    """How an XML style writes one parameter. ``open`` holds ``{key}`` (the name), may hold
    ``{string}`` (``true`` for a raw-text value, ``false`` for JSON: DSML) and ``{ws}`` (optional
    whitespace); ``close`` may hold ``{key}`` (MiniMax M3 names the closing tag). ``pad``: the
    parser drops one newline on each side of a string value (qwen3_coder, beam). ``between``:
    whitespace is allowed around parameters. ``nested``: objects and arrays are written as nested
    tags (``item`` for array elements) instead of JSON."""

    open: str
    close: str
    pad: bool = False
    between: bool = True
    nested: bool = False


XML_PARAMS: dict[str, _XmlStyle] = {
    "qwen_xml": _XmlStyle("<parameter={key}>", "</parameter>", pad=True),
    "glm_xml": _XmlStyle("<arg_key>{key}</arg_key>{ws}<arg_value>", "</arg_value>"),
    "hy4_xml": _XmlStyle("<arg_key:opensource>{key}</arg_key:opensource>{ws}<arg_value:opensource>", "</arg_value:opensource>"),
    "minimax_xml": _XmlStyle('<parameter name="{key}">', "</parameter>"),
    "steptml_xml": _XmlStyle('<steptml:parameter name="{key}">', "</steptml:parameter>"),
    "deepseek_xml": _XmlStyle('<｜DSML｜parameter name="{key}" string="{string}">', "</｜DSML｜parameter>"),
    "deepseek_v4_1_xml": _XmlStyle('<｜DSML｜ parameter name="{key}" string="{string}">', "</｜DSML｜ parameter>"),
    "beam_xml": _XmlStyle('<rfl:parameter name="{key}">', "</rfl:parameter>", pad=True, between=False),
    "minimax_m3_xml": _XmlStyle("]<]minimax[>[<{key}>", "]<]minimax[>[</{key}>", nested=True),
}
XML_STYLES = frozenset(XML_PARAMS)
_WS = r"[ \t\r\n]*"
#: A parameter name (the parsers cap names at 512 bytes).
_XML_KEY = r"[A-Za-z_][A-Za-z0-9_.\-]{0,127}"


class _XmlBuilder:
    """XML parameters as the format's parser reads them: in schema order, optional ones may be
    left out. A value the parser keeps as text (a string, an enum) is written exactly; numbers,
    booleans and null by their JSON spelling (the parser trims and types them); objects and arrays
    as JSON (xgrammar's JSON-schema format, whose strings do not carry the marker exclusions:
    those cost seconds of compile time) or, for MiniMax M3, as nested tags. Without a schema every
    value is raw text: the parser types it by the tool's schema."""

    def __init__(self, fmt: _Format, root: Any, declared: Any = None):
        self.fmt = fmt
        self.declared = declared if isinstance(declared, Mapping) else {}
        self.style = XML_PARAMS[fmt.style]
        self.ex = _xml_excludes(fmt)
        self.root = root
        self.depth = 0

    def ws(self) -> list[Any]:
        return [RegexFormat(pattern=_WS)] if self.style.between else []

    def param(self, key: Any, value: Any, *, raw: bool | None) -> Any:
        """One parameter: ``key`` a name (str) or a format for any name; ``raw`` None lets the
        value be declared either way (DSML's ``string`` attribute)."""
        parts: list[Any] = self.ws()
        open_ = self.style.open
        if raw is not None:
            open_ = open_.replace("{string}", "true" if raw else "false")
        if isinstance(key, str):
            open_ = open_.replace("{key}", key)
        holes = {"{key}": key, "{string}": RegexFormat(pattern="true|false")}
        for i, piece in enumerate(open_.split("{ws}")):
            if i:
                parts.append(RegexFormat(pattern=_WS))
            for chunk in re.split(r"(\{key\}|\{string\})", piece):
                if chunk in holes:
                    parts.append(holes[chunk])
                elif chunk:
                    parts.append(ConstStringFormat(value=chunk))
        close = self.style.close
        if "{key}" in close and not isinstance(key, str):
            raise ToolwireError(f"format {self.fmt.name!r}: a parameter name must be declared")
        parts += [value, ConstStringFormat(value=close.replace("{key}", key if isinstance(key, str) else ""))]
        parts += self.ws()
        return SequenceFormat(elements=[p for p in parts if not (isinstance(p, ConstStringFormat) and not p.value)])

    def text(self, max_chars: int | None = None) -> Any:
        return AnyTextFormat(excludes=self.ex, max_chars=max_chars)

    def generic(self, schema: Any) -> Any:
        """Any parameters with raw-text values. Where the style repeats the name in the closing
        tag (MiniMax M3), the tool's declared parameters instead, each optional, as raw text or
        the nested tags their schema describes."""
        if "{key}" in self.style.close:
            declared = self.declared if schema is ANY_OBJECT else schema
            props = declared.get("properties") if isinstance(declared, Mapping) else None
            if not props:
                return ConstStringFormat(value="")
            elements = []
            for k, sub in props.items():
                value: Any = self.text()
                try:
                    typed, raw = self.value(sub, k)
                    if not raw:  # raw text, or the nested tags the schema describes
                        value = _or([value, typed])
                except ToolwireError:
                    pass
                elements.append(OptionalFormat(content=self.param(k, value, raw=True)))
            return SequenceFormat(elements=elements) if len(elements) > 1 else elements[0]
        return StarFormat(content=self.param(RegexFormat(pattern=_XML_KEY), self.text(), raw=None))

    def resolve(self, schema: Any, path: str) -> Any:
        return _ValueBuilder(_PYTHON, self.root).resolve(schema, path)

    def arguments(self, schema: Any, path: str) -> Any:
        if schema is ANY_OBJECT or not isinstance(schema, Mapping):
            return self.generic(schema)
        schema = self.resolve(schema, path)
        return self.members(schema, path)

    def members(self, schema: Mapping[str, Any], path: str) -> Any:
        props = schema.get("properties")
        if not props:
            if schema.get("additionalProperties") is False or "properties" in schema:
                return ConstStringFormat(value="")  # no parameters
            return self.generic(schema)
        extra = set(schema) - ANNOTATIONS - {"type", "properties", "required", "additionalProperties", "$defs", "definitions"}
        if extra:
            raise ToolwireError(f"{path}: {sorted(extra)} not enforceable on XML parameters")
        if schema.get("additionalProperties") not in (None, False):
            raise ToolwireError(f"{path}: additionalProperties with a schema is not enforceable on XML parameters")
        required = set(schema.get("required") or [])
        elements = []
        for key, sub in props.items():
            value, raw = self.value(sub, f"{path}.{key}")
            p = self.param(key, value, raw=raw)
            elements.append(p if key in required else OptionalFormat(content=p))
        if not elements:
            return ConstStringFormat(value="")
        return elements[0] if len(elements) == 1 else SequenceFormat(elements=elements)

    def padded(self, v: Any) -> Any:
        if not self.style.pad:
            return v
        nl = OptionalFormat(content=ConstStringFormat(value="\n"))
        return SequenceFormat(elements=[nl, v, nl])

    def value(self, sub: Any, path: str) -> tuple[Any, bool]:
        """(the value's format, whether it is raw text)."""
        self.depth += 1
        try:
            if self.depth > 24:
                raise ToolwireError(f"{path}: schema nests too deep for XML parameters")
            sub = self.resolve(sub, path)
            return self._value(sub, path)
        finally:
            self.depth -= 1

    def _value(self, sub: Any, path: str) -> tuple[Any, bool]:
        if sub is True or sub == {} or not isinstance(sub, Mapping):
            return self.text(), True
        types = _types(sub)
        if "const" in sub or "enum" in sub:
            values = [sub["const"]] if "const" in sub else list(sub["enum"])
            raw = all(isinstance(v, str) for v in values)
            return self.padded(_or([ConstStringFormat(value=v if isinstance(v, str) else json.dumps(v)) for v in values])), raw
        branches = sub.get("anyOf") or sub.get("oneOf")
        if branches:
            for b in branches:
                types |= _types(self.resolve(b, path)) if isinstance(b, Mapping) else {"string"}
        if "string" in types:
            if len(types) == 1 and not branches:
                for k in ("minLength", "format"):
                    if k in sub:
                        raise ToolwireError(f"{path}: {k!r} is not enforceable on an XML parameter value")
                if "pattern" in sub:
                    return self.padded(RegexFormat(pattern=_unanchor(sub["pattern"]))), True
                return self.text(sub.get("maxLength")), True
            if any(k in sub for k in ("pattern", "minLength", "maxLength", "format")):
                raise ToolwireError(f"{path}: string constraints in a union are not enforceable on an XML parameter")
            # Any text: "null", "1", "true" when the schema allows those (the parser reads their
            # exact spellings as such), a string otherwise.
            return self.text(), True
        if not types or branches:
            if not types:
                return self.text(), True
            return self.padded(self.json(sub)), False
        if self.style.nested and types & {"object", "array"}:
            if len(types) > 1:
                raise ToolwireError(f"{path}: a union with objects or arrays is not supported for {self.fmt.name}")
            if "object" in types:
                return self.members(sub, path), False
            item, _ = self.value(sub.get("items", True), f"{path}.items")
            one = self.param("item", item, raw=True)
            lo, hi = int(sub.get("minItems", 0)), sub.get("maxItems")
            return RepeatFormat(min=lo, max=-1 if hi is None else int(hi), content=one), False
        pieces: list[Any] = []
        scalar = {k: v for k, v in sub.items() if k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")}
        for t in sorted(types):
            if t in ("integer", "number"):
                pieces.append(JSONSchemaFormat(json_schema={"type": t, **scalar}))
            elif t == "boolean":
                pieces += [ConstStringFormat(value="true"), ConstStringFormat(value="false")]
            elif t == "null":
                pieces.append(ConstStringFormat(value="null"))
            elif t in ("object", "array"):
                pieces.append(self.json({**sub, "type": t}))
        if sub.get("nullable") is True and "null" not in types:
            pieces.append(ConstStringFormat(value="null"))
        return self.padded(_or(pieces)), False

    def json(self, sub: Mapping[str, Any]) -> Any:
        """A JSON value. The parser ends the value at the format's next marker even inside a JSON
        string, so the strings may not hold the markers' first characters (``<``; JSON spells it
        ``\\u003c``): a one-character exclusion is free, each whole-marker exclusion costs about
        0.3 s of compile time per value."""
        defs = {k: self.root[k] for k in ("$defs", "definitions") if isinstance(self.root, Mapping) and k in self.root}
        firsts = sorted({t[0] for t in self.ex})
        return JSONSchemaFormat(json_schema={**defs, **sub}, max_whitespace_cnt=MAX_WHITESPACE, excludes=firsts)


def _special_markers(fmt: _Format) -> list[str]:
    """The format's special-token call markers: a parser fed token ids reads them as markers even
    inside a JSON string."""
    skip = set(fmt.reasoning or ())
    out = {t for role, t, special in fmt.markers if special and role not in MARKUP_ROLES and not role.startswith("reasoning")}
    return sorted(t for t in out - skip if t and t == t.strip())


def _arguments(fmt: _Format, schema: Any, tool: _Tool, ban_markers: bool = False) -> Any:
    style = fmt.style
    if style == "json":
        excludes = _special_markers(fmt) if ban_markers else []
        return JSONSchemaFormat(json_schema=schema, style="json", max_whitespace_cnt=MAX_WHITESPACE, excludes=excludes)
    if style in XML_STYLES:
        return _XmlBuilder(fmt, schema, tool.parameters).arguments(schema, f"tool {tool.name!r} parameters")
    if style == "gemma4":
        syntax = _Gemma(fmt)
        b = _ValueBuilder(syntax, schema)
        if schema is ANY_OBJECT:
            return GrammarFormat(grammar=syntax.generic_ebnf("g_object"))
        return b.object(b.resolve(schema, f"tool {tool.name!r}"), f"tool {tool.name!r} parameters", "{", "}", syntax.key, ":")
    if style == "python_kwargs":
        b = _ValueBuilder(_PYTHON, schema)
        if schema is ANY_OBJECT:
            return GrammarFormat(grammar=_PYTHON.generic_ebnf("g_kwargs"))
        resolved = b.resolve(schema, f"tool {tool.name!r}")
        for k in (resolved.get("properties") or {}) if isinstance(resolved, Mapping) else ():
            if not _IDENT.match(k):
                raise ToolwireError(f"tool {tool.name!r}: {k!r} cannot be a Python keyword argument")
        return b.object(resolved, f"tool {tool.name!r} parameters", "", "", lambda k: k, "=")
    raise ToolwireError(f"format {fmt.name!r}: argument style {style!r} has no grammar")


def _call_tag(fmt: _Format, tool: _Tool, schema: Any, ban_markers: bool = False, *, free: bool = False) -> TagFormat:
    """The tag of one tool's call; ``free``: its arguments are any text up to the call's end."""
    name = tool.name
    if '"{name}"' in fmt.begin:
        name = json.dumps(name, ensure_ascii=False)[1:-1]
    begin = fmt.begin.replace("{name}", name)
    args = AnyTextFormat() if free else _arguments(fmt, schema, tool, ban_markers)
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


def _free_excludes(fmt: _Format, trigger: str | None) -> list[str]:
    """What free text must not contain: every call trigger but the grammar's own, and the
    reasoning markers."""
    out = {t for t in fmt.call_triggers() if t != trigger}
    if fmt.reasoning:
        out.update(fmt.reasoning)
    for block in (fmt.reasoning_block, fmt.content_block):
        if block:
            out.update(x for x in block if x)
    out.discard("")
    if trigger:
        # The trigger dispatches before any text that starts with it could complete (and
        # xgrammar's TagDispatch stops enforcing anything when an exclusion extends a trigger).
        out = {t for t in out if not trigger.startswith(t) and not t.startswith(trigger)}
    return sorted(out)


def _first_char_class(fmt: _Format, extra: list[str]) -> str | None:
    """A regex for the first non-space character of free text when the format reads a call at the
    very start of the output (a bare ``[`` or ``{``): anything but those and the first characters
    of the call markers. None when the format has no such trigger."""
    firsts = set()
    for t in fmt.at_start_texts:
        firsts.add(t[0])
    if not firsts:
        return None
    for t in extra:
        firsts.add(t[0])
    cls = "".join(re.escape(c) if c not in "]\\^-" else "\\" + c for c in sorted(firsts))
    return rf"[ \t\r\n]*[^ \t\r\n{cls}]"


def _auto(fmt: _Format, tags: list[TagFormat], *, parallel: bool) -> Any:
    """Free text with calls wherever the format's trigger appears."""
    found = fmt.trigger_for(fmt.opener)
    if found is None:
        raise ToolwireError(f"format {fmt.name!r}: no trigger opens {fmt.opener!r}")
    trigger, at_start_only = found
    excludes = _free_excludes(fmt, trigger if not at_start_only else None)
    if fmt.content_block is not None:
        # The output is messages, not free text: one content block, or calls.
        return _or([_content_block(fmt), _run(fmt, tags, stop_after_first=not parallel)])
    if at_start_only:
        # The calls can only open the output; text that does not start like them has no calls.
        first = _first_char_class(fmt, excludes)
        text = SequenceFormat(elements=[RegexFormat(pattern=first or r"[\s\S]"), AnyTextFormat(excludes=excludes)])
        return _or([_run(fmt, tags, stop_after_first=not parallel), text, RegexFormat(pattern=r"[ \t\r\n]*")])
    # The end of a call run: the section end, or the call end when calls stand alone. When it is
    # empty the parser cannot tell where the calls stop, so nothing may follow them.
    run_end = fmt.section[1] if fmt.section is not None else fmt.end
    stop = not parallel or not run_end
    if fmt.section is not None:
        begin, end = fmt.section
        inner = TagsWithSeparatorFormat(tags=tags, separator=fmt.separator, at_least_one=True, stop_after_first=not parallel)
        outer_tags = [TagFormat(begin=begin, content=inner, end=end)]
    else:
        outer_tags = tags
    if not run_end or (fmt.section is not None and not fmt.section[0]):
        # Calls without an end (mistral, llama3_json's <|python_tag|>), or closed by a message end
        # (gigachat3): the run of calls ends the output.
        return _triggered_prefix_free(fmt, trigger, _run(fmt, tags, stop_after_first=not parallel), excludes)
    main = TriggeredTagsFormat(triggers=[trigger], tags=outer_tags, at_least_one=False, stop_after_first=stop, excludes=excludes)
    first = _first_char_class(fmt, excludes + [trigger])
    if first is None:
        return main
    # A bare `[`/`{` at the output start would be read as calls: text must start otherwise.
    starts_with_call = TriggeredTagsFormat(triggers=[trigger], tags=outer_tags, at_least_one=True, stop_after_first=stop, excludes=excludes)
    return _or([starts_with_call, SequenceFormat(elements=[RegexFormat(pattern=first), main]), RegexFormat(pattern=r"[ \t\r\n]*")])


def _triggered_prefix_free(fmt: _Format, trigger: str, calls: Any, excludes: list[str]) -> Any:
    """Free text, then optionally a run of calls that ends the output (formats whose calls have no
    end marker)."""
    text = AnyTextFormat(excludes=sorted(set(excludes) | {trigger}))
    first = _first_char_class(fmt, excludes + [trigger])
    if first is None:
        return SequenceFormat(elements=[text, OptionalFormat(content=calls)])
    lead = _or([SequenceFormat(elements=[RegexFormat(pattern=first), text]), RegexFormat(pattern=r"[ \t\r\n]*")])
    return SequenceFormat(elements=[OptionalFormat(content=lead), OptionalFormat(content=calls)])


def _content_block(fmt: _Format) -> Any:
    assert fmt.content_block is not None
    begin, end = fmt.content_block
    return TagFormat(begin=begin, content=AnyTextFormat(excludes=_block_excludes(fmt, end)), end=end)


def _block_excludes(fmt: _Format, end: str) -> list[str]:
    out = set(fmt.call_triggers())
    for block in (fmt.reasoning_block, fmt.content_block):
        if block:
            out.update(x for x in block if x)
    if fmt.reasoning:
        out.update(fmt.reasoning)
    out.discard(end)
    out.discard("")
    return sorted(out)


def _reasoning(fmt: _Format, reasoning: Any) -> Any | None:
    """The reasoning block before the rest: None, or a format."""
    if reasoning is None and fmt.content_block is not None and fmt.reasoning_block is not None:
        # Harmony-style messages: the analysis channel is the model's to write whatever the
        # setting. Where the next message opens with <|start|> (beam), the prompt's open message
        # must be the analysis one: the block is required.
        starts = [t for role, t, _ in fmt.markers if role == "message_start"]
        reasoning = "closing_only_full" if any(fmt.begin.startswith(t) for t in starts) else "optional"
    if reasoning in (None, False, "none", "disabled"):
        return None
    block = fmt.reasoning_block or fmt.reasoning
    if block is None:
        raise ToolwireError(f"format {fmt.name!r} has no reasoning block")
    begin, end = block
    excludes = _block_excludes(fmt, end)
    lead = [] if fmt.content_block is not None else [RegexFormat(pattern=LEAD_WS)]
    if reasoning in ("closing_only", "enabled"):
        return SequenceFormat(elements=[TagFormat(begin="", content=AnyTextFormat(excludes=excludes), end=end), *lead])
    if reasoning == "closing_only_full":
        return SequenceFormat(elements=[TagFormat(begin=begin, content=AnyTextFormat(excludes=excludes), end=end), *lead])
    if reasoning in (True, "think", "paired", "native", "auto", "optional"):
        return OptionalFormat(content=SequenceFormat(elements=[TagFormat(begin=begin, content=AnyTextFormat(excludes=excludes), end=end), *lead]))
    raise ToolwireError(f"unknown reasoning {reasoning!r}: None, True, 'think', 'paired' or 'closing_only'")


def _with_reasoning(fmt: _Format, body: Any, reasoning: Any) -> StructuralTag:
    prefix = _reasoning(fmt, reasoning)
    if prefix is None:
        return StructuralTag(format=body)
    return StructuralTag(format=SequenceFormat(elements=[prefix, body]))


def structural_tag(
    format: str,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool | None = True,
    scope: Scope = "auto",
    schema: SchemaMode = "auto",
    reasoning: Any = None,
    *,
    ban_markers_in_strings: bool = False,
    response_format: Mapping[str, Any] | None = None,
    turn_grammar: bool = True,
    constrained_tools: Sequence[str] | None = None,
) -> StructuralTag | None:
    """The xgrammar structural tag for ``tools`` in ``format``.

    Returns None where the scope says no constraint: ``auto`` choice under scope ``auto`` when no
    tool is ``strict`` and parallel calls are allowed, and every choice under scope ``never``.
    ``tool_choice="none"`` gives :func:`exclusion_tag`.

    Arguments:
        format: a format name or alias.
        tools: OpenAI tool dicts (``function`` tools, and ``custom`` tools with a text format,
            whose arguments are any object).
        tool_choice: ``auto``, ``required``, ``none``, ``{"type": "function", "function":
            {"name": ...}}`` or ``{"type": "allowed_tools", ...}``.
        parallel_tool_calls: False stops the output after the first call.
        scope: ``auto``, ``always`` or ``never`` (see the module docs).
        schema: ``auto`` holds strict tools' arguments to their schema and others to any object;
            ``strict`` holds every tool to its schema.
        reasoning: None (no block; harmony keeps its optional analysis channel), True /
            ``"think"`` / ``"paired"`` (an optional complete block first), ``"closing_only"``
            (the prompt opened the block: the output starts inside it).
        ban_markers_in_strings: also ban the format's special-token markers inside JSON string
            values. A parser fed token ids ends a call at such a token even inside a string; a
            parser fed text does not. Off by default: xgrammar's string exclusions cost about
            0.7 s of compile time per marker (XML-style values always exclude the markers).
        response_format: Beam only: a ``json_object`` / ``json_schema`` response_format, held
            inside the final message (see below).
        turn_grammar: Beam only: False turns the per-turn grammar off for ``auto`` tool choice.

    Beam (a per-turn format) holds every turn to one tag: a non-empty analysis message, then tool
    calls (parameter values typed by the schema of each tool ``schema`` holds to its own) or,
    under ``auto``, the final message (JSON under ``response_format``). ``required``, named and
    ``none`` choices use the same tag (calls only, final only). ``turn_grammar=False`` gives ``auto`` the rules of the other formats (no tag
    unless a tool is strict, parallel calls are off or scope is ``always``; ``response_format``
    not held). A strict tool whose schema is outside the enforceable subset is served as
    non-strict there, with a ``UserWarning``, where other formats raise. The rules are
    :func:`plan`'s, which reports the warnings in ``Plan.warnings``.
        constrained_tools: constrain only these tools' calls (names from ``tools``); every other
            tool's call keeps its exact call start (the format's header with the tool's name)
            and takes any text as arguments up to the call's end, and text outside calls is as
            free as the mode makes it. Implies a constraint whatever the scope says (except
            ``never``). The other tools keep named headers because a free branch that starts
            right after the trigger would let a listed tool's call be spelled through it.

    Raises:
        ToolwireError: unknown format, a named tool not in ``tools``, a custom grammar tool, a
            strict schema outside the subset a grammar enforces, a JSON ``response_format`` on a
            format without per-turn channels.
    """
    fmt = _format(format)
    if _turn_channels(fmt):
        if constrained_tools is not None:
            raise ToolwireError(f"format {fmt.name!r}: constrained_tools is not supported on per-turn formats (beam)")
        return _turn_structural_tag(
            fmt, tools, tool_choice, parallel_tool_calls, scope, schema, reasoning, ban_markers_in_strings, response_format, turn_grammar
        )
    if _response_schema(response_format) is not None:
        raise ToolwireError(f"format {fmt.name!r}: a response_format is held inside the tag only on per-turn formats (beam)")
    tool_list = _tools(tools)
    mode, allowed = _choice(tool_choice, tool_list)
    if scope not in ("auto", "always", "never"):
        raise ToolwireError(f"unknown scope {scope!r}")
    parallel = parallel_tool_calls is not False
    if mode == "none":
        return exclusion_tag(format, reasoning=reasoning)
    if scope == "never":
        return None
    constrained = None
    if constrained_tools is not None:
        constrained = frozenset(constrained_tools)
        unknown = sorted(constrained - {t.name for t in tool_list})
        if unknown:
            raise ToolwireError(f"constrained_tools names tools not in tools: {', '.join(unknown)}")
    elif mode == "auto" and scope == "auto" and parallel and not any(t.strict for t in allowed):
        return None
    return _build(fmt, allowed, mode, parallel, schema, reasoning, None, ban_markers_in_strings, constrained)


def _build(
    fmt: _Format,
    allowed: list[_Tool],
    mode: str,
    parallel: bool,
    schema: str,
    reasoning: Any,
    warnings: list[str] | None,
    ban_markers: bool = False,
    constrained: frozenset[str] | None = None,
) -> StructuralTag:
    if not allowed:
        # auto with no tools: nothing to call; keep the format's markers out of the text.
        return exclusion_tag(fmt.name, reasoning=reasoning)
    tags = [
        _tool_tag(fmt, t, schema, warnings, ban_markers)
        if constrained is None or t.name in constrained
        else _call_tag(fmt, t, None, free=True)
        for t in allowed
    ]
    if mode == "auto":
        body = _auto(fmt, tags, parallel=parallel)
    else:
        body = SequenceFormat(elements=[RegexFormat(pattern=LEAD_WS), _run(fmt, tags, stop_after_first=not parallel)])
        if fmt.content_block is not None:
            body = _run(fmt, tags, stop_after_first=not parallel)
        elif fmt.content_after_calls:
            # The family writes its text after the calls (gemma4).
            text = AnyTextFormat(excludes=_free_excludes(fmt, None))
            body = SequenceFormat(elements=[*body.elements, OptionalFormat(content=text)])
    return _with_reasoning(fmt, body, reasoning)


def exclusion_tag(
    format: str,
    *,
    reasoning: Any = None,
    by: Literal["auto", "token", "text"] = "auto",
    tokenizer_info: xgr.TokenizerInfo | None = None,
) -> StructuralTag:
    """A grammar for ``tool_choice="none"``: any text in which the format cannot start a call.

    The format's call starts (its triggers, the markup wrappers excepted) and stray call ends are
    banned. Where each of them is a special token of the family (``by="auto"``), they are banned
    by token id (``any_tokens``): the same characters spelled in ordinary tokens stay allowed, and
    a parser fed token ids reads them as text. Otherwise, or with ``by="text"``, they are banned
    as strings (``any_text``), which also bans the special token. Without ``tokenizer_info`` the
    token ban names the markers by text and xgrammar resolves them when it compiles (it fails on a
    vocabulary that lacks them); with it, the ids are resolved here, and a special marker that is
    not one token of that vocabulary is banned as a string. A token ban is token-level: feed it
    tokens (``accept_token``), not ``accept_string``.

    A soft trigger with a confirming pattern (pythonic's ``[`` needs ``[name(``; xlam's code
    fence needs a ``[``) bans only that pattern, so brackets and fences stay usable. A format that
    reads a bare ``[``/``{`` at the output start as calls gets text that starts otherwise. Harmony
    gets its analysis and final channels with no call.
    """
    fmt = _format(format)
    if by not in ("auto", "token", "text"):
        raise ToolwireError(f"unknown ban mode {by!r}")
    if _turn_channels(fmt):
        return _turn_tag(fmt, [], "none", True, "auto", reasoning, None)
    if fmt.content_block is not None:
        return _with_reasoning(fmt, _content_block(fmt), reasoning)
    confirmed = {t for t, _, _, c in fmt.confirms if c}
    banned = sorted(set(fmt.call_triggers()) - confirmed)
    text_bans = sorted(set(banned) | set(fmt.reasoning or ()))
    first = _first_char_class(fmt, banned + sorted(confirmed))
    token_ok = by != "text" and first is None and not confirmed and banned and all(fmt.is_special(t) for t in banned)
    ids: list[int | str] = list(banned)
    if token_ok and tokenizer_info is not None:
        vocab = _vocab_index(tokenizer_info)
        found = [vocab.get(t) for t in banned]
        if any(i is None for i in found):
            token_ok = False
        else:
            ids = [int(i) for i in found if i is not None]
    if by == "token" and not token_ok:
        raise ToolwireError(f"format {fmt.name!r}: its call starts cannot all be banned by token id")
    body: Any
    if token_ok:
        body = AnyTokensFormat(exclude_tokens=ids)
    else:
        body = _avoiding(fmt, text_bans) if confirmed else AnyTextFormat(excludes=text_bans)
        if first is not None:
            body = _or([SequenceFormat(elements=[RegexFormat(pattern=first), body]), RegexFormat(pattern=r"[ \t\r\n]*")])
    return _with_reasoning(fmt, body, reasoning)


# --------------------------------------------------------------------------------------------
# Text that never contains a pattern: a small regex -> DFA -> EBNF compiler, for the soft triggers
# whose call is confirmed by what follows them (pythonic's `[name(`, xlam's fence and `[`).

MAX_CP = 0x10FFFF
#: Rust's char::is_whitespace (the parsers skip this whitespace).
_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
          (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]  # fmt: skip


def _norm(intervals):
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(intervals):
    out, prev = [], 0
    for lo, hi in _norm(intervals):
        if lo > prev:
            out.append((prev, lo - 1))
        prev = hi + 1
    if prev <= MAX_CP:
        out.append((prev, MAX_CP))
    return tuple(out)


class _Nfa:
    """Thompson NFA over code-point interval sets: edges (state, set or None for epsilon, state)."""

    def __init__(self):
        self.edges: list[list[tuple[Any, int]]] = []

    def state(self) -> int:
        self.edges.append([])
        return len(self.edges) - 1

    def parse(self, pattern: str) -> tuple[int, int]:
        self.p, self.i = pattern, 0
        start, end = self._alt()
        if self.i != len(self.p):
            raise ToolwireError(f"pattern {pattern!r}: unexpected {self.p[self.i]!r}")
        return start, end

    def literal(self, text: str) -> tuple[int, int]:
        start = cur = self.state()
        for ch in text:
            nxt = self.state()
            self.edges[cur].append((((ord(ch), ord(ch)),), nxt))
            cur = nxt
        return start, cur

    def _alt(self):
        branches = [self._seq()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self._seq())
        if len(branches) == 1:
            return branches[0]
        s, e = self.state(), self.state()
        for bs, be in branches:
            self.edges[s].append((None, bs))
            self.edges[be].append((None, e))
        return s, e

    def _seq(self):
        start = cur = self.state()
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            a, b = self._atom()
            op = self.p[self.i] if self.i < len(self.p) else ""
            if op in ("*", "+", "?"):
                self.i += 1
                s, e = self.state(), self.state()
                self.edges[s].append((None, a))
                self.edges[b].append((None, e))
                if op in ("*", "?"):
                    self.edges[s].append((None, e))
                if op in ("*", "+"):
                    self.edges[b].append((None, a))
                a, b = s, e
            self.edges[cur].append((None, a))
            cur = b
        return start, cur

    def _atom(self):
        c = self.p[self.i]
        self.i += 1
        if c == "(":
            s, e = self._alt()
            if self.i >= len(self.p) or self.p[self.i] != ")":
                raise ToolwireError(f"pattern {self.p!r}: unclosed group")
            self.i += 1
            return s, e
        if c == "[":
            cls = self._class()
        elif c == "\\":
            cls = self._escape()
        else:
            cls = ((ord(c), ord(c)),)
        s, e = self.state(), self.state()
        self.edges[s].append((cls, e))
        return s, e

    def _escape(self):
        c = self.p[self.i]
        self.i += 1
        if c == "s":
            return tuple(_SPACE)
        if c == "d":
            return ((48, 57),)
        if c in "uUx":
            n = {"u": 4, "U": 8, "x": 2}[c]
            cp = int(self.p[self.i : self.i + n], 16)
            self.i += n
            return ((cp, cp),)
        return ((ord(c), ord(c)),)

    def _class(self):
        negate = self.p[self.i] == "^"
        if negate:
            self.i += 1
        items: list[tuple[int, int]] = []
        while self.p[self.i] != "]":
            if self.p[self.i] == "\\":
                self.i += 1
                lo_set = self._escape()
            else:
                lo_set = ((ord(self.p[self.i]), ord(self.p[self.i])),)
                self.i += 1
            if len(lo_set) == 1 and lo_set[0][0] == lo_set[0][1] and self.p[self.i] == "-" and self.p[self.i + 1] != "]":
                self.i += 1
                if self.p[self.i] == "\\":
                    self.i += 1
                    hi = self._escape()[0][0]
                else:
                    hi = ord(self.p[self.i])
                    self.i += 1
                items.append((lo_set[0][0], hi))
            else:
                items.extend(lo_set)
        self.i += 1
        return _negate(items) if negate else _norm(items)


def _cls_text(intervals) -> str:
    def ch(cp: int) -> str:
        return f"\\U{cp:08x}"

    return "[" + "".join(ch(lo) if lo == hi else f"{ch(lo)}-{ch(hi)}" for lo, hi in _norm(intervals)) + "]"


def _confirm_rules(trigger: str, pattern: str, prefix: str, unsafe: set[str], then: str) -> tuple[str, list[str]]:
    """EBNF rules for what may follow ``trigger`` in text that must not complete ``pattern`` (a
    regex starting with the trigger), walking the pattern's DFA after the trigger. Each live state
    ``{prefix}f{q}`` takes a character that keeps the pattern alive, or a character that kills it
    and then the rule ``then`` (the rest of the text); ``{prefix}p{q}`` keeps it alive to the end
    of the text. The killing character is consumed (xgrammar's lookahead does not restrict), so it
    may not start another banned text (``unsafe``), except a one-character trigger, which restarts
    the walk. Returns (the rule to dispatch to, rules)."""
    nfa = _Nfa()
    start, accept = nfa.parse(pattern)

    def closure(states):
        stack, seen = list(states), set(states)
        while stack:
            for cls, nxt in nfa.edges[stack.pop()]:
                if cls is None and nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)

    def step(states, cp):
        return closure({t for st in states for cls, t in nfa.edges[st] if cls and any(a <= cp <= b for a, b in cls)})

    cur = closure({start})
    for ch in trigger:
        cur = step(cur, ord(ch))
    if not cur or accept in cur:
        raise ToolwireError(f"pattern {pattern!r} does not extend its trigger {trigger!r}")
    bounds = {0, MAX_CP + 1}
    for edges in nfa.edges:
        for cls, _ in edges:
            for lo, hi in cls or ():
                bounds.update((lo, hi + 1))
    for u in unsafe:
        bounds.update((ord(u), ord(u) + 1))
    cuts = sorted(bounds)
    pieces = list(zip(cuts[:-1], (c - 1 for c in cuts[1:])))
    index = {cur: 0}
    order = [cur]
    rules = []
    k = 0
    while k < len(order):
        here = order[k]
        q = k
        k += 1
        moves: dict[int, list[tuple[int, int]]] = {}
        ends: list[tuple[int, int]] = []
        restart = False
        for lo, hi in pieces:
            nxt = step(here, lo)
            if accept in nxt:
                continue  # completes the pattern: banned
            if nxt:
                if nxt not in index:
                    if len(index) > 16:
                        raise ToolwireError(f"pattern {pattern!r} is too complex to exclude")
                    index[nxt] = len(order)
                    order.append(nxt)
                moves.setdefault(index[nxt], []).append((lo, hi))
            elif lo == hi and chr(lo) == trigger:
                restart = True
            elif not (lo == hi and chr(lo) in unsafe):
                ends.append((lo, hi))
        full = [f"{_cls_text(iv)} {prefix}f{j}" for j, iv in sorted(moves.items())]
        part = ['""'] + [f"{_cls_text(iv)} {prefix}p{j}" for j, iv in sorted(moves.items())]
        if ends:
            full.append(f"{_cls_text(ends)} {then}")
        if restart:
            full.append(f"{json.dumps(trigger)} {prefix}f0")
            part.append(f"{json.dumps(trigger)} {prefix}p0")
        rules.append(f"{prefix}f{q} ::= " + (" | ".join(full) if full else '""'))
        rules.append(f"{prefix}p{q} ::= " + " | ".join(part))
    rules.append(f"{prefix}d ::= {prefix}f0 | {prefix}p0")
    return f"{prefix}d", rules


def _avoiding(fmt: _Format, banned: Sequence[str]) -> Any:
    """Any text with none of ``banned`` and none of the soft triggers' confirmed calls: xgrammar's
    TagDispatch bans the strings, and on a confirmed trigger walks what follows it (a segment of
    text per trigger occurrence)."""
    confirmed = sorted({(t, c) for t, _, _, c in fmt.confirms if c})
    unsafe = {t[0] for t in banned} | {t[0] for t, _ in confirmed}
    dispatch, rules = [], []
    for i, (trigger, pattern) in enumerate(confirmed):
        first, r = _confirm_rules(trigger, pattern, f"cf{i}", unsafe, "seg")
        dispatch.append(f"({json.dumps(trigger)}, {first})")
        rules += r
    excludes = ", ".join(json.dumps(t, ensure_ascii=False) for t in banned)
    seg = f"seg ::= TagDispatch({', '.join(dispatch)}, loop_after_dispatch=false, excludes=({excludes}{',' if banned else ''}))"
    return GrammarFormat(grammar="\n".join(["root ::= seg", seg, *rules]) + "\n")


_VOCAB_LOCK = threading.Lock()
_VOCAB_INDEX: dict[int, tuple[Any, dict[str, int]]] = {}


def _vocab_index(info: xgr.TokenizerInfo) -> dict[str, int]:
    with _VOCAB_LOCK:
        hit = _VOCAB_INDEX.get(id(info))
        if hit is not None and hit[0] is info:
            return hit[1]
    index: dict[str, int] = {}
    for i, tok in enumerate(info.decoded_vocab):
        if isinstance(tok, bytes):
            try:
                tok = tok.decode("utf-8")
            except UnicodeDecodeError:
                continue
        index.setdefault(tok, i)
    with _VOCAB_LOCK:
        _VOCAB_INDEX[id(info)] = (info, index)
    return index


def tag_json(tag: StructuralTag | Mapping[str, Any] | str) -> str:
    """The canonical JSON text of a tag (the cache key): pydantic's field order, dict order kept
    (property order matters to the grammar)."""
    if isinstance(tag, StructuralTag):
        return tag.model_dump_json()
    return StructuralTag.from_json(tag if isinstance(tag, (str, dict)) else dict(tag)).model_dump_json()


# --------------------------------------------------------------------------------------------
# Compiled-grammar cache


class GrammarCache:
    """Compiled grammars keyed by (tokenizer, canonical tag JSON), least recently used first out.

    Compiling a structural tag costs about 20-25 ms per tool on a 150k vocabulary; a hit costs a
    dictionary lookup. One ``xgrammar.GrammarCompiler`` is kept per tokenizer (its own cache off).
    Thread-safe; two threads missing on the same key may both compile.
    """

    def __init__(self, maxsize: int = 256, *, max_threads: int = 1):
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.max_threads = max_threads
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[int, str], xgr.CompiledGrammar] = OrderedDict()
        self._compilers: dict[int, tuple[xgr.TokenizerInfo, xgr.GrammarCompiler]] = {}

    def compiler(self, tokenizer_info: xgr.TokenizerInfo) -> xgr.GrammarCompiler:
        with self._lock:
            entry = self._compilers.get(id(tokenizer_info))
            if entry is not None and entry[0] is tokenizer_info:
                return entry[1]
        compiler = xgr.GrammarCompiler(tokenizer_info, max_threads=self.max_threads, cache_enabled=False)
        with self._lock:
            self._compilers[id(tokenizer_info)] = (tokenizer_info, compiler)
        return compiler

    def get(self, tag: StructuralTag | Mapping[str, Any] | str, tokenizer_info: xgr.TokenizerInfo) -> xgr.CompiledGrammar:
        """The compiled grammar for ``tag``, compiling it on a miss."""
        key = (id(tokenizer_info), tag_json(tag))
        compiler = self.compiler(tokenizer_info)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit
            self.misses += 1
        try:
            compiled = compiler.compile_structural_tag(key[1])
        except Exception as e:
            raise ToolwireError(f"xgrammar could not compile the tag: {_first_line(e)}") from None
        with self._lock:
            self._entries[key] = compiled
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0


default_cache = GrammarCache()


def compile(
    tag: StructuralTag | Mapping[str, Any] | str,
    tokenizer_info: xgr.TokenizerInfo,
    *,
    cache: GrammarCache | None = None,
) -> xgr.CompiledGrammar:
    """Compile ``tag`` for ``tokenizer_info`` through ``cache`` (default: :data:`default_cache`)."""
    return (cache if cache is not None else default_cache).get(tag, tokenizer_info)


# --------------------------------------------------------------------------------------------
# Request plans

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
                "properties": {"name": {"const": t.name}, "parameters": _arguments_schema(t, schema, warnings)},
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


# --------------------------------------------------------------------------------------------
# Per-turn grammars: formats whose every turn is channel messages (Beam)
#
# A Beam turn is messages: the analysis message, then either one message per tool call or the
# final message. Holding the whole turn (not only the calls) keeps the channel order the parser
# reads, lets a ``response_format`` live inside the final channel behind the analysis, and costs
# one compiled grammar per request shape. Everything below reads the markers from the format
# spec (its reasoning block, content block and call template).

#: Reasoning settings that keep the analysis message required (the turn grammar's own shape).
_TURN_ANALYSIS_REQUIRED = (None, True, "think", "paired", "native")


def _turn_channels(fmt: _Format) -> bool:
    """True for a format whose turn opens with its reasoning message and whose calls and content
    are messages of their own (each call begins with the message-start marker): Beam."""
    if fmt.content_block is None or fmt.reasoning_block is None:
        return False
    starts = [t for role, t, _ in fmt.markers if role == "message_start"]
    return any(fmt.begin.startswith(t) for t in starts)


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
    """The analysis message that opens the turn, with non-empty text. ``reasoning``: None / True /
    ``"think"`` / ``"paired"`` / ``"native"``: the whole message; ``"closing_only"`` /
    ``"enabled"``: the prompt opened it, the turn starts inside it; ``"auto"`` / ``"optional"``:
    the message may be left out; False / ``"none"`` / ``"disabled"``: no analysis."""
    assert fmt.reasoning_block is not None
    begin, end = fmt.reasoning_block
    message = TagFormat(begin=begin, content=_non_empty_text(_turn_text(fmt, end)), end=end)
    if reasoning in _TURN_ANALYSIS_REQUIRED:
        return message
    if reasoning in ("closing_only", "enabled"):
        return TagFormat(begin="", content=message.content, end=end)
    if reasoning in ("auto", "optional"):
        return OptionalFormat(content=message)
    if reasoning in (False, "none", "disabled"):
        return None
    raise ToolwireError(f"unknown reasoning {reasoning!r}: None, True, 'think', 'paired', 'closing_only' or 'optional'")


def _turn_final(fmt: _Format, final_schema: Any | None, ban_markers: bool) -> TagFormat:
    """The final message: any text without the format's markers, or JSON held to
    ``final_schema`` (a response_format), whose strings exclude the special markers only with
    ``ban_markers`` (xgrammar's string exclusions cost about a second of compile time)."""
    assert fmt.content_block is not None
    begin, end = fmt.content_block
    if final_schema is None:
        return TagFormat(begin=begin, content=AnyTextFormat(excludes=_turn_text(fmt, end)), end=end)
    excludes = _turn_markers(fmt) if ban_markers else []
    body = JSONSchemaFormat(json_schema=final_schema, style="json", max_whitespace_cnt=MAX_WHITESPACE, excludes=excludes)
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
        tags = [_tool_tag(fmt, t, schema, warnings, ban_markers) for t in allowed]
        calls = _run(fmt, tags, stop_after_first=not parallel)
        body = calls if mode in ("required", "named") else OrFormat(elements=[calls, final])
    analysis = _turn_analysis(fmt, reasoning)
    return StructuralTag(format=body if analysis is None else SequenceFormat(elements=[analysis, body]))


def _serve_strict(fmt: _Format, tools: list[_Tool], warnings: list[str]) -> list[_Tool]:
    """Strict tools whose schema the grammar cannot hold exactly, served as non-strict (with a
    warning) instead of refused: a per-turn format constrains every request, so one such tool
    would otherwise fail them all."""
    out = []
    for t in tools:
        if t.strict:
            try:
                _tool_tag(fmt, t, "auto", None)
            except ToolwireError as e:
                warnings.append(f"tool {t.name!r} is declared strict but {e}; it is served as non-strict on {fmt.name}")
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
    if scope not in ("auto", "always", "never"):
        raise ToolwireError(f"unknown scope {scope!r}")
    if schema not in ("auto", "strict"):
        raise ToolwireError(f"unknown schema mode {schema!r}")
    warnings: list[str] = []
    raw_tools = request.get("tools") or []
    declared = _tools(raw_tools)
    tool_list = _serve_strict(fmt, declared, warnings)
    mode, allowed = _choice(request.get("tool_choice"), tool_list)
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
            tag = _turn_tag(fmt, allowed, "auto", parallel, schema, reasoning, warnings, ban_markers, final_schema)
            return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)
        if other:
            warnings.append(f"tool_choice auto: no tool constraint, the request's {other} is kept")
            return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
        if rf_name:
            warnings.append(bare)
            return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)
        if scope != "never" and (scope == "always" or not parallel or any(t.strict for t in allowed)):
            tag = _turn_tag(fmt, allowed, "auto", parallel, schema, reasoning, warnings, ban_markers)
            return Plan(tools_out, tool_choice_out, "structural_tag", tag, parallel, warnings)
        return Plan(tools_out, tool_choice_out, None, None, parallel, warnings)

    # required / named: the turn holds only calls, whatever else the request asks for.
    if rf_name:
        warnings.append(f"tool_choice {mode}: the request's {rf_name} is ignored; a forced tool choice has no final answer")
    if other:
        warnings.append(f"tool_choice {mode}: the request's {other} is dropped; the tool-call constraint is kept")
    if scope == "never":
        return Plan(tools_out, tool_choice_out, "json_schema", _fallback_schema(allowed, schema, parallel, warnings), parallel, warnings)
    tag = _turn_tag(fmt, allowed, mode, parallel, schema, reasoning, warnings, ban_markers)
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
