"""A multi-turn tool-use episode as one token sequence, token in / token out.

Every id the policy sampled is kept exactly as sampled and parsed from ids by the format's own
parser (special tokens by id), so what the trainer sees is what the engine produced and what
serving would have returned. Only the text the episode writes itself is tokenized: the tool
results in the model's envelope and the next turn's opening (:mod:`toolwire.rl.envelope`). The
loss mask is 1 exactly on sampled ids, less those a toolwire grammar forced when the turn was
sampled under one. :meth:`Episode.drift` says where re-rendering the final messages through the
chat template, what most frameworks train on, would differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire._core import (
    ParsedMessage,
    ToolParser,
    ToolSet,
    ToolwireError,
    format_info,
)
from toolwire._detect import detect_format
from toolwire.rl.envelope import (
    family_envelope,
    messages_for_template,
    template_envelope,
)
from toolwire.rl.tokenizer import ChatTokenizer

__all__ = ["Drift", "Episode", "Sample", "Turn"]

ThinkingStyle = Literal["paired", "closing_only"]


@dataclass
class Turn:
    """One sampled assistant turn."""

    index: int
    message: ParsedMessage
    token_ids: list[int]
    start: int
    """Position of the first sampled id in the episode."""
    finish_reason: str | None
    thinking_style: ThinkingStyle | None
    truncated: bool
    """The completion was cut (``finish_reason="length"``, or it ended inside a call)."""

    @property
    def issues(self) -> list[dict[str, Any]]:
        return [{"index": i.index, "kind": i.kind, "detail": i.detail, "raw": i.raw} for i in self.message.issues]


@dataclass
class Sample:
    """The training sample of an episode; every list is aligned to ``token_ids``."""

    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    """The engine's logprob where the policy sampled (0.0 elsewhere, and where none was given)."""
    message_index: list[int]
    """Index into ``messages`` of the message each id belongs to (the opening of a turn belongs to
    that turn's assistant message)."""
    role: list[str]
    sampled: list[bool]
    messages: list[dict[str, Any]]
    issues: list[list[dict[str, Any]]]
    """Per assistant turn, its parser issues (kinds as in ``CallIssue.kind``)."""
    invalid_actions: int
    """Issues over all turns: the invalid-action penalty."""
    truncated: bool


@dataclass
class Drift:
    """Where the episode's ids and a re-render of its messages part (``position`` None: equal)."""

    position: int | None
    episode_length: int
    rendered_length: int
    reason: str
    message_index: int | None = None
    episode_ids: list[int] = field(default_factory=list)
    rendered_ids: list[int] = field(default_factory=list)

    @property
    def stable(self) -> bool:
        return self.position is None


def _detected_format(tokenizer: Any) -> str:
    if isinstance(tokenizer, ChatTokenizer):
        raise ToolwireError(
            "Episode(format=None) detects the format from a transformers tokenizer's chat template; "
            "a ChatTokenizer has none to read: pass format="
        )
    return detect_format(tokenizer).require()


class Episode:
    """One rollout: prompt, then alternating sampled turns and tool results.

    Arguments:
        tokenizer: a fast ``transformers`` tokenizer (its chat template renders the prompt and the
            envelopes) or a :class:`~toolwire.rl.ChatTokenizer`.
        format: the tool-call format the model writes (a name from :func:`toolwire.formats`), or
            None: :func:`toolwire.detect_format` reads it from the ``transformers`` tokenizer's
            chat template and vocabulary, and raises, naming the candidates, when it cannot decide.
        tools: the OpenAI tools of the episode (rendered into the prompt; calls are validated).
        thinking_style: ``"paired"`` (the model opens and closes ``<think>``), ``"closing_only"``
            (the prompt opened it), or None: detected per turn from the ids before it (a prompt
            that ends inside an opened reasoning block is ``closing_only``).
        grammar: an xgrammar ``CompiledGrammar`` every turn was sampled under (for example a
            structural tag with ``constrained_tools``); the ids it forced get loss 0. Per turn:
            ``add_completion(..., grammar=)``.
        forced_mode: ``forced_token_mask``'s mode (``"token"`` or ``"text"``).
        envelope: ``"template"`` (from the chat template; the default when there is one) or
            ``"family"`` (the format family's built-in envelope, :data:`FAMILY_ENVELOPES`).
        parser_options: more :class:`toolwire.ToolParser` arguments (``tool_choice``,
            ``id_factory``, ``max_call_bytes``...).
    """

    def __init__(
        self,
        tokenizer: Any,
        format: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        *,
        thinking_style: ThinkingStyle | None = None,
        grammar: Any = None,
        forced_mode: Literal["token", "text"] = "token",
        envelope: Literal["template", "family"] | None = None,
        **parser_options: Any,
    ) -> None:
        if thinking_style not in (None, "paired", "closing_only"):
            raise ToolwireError(f"thinking_style must be 'paired', 'closing_only' or None, not {thinking_style!r}")
        if format is None:
            format = _detected_format(tokenizer)
        self.tokenizer = ChatTokenizer.of(tokenizer)
        info = format_info(format)
        self.format: str = info["name"]
        self.tools = [dict(t) for t in tools or []]
        self._tool_set = ToolSet(self.tools) if self.tools else None
        self._reasoning = info["reasoning"]
        # what the parser drops or reads at the end of a completion itself: its stops and markers
        self._parser_ends = {m["text"] for m in info["markers"]} | set(info["stops"])
        self._parser_options = parser_options
        self._parsers: dict[Any, ToolParser] = {}
        self.thinking_style = thinking_style
        self.grammar = grammar
        self.forced_mode = forced_mode
        if envelope is None:
            envelope = "template" if self.tokenizer.has_template else "family"
        if envelope not in ("template", "family"):
            raise ToolwireError(f"envelope must be 'template' or 'family', not {envelope!r}")
        self.envelope = envelope
        self._envelope_cache = self.tokenizer.envelope_cache(self.tools)
        self.messages: list[dict[str, Any]] = []
        self.turns: list[Turn] = []
        self._ids: list[int] = []
        self._mask: list[int] = []
        self._logprobs: list[float] = []
        self._owner: list[int] = []
        self._sampled: list[bool] = []
        self._started = False
        self._awaiting: Literal["completion", "results"] = "completion"
        self.done = False

    # -- building ---------------------------------------------------------------------------

    def start(self, messages: Sequence[Mapping[str, Any]] | None = None, *, prompt_ids: Sequence[int] | None = None) -> list[int]:
        """Open the episode; returns the prompt ids to send to the engine.

        From ``messages`` the prompt is the chat template's render with the generation prompt;
        with ``prompt_ids`` those ids are used as they are (``messages``, if given, only fill
        :attr:`Sample.messages`).
        """
        if self._started:
            raise ToolwireError("the episode has already started")
        if messages is None and prompt_ids is None:
            raise ToolwireError("start() needs messages or prompt_ids")
        self.messages = [dict(m) for m in messages or []]
        if prompt_ids is not None:
            ids = [int(i) for i in prompt_ids]
            owners = [max(len(self.messages) - 1, 0)] * len(ids)
        else:
            ids, owners = self._render_prompt()
        self._append(ids, owners, sampled=False)
        self._started = True
        return ids

    def _render_prompt(self) -> tuple[list[int], list[int]]:
        tok, tools = self.tokenizer, self.tools or None
        shown = messages_for_template(self.messages)
        ids = tok.render_ids(shown, tools, True)
        owners = [len(self.messages)] * len(ids)
        end = 0
        for k in range(len(shown)):
            part = tok.render_ids(shown[: k + 1], tools, False)
            if ids[: len(part)] != part or len(part) < end:
                return ids, [len(self.messages) - 1] * len(ids)  # not prefix-stable: one owner
            owners[end : len(part)] = [k] * (len(part) - end)
            end = len(part)
        return ids, owners

    def _append(self, ids: Sequence[int], owners: Sequence[int], *, sampled: bool, mask: Sequence[int] | None = None,
                logprobs: Sequence[float] | None = None) -> None:
        self._ids.extend(ids)
        self._owner.extend(owners)
        self._sampled.extend([sampled] * len(ids))
        self._mask.extend(mask if mask is not None else [int(sampled)] * len(ids))
        self._logprobs.extend(logprobs if logprobs is not None else [0.0] * len(ids))

    def _parser(self, reasoning: Any) -> ToolParser:
        parser = self._parsers.get(reasoning)
        if parser is None:
            parser = ToolParser(self.format, self._tool_set, reasoning=reasoning, vocab=self.tokenizer.vocab,
                                **self._parser_options)
            self._parsers[reasoning] = parser
        return parser

    def _style_now(self) -> ThinkingStyle | None:
        if self._reasoning is None:
            return None
        if self.thinking_style is not None:
            return self.thinking_style
        tail = self.tokenizer.decode(self._ids[-64:])
        opened, closed = tail.rfind(self._reasoning["start"]), tail.rfind(self._reasoning["end"])
        return "closing_only" if opened >= 0 and opened > closed else "paired"

    def _reasoning_mode(self, style: ThinkingStyle | None) -> Any:
        if style is None:
            return None
        if style == "closing_only":
            return "closing_only"
        return "think" if self._reasoning["start"] == "<think>" else True

    def add_completion(
        self,
        token_ids: Sequence[int],
        logprobs: Sequence[float] | None = None,
        finish_reason: str | None = "stop",
        *,
        grammar: Any = None,
    ) -> Turn:
        """Append one sampled completion as it was sampled and parse it from its ids.

        ``finish_reason="length"`` (cut by ``max_tokens``) or a completion that ends inside a
        call marks the turn ``truncated`` and ends the episode. A trailing stop token is kept in the
        ids but is no content: the parser drops the format's own (``<|im_end|>``, ``stops`` in
        :func:`toolwire.format_info`), and one of the tokenizer's ``stop_ids`` the format neither
        lists nor reads as a marker is not shown to the parser, as serving engines strip it.
        """
        if not self._started or self.done or self._awaiting != "completion":
            raise ToolwireError(
                "add_completion() needs a started episode waiting for a completion"
                + (" (the episode is done)" if self.done else "")
            )
        # A list of ints is copied as it is (int() of each cost more than the parse of a short
        # turn): the parser takes only exact ints from it, and anything else in it (numpy ints,
        # bools) sends it through int() below, as any other sequence goes.
        plain = type(token_ids) is list and (not token_ids or type(token_ids[-1]) is int)
        ids = token_ids.copy() if plain else list(map(int, token_ids))
        if logprobs is not None and len(logprobs) != len(ids):
            raise ToolwireError(f"{len(logprobs)} logprobs for {len(ids)} token ids")
        style = self._style_now()
        parse_ids = ids
        if ids and ids[-1] in self.tokenizer.stop_ids and self.tokenizer.token_text(ids[-1]) not in self._parser_ends:
            parse_ids = ids[:-1]
        parser = self._parser(self._reasoning_mode(style))
        try:
            message = parser.parse_tokens(parse_ids, finish_reason)
        except TypeError:
            if not any(type(i) is not int for i in ids):
                raise
            ids = list(map(int, ids))
            parse_ids = ids[: len(parse_ids)]
            message = parser.parse_tokens(parse_ids, finish_reason)
        mask = [1] * len(ids)
        grammar = grammar if grammar is not None else self.grammar
        if grammar is not None and ids:
            from toolwire.rl.forced import forced_token_mask

            forced = forced_token_mask(grammar, ids, mode=self.forced_mode, vocab=self.tokenizer.vocab)
            mask = [0 if f else 1 for f in forced]
        truncated = finish_reason == "length" or any(i.kind == "truncated" for i in message.issues)
        turn = Turn(len(self.turns), message, ids, len(self._ids), finish_reason, style, truncated)
        self.messages.append(message.to_openai())
        self._append(ids, [len(self.messages) - 1] * len(ids), sampled=True, mask=mask,
                     logprobs=[float(x) for x in logprobs] if logprobs is not None else None)
        self.turns.append(turn)
        self._awaiting = "results"
        if truncated:
            self.done = True
        return turn

    def add_tool_results(self, results: Sequence[Mapping[str, Any]]) -> list[int]:
        """Append the results of the last turn's calls in the model's envelope and open the next
        turn; returns the ids appended (to extend the engine's prompt with).

        ``results``: OpenAI ``role: "tool"`` messages (``tool_call_id`` matched to the turn's
        calls; missing ids are taken in call order) or ``role: "user"`` feedback messages.
        """
        if self.done or self._awaiting != "results":
            raise ToolwireError("add_tool_results() must follow add_completion()" + (" (the episode is done)" if self.done else ""))
        turn = self.turns[-1]
        # the turn's calls as id -> name, from its OpenAI message (no call objects made per result)
        calls = {c["id"]: c[c["type"]]["name"] for c in self.messages[-1].get("tool_calls") or []}
        in_order = iter(calls)
        matched: list[dict[str, Any]] = []
        names: list[str] = []
        for r in results:
            r = dict(r)
            if r.get("role") == "tool":
                call_id = r.get("tool_call_id") or next(in_order, None)
                name = calls.get(call_id)  # type: ignore[arg-type]
                if name is None:
                    raise ToolwireError(
                        f"tool result for {r.get('tool_call_id')!r} matches no call of turn {turn.index} "
                        f"(calls: {list(calls) or 'none'}); send feedback on an invalid call as a user message"
                    )
                r["tool_call_id"] = call_id
                r.setdefault("name", name)
                names.append(name)
            elif r.get("role") == "user":
                names.append("")
            else:
                raise ToolwireError(f"results are tool or user messages, not {r.get('role')!r}")
            if not isinstance(r.get("content"), str):
                r["content"] = json.dumps(r.get("content"), ensure_ascii=False)
            matched.append(r)
        last = turn.token_ids[-1] if turn.token_ids else None
        if self.envelope == "template":
            env = template_envelope(self.tokenizer, self.tools or None, self.messages[-1], matched, last,
                                    self._envelope_cache)
        else:
            env = family_envelope(self.tokenizer, self.format, matched, names, last, self._envelope_cache)
        first = len(self.messages) - 1
        self.messages.extend(matched)
        self._append(env.ids, [first + 1 + o for o in env.owners], sampled=False)
        self._awaiting = "completion"
        return env.ids

    # -- reading ----------------------------------------------------------------------------

    @property
    def token_ids(self) -> list[int]:
        return list(self._ids)

    def sample(self) -> Sample:
        role_of = [m["role"] for m in self.messages] + ["assistant"]  # the last: a turn opened, not sampled yet
        roles = [role_of[o] for o in self._owner]
        issues = [t.issues for t in self.turns]
        return Sample(
            token_ids=list(self._ids),
            loss_mask=list(self._mask),
            logprobs=list(self._logprobs),
            message_index=list(self._owner),
            role=roles,
            sampled=list(self._sampled),
            messages=[dict(m) for m in self.messages],
            issues=issues,
            invalid_actions=sum(len(i) for i in issues),
            truncated=any(t.truncated for t in self.turns),
        )

    def drift(self, render: Callable[[list[dict[str, Any]]], Sequence[int]] | None = None) -> Drift:
        """Compare the episode's ids with re-rendering its messages (through the chat template, or
        ``render(messages) -> ids``) and say where they first part and why."""
        shown = messages_for_template(self.messages)
        if render is not None:
            rendered = [int(i) for i in render(self.messages)]
        else:
            rendered = self.tokenizer.render_ids(shown, self.tools or None, self._awaiting == "completion")
        ids = self._ids
        n = min(len(ids), len(rendered))
        at = next((i for i in range(n) if ids[i] != rendered[i]), None)
        if at is None:
            if len(ids) == len(rendered):
                return Drift(None, len(ids), len(rendered), "identical")
            longer = "re-render" if len(rendered) > len(ids) else "episode"
            extra = rendered[n:] if len(rendered) > n else ids[n:]
            reason = (f"the {longer} goes on for {abs(len(rendered) - len(ids))} more tokens "
                      f"({self.tokenizer.decode(extra[:16])!r})")
            if longer == "re-render" and self._awaiting == "results":
                reason += ": the template's separator after the last turn, which the episode writes only with the next turn"
            return Drift(None if longer == "re-render" and self._awaiting == "results" else n, len(ids), len(rendered),
                         reason, None, ids[n:n + 8], rendered[n:n + 8])
        owner = self._owner[at]
        role = self.messages[owner]["role"] if 0 <= owner < len(self.messages) else "?"
        what = "sampled by the policy" if self._sampled[at] else "written by the episode (prompt or envelope)"
        reason = (f"token {at} ({what}, message {owner}, {role}): the episode has "
                  f"{self.tokenizer.decode(ids[at:at + 8])!r}, the re-render {self.tokenizer.decode(rendered[at:at + 8])!r}"
                  f" after {self.tokenizer.decode(ids[max(0, at - 8):at])!r}")
        return Drift(at, len(ids), len(rendered), reason, owner, ids[at:at + 8], rendered[at:at + 8])

    def __repr__(self) -> str:
        return f"Episode(format={self.format!r}, turns={len(self.turns)}, tokens={len(self._ids)}, done={self.done})"

