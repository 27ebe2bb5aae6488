"""The few tokenizer operations an episode needs, over any tokenizer.

An episode encodes only text it wrote itself (envelopes around tool results, turn openings), never
text the model sampled, and renders conversations only to learn those envelopes (see
:mod:`toolwire.rl.envelope`). :class:`ChatTokenizer` names exactly those operations, so a
``transformers`` tokenizer with a chat template, mistral-common's encoder, openai-harmony's
renderer or a bare tiktoken table all serve the same :class:`~toolwire.rl.Episode`.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from toolwire._core import ToolwireError, Vocab

__all__ = ["ChatTokenizer", "RenderFn"]

RenderFn = Callable[[list[dict[str, Any]], "list[dict[str, Any]] | None", bool], "str | list[int]"]
"""``(messages, tools, add_generation_prompt) -> text`` (special tokens spelled out) or token ids."""


class ChatTokenizer:
    """Encoding, decoding and chat-template rendering for one model.

    Arguments:
        vocab: the :class:`toolwire.Vocab` the parser reads ids with.
        encode: plain text to ids. With ``special_tokens``, the text is first split at those
            tokens' texts (each becomes its id) and only the pieces between are passed here, the
            way ``transformers`` treats added tokens; without, ``encode`` must handle them itself.
        special_tokens: text to id of the special tokens envelopes may contain.
        render: the chat template, ``(messages, tools, add_generation_prompt)`` to text or ids;
            None when the model has none (envelopes then come from the format's family).
        stop_ids: ids that end an assistant turn (``<|im_end|>``, ``<|eot_id|>``, ``<|call|>``...).
        name: shown in errors.
    """

    def __init__(
        self,
        vocab: Vocab,
        encode: Callable[[str], Sequence[int]],
        *,
        special_tokens: Mapping[str, int] | None = None,
        render: RenderFn | None = None,
        stop_ids: Iterable[int] = (),
        name: str = "tokenizer",
    ) -> None:
        self.vocab = vocab
        self._encode_plain = encode
        self.special_tokens = dict(special_tokens or {})
        self._split = _alternation(self.special_tokens)
        self._render = render
        self.stop_ids = frozenset(stop_ids)
        self.name = name
        self._envelope_caches: dict[str, dict[Any, Any]] = {}
        self._bytes: list[bytes] | None = None
        self._lengths: list[int] | None = None
        self.special_tokens_split: dict[str, int] = self.special_tokens
        """The special tokens ``encode`` splits its text at before anything else (each stretch
        between two is encoded on its own), text to id: the ``special_tokens``, or those of a
        ``transformers`` tokenizer's added tokens it is known to split at (:meth:`from_hf`)."""
        self.special_split: re.Pattern[str] | None = self._split
        """:attr:`special_tokens_split` as a pattern with one group, None when there are none."""
        self._encode_batch: Callable[[list[str]], Sequence[Sequence[int]]] | None = None

    @classmethod
    def from_hf(
        cls,
        tokenizer: Any,
        *,
        chat_template: str | None = None,
        stop_ids: Iterable[int] | None = None,
        **template_kwargs: Any,
    ) -> ChatTokenizer:
        """Wrap a fast ``transformers`` tokenizer; its chat template (or ``chat_template``) renders.

        ``template_kwargs`` go to every ``apply_chat_template`` call (``enable_thinking=False``...).
        Stop ids default to the eos token and every added token spelled like an end of turn.
        """
        template = chat_template or getattr(tokenizer, "chat_template", None)

        def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, generation: bool) -> str:
            return tokenizer.apply_chat_template(
                messages,
                tools=tools or None,
                add_generation_prompt=generation,
                tokenize=False,
                chat_template=template,
                **template_kwargs,
            )

        if stop_ids is None:
            added = tokenizer.get_added_vocab()
            stops = {i for t, i in added.items() if _looks_like_end_of_turn(t)}
            if tokenizer.eos_token_id is not None:
                stops.add(tokenizer.eos_token_id)
            stop_ids = stops
        chat = cls(
            Vocab.from_hf(tokenizer),
            _plain_encoder(tokenizer),
            render=render if template else None,
            stop_ids=stop_ids,
            name=getattr(tokenizer, "name_or_path", None) or type(tokenizer).__name__,
        )
        backend = getattr(tokenizer, "backend_tokenizer", None)
        batch = getattr(backend, "encode_batch_fast", None) or getattr(backend, "encode_batch", None)
        if batch is not None:
            chat._encode_batch = lambda texts: [e.ids for e in batch(texts, add_special_tokens=False)]
            chat.special_tokens_split = _split_added_tokens(tokenizer)
            chat.special_split = _alternation(chat.special_tokens_split)
        return chat

    @classmethod
    def of(cls, tokenizer: Any) -> ChatTokenizer:
        """``tokenizer`` itself if it is a ChatTokenizer, else :meth:`from_hf` made once per
        tokenizer object (reading a vocabulary takes a while; an episode is one rollout)."""
        if isinstance(tokenizer, ChatTokenizer):
            return tokenizer
        if not (hasattr(tokenizer, "apply_chat_template") and hasattr(tokenizer, "backend_tokenizer")):
            raise ToolwireError(f"need a fast transformers tokenizer or a ChatTokenizer, not {type(tokenizer).__name__}")
        wrapped = _WRAPPED.get(tokenizer)
        if wrapped is None:
            wrapped = _WRAPPED[tokenizer] = cls.from_hf(tokenizer)
        return wrapped

    @property
    def has_template(self) -> bool:
        return self._render is not None

    def encode(self, text: str) -> list[int]:
        if not text:
            return []
        if self._split is None:
            return list(self._encode_plain(text))
        ids: list[int] = []
        for piece in self._split.split(text):
            if piece in self.special_tokens:
                ids.append(self.special_tokens[piece])
            elif piece:
                ids.extend(self._encode_plain(piece))
        return ids

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """:meth:`encode` of each text, in one batched call where the tokenizer has one."""
        if self._encode_batch is not None:
            return [list(ids) for ids in self._encode_batch(texts)] if texts else []
        return [self.encode(t) for t in texts]

    def token_bytes(self, token_id: int) -> bytes:
        return self.vocab.token_bytes(token_id) or b""

    def _table(self) -> list[bytes]:
        """Each id's bytes by id, made on first use (an episode decodes and measures a few ids
        per turn; a Python list lookup is cheaper than a call into the vocabulary)."""
        if self._bytes is None:
            self._bytes = [self.token_bytes(i) for i in range(len(self.vocab))]
        return self._bytes

    def token_lengths(self, ids: Sequence[int]) -> list[int]:
        """The byte length of each id's text (from a table of them by id, made on first use:
        every envelope measures its ids)."""
        if self._lengths is None:
            self._lengths = list(map(len, self._table()))
        try:
            return list(map(self._lengths.__getitem__, ids))
        except IndexError:  # an id past the table (a sparse vocabulary)
            return [len(self.token_bytes(i)) for i in ids]

    def _bytes_of(self, ids: Sequence[int]) -> list[bytes]:
        table = self._table()
        try:
            return list(map(table.__getitem__, ids))
        except IndexError:  # an id past the table (a sparse vocabulary)
            return [self.token_bytes(i) for i in ids]

    def envelope_cache(self, tools: list[dict[str, Any]] | None) -> dict[Any, Any]:
        """The envelope cache of episodes with these tools (:func:`toolwire.rl.envelope.template_envelope`),
        kept for the most recent tool sets."""
        key = json.dumps(tools or [], sort_keys=True)
        cache = self._envelope_caches.pop(key, None)
        if cache is None:
            cache = {}
            if len(self._envelope_caches) >= 64:
                del self._envelope_caches[next(iter(self._envelope_caches))]
        self._envelope_caches[key] = cache
        return cache

    def token_text(self, token_id: int) -> str:
        return (self.vocab.token_bytes(token_id) or b"").decode("utf-8", "replace")

    def decode(self, ids: Sequence[int]) -> str:
        """Text of the ids, special tokens spelled out (bytes joined first: split characters mend)."""
        return b"".join(self._bytes_of(ids)).decode("utf-8", "replace")

    def render(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, add_generation_prompt: bool
    ) -> str | list[int]:
        if self._render is None:
            raise ToolwireError(f"{self.name} has no chat template: pass prompt ids, or a render function")
        return self._render(messages, tools, add_generation_prompt)

    def render_ids(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, add_generation_prompt: bool
    ) -> list[int]:
        out = self.render(messages, tools, add_generation_prompt)
        return self.encode(out) if isinstance(out, str) else list(out)


def _plain_encoder(tokenizer: Any) -> Callable[[str], Sequence[int]]:
    """``tokenizer.encode(text, add_special_tokens=False)``, straight from the Rust backend of a
    fast tokenizer when it has one (the same ids, without transformers' per-call overhead)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "encode"):
        return lambda text: backend.encode(text, add_special_tokens=False).ids
    return lambda text: tokenizer.encode(text, add_special_tokens=False)


_WRAPPED: weakref.WeakKeyDictionary[Any, ChatTokenizer] = weakref.WeakKeyDictionary()


def _alternation(tokens: Mapping[str, int]) -> re.Pattern[str] | None:
    """One group matching any of ``tokens``, the longest first where several start at a place."""
    if not tokens:
        return None
    return re.compile("(" + "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)) + ")")


def _split_added_tokens(tokenizer: Any) -> dict[str, int]:
    """The added tokens a ``transformers`` tokenizer is known to split its input at, whatever
    stands around them: not ``single_word`` (matched only between non-word characters), not
    matched after normalization when there is a normalizer, and not inside another added token
    (where the longer one could take its place)."""
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    normalizes = getattr(tokenizer.backend_tokenizer, "normalizer", None) is not None
    texts = {t.content: i for i, t in added.items() if t.content and "\0" not in t.content}
    every = "\0".join(texts)
    return {
        text: i
        for text, i in texts.items()
        if not getattr(added[i], "single_word", True)
        and not (normalizes and getattr(added[i], "normalized", True))
        and every.count(text) == 1
    }


def _looks_like_end_of_turn(text: str) -> bool:
    return text in ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<|call|>", "<|return|>", "<end_of_turn>",
                    "<|END_OF_TURN_TOKEN|>", "<|user|>", "<|observation|>", "</s>", "<｜end▁of▁sentence｜>")
