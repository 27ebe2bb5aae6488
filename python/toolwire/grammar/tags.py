"""Assembling the structural tag: free text with triggered calls (``auto``), calls only
(``required``, named), the exclusion tag (``none``), each behind the reasoning block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import xgrammar as xgr
from xgrammar.structural_tag import (
    AnyTextFormat,
    AnyTokensFormat,
    OptionalFormat,
    RegexFormat,
    SequenceFormat,
    StructuralTag,
    TagFormat,
    TagsWithSeparatorFormat,
    TriggeredTagsFormat,
)

from toolwire import ToolwireError, Vocab

from .beam import _response_schema, _turn_structural_tag, _turn_tag
from .cache import _vocab_index
from .calls import _call_tag, _run, _ToolTags
from .confirm import _avoiding
from .format_view import LEAD_WS, _block_excludes, _Format, _format, _turn_channels
from .literal_values import _or
from .request import SchemaMode, Scope, _check_scope
from .tokens import token_markers
from .tools import _read, _reasoning_mode, _Tool


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
    cls = "".join("\\" + c if c in "[]\\^-" else c for c in sorted(firsts - set(" \t\r\n")))
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


def _reasoning(fmt: _Format, reasoning: Any) -> Any | None:
    """The reasoning block before the rest: None, or a format. The block is the format's
    reasoning channel where it has one, else the delimiters the parser reads for ``reasoning``."""
    mode, delimiters = _reasoning_mode(fmt.name, reasoning)
    if mode is None and fmt.content_block is not None and fmt.reasoning_block is not None:
        # Harmony-style messages: the analysis channel is the model's to write whatever the
        # setting. Where the next message opens with <|start|> (beam), the prompt's open message
        # must be the analysis one: the block is required.
        starts = [t for role, t, _ in fmt.markers if role == "message_start"]
        mode = "closing_only_full" if any(fmt.begin.startswith(t) for t in starts) else "optional"
        delimiters = fmt.reasoning_block
    if mode is None or mode == "off":
        return None
    begin, end = fmt.reasoning_block or delimiters
    excludes = _block_excludes(fmt, end)
    lead = [] if fmt.content_block is not None else [RegexFormat(pattern=LEAD_WS)]
    if mode == "closing_only":
        return SequenceFormat(elements=[TagFormat(begin="", content=AnyTextFormat(excludes=excludes), end=end), *lead])
    block = TagFormat(begin=begin, content=AnyTextFormat(excludes=excludes), end=end)
    if mode == "closing_only_full":
        return SequenceFormat(elements=[block, *lead])
    return OptionalFormat(content=SequenceFormat(elements=[block, *lead]))


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
    vocab: Vocab | None = None,
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
        reasoning: ``ToolParser``'s vocabulary, xgrammar's included (``toolwire._core.read_request``):
            None (no block; harmony keeps its optional analysis channel), False / ``"none"`` /
            ``"disabled"`` (no block), True / ``"native"`` / ``"auto"`` (an optional complete
            block of the format's own, or ``<think>`` where it has none), ``"think"`` /
            ``"paired"`` (an optional ``<think>`` block), ``"closing_only"`` / ``"enabled"``
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
            and takes any text as arguments up to the call's end marker (any arguments in the
            format's syntax where no end marker bounds them), and text outside calls is as
            free as the mode makes it. Implies a constraint whatever the scope says (except
            ``never``). The other tools keep named headers because a free branch that starts
            right after the trigger would let a listed tool's call be spelled through it.

        vocab: the :class:`toolwire.Vocab` the parser is fed token ids with: the format's
            markers that are special tokens of it are written as token ids (see :func:`plan`).

    Raises:
        ToolwireError: what ``ToolParser`` refuses, with its message (unknown format, invalid
            tools such as duplicate or empty names or a custom grammar tool, a ``tool_choice``
            the tools cannot satisfy, an unknown reasoning or schema mode), a strict schema
            outside the subset a grammar enforces, a JSON ``response_format`` on a format
            without per-turn channels.
    """
    tag = _structural_tag(format, tools, tool_choice, parallel_tool_calls, scope, schema, reasoning, ban_markers_in_strings, response_format, turn_grammar, constrained_tools)
    return tag if vocab is None or tag is None else token_markers(tag, _format(format), vocab)


def _structural_tag(
    format: str,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any,
    parallel_tool_calls: bool | None,
    scope: Scope,
    schema: SchemaMode,
    reasoning: Any,
    ban_markers_in_strings: bool,
    response_format: Mapping[str, Any] | None,
    turn_grammar: bool,
    constrained_tools: Sequence[str] | None,
) -> StructuralTag | None:
    fmt = _format(format)
    if _turn_channels(fmt):
        if constrained_tools is not None:
            raise ToolwireError(f"format {fmt.name!r}: constrained_tools is not supported on per-turn formats (beam)")
        return _turn_structural_tag(
            fmt, tools, tool_choice, parallel_tool_calls, scope, schema, reasoning, ban_markers_in_strings, response_format, turn_grammar
        )
    if _response_schema(response_format) is not None:
        raise ToolwireError(f"format {fmt.name!r}: a response_format is held inside the tag only on per-turn formats (beam)")
    read = _read(fmt.name, tools, tool_choice, reasoning=reasoning, schema=schema)
    tool_list, mode, allowed = read.tools, read.mode, read.allowed_of(read.tools)
    _check_scope(scope)
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
    *,
    tool_tags: _ToolTags | None = None,
) -> StructuralTag:
    if not allowed:
        # auto with no tools: nothing to call; keep the format's markers out of the text.
        return exclusion_tag(fmt.name, reasoning=reasoning)
    tool_tag = tool_tags or _ToolTags(fmt, schema, warnings, ban_markers)
    tags = [
        tool_tag(t)
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
