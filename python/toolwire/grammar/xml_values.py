"""XML parameters (qwen3_coder, GLM, MiniMax, DSML, Beam, ...): the builder that writes each
parameter as the format's parser reads it, from the tags the format's spec gives
(``format_info(name)["arguments"]``, read into ``_Format.params``): no table of styles here, so a
new XML-parameter format needs nothing in this package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from xgrammar.structural_tag import (
    AnyTextFormat,
    ConstStringFormat,
    JSONSchemaFormat,
    OptionalFormat,
    RegexFormat,
    RepeatFormat,
    SequenceFormat,
    StarFormat,
)

from toolwire import ToolwireError

from . import format_view
from .format_view import _Format
from .literal_values import _PYTHON, _or, _Python, _unanchor, _ValueBuilder
from .subset import ANNOTATIONS, ANY_OBJECT, _json_strings, _types


def _xml_excludes(fmt: _Format) -> list[str]:
    """Text an XML parameter value must not contain: what a raw value cannot hold (the format's
    ``value_excludes``: its tags and message markers, and what the parser acts on in content).
    xgrammar refuses exclusions with outer whitespace."""
    return sorted({t for t in fmt.value_excludes if t == t.strip()})


_WS = r"[ \t\r\n]*"


#: Kimi K3's ``type`` attribute values (``{type}`` in the opening tag), the raw-text one first:
#: the parser reads the value as JSON for any other.
_TYPE_NAMES = ("string", "number", "boolean", "array", "object", "null")


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
        if fmt.params is None:
            raise ToolwireError(f"format {fmt.name!r} does not write XML parameters")
        self.style = fmt.params
        self.ex = _xml_excludes(fmt)
        self.root = root
        self.depth = 0
        #: Python literal values (``fmt.python_values``), whose strings may not hold the markers'
        #: first characters raw, as JSON strings may not (see :meth:`json`).
        self.literals = _Python(forbid="".join(sorted({t[0] for t in self.ex}))) if fmt.python_values else None

    def ws(self) -> list[Any]:
        return [RegexFormat(pattern=_WS)] if self.style.between else []

    def param(self, key: Any, value: Any, *, raw: bool | None, json_type: str | None = None) -> Any:
        """One parameter: ``key`` a name (str) or a format for any name; ``raw`` None lets the
        value be declared either way (DSML's ``string`` attribute); ``json_type`` the type name a
        typed value declares (Kimi K3's ``type``), when it has one."""
        parts: list[Any] = self.ws()
        open_ = self.style.open
        if raw is not None:
            open_ = open_.replace("{string}", "true" if raw else "false")
        if raw or json_type:
            open_ = open_.replace("{type}", "string" if raw else str(json_type))
        if isinstance(key, str):
            open_ = open_.replace("{key}", key)
        typed = "|".join(_TYPE_NAMES[1:] if raw is False else _TYPE_NAMES)
        holes = {"{key}": key, "{string}": RegexFormat(pattern="true|false"), "{type}": RegexFormat(pattern=typed)}
        for i, piece in enumerate(open_.split("{ws}")):
            if i:
                parts.append(RegexFormat(pattern=_WS))
            for chunk in re.split(r"(\{key\}|\{string\}|\{type\})", piece):
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
            p = self.param(key, value, raw=raw, json_type=None if raw else self.type_name(sub, f"{path}.{key}"))
            typed = self.typed_side(sub, f"{path}.{key}") if raw and self.style.declares_type else None
            if typed is not None:
                p = _or([p, self.param(key, typed, raw=False)])
            elements.append(p if key in required else OptionalFormat(content=p))
        if not elements:
            return ConstStringFormat(value="")
        return elements[0] if len(elements) == 1 else SequenceFormat(elements=elements)

    def type_name(self, sub: Any, path: str) -> str | None:
        """The one ``{type}`` name of a typed value's schema (integers are ``number``), or None."""
        sub = self.resolve(sub, path)
        if not isinstance(sub, Mapping) or "{type}" not in self.style.open:
            return None
        names = {"number" if t == "integer" else t for t in _types(sub)}
        return names.pop() if len(names) == 1 and names <= set(_TYPE_NAMES[1:]) else None

    def typed_side(self, sub: Any, path: str) -> Any | None:
        """The non-string branches of a union with strings, for a style that declares each value
        raw or typed (DSML's ``string="true|false"``): the renderer writes ``None`` of a
        ``["string", "null"]`` value as ``string="false">null``. None without such branches."""
        sub = self.resolve(sub, path)
        if not isinstance(sub, Mapping):
            return None
        branches = sub.get("anyOf") or sub.get("oneOf")
        if branches:
            rest = [b for b in branches if not (isinstance(b, Mapping) and "string" in _types(self.resolve(b, path)))]
            return self.padded(self.structured({"anyOf": rest}, path)) if rest and len(rest) < len(branches) else None
        types = _types(sub)
        if "string" not in types or len(types) < 2:
            return None
        numeric = {k: v for k, v in sub.items() if k not in ("type", "pattern", "minLength", "maxLength", "format", "enum", "const")}
        return self._value({**numeric, "type": sorted(types - {"string"})}, path)[0]

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
            return self.padded(_or([ConstStringFormat(value=v if isinstance(v, str) else self.literal(v, path)) for v in values])), raw
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
            return self.padded(self.structured(sub, path)), False
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
                pieces += [ConstStringFormat(value=self.literal(True, path)), ConstStringFormat(value=self.literal(False, path))]
            elif t == "null":
                pieces.append(ConstStringFormat(value=self.literal(None, path)))
            elif t in ("object", "array"):
                pieces.append(self.structured({**sub, "type": t}, path))
        if sub.get("nullable") is True and "null" not in types:
            pieces.append(ConstStringFormat(value=self.literal(None, path)))
        return self.padded(_or(pieces)), False

    def literal(self, v: Any, path: str) -> str:
        """A non-string constant as the format writes it: JSON, or a Python literal."""
        if self.literals is None:
            return json.dumps(v)
        return _ValueBuilder(self.literals, self.root).literal(v, path)

    def structured(self, sub: Mapping[str, Any], path: str) -> Any:
        """An object, array or union value: JSON, or a Python literal."""
        if self.literals is None:
            return self.json(sub)
        return _ValueBuilder(self.literals, self.root).value(sub, path)

    def json(self, sub: Mapping[str, Any]) -> Any:
        """A JSON value. The parser ends the value at the format's next marker even inside a JSON
        string, so the strings may not hold the markers' first characters (``<``; JSON spells it
        ``\\u003c``): a one-character exclusion is free, each whole-marker exclusion costs about
        0.3 s of compile time per value."""
        defs = {k: self.root[k] for k in ("$defs", "definitions") if isinstance(self.root, Mapping) and k in self.root}
        firsts = sorted({t[0] for t in self.ex})
        return JSONSchemaFormat(json_schema=_json_strings({**defs, **sub}), max_whitespace_cnt=format_view.MAX_WHITESPACE, excludes=firsts)
