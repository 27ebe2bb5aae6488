"""Grammar masks for decode loops (needs ``xgrammar``).

``tokenizer_info`` builds an xgrammar ``TokenizerInfo`` from a :class:`toolwire.Vocab`, so the
grammar and the parser read tokens the same way; ``jump_forward`` turns the text a grammar forces
next into token ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolwire._core import ToolwireError, Vocab

if TYPE_CHECKING:
    import xgrammar


def _xgrammar() -> Any:
    try:
        import xgrammar
    except ImportError as e:
        raise ImportError("this part of toolwire needs xgrammar: pip install 'toolwire[grammar]'") from e
    return xgrammar


def tokenizer_info(vocab: Vocab, vocab_size: int, stop_token_ids: Sequence[int]) -> xgrammar.TokenizerInfo:
    """An xgrammar ``TokenizerInfo`` over ``vocab``'s bytes, ``vocab_size`` ids wide.

    Arguments:
        vocab: the tokenizer's vocabulary; special tokens keep their text, so a marker such as
            ``<tool_call>`` matches the grammar both as its single id and spelled out.
        vocab_size: the model's lm_head size (ids without a token become padding, never allowed).
        stop_token_ids: the ids that end generation (e.g. ``<|im_end|>`` and ``<|endoftext|>``);
            pass them explicitly, xgrammar's guess misses chat-template stops.
    """
    xgr = _xgrammar()
    if vocab_size <= 0:
        raise ToolwireError("vocab_size must be positive")
    encoded = [vocab.token_bytes(i) or b"" for i in range(vocab_size)]
    return xgr.TokenizerInfo(
        encoded, xgr.VocabType.RAW, vocab_size=vocab_size, stop_token_ids=list(stop_token_ids)
    )


@dataclass(frozen=True)
class JumpForward:
    """Text the grammar forces next, and token ids that spell it."""

    text: str
    token_ids: list[int]

    def __bool__(self) -> bool:
        return bool(self.token_ids)


class _VocabIndex:
    """Bytes -> id over a Vocab's tokens, and its special tokens by text (built once per Vocab)."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self.ordinary: dict[bytes, int] = {}
        self.specials: dict[str, int] = {}
        self.longest = 0
        i = misses = 0
        while misses < 4096:  # ids have gaps (specials sit past the ranks); stop after a long run
            b = vocab.token_bytes(i)
            if b:
                misses = 0
                text = b.decode("utf-8", "replace")
                if vocab.special_id(text) == i:
                    self.specials[text] = i
                else:
                    self.ordinary.setdefault(b, i)
                    self.longest = max(self.longest, len(b))
            else:
                misses += 1
            i += 1
        self.special_ids = set(self.specials.values())

    def greedy(self, data: bytes) -> list[int]:
        ids, i = [], 0
        while i < len(data):
            for n in range(min(self.longest, len(data) - i), 0, -1):
                token = self.ordinary.get(data[i : i + n])
                if token is not None:
                    ids.append(token)
                    i += n
                    break
            else:
                raise ToolwireError(f"the vocabulary has no token for byte {data[i]:#04x}")
        return ids

    def encode(self, text: str, encode: Callable[[str], Sequence[int]] | None) -> list[int]:
        """Special-token texts become their ids; the text between them goes to ``encode``
        (default: greedy longest match over the ordinary tokens)."""
        ids: list[int] = []
        rest = text
        while rest:
            hits = [(rest.find(s), s) for s in self.specials if s in rest]
            at, marker = min(hits, key=lambda h: (h[0], -len(h[1]))) if hits else (len(rest), "")
            if at:
                piece = rest[:at]
                ids += list(encode(piece)) if encode is not None else self.greedy(piece.encode("utf-8"))
            if not marker:
                break
            ids.append(self.specials[marker])
            rest = rest[at + len(marker) :]
        return ids


_INDEXES: dict[int, _VocabIndex] = {}


def _index(vocab: Vocab) -> _VocabIndex:
    index = _INDEXES.get(id(vocab))
    if index is None or index.vocab is not vocab:
        if len(_INDEXES) >= 4:
            _INDEXES.pop(next(iter(_INDEXES)))
        index = _INDEXES[id(vocab)] = _VocabIndex(vocab)
    return index


def jump_forward(
    matcher: xgrammar.GrammarMatcher,
    vocab: Vocab,
    *,
    encode: Callable[[str], Sequence[int]] | None = None,
    hold_last_token: bool = True,
    advance: bool = False,
) -> JumpForward:
    """The continuation the grammar forces from ``matcher``'s state, as text and token ids.

    Feeding these ids to the model (one prefill instead of one decode step per token) skips
    steps whose outcome the grammar already fixed.

    Arguments:
        matcher: an xgrammar ``GrammarMatcher``; not changed unless ``advance``.
        vocab: the model's vocabulary. Special-token texts in the forced string (``</tool_call>``)
            become their single id, as the model writes them and as a parser fed token ids
            expects them; the ids' text is read from it.
        encode: the model's own BPE for the text between special tokens (e.g.
            ``lambda s: tok.encode(s, add_special_tokens=False)``). Default: greedy longest match
            over the vocabulary, which can split text differently from the model's tokenizer.
        hold_last_token: leave the last token of the forced text to the model, which may spell
            the end of the forced text together with what follows (``": {"`` as ``":``, `` {"``);
            jumping over the whole string would force an unnatural split there. A special token
            at the end is kept (nothing merges with it). The ids also stop at a character
            boundary.
        advance: accept the returned ids into ``matcher``.

    The ids are checked against a fork of the matcher; should the grammar refuse one (an id its
    ``TokenizerInfo`` treats as special), the result stops before it.
    """
    forced = matcher.find_jump_forward_string()
    if not forced:
        return JumpForward("", [])
    index = _index(vocab)
    ids = index.encode(forced, encode)
    if hold_last_token and ids and ids[-1] not in index.special_ids:
        ids = ids[:-1]
    spelled = b"".join(vocab.token_bytes(t) or b"" for t in ids)
    if not forced.encode("utf-8").startswith(spelled):
        raise ToolwireError(f"the tokenizer spelled {forced!r} as {spelled!r}; pass the model's own encode")
    probe = matcher.fork()
    for n, token in enumerate(ids):
        if not probe.accept_token(token):
            ids = ids[:n]
            break
    while ids:
        try:
            text = b"".join(vocab.token_bytes(t) or b"" for t in ids).decode("utf-8")
            break
        except UnicodeDecodeError:
            ids = ids[:-1]
    else:
        return JumpForward("", [])
    if advance:
        for token in ids:
            matcher.accept_token(token)
    return JumpForward(text, ids)
