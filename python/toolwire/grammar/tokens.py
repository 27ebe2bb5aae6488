"""Token-level markers: the tag's special-token call markers written as token ids.

A parser fed token ids (``ToolStream.feed_tokens``) reads a special marker only as its id; the
same characters spelled in ordinary tokens are text to it. A text-level tag accepts both
spellings, so a sampler held to it may open a call with ``<``, ``tool``, ``_call``, ``>``: the
grammar then holds a call the parser keeps as content. Given the vocabulary (``vocab=`` on
:func:`~toolwire.grammar.structural_tag` and :func:`~toolwire.grammar.plan`), every marker of the
format that the vocabulary has as one special token is written as that token (xgrammar's
``token``; a trigger becomes ``token_triggered_tags``): calls open and close on the ids only, and
text that spells a marker is text to the grammar and the parser alike.

A call whose arguments are any text (``constrained_tools``) cannot hold a special token: xgrammar's
``any_text`` never produces one. Where the format's parameter tags hold a special token (DSML's
``｜DSML｜``), such a call's arguments become any parameters in the format's own syntax instead,
so the call stays free of its schema and can still be written as the parser reads it.

What the grammar bans as text stays banned as text (free-text exclusions inside a block, string
exclusions), which bans the token too: narrower than the parser, never wider. Every call is
token-level, a call whose arguments are any text (``constrained_tools``) included: xgrammar 0.2.8
refuses a text-begin tag among token-triggered tags, and among ``tags_with_separator`` it never
allows the token end of the token-level calls (the mask empties); a text call would also open on
the marker spelled in ordinary tokens, which the parser reads as text. Blocks of free text
(reasoning, content) keep text markers. Token-level tags are keyed by token ids in the mask cache
(``toolwire.masks``): sound, with fewer hits than the anchored keys of text tags.
"""

from __future__ import annotations

from typing import Any

from xgrammar.structural_tag import (
    AnyTextFormat,
    ConstStringFormat,
    OptionalFormat,
    OrFormat,
    PlusFormat,
    RepeatFormat,
    SequenceFormat,
    StarFormat,
    StructuralTag,
    TagFormat,
    TagsWithSeparatorFormat,
    TokenFormat,
    TokenTriggeredTagsFormat,
    TriggeredTagsFormat,
)

from toolwire import ToolwireError, Vocab

from .calls import any_arguments
from .format_view import _Format


def token_markers(tag: StructuralTag, fmt: _Format, vocab: Vocab) -> StructuralTag:
    """``tag`` with each of ``fmt``'s markers that ``vocab`` has as a special token written as
    that token (see the module docs).

    Raises:
        ToolwireError: a trigger whose free text must exclude markers that are not special tokens
            of ``vocab`` (a token trigger can only exclude tokens), or ``vocab`` is not a Vocab.
    """
    if not isinstance(vocab, Vocab):
        raise ToolwireError(f"vocab must be a toolwire.Vocab, not {type(vocab).__name__}")
    ids: dict[str, int] = {}
    for _, text, special in fmt.markers:
        token = vocab.special_id(text) if special and text else None
        if token is not None:
            ids[text] = token
    if not ids:
        return tag
    return StructuralTag(format=_Rewriter(fmt, ids).node(tag.format))


class _Rewriter:
    def __init__(self, fmt: _Format, ids: dict[str, int]):
        self.fmt = fmt
        self.ids = ids
        #: longest first, so that a marker inside another is not split out of it
        self.markers = sorted(ids, key=len, reverse=True)

    def pieces(self, text: str) -> list[Any]:
        """``text`` as const strings and tokens, in order."""
        out: list[Any] = []
        rest = text
        while rest:
            found = min(
                ((rest.find(m), -len(m), m) for m in self.markers if m in rest),
                default=None,
            )
            if found is None:
                out.append(ConstStringFormat(value=rest))
                break
            at, _, marker = found
            if at:
                out.append(ConstStringFormat(value=rest[:at]))
            out.append(TokenFormat(token=self.ids[marker]))
            rest = rest[at + len(marker) :]
        return out

    def node(self, n: Any) -> Any:
        if isinstance(n, ConstStringFormat):
            parts = self.pieces(n.value)
            return n if len(parts) == 1 and isinstance(parts[0], ConstStringFormat) else _seq(parts)
        if isinstance(n, TagFormat):
            return self.tag(n)
        if isinstance(n, TriggeredTagsFormat):
            return self.triggered(n)
        if isinstance(n, TagsWithSeparatorFormat):
            if any(m in n.separator for m in self.markers):
                raise ToolwireError(f"format {self.fmt.name!r}: a call separator holding a marker cannot be token-level")
            return n.model_copy(update={"tags": [self.call(t) for t in n.tags]})
        if isinstance(n, (SequenceFormat, OrFormat)):
            return n.model_copy(update={"elements": [self.node(e) for e in n.elements]})
        if isinstance(n, (OptionalFormat, StarFormat, PlusFormat, RepeatFormat)):
            return n.model_copy(update={"content": self.node(n.content)})
        return n

    def tag(self, t: TagFormat) -> TagFormat:
        """A block of free text (reasoning, content) keeps its text markers."""
        return t if isinstance(t.content, AnyTextFormat) else self.call(t)

    def call(self, t: TagFormat) -> TagFormat:
        """A call, or a section of calls: token-level whatever its arguments. A call whose
        arguments are any text must not read its end token as text (the parser closes the call
        there), so its text excludes the end marker."""
        if not isinstance(t.begin, str) or not isinstance(t.end, str):
            return t
        if isinstance(t.content, AnyTextFormat) and self._params_hold_tokens():
            t = t.model_copy(update={"content": any_arguments(self.fmt)})
        closing = [m for m in self.markers if m in t.end]
        if isinstance(t.content, AnyTextFormat) and closing:
            excludes = sorted({*t.content.excludes, *closing})
            t = t.model_copy(update={"content": t.content.model_copy(update={"excludes": excludes})})
        head = self.pieces(t.begin) or [ConstStringFormat(value="")]
        tail = self.pieces(t.end) or [ConstStringFormat(value="")]
        begin, end = head[0], tail[-1]
        content = [*head[1:], self.node(t.content), *tail[:-1]]
        return TagFormat(
            begin=begin.value if isinstance(begin, ConstStringFormat) else begin,
            content=content[0] if len(content) == 1 else SequenceFormat(elements=content),
            end=end.value if isinstance(end, ConstStringFormat) else end,
        )

    def _params_hold_tokens(self) -> bool:
        params = self.fmt.params
        return params is not None and any(m in params.open or m in params.close for m in self.markers)

    def triggered(self, n: TriggeredTagsFormat) -> Any:
        leads = [self.pieces(trigger)[0] for trigger in n.triggers]
        if not all(isinstance(lead, TokenFormat) for lead in leads):
            return self.text_triggered(n)
        missing = [x for x in n.excludes if x not in self.ids]
        if missing:
            raise ToolwireError(
                f"format {self.fmt.name!r}: free text must exclude {missing}, which are not special tokens "
                "of this vocabulary; build the tag without vocab"
            )
        tags = [self.call(t) for t in n.tags]
        return TokenTriggeredTagsFormat(
            trigger_tokens=[lead.token for lead in leads],
            tags=tags,
            exclude_tokens=[self.ids[x] for x in n.excludes],
            at_least_one=n.at_least_one,
            stop_after_first=n.stop_after_first,
        )

    def text_triggered(self, n: TriggeredTagsFormat) -> Any:
        """A trigger that is not a special token: the calls stay text-level, unless a tag would
        hold a marker token (then the tag could not match its text trigger)."""
        if any(m in t.begin for t in n.tags if isinstance(t.begin, str) for m in self.markers):
            raise ToolwireError(
                f"format {self.fmt.name!r}: its call trigger is not a special token of this vocabulary "
                "but its calls hold one; build the tag without vocab"
            )
        return n


def _seq(parts: list[Any]) -> Any:
    return parts[0] if len(parts) == 1 else SequenceFormat(elements=parts)
