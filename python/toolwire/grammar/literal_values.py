"""Argument grammars for the formats whose values are not JSON: Gemma 4's literals and Python
literals (``python_kwargs``), built from a JSON schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from xgrammar.structural_tag import (
    AnyTextFormat,
    ConstStringFormat,
    GrammarFormat,
    JSONSchemaFormat,
    OptionalFormat,
    OrFormat,
    RegexFormat,
    RepeatFormat,
    SequenceFormat,
)

from toolwire import ToolwireError

from .format_view import _Format
from .subset import ANNOTATIONS


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
        self.Q = fmt.string_delimiter or '<|"|>'
        self.string_excludes = tuple(t for t in fmt.value_excludes if t != self.Q)

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
    #: made every mask inside a string cost ~50 ms. ``{forbid}``: characters a string may not
    #: hold raw (inside an XML value, the first characters of the format's markers).
    RULES = r"""g_string ::= "\"" g_dchars | "'" g_schars
g_dchars ::= ("\"" | [^"\\\0-\x1f\x7f{forbid}] g_dchars | "\\" ["'\\bfnrt] g_dchars | "\\u" g_uesc g_dchars) (= [ ,)\]}}:])
g_schars ::= ("'" | [^'\\\0-\x1f\x7f{forbid}] g_schars | "\\" ["'\\bfnrt] g_schars | "\\u" g_uesc g_schars) (= [ ,)\]}}:])
g_uesc ::= [0-9a-cA-Ce-fE-F] g_hex g_hex g_hex | [dD] [0-7] g_hex g_hex | [dD] [89abAB] g_hex g_hex "\\u" [dD] [c-fC-F] g_hex g_hex
g_hex ::= [0-9a-fA-F]
"""

    def __init__(self, forbid: str = ""):
        self.STRING_RULES = self.RULES.format(forbid="".join("\\" + c if c in "]\\^-" else c for c in forbid))

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
            if isinstance(self.s, _Python) and open_ == "":
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
        members = [(k, SequenceFormat(elements=[self.key_format(k, key, kv_sep), self.value(v, f"{path}.{k}")])) for k, v in props.items()]
        return SequenceFormat(elements=[ConstStringFormat(value=open_), self.members(members, required), ConstStringFormat(value=close)])

    def key_format(self, k: str, key, kv_sep: str) -> Any:
        """A member's key and separator; a Python dict key in either quote style."""
        if key == self.s.key and isinstance(self.s, _Python):
            return SequenceFormat(elements=[_or(self.spellings(k, k)), ConstStringFormat(value=kv_sep)])
        return ConstStringFormat(value=key(k) + kv_sep)

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
        if isinstance(v, str) and isinstance(self.s, _Python):
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
