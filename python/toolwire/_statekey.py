"""Grammar state keys for the mask cache, derived from what toolwire knows about the output.

xgrammar exposes no state id, so a cache of masks needs a key that is equal only when the masks
must be equal. A mask is a function of the *residual language*: the set of continuations the
grammar still accepts. For a grammar whose elements all work on text (no token-level elements,
no token budgets), the residual is a function of the accepted text, so

    key = (grammar, hash of the whole output so far)

is always sound, and for token-level grammars the same holds with the token ids. Such keys hit
only when two requests share a prefix, so the keyer also finds *anchors*: points where the
grammar's state is canonical, whatever came before. The key is then (grammar, anchor kind,
calls so far capped at 1, hash of the text since the anchor). Anchors this module can defend:

* the start of the output;
* in the free text of a ``triggered_tags`` format: every point where no suffix of the text is a
  proper prefix of a trigger or an excluded string and no UTF-8 character is half written (the
  free-text state is the Aho-Corasick state over those strings, and that state is the root);
* right after the end string of a call, in ``triggered_tags`` and ``tags_with_separator``
  formats (also as the last element of a ``sequence`` whose earlier elements are constant
  strings, ``any_text`` tags with a string end such as a reasoning block, or a whitespace regex);
* inside a JSON string value whose schema is an unconstrained string (or any JSON): the
  residual does not depend on the characters already written, unless an escape or a UTF-8
  character is half written, so every such step shares the key of the opening quote; after the
  closing quote the text of the string is forgotten.

Tag ends are found by scanning the call's content: JSON (``json_schema`` with the ``json`` style,
an object or array), ``any_text`` (its end string is excluded from it) or a constant string.
Anywhere the keyer cannot follow the structure (other content styles such as XML parameters, a
begin that is a prefix of another, whitespace before an end string, ...) it stops looking for
anchors and keys by the text since the last one, which stays sound and only hits less.

The argument for each anchor is about the grammar's language, not xgrammar's internals; the
masker's verify mode checks every cache hit against a freshly computed mask.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

TOKEN_LEVEL = {"token", "exclude_token", "any_tokens", "token_triggered_tags", "token_dispatch"}
ANNOTATIONS = {"description", "title", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly"}
WS = b" \t\n\r"
_WS_REGEX = re.compile(r"^\[(?:[ \t\n\r]|\\[tnr ]|\\s)+\](?:\*|\+|\?|\{\d*(?:,\d*)?\})$|^\\s(?:\*|\+|\?|\{\d*(?:,\d*)?\})$")


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def tag_dict(tag: Any) -> dict[str, Any]:
    """A structural tag as a plain dict (from a dict, JSON text or an xgrammar StructuralTag)."""
    if isinstance(tag, dict):
        return json.loads(json.dumps(tag))
    if isinstance(tag, (str, bytes)):
        return json.loads(tag)
    dump = getattr(tag, "model_dump_json", None)
    if dump is None:
        raise TypeError(f"cannot read a structural tag from {type(tag).__name__}")
    return json.loads(dump())


def grammar_id(tag: dict[str, Any]) -> bytes:
    return _digest(b"tag:" + json.dumps(tag, sort_keys=True, separators=(",", ":")).encode())


def _token_level(node: Any) -> bool:
    if isinstance(node, dict):
        if node.get("type") in TOKEN_LEVEL or node.get("max_tokens") is not None:
            return True
        if node.get("type") == "tag" and (isinstance(node.get("begin"), dict) or isinstance(node.get("end"), dict)):
            return True
        return any(_token_level(v) for v in node.values())
    if isinstance(node, list):
        return any(_token_level(v) for v in node)
    return False


# ---------------------------------------------------------------------------------------------
# The plan: what the keyer knows about a structural tag.


@dataclass
class Content:
    kind: str  # "json", "any_text", "const"
    schema: Any = None  # json: the schema; collapse strings only when `collapse`
    collapse: bool = False
    const: bytes = b""


@dataclass
class Tag:
    begin: bytes
    ends: list[bytes]
    content: Content | None  # None: the keyer cannot find the end of this tag


@dataclass
class Prefix:
    kind: str  # "const", "text_tag", "ws"
    begin: bytes = b""
    end: bytes = b""


@dataclass
class Plan:
    kind: str  # "triggered" or "separator"
    prefix: list[Prefix]
    tags: list[Tag]
    triggers: list[bytes] = field(default_factory=list)
    excludes: list[bytes] = field(default_factory=list)
    separator: bytes = b""


def _content(node: Any) -> Content | None:
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if kind == "json_schema":
        if node.get("style", "json") != "json":
            return None
        schema = node.get("json_schema", True)
        collapse = not node.get("excludes")
        return Content("json", schema=schema, collapse=collapse)
    if kind == "any_text":
        return Content("any_text")
    if kind == "const_string":
        return Content("const", const=node.get("value", "").encode())
    return None


def _tag(node: Any) -> Tag | None:
    if not isinstance(node, dict) or node.get("type") != "tag" or not isinstance(node.get("begin"), str):
        return None
    end = node.get("end")
    ends = [end] if isinstance(end, str) else end
    if not isinstance(ends, list) or not ends or not all(isinstance(e, str) for e in ends):
        return None
    content = _content(node.get("content"))
    if content is not None and content.kind == "any_text" and (len(ends) != 1 or not ends[0]):
        content = None  # the content's extent is only known when one non-empty end is excluded from it
    return Tag(node["begin"].encode(), [e.encode() for e in ends], content)


def _prefix(node: Any) -> Prefix | None:
    if not isinstance(node, dict):
        return None
    kind = node.get("type")
    if kind == "const_string":
        return Prefix("const", begin=node.get("value", "").encode())
    if kind == "regex" and _WS_REGEX.match(node.get("pattern", "")):
        return Prefix("ws")
    if kind == "tag":
        tag = _tag(node)
        if tag and tag.content and tag.content.kind == "any_text":
            return Prefix("text_tag", begin=tag.begin, end=tag.ends[0])
    return None


def _dispatch(node: dict[str, Any], prefix: list[Prefix]) -> Plan | None:
    kind = node.get("type")
    tags = [_tag(t) for t in node.get("tags", [])]
    if not tags or any(t is None for t in tags):
        return None
    if kind == "triggered_tags":
        triggers = [t.encode() for t in node.get("triggers", [])]
        if not triggers or not all(triggers):
            return None
        excludes = [e.encode() for e in node.get("excludes", []) if e]
        return Plan("triggered", prefix, tags, triggers=triggers, excludes=excludes)  # type: ignore[arg-type]
    if kind == "tags_with_separator":
        sep = node.get("separator", "")
        if not isinstance(sep, str):
            return None
        return Plan("separator", prefix, tags, separator=sep.encode())  # type: ignore[arg-type]
    return None


def make_plan(tag: dict[str, Any]) -> Plan | None:
    """The plan for a string-level structural tag, or None when only whole-output keys are sound."""
    fmt = tag.get("format") if tag.get("type") == "structural_tag" else tag
    if not isinstance(fmt, dict) or _token_level(fmt):
        return None
    if fmt.get("type") in ("triggered_tags", "tags_with_separator"):
        return _dispatch(fmt, [])
    if fmt.get("type") == "sequence":
        elements = fmt.get("elements", [])
        if not elements:
            return None
        prefix = [_prefix(e) for e in elements[:-1]]
        if any(p is None for p in prefix):
            return None
        last = elements[-1]
        if not isinstance(last, dict) or last.get("type") not in ("triggered_tags", "tags_with_separator"):
            return None
        plan = _dispatch(last, prefix)  # type: ignore[arg-type]
        if plan is None:
            return None
        # a whitespace prefix ends at the first other byte: the dispatch must not start with whitespace
        if any(p.kind == "ws" for p in plan.prefix):
            starts = plan.triggers if plan.kind == "triggered" else [t.begin for t in plan.tags]
            if any(not s or s[0] in WS for s in starts):
                return None
            if plan.kind == "triggered":
                return None  # free text may start with whitespace too
        return plan
    return None


# ---------------------------------------------------------------------------------------------
# JSON content scanner.


def _collapsible(schema: Any) -> bool:
    """A string value under this schema has a residual independent of its characters."""
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict) or set(schema) - ANNOTATIONS - {"type"}:
        return False
    t = schema.get("type")
    return t == "string" or (isinstance(t, list) and "string" in t)


_ANY = object()  # the schema of a value under an any-JSON schema


def _child(schema: Any, key: str | None) -> Any:
    """The schema of a member (``key``) or of an array item (``key is None``), or None if unknown."""
    if schema is _ANY or schema is True or schema == {}:
        return _ANY
    if not isinstance(schema, dict):
        return None
    if key is None:
        items = schema.get("items")
        return items if isinstance(items, (dict, bool)) and "prefixItems" not in schema else None
    props = schema.get("properties")
    if isinstance(props, dict) and key in props:
        return props[key]
    extra = schema.get("additionalProperties", True if props is None else None)
    if extra is True and props is None and set(schema) - ANNOTATIONS <= {"type", "additionalProperties"}:
        return _ANY
    return extra if isinstance(extra, dict) else None


class JsonScan:
    """Follows one JSON object or array byte by byte; knows when it ends and what a string is."""

    def __init__(self, schema: Any, collapse: bool) -> None:
        self.schema = schema
        self.collapse = collapse
        self.stack: list[list[Any]] = []  # [kind "o"/"a", state, schema, key bytes]
        self.started = False
        self.done = False
        self.failed = False
        self.string: str | None = None  # "key" or "value" while inside a string
        self.string_collapsible = False
        self.escape = 0  # 0 none, 1 after a backslash, 2..5 hex digits of \\u still to come
        self.utf8_need = 0
        self.key = bytearray()
        self.scalar = False  # inside a number or a literal

    def clean_in_collapsible_string(self) -> bool:
        return self.string == "value" and self.string_collapsible and self.escape == 0 and self.utf8_need == 0

    def _value_schema(self) -> Any:
        if not self.stack:
            return self.schema
        top = self.stack[-1]
        parent = top[2]
        if parent is None:
            return None
        return _child(parent, top[3].decode("utf-8", "replace") if top[0] == "o" else None)

    def _after_value(self) -> None:
        if not self.stack:
            self.done = True
            return
        self.stack[-1][1] = "comma_or_end"

    def _end_scalar(self) -> None:
        self.scalar = False
        self._after_value()

    def feed(self, b: int) -> str | None:
        """One byte; returns "open" after the opening quote of a collapsible string, "close"
        after its closing quote, None otherwise. Sets ``done`` after the last byte of the value
        and ``failed`` on a byte it cannot place (it then stops)."""
        if self.string is not None:
            return self._string_byte(b)
        if self.scalar:
            if b in WS or b in b",]}":
                self._end_scalar()
                if self.done:  # a top-level scalar ended: not an object/array content
                    self.failed = True
                    return None
            else:
                return None
        if b in WS:
            return None
        if not self.started:
            self.started = True
            if b not in b"{[":
                self.failed = True
                return None
            self.stack.append(["o" if b == 0x7B else "a", "first", self.schema, bytearray()])
            return None
        if not self.stack:
            self.failed = True
            return None
        top = self.stack[-1]
        kind, state = top[0], top[1]
        if kind == "o":
            if state in ("first", "key") and b == 0x22:
                self.string, self.key = "key", bytearray()
                return None
            if state in ("first", "comma_or_end") and b == 0x7D:
                self.stack.pop()
                self._after_value()
                return None
            if state == "colon" and b == 0x3A:
                top[1] = "value"
                return None
            if state == "comma_or_end" and b == 0x2C:
                top[1] = "key"
                return None
            if state == "value":
                return self._value_start(b)
        else:
            if state == "first" and b == 0x5D:
                self.stack.pop()
                self._after_value()
                return None
            if state in ("first", "value"):
                return self._value_start(b)
            if state == "comma_or_end":
                if b == 0x2C:
                    top[1] = "value"
                    return None
                if b == 0x5D:
                    self.stack.pop()
                    self._after_value()
                    return None
        self.failed = True
        return None

    def _value_start(self, b: int) -> str | None:
        schema = self._value_schema()
        self.stack[-1][1] = "in_value"
        if b == 0x22:
            self.string = "value"
            self.string_collapsible = self.collapse and schema is not None and (schema is _ANY or _collapsible(schema))
            return "open" if self.string_collapsible else None
        if b in b"{[":
            self.stack.append(["o" if b == 0x7B else "a", "first", schema, bytearray()])
            return None
        if b in b"-0123456789tfn":
            self.scalar = True
            return None
        self.failed = True
        return None

    def _string_byte(self, b: int) -> str | None:
        if self.string == "key":
            self.key.append(b)
        if self.utf8_need:
            self.utf8_need -= 1
            return None
        if self.escape == 1:
            self.escape = 2 if b == 0x75 else 0
            return None
        if self.escape >= 2:
            self.escape = self.escape + 1 if self.escape < 5 else 0
            return None
        if b == 0x5C:
            self.escape = 1
            return None
        if b == 0x22:
            was, collapsible = self.string, self.string_collapsible
            self.string, self.string_collapsible = None, False
            if was == "key":
                del self.key[-1]
                self.stack[-1][3] = self.key
                self.stack[-1][1] = "colon"
                return None
            self._after_value()
            return "close" if collapsible else None
        if b >= 0xC0:
            self.utf8_need = 1 if b < 0xE0 else 2 if b < 0xF0 else 3
        return None


# ---------------------------------------------------------------------------------------------
# The keyer.


def _utf8_need(b: int, need: int) -> int:
    if need:
        return need - 1
    if b >= 0xC0:
        return 1 if b < 0xE0 else 2 if b < 0xF0 else 3
    return 0


class StateKeyer:
    """Follows one request's output and names its grammar state (see the module docs)."""

    def __init__(self, gid: bytes, plan: Plan | None, text_level: bool) -> None:
        self.gid = gid
        self.plan = plan
        self.text_level = text_level
        self.family = b"S" if text_level else b"I"  # start of output, by text or by token ids
        self.count = 0
        self.hasher = hashlib.blake2b(digest_size=16)
        self.quote_digest: bytes | None = None
        self.lost = plan is None
        # prefix phase
        self.prefix_i = 0
        self.prefix_buf = bytearray()
        self.prefix_in_body = False
        # dispatch phase
        self.mode = "prefix" if plan and plan.prefix else "start"
        self.pending = b""
        self.utf8 = 0
        self.buf = bytearray()  # begin / separator / end text being matched
        self.tag: Tag | None = None
        self.scan: JsonScan | None = None
        self.const_left = b""
        self._data, self._i, self._seg = b"", -1, 0
        if plan is not None:
            self._settle_prefix()

    # -- keys --------------------------------------------------------------------------------

    def key(self) -> bytes:
        if self.scan is not None and self.quote_digest is not None and self.scan.clean_in_collapsible_string():
            digest = self.quote_digest
        else:
            digest = self.hasher.digest()
        return self.gid + self.family + bytes([min(self.count, 1)]) + digest

    def _anchor(self, family: bytes, before: bool = False) -> None:
        """The state after the current byte (or before it) is canonical for ``family``."""
        self.family = family
        self.hasher = hashlib.blake2b(digest_size=16)
        self.quote_digest = None
        self._seg = self._i if before else self._i + 1

    def _flush(self, end: int) -> None:
        """Hash the current token's bytes from the last flush or anchor up to ``end``."""
        if end > self._seg:
            self.hasher.update(self._data[self._seg : end])
        self._seg = max(self._seg, end)

    # -- input -------------------------------------------------------------------------------

    def accept(self, token: int, data: bytes) -> None:
        if not self.text_level:
            self.hasher.update(token.to_bytes(4, "little"))
            return
        if self.lost:
            self.hasher.update(data)
            return
        if self.mode == "free" and not self.pending and not self.utf8 and self._free_fast(data):
            return
        self._data, self._seg = data, 0
        for i, b in enumerate(data):
            if self.lost:
                break
            self._i = i
            self._byte(b)
        self._flush(len(data))

    def _free_fast(self, data: bytes) -> bool:
        """A token of plain free text that touches no trigger or excluded string and ends on a
        character boundary leaves the free-text state canonical."""
        return not any(c in data for c in self._firsts) and not self._tail_need(data)

    @staticmethod
    def _tail_need(data: bytes) -> int:
        i = len(data) - 1
        while i >= 0 and 0x80 <= data[i] < 0xC0 and len(data) - i < 4:
            i -= 1
        if i < 0:
            return 0
        lead = data[i]
        want = 1 if 0xC0 <= lead < 0xE0 else 2 if 0xE0 <= lead < 0xF0 else 3 if lead >= 0xF0 else 0
        return max(0, want - (len(data) - 1 - i))

    def _byte(self, b: int) -> None:
        mode = self.mode
        if mode == "prefix":
            self._prefix_byte(b)
        elif mode == "free":
            self._free_byte(b)
        elif mode in ("begin", "between"):
            self._begin_byte(b)
        elif mode == "content":
            self._content_byte(b)
        elif mode == "end":
            self._end_byte(b)

    def _lose(self) -> None:
        self.lost = True
        self.scan = None

    # -- prefix ------------------------------------------------------------------------------

    def _prefix_byte(self, b: int) -> None:
        plan = self.plan
        assert plan is not None
        p = plan.prefix[self.prefix_i]
        if p.kind == "ws":
            if b in WS:
                return
            self._next_prefix()
            if self.mode == "prefix":
                self._lose()  # whitespace is followed by another prefix element: not supported
                return
            # the dispatch started at this byte: re-anchor before it
            self._anchor(self.family, before=True)
            self._begin_byte(b)
            return
        self.prefix_buf.append(b)
        if p.kind == "const":
            if not p.begin.startswith(self.prefix_buf):
                self._lose()
            elif len(self.prefix_buf) == len(p.begin):
                self._next_prefix()
            return
        # text_tag: begin, then any text up to the first occurrence of end
        if not self.prefix_in_body:
            if not p.begin.startswith(self.prefix_buf):
                self._lose()
            elif len(self.prefix_buf) == len(p.begin):
                self.prefix_in_body, self.prefix_buf = True, bytearray()
            return
        if self.prefix_buf.endswith(p.end):
            self._next_prefix()

    def _next_prefix(self) -> None:
        self.prefix_i += 1
        self._settle_prefix()

    def _settle_prefix(self) -> None:
        plan = self.plan
        assert plan is not None
        self.prefix_buf = bytearray()
        self.prefix_in_body = False
        while self.prefix_i < len(plan.prefix):
            p = plan.prefix[self.prefix_i]
            if p.kind == "text_tag" and not p.begin:
                self.prefix_in_body = True
            if p.kind == "const" and not p.begin:
                self.prefix_i += 1
                continue
            return
        self._enter_dispatch()

    # -- dispatch ----------------------------------------------------------------------------

    def _enter_dispatch(self) -> None:
        plan = self.plan
        assert plan is not None
        if plan.kind == "triggered":
            self.mode = "free"
            self._patterns = plan.triggers + plan.excludes
            self._firsts = sorted({p[0] for p in self._patterns})
            self._anchor(b"F")
        else:
            self.mode = "between"
            self._anchor(b"A")
        self.buf = bytearray()

    def _free_byte(self, b: int) -> None:
        plan = self.plan
        assert plan is not None
        self.utf8 = _utf8_need(b, self.utf8)
        s = self.pending + bytes([b])
        while s and not any(p.startswith(s) for p in self._patterns):
            s = s[1:]
        self.pending = s
        if s in plan.triggers:
            self.mode, self.buf, self.pending = "begin", bytearray(s), b""
            self._match_begin()
            return
        if s in plan.excludes:
            self._lose()
            return
        if not s and not self.utf8:
            self._anchor(b"F")

    def _begin_byte(self, b: int) -> None:
        self.buf.append(b)
        self._match_begin()

    def _match_begin(self) -> None:
        plan = self.plan
        assert plan is not None
        lead = plan.separator if self.mode == "between" and self.count else b""
        buf = bytes(self.buf)
        candidates = [t for t in plan.tags if (lead + t.begin).startswith(buf)]
        if not candidates:
            self._lose()
            return
        complete = [t for t in candidates if len(lead + t.begin) == len(buf)]
        if not complete:
            return
        if len(candidates) > 1:
            self._lose()  # one begin is a prefix of another (or two tags share a begin)
            return
        self._enter_content(complete[0])

    def _enter_content(self, tag: Tag) -> None:
        self.tag, self.buf = tag, bytearray()
        content = tag.content
        if content is None:
            self._lose()
            return
        self.mode = "content"
        if content.kind == "json":
            self.scan = JsonScan(content.schema, content.collapse)
        elif content.kind == "const":
            self.const_left = content.const
            if not self.const_left:
                self._enter_end()
        # any_text: ends at the first occurrence of the end string, handled in _content_byte

    def _content_byte(self, b: int) -> None:
        tag, content = self.tag, self.tag.content if self.tag else None
        assert tag is not None and content is not None
        if content.kind == "json":
            scan = self.scan
            assert scan is not None
            event = scan.feed(b)
            if scan.failed:
                self._lose()
                return
            if event == "open":
                self._flush(self._i + 1)
                self.quote_digest = self.hasher.digest()
            elif event == "close":
                seed = self.quote_digest
                assert seed is not None
                self.hasher = hashlib.blake2b(b"\x00closed string\x00" + seed, digest_size=16)
                self.quote_digest = None
                self._seg = self._i + 1
            if scan.done:
                self.scan = None
                self._enter_end()
            return
        if content.kind == "const":
            if not self.const_left or self.const_left[0] != b:
                self._lose()
                return
            self.const_left = self.const_left[1:]
            if not self.const_left:
                self._enter_end()
            return
        # any_text with its end excluded: the first occurrence of the end closes the tag
        self.buf.append(b)
        if self.buf.endswith(tag.ends[0]):
            self._tag_done()

    def _enter_end(self) -> None:
        tag = self.tag
        assert tag is not None
        self.mode, self.buf = "end", bytearray()
        if b"" in tag.ends:
            if len(tag.ends) == 1:
                self._tag_done()
            else:
                self._lose()  # the tag may end here or go on with another end string

    def _end_byte(self, b: int) -> None:
        tag = self.tag
        assert tag is not None
        self.buf.append(b)
        buf = bytes(self.buf)
        candidates = [e for e in tag.ends if e.startswith(buf)]
        if not candidates:
            self._lose()
            return
        if buf in candidates:
            if len(candidates) > 1:
                self._lose()
                return
            self._tag_done()

    def _tag_done(self) -> None:
        plan = self.plan
        assert plan is not None
        self.count += 1
        self.tag, self.buf, self.scan = None, bytearray(), None
        if plan.kind == "triggered":
            self.mode, self.pending, self.utf8 = "free", b"", 0
            self._anchor(b"F")
        else:
            self.mode = "between"
            self._anchor(b"A")
