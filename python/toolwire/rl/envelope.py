"""The tokens between one sampled turn and the next: closing, tool results, next opening.

They come from the model's own chat template, never from re-rendering what the model sampled: a
dummy conversation (a user message, an assistant message carrying the turn's call names and ids
with empty arguments) is rendered without the tool messages, with each prefix of them, and with all
of them plus the generation prompt; each render must extend the previous one (else the template
is not prefix-stable here and :class:`NotPrefixStable` says where), and the differences are the
envelope. The closing is what the template writes after the assistant turn's end-of-turn token
(ChatML's ``\\n`` after ``<|im_end|>``): only the separator when the completion already ends with
that token, the token and the separator when it does not (a stop string, a cut turn).

Without a chat template, :data:`FAMILY_ENVELOPES` holds one envelope per model family, written
once from each family's documented turn format.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire._core import ToolwireError
from toolwire.rl.tokenizer import ChatTokenizer

__all__ = ["FAMILY_ENVELOPES", "Envelope", "NotPrefixStable", "family_envelope", "template_envelope"]

DUMMY_USER = {"role": "user", "content": "Go."}


class NotPrefixStable(ToolwireError):
    """Rendering more messages changed tokens already rendered: the envelope cannot be a difference."""


@dataclass
class Envelope:
    """Ids to append after a turn, and for each id the new message it belongs to: -1 the closing
    of the assistant turn, ``k`` the k-th tool result, ``len(results)`` the next turn's opening."""

    ids: list[int]
    owners: list[int]
    opening: str


def render_arguments(arguments: str) -> Any:
    """Chat templates expect arguments as a mapping (``tojson``, ``items()``); JSON text that is
    not an object stays text."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def assistant_for_template(message: dict[str, Any], *, dummy: bool = False) -> dict[str, Any]:
    """An OpenAI assistant message in the shape chat templates read; ``dummy`` keeps only the call
    names and ids, and "." for the content and reasoning it has (a template may render an empty
    reasoning block only for the last message: the envelope must not depend on sampled content,
    but the dummy must take the same branches)."""
    def text(key: str) -> str:
        return ("." if message.get(key) else "") if dummy else (message.get(key) or "")

    out: dict[str, Any] = {"role": "assistant", "content": text("content")}
    if message.get("reasoning_content"):
        out["reasoning_content"] = text("reasoning_content")
    calls = message.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": {} if dummy else render_arguments(c["function"]["arguments"]),
                },
            }
            for c in calls
            if c.get("type", "function") == "function"
        ]
    return out


def messages_for_template(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [assistant_for_template(m) if m.get("role") == "assistant" else dict(m) for m in messages]


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _check_extends(shorter: str | list[int], longer: str | list[int], what: str) -> None:
    if type(shorter) is not type(longer) or longer[: len(shorter)] != shorter:
        at = _first_difference(shorter, longer)
        show = (lambda s: repr(s[max(0, at - 20) : at + 20])) if isinstance(shorter, str) else (lambda s: s[at : at + 8])
        raise NotPrefixStable(
            f"the chat template is not prefix-stable: {what} changes what came before it, at "
            f"{'character' if isinstance(shorter, str) else 'token'} {at} (before: {show(shorter)}, "
            f"after: {show(longer)}); pass envelope='family' to use the format family's envelope instead"
        )


def _stop_positions(tok: ChatTokenizer, rendered: str | list[int], start: int) -> list[tuple[int, int, int]]:
    """``(position, length, id)`` of every stop token in ``rendered`` from ``start`` on."""
    if isinstance(rendered, list):
        return [(i, 1, t) for i, t in enumerate(rendered) if i >= start and t in tok.stop_ids]
    found = []
    for s in tok.stop_ids:
        text = tok.token_text(s)
        at = rendered.find(text, start) if text else -1
        while at >= 0:
            found.append((at, len(text), s))
            at = rendered.find(text, at + 1)
    return sorted(found)


def _closing(
    tok: ChatTokenizer, base: str | list[int], turn_start: int, diff: str | list[int], last_sampled: int | None
) -> tuple[str | list[int], int]:
    """What goes between the sampled ids and the envelope the template wrote after the turn, and
    how much of that envelope's start the completion already holds.

    A template that closes the turn with a stop token (ChatML's ``<|im_end|>\n``) gets only what
    follows the token when the completion ends with a stop token, the token and what follows when
    it does not. A template whose turn has no end token of its own, where the stop token is the
    next message's first (GLM's ``<|observation|>``), gets that token skipped when it is the one
    sampled."""
    stops = _stop_positions(tok, base, turn_start)
    ended = last_sampled is not None and last_sampled in tok.stop_ids
    if stops:
        at, length, _ = stops[-1]
        return (base[at + length :] if ended else base[at:]), 0
    first = _stop_positions(tok, diff, 0)
    if ended and first and first[0][0] == 0 and first[0][2] == last_sampled:
        return base[:0], first[0][1]
    return base[:0], 0


def template_envelope(
    tok: ChatTokenizer,
    tools: list[dict[str, Any]] | None,
    assistant: dict[str, Any],
    results: Sequence[dict[str, Any]],
    last_sampled: int | None,
    cache: dict[Any, Any] | None = None,
) -> Envelope:
    """The envelope for ``results`` after a turn whose OpenAI message is ``assistant`` (see the
    module doc). ``cache`` (one per tool set) keeps what depends only on the tools and on the
    shape of a turn (:func:`_learn`), so a turn shaped like an earlier one costs no render."""
    shape = _shape(tok, assistant, results, last_sampled) if cache is not None else None
    learnt = cache.get(shape) if shape is not None else None
    if learnt:
        return learnt.envelope(tok, _slot_values(assistant, results))
    pieces = _pieces(tok, tools, assistant, results, last_sampled, cache)
    if isinstance(pieces[0], list):
        ids = [i for p in pieces for i in p]  # type: ignore[union-attr]
        owners = [k - 1 for k, p in enumerate(pieces) for _ in p]
        return Envelope(ids, owners, tok.decode(pieces[-1]))  # type: ignore[arg-type]
    if shape is not None and shape not in cache:
        cache[shape] = _learn(tok, tools, assistant, results, last_sampled, pieces, cache)  # type: ignore[arg-type]
    return encode_pieces(tok, pieces)  # type: ignore[arg-type]


def _pieces(
    tok: ChatTokenizer,
    tools: list[dict[str, Any]] | None,
    assistant: dict[str, Any],
    results: Sequence[dict[str, Any]],
    last_sampled: int | None,
    cache: dict[Any, Any] | None,
) -> list[str | list[int]]:
    """The envelope's pieces from renders: the closing, one per result, the opening."""
    history = [DUMMY_USER, assistant_for_template(assistant, dummy=True)]
    opening = cache.get("opening") if cache is not None else None
    if opening is None:
        opening = tok.render(history[:1], tools, True)
        if cache is not None:
            cache["opening"] = opening
    base = tok.render(history, tools, False)
    block = tok.render(history + list(results), tools, False)
    final = tok.render(history + list(results), tools, True)
    _check_extends(base, block, "the tool messages")
    _check_extends(block, final, "the generation prompt")
    turn_start = len(opening) if base[: len(opening)] == opening else 0
    closing, held = _closing(tok, base, turn_start, final[len(base) :], last_sampled)
    bounds = [len(base) + held, *_result_ends(tok, history, tools, results, base, block, held), len(block), len(final)]
    return [closing, *(final[a:b] for a, b in itertools.pairwise(bounds))]


# A learnt envelope is its text pieces with each result's content and each call id replaced by a
# slot; filling the slots gives the pieces the template renders for those values. A slot is edged
# with what trimming, escaping or JSON-quoting would change, so a template that does not paste the
# values as they are loses the edges and is not learnt.
_EDGE = ' \t"<&\\'


def _slot(kind: str, k: int) -> str:
    return f"{_EDGE}\x1f{kind}{k}\x1f{_EDGE[::-1]}"


_SLOT = re.compile(re.escape(_EDGE) + "\x1f(TWC|TWI)(\\d+)\x1f" + re.escape(_EDGE[::-1]))


def _shape(tok: ChatTokenizer, assistant: dict[str, Any], results: Sequence[dict[str, Any]], last_sampled: int | None) -> Any:
    """What an envelope may depend on besides the slotted values; None where it is not learnt
    (a user message in the results: templates look into user contents, Qwen3's for one)."""
    calls = [c for c in assistant.get("tool_calls") or [] if c.get("type", "function") == "function"]
    index = {c["id"]: k for k, c in enumerate(calls)}
    shaped = []
    for r in results:
        call = index.get(r.get("tool_call_id"))  # type: ignore[arg-type]
        if call is None or r.get("role") != "tool" or not isinstance(r.get("content"), str):
            return None
        if len(r) == 4 and isinstance(r.get("name"), str):  # role, content, call id and name: the usual result
            shaped.append((call, r["name"]))
            continue
        rest = [(k, v if isinstance(v, str) else json.dumps(v, sort_keys=True))
                for k, v in r.items() if k != "content" and k != "tool_call_id"]
        shaped.append((call, tuple(sorted(rest))))
    stop = last_sampled if last_sampled in tok.stop_ids else None
    return (tuple(c["function"]["name"] for c in calls), bool(assistant.get("content")),
            bool(assistant.get("reasoning_content")), tuple(shaped), stop)


def _slot_values(assistant: dict[str, Any], results: Sequence[dict[str, Any]]) -> dict[str, str]:
    calls = [c for c in assistant.get("tool_calls") or [] if c.get("type", "function") == "function"]
    values = dict(zip(_slot_names("TWI", len(calls)), [c["id"] for c in calls]))
    values.update(zip(_slot_names("TWC", len(results)), [r["content"] for r in results]))
    return values


_SLOT_NAMES: dict[str, list[str]] = {"TWI": [], "TWC": []}


def _slot_names(kind: str, count: int) -> list[str]:
    """``kind`` + 0, 1, ... (count of them), written once for every turn to use."""
    names = _SLOT_NAMES[kind]
    if len(names) < count:
        names.extend(f"{kind}{k}" for k in range(len(names), count))
    return names[:count]


Slotted = list[list[str]]
"""Per piece, its literal texts and the names of its slots (``TWC0``...) in turn, text first."""


def _split_slots(pieces: list[str]) -> Slotted:
    out = []
    for p in pieces:
        parts = _SLOT.split(p)  # text, kind, k, text, kind, k, ..., text
        piece = [parts[0]]
        for i in range(1, len(parts), 3):
            piece += [parts[i] + parts[i + 1], parts[i + 2]]
        out.append(piece)
    return out


def _literal(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _template(parts: Sequence[str]) -> str:
    """Texts and slot names in turn (text first) as a ``str.format_map`` template."""
    return "".join(_literal(p) if k % 2 == 0 else "{" + p + "}" for k, p in enumerate(parts))


# Encoding by stretches. A tokenizer that splits its input at special tokens before anything else
# encodes each stretch between two of them on its own, so an envelope's ids are the special
# tokens' ids and each stretch's ids, and only the stretches that hold a slot change from turn to
# turn: those are encoded in one batched call, each with the special tokens around it (what comes
# before a stretch can matter, e.g. a SentencePiece prefix only at the start of the text), and the
# result is taken only when those come back as themselves (a value could run into them). The rest
# is encoded once, when the shape is learnt, and checked there against encoding the whole text.

Stretch = tuple[str, int | None, int | None]
"""A stretch with a slot: the ``str.format_map`` template of its text with the special tokens
around it, and their ids (None at the start or end of the envelope)."""


@dataclass
class Learnt:
    """The envelope of one turn shape: its pieces as ``str.format_map`` templates over the slot
    values and, where the tokenizer splits its text at special tokens first (as ``transformers``
    does at added tokens), the ids that never change and the :data:`Stretch` es to encode."""

    pieces: list[str]
    stretches: list[list[int] | Stretch] | None

    def envelope(self, tok: ChatTokenizer, values: dict[str, str]) -> Envelope:
        pieces = [p.format_map(values) for p in self.pieces]
        ids = _encode_stretches(tok, self.stretches, values) if self.stretches is not None else None
        return encode_pieces(tok, pieces, ids)


def _stretches(tok: ChatTokenizer, slotted: Slotted) -> list[list[int] | Stretch] | None:
    """:attr:`Learnt.stretches` for these pieces; None where the tokenizer's special-token split
    is not known or a stretch without slots does not come back with its special tokens."""
    split = tok.special_split
    if split is None:
        return None
    items: list[str | tuple[str] | int] = []  # texts, slot names (1-tuples), special tokens' ids
    for piece in slotted:
        for k, x in enumerate(piece):
            if k % 2:
                items.append((x,))
                continue
            for j, part in enumerate(split.split(x)):
                if j % 2:
                    items.append(tok.special_tokens_split[part])
                elif part:
                    items.append(part)
    text_of = {i: t for t, i in tok.special_tokens_split.items()}
    out: list[list[int] | Stretch] = []
    before: int | None = None
    body: list[str | tuple[str]] = []
    for item in (*items, None):
        if isinstance(item, (str, tuple)):
            body.append(item)
            continue
        if body:
            around = (text_of[before] if before is not None else "", text_of[item] if item is not None else "")
            template = _literal(around[0]) + "".join(
                _literal(b) if isinstance(b, str) else "{" + b[0] + "}" for b in body) + _literal(around[1])
            if any(isinstance(b, tuple) for b in body):
                out.append((template, before, item))
            else:
                fixed = _inner(tok.encode(template.format_map({})), before, item)
                if fixed is None:
                    return None
                out.append(fixed)
        if item is not None:
            out.append([item])
        before, body = item, []
    return out


def _inner(ids: list[int], before: int | None, after: int | None) -> list[int] | None:
    """``ids`` less the special tokens around them, None when those did not come back as such."""
    start, end = int(before is not None), len(ids) - (after is not None)
    if end < start or (before is not None and ids[0] != before) or (after is not None and ids[-1] != after):
        return None
    return ids[start:end]


def _encode_stretches(tok: ChatTokenizer, plan: list[list[int] | Stretch], values: dict[str, str]) -> list[int] | None:
    """The envelope's ids by ``plan`` (:attr:`Learnt.stretches`), None when a value ran into a
    special token around its stretch."""
    encoded = iter(tok.encode_many([p[0].format_map(values) for p in plan if isinstance(p, tuple)]))
    ids: list[int] = []
    for p in plan:
        if isinstance(p, list):
            ids += p
            continue
        inner = _inner(next(encoded), p[1], p[2])
        if inner is None:
            return None
        ids += inner
    return ids


def _learn(
    tok: ChatTokenizer,
    tools: list[dict[str, Any]] | None,
    assistant: dict[str, Any],
    results: Sequence[dict[str, Any]],
    last_sampled: int | None,
    rendered: list[str],
    cache: dict[Any, Any],
) -> Learnt | bool:
    """The slotted pieces for this turn's shape, or False when filling them with this turn's
    values does not give what the template rendered for them (a template that branches on a
    content's text is not detected)."""
    calls = [c for c in assistant.get("tool_calls") or [] if c.get("type", "function") == "function"]
    renamed = {c["id"]: _slot("TWI", k) for k, c in enumerate(calls)}
    turn = {**assistant, "tool_calls": [{**c, "id": renamed[c["id"]]} for c in calls]}
    slotted = [{**r, "tool_call_id": renamed[r["tool_call_id"]], "content": _slot("TWC", k)} for k, r in enumerate(results)]
    pieces = _pieces(tok, tools, turn, slotted, last_sampled, cache)
    if not all(isinstance(p, str) for p in pieces):
        return False
    slots = _split_slots(pieces)  # type: ignore[arg-type]
    values = _slot_values(assistant, results)
    # a slot that lost its edges stays in the filled text
    if [_template(p).format_map(values) for p in slots] != rendered:
        return False
    return _learnt(tok, slots, values)


def _learnt(tok: ChatTokenizer, slots: Slotted, values: dict[str, str]) -> Learnt:
    """The :class:`Learnt` of slotted pieces, its stretches checked with ``values`` against
    encoding the whole filled text."""
    learnt = Learnt([_template(p) for p in slots], _stretches(tok, slots))
    text = "".join(t.format_map(values) for t in learnt.pieces)
    if learnt.stretches is not None and _encode_stretches(tok, learnt.stretches, values) != tok.encode(text):
        learnt.stretches = None
    return learnt


def _result_ends(
    tok: ChatTokenizer,
    history: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    results: Sequence[dict[str, Any]],
    base: str | list[int],
    block: str | list[int],
    held: int,
) -> list[int]:
    """Where each result but the last stops owning the block of tool messages: after its content,
    so what stands between two contents belongs to the later result. A template that does not
    paste contents as they are (JSON-quoted, trimmed) or renders ids is asked prefix by prefix
    instead: each prefix of the results owns what its render shares with the whole block (a
    template may close a run of tool messages only after the last, so a prefix need not extend)."""
    ends, at = [], len(base) + held
    if isinstance(block, str):
        for r in results[:-1]:
            found = block.find(r["content"], at)
            if found < 0:
                break
            at = found + len(r["content"])
            ends.append(at)
        else:
            return ends
    ends = [len(base) + held]
    for k in range(len(results) - 1):
        step = tok.render(history + list(results[: k + 1]), tools, False)
        ends.append(max(ends[-1], min(_first_difference(step, block), len(block))))
    return ends[1:]


def encode_pieces(tok: ChatTokenizer, pieces: Sequence[str], ids: list[int] | None = None) -> Envelope:
    """Encode the pieces as one text (ids as the template's own tokenization gives them; or
    ``ids``, already encoded so), each id owned by the piece its first byte falls in."""
    if ids is None:
        ids = tok.encode("".join(pieces))
    bounds = list(itertools.accumulate(len(p.encode("utf-8")) for p in pieces))
    starts = [0, *itertools.accumulate(tok.token_lengths(ids))]
    owners: list[int] = []
    for k, bound in enumerate(bounds[:-1]):
        cut = bisect.bisect_left(starts, bound, len(owners), len(ids))
        owners += [k - 1] * (cut - len(owners))
    owners += [len(bounds) - 2] * (len(ids) - len(owners))
    return Envelope(ids, owners, pieces[-1])


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _chatml(results: Sequence[dict[str, Any]], names: Sequence[str]) -> tuple[str, list[str], str, str]:
    pieces = []
    for k, r in enumerate(results):
        first, last = k == 0 or results[k - 1]["role"] != "tool", k == len(results) - 1 or results[k + 1]["role"] != "tool"
        if r["role"] != "tool":
            pieces.append(f"<|im_start|>{r['role']}\n{_content(r)}<|im_end|>\n")
            continue
        head = "<|im_start|>user\n<tool_response>\n" if first else "\n<tool_response>\n"
        pieces.append(head + _content(r) + "\n</tool_response>" + ("<|im_end|>\n" if last else ""))
    return "<|im_end|>", pieces, "\n", "<|im_start|>assistant\n"


def _llama3(results: Sequence[dict[str, Any]], names: Sequence[str]) -> tuple[str, list[str], str, str]:
    pieces = [
        f"<|start_header_id|>{'ipython' if r['role'] == 'tool' else r['role']}<|end_header_id|>\n\n{_content(r)}<|eot_id|>"
        for r in results
    ]
    return "<|eot_id|>", pieces, "", "<|start_header_id|>assistant<|end_header_id|>\n\n"


def _harmony(results: Sequence[dict[str, Any]], names: Sequence[str]) -> tuple[str, list[str], str, str]:
    pieces = [
        f"<|start|>functions.{n} to=assistant<|channel|>commentary<|message|>{_content(r)}<|end|>"
        if r["role"] == "tool"
        else f"<|start|>{r['role']}<|message|>{_content(r)}<|end|>"
        for r, n in zip(results, names)
    ]
    return "<|call|>", pieces, "", "<|start|>assistant"


FamilyEnvelope = Callable[[Sequence[dict[str, Any]], Sequence[str]], tuple[str, list[str], str, str]]
FAMILY_ENVELOPES: dict[str, FamilyEnvelope] = {
    "hermes": _chatml,
    "qwen3_coder": _chatml,
    "llama3_json": _llama3,
    "harmony": _harmony,
}
"""Per canonical format: ``(results, call names) -> (end-of-turn token, one piece per result,
separator after the end of turn, next opening)``: ChatML with Qwen's ``<tool_response>`` blocks,
Llama 3's ``ipython`` header, Harmony's ``functions.NAME to=assistant`` commentary messages."""


def family_envelope(
    tok: ChatTokenizer,
    format: str,
    results: Sequence[dict[str, Any]],
    names: Sequence[str],
    last_sampled: int | None,
    cache: dict[Any, Any] | None = None,
) -> Envelope:
    """The format family's envelope for ``results``; ``cache`` keeps it per shape (result roles,
    call names, the last sampled id) with the contents as slots, as :func:`template_envelope` does."""
    build = FAMILY_ENVELOPES.get(format)
    if build is None:
        raise ToolwireError(
            f"no chat template and no built-in envelope for {format!r} (built in: {', '.join(FAMILY_ENVELOPES)}); "
            "pass a tokenizer with a chat template or a ChatTokenizer with a render function"
        )
    values = {f"TWC{k}": _content(r) for k, r in enumerate(results)}
    shape = ("family", format, tuple(r["role"] for r in results), tuple(names), last_sampled)
    learnt = cache.get(shape) if cache is not None else None
    if learnt is None:
        end, pieces, separator, opening = build([{**r, "content": _slot("TWC", k)} for k, r in enumerate(results)], names)
        closing = separator if last_sampled is not None and tok.token_text(last_sampled) == end else end + separator
        if last_sampled is not None and last_sampled in tok.stop_ids and tok.token_text(last_sampled) != end:
            closing = separator
        learnt = _learnt(tok, _split_slots([closing, *pieces, opening]), values)
        if cache is not None:
            cache[shape] = learnt
    return learnt.envelope(tok, values)
