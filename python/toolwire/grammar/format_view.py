"""The format as :func:`toolwire.format_info` describes it, read once per name, and what the
builders derive from it alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import toolwire
from toolwire import ToolwireError

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


@dataclass(frozen=True)
class _ParamTags:
    """How an XML-parameter format writes one parameter: ``format_info(name)["arguments"]`` of
    kind ``xml_params`` (the Rust spec's ``ParamTags``, which the parser and renderer read too).
    ``open`` holds ``{key}`` (the name), may hold ``{string}`` (``true`` for a raw-text value,
    ``false`` for JSON: DSML), ``{type}`` (``string`` for a raw-text value, a JSON type's name
    for JSON: Kimi K3) and ``{ws}`` (optional whitespace); ``close`` may hold ``{key}``
    (MiniMax M3 names the closing tag). ``pad``: the parser drops one newline on each side of a
    value (qwen3_coder, beam). ``between``: whitespace is allowed around parameters. ``nested``:
    objects and arrays are written as nested tags (``item`` for array elements) instead of JSON."""

    open: str
    close: str
    pad: bool
    between: bool
    nested: bool

    @property
    def declares_type(self) -> bool:
        """Whether each value says it is raw text or JSON (``{string}`` or ``{type}``)."""
        return "{string}" in self.open or "{type}" in self.open


@dataclass(frozen=True)
class _Format:
    name: str
    begin: str
    #: How arguments are written: ``json``, ``xml_params``, ``gemma`` or ``python_kwargs``
    arguments: str
    #: The parameter tags, for ``xml_params``
    params: _ParamTags | None
    #: The string delimiter, for ``gemma``
    string_delimiter: str | None
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
    #: The texts a raw argument value cannot hold (``format_info``'s ``value_excludes``: the core
    #: decides them from the format's markers and triggers)
    value_excludes: tuple[str, ...]
    #: XML parameter values other than strings are Python literals (``True``, ``None``,
    #: ``{'a': 1}``), not JSON: seed_oss, whose chat template writes them with ``| string``.
    python_values: bool = False

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
def _renders_python_literals(name: str) -> bool:
    """Whether the format's renderer writes a boolean XML value as Python's ``True``. The grammar
    reads the spelling from the renderer (the format's one description, in Rust) so that the two
    cannot disagree."""
    try:
        text = toolwire.render(name, [{"name": "f", "arguments": {"b": True}}])
    except ToolwireError:
        return False
    return "True" in text and "true" not in text


@lru_cache(maxsize=None)
def _format(name: str) -> _Format:
    info = toolwire.format_info(name)
    t = info.get("template")
    if t is None:
        raise ToolwireError(f"format {info['name']!r} has no call template: no structural tag")
    args = info["arguments"]
    return _Format(
        name=info["name"],
        begin=t["begin"],
        arguments=args["kind"],
        params=_ParamTags(args["open"], args["close"], args["pad"], args["between"], args["nested"])
        if args["kind"] == "xml_params"
        else None,
        string_delimiter=args.get("string_delimiter"),
        end=t["end"],
        separator=t["separator"],
        section=_pair(info.get("section")),
        content_block=_pair(info.get("content_block")),
        reasoning_block=_pair(info.get("reasoning_block")),
        content_after_calls=bool(info.get("content_after_calls")),
        reasoning=(info["reasoning"]["start"], info["reasoning"]["end"]) if info.get("reasoning") else None,
        markers=tuple((m["role"], m["text"], bool(m["special_token"])) for m in info["markers"]),
        triggers=tuple((t["text"], bool(t["at_output_start"]), bool(t["soft"])) for t in info["triggers"]),
        python_values=args["kind"] == "xml_params" and _renders_python_literals(info["name"]),
        confirms=tuple(
            (t["text"], bool(t["at_output_start"]), bool(t["soft"]), t.get("confirm")) for t in info["triggers"]
        ),
        value_excludes=tuple(info["value_excludes"]),
    )


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


def _turn_channels(fmt: _Format) -> bool:
    """True for a format whose turn opens with its reasoning message and whose calls and content
    are messages of their own (each call begins with the message-start marker): Beam."""
    if fmt.content_block is None or fmt.reasoning_block is None:
        return False
    starts = [t for role, t, _ in fmt.markers if role == "message_start"]
    return any(fmt.begin.startswith(t) for t in starts)
