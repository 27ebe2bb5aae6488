"""Grammar masks for decode loops (needs ``xgrammar``).

``tokenizer_info`` builds an xgrammar ``TokenizerInfo`` from a :class:`toolwire.Vocab`, so the
grammar and the parser read tokens the same way; ``jump_forward`` turns the text a grammar forces
next into token ids; ``BatchMasker`` fills a batch's bitmask per step through a
:class:`toolwire.MaskCache`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from toolwire._core import MaskCache, StateKeyer, StateKeyPlan, TokenTable, ToolwireError, Vocab

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
    matcher: xgrammar.GrammarMatcher | MaskRequest,
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
        matcher: an xgrammar ``GrammarMatcher``, or a :class:`MaskRequest` of a
            :class:`BatchMasker` (then ``advance`` feeds its state keyer too, as it must); not
            changed unless ``advance``.
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
    request = matcher if isinstance(matcher, MaskRequest) else None
    if request is not None:
        matcher = request.matcher
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
            if request is not None:
                request.accept_token(token)
            else:
                matcher.accept_token(token)
    return JumpForward(text, ids)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


_TERMINATED = attrgetter("terminated")


class MaskCacheMismatch(ToolwireError):
    """Verify mode found a cached mask that differs from the grammar's own: a state key is unsound."""


class MaskRequest:
    """One request's matcher and state keyer; feed it with :meth:`accept_token` (or a batch with
    :meth:`BatchMasker.accept`)."""

    def __init__(self, masker: BatchMasker, matcher: Any, keyer: StateKeyer, gid: bytes) -> None:
        self._masker = masker
        self._matcher = matcher
        self.keyer = keyer
        self.grammar_id = gid
        self._stops = frozenset(matcher.stop_token_ids)
        self.terminated = False

    @property
    def matcher(self) -> Any:
        """The xgrammar matcher, brought up to date with every accepted token."""
        self.flush()
        return self._matcher

    @property
    def steps(self) -> int:
        """Tokens accepted so far."""
        return self.keyer.tokens + int(self.terminated)

    def flush(self) -> None:
        """Give the matcher the bytes of tokens accepted on a cached mask (see
        ``BatchMasker(defer_accept=True)``), in one ``accept_string``."""
        if self.keyer.deferred_tokens:
            n = self.keyer.deferred_tokens
            if not self._matcher.accept_string(self.keyer.take_deferred()):
                raise MaskCacheMismatch(
                    f"the matcher refused the text of {n} tokens that a cached mask allowed "
                    f"(state key {self.state_key().hex()}): a state key is unsound"
                )

    def accept_token(self, token: int) -> bool:
        """Accept a sampled token into the matcher (and the keyer); False when the grammar refuses it."""
        self.flush()
        if not self._matcher.accept_token(token):
            return False
        if token in self._stops and self._matcher.is_terminated():
            self.terminated = True
        else:
            self.keyer.accept(token, self._masker._token_bytes(token))
        return True

    def is_terminated(self) -> bool:
        return self.terminated

    def state_key(self) -> bytes:
        """The cache key of the current state (namespace and grammar included)."""
        return self._masker.namespace + self.keyer.key()


class BatchMasker:
    """Fills int32 ``[B, ceil(V / 32)]`` bitmasks for a batch of xgrammar matchers, skipping
    ``fill_next_token_bitmask`` when a request's state key is in the :class:`toolwire.MaskCache`.

    Keys come from toolwire's own reading of the output (``toolwire._core.StateKeyer``, in the
    Rust core's ``bitmask::key``; its module docs argue each anchor): for a
    structural tag passed to :meth:`new_request`, anchors in free text, after each call and
    inside plain JSON strings; without a tag, or for token-level tags, the whole output so far
    (hits only on shared prefixes). ``verify=True`` computes every hit's mask as well and raises
    :class:`MaskCacheMismatch` on any difference.

    Arguments:
        tokenizer_info: the xgrammar ``TokenizerInfo`` the grammars were compiled with.
        cache: a :class:`toolwire.MaskCache`; default: a new one of 64 MiB.
        verify: check every cache hit against the matcher.
        vocab: a :class:`toolwire.Vocab` with the same ids, for token bytes (faster than reading
            them from ``tokenizer_info``, about a second for 150k ids).
        namespace: bytes prefixed to every key. Maskers that share a cache must share a
            tokenizer; give them the same namespace to share entries. Default: random, so a
            shared cache never mixes vocabularies.
        batch_threads: ``max_threads`` of the xgrammar ``BatchGrammarMatcher`` that fills a
            step's misses (``"auto"``: xgrammar's choice).
        defer_accept: in :meth:`accept`, take a token without calling the matcher when the
            mask cached under the request's key (the mask of its last fill) allows it; the
            matcher reads the deferred bytes in one ``accept_string`` before it next fills a
            mask, and whenever :attr:`MaskRequest.matcher` is read. Same answers, same matcher
            state; the cost per token drops from one ``accept_token`` call to a share of one
            ``accept_string``. xgrammar counts each such run as one step for ``rollback``: pass
            False where the matcher must be rolled back token by token. Stop tokens, refused
            tokens and token-level grammars always go through ``accept_token``.

    Per step, :meth:`fill` is one Rust call for the whole batch (keys, lookups, copies of the
    cached rows into the bitmask), one xgrammar batch fill for the misses and one Rust call that
    stores them; :meth:`accept` is one ``accept_token`` per request and one Rust call that feeds
    every keyer (with ``defer_accept``, one Rust call that takes the tokens the cached masks
    allow, and ``accept_token`` only for the others).
    """

    def __init__(
        self,
        tokenizer_info: xgrammar.TokenizerInfo,
        *,
        cache: MaskCache | None = None,
        verify: bool = False,
        vocab: Vocab | None = None,
        namespace: bytes | None = None,
        batch_threads: int | str = "auto",
        defer_accept: bool = True,
    ) -> None:
        self._xgr = _xgrammar()
        self.tokenizer_info = tokenizer_info
        self.vocab_size: int = tokenizer_info.vocab_size
        self.words = (self.vocab_size + 31) // 32
        self.cache = cache if cache is not None else MaskCache(64 << 20)
        self.verify = verify
        self.defer_accept = defer_accept
        self.namespace = namespace if namespace is not None else os.urandom(8)
        stops = list(tokenizer_info.stop_token_ids)
        if vocab is not None:
            self._table = TokenTable.from_vocab(vocab, self.vocab_size, stops)
            self._bytes_of: Any = lambda t: vocab.token_bytes(t) or b""
        else:
            decoded = tokenizer_info.decoded_vocab
            self._table = TokenTable(list(decoded), stops)
            self._bytes_of = decoded.__getitem__
        self._batch = self._xgr.BatchGrammarMatcher(batch_threads)
        self._plans: dict[bytes, StateKeyPlan] = {}
        self._tag_ids: dict[int, tuple[Any, bytes]] = {}
        self._scratch = self._xgr.allocate_token_bitmask(1, self.vocab_size)
        self._int32 = _torch().int32
        self.hits = self.misses = self.verified = 0

    def _token_bytes(self, token: int) -> bytes:
        return self._bytes_of(token)

    def new_request(self, compiled_grammar: xgrammar.CompiledGrammar, tag: Any = None) -> MaskRequest:
        """A matcher for ``compiled_grammar`` with its keyer.

        Arguments:
            compiled_grammar: compiled with this masker's ``tokenizer_info``.
            tag: the structural tag it was compiled from (dict, JSON text or xgrammar
                ``StructuralTag``); enables anchored keys. JSON text is the cheapest: the same
                string object is read once per masker. Without it, keys cover the whole
                output (grammars are then told apart by their EBNF text).
        """
        if compiled_grammar.tokenizer_info.vocab_size != self.vocab_size:
            raise ToolwireError("the grammar was compiled for another vocabulary size")
        if tag is not None:
            seen = self._tag_ids.get(id(tag))
            if seen is not None and seen[0] is tag:
                gid = seen[1]
            else:
                from toolwire.grammar import tag_json

                text = tag_json(tag)
                gid = _digest(b"tag:" + text.encode())
                if isinstance(tag, (str, bytes)):  # immutable: the same object is the same tag
                    if len(self._tag_ids) >= 64:
                        self._tag_ids.pop(next(iter(self._tag_ids)))
                    self._tag_ids[id(tag)] = (tag, gid)
            if gid not in self._plans:
                from toolwire.grammar.engine_facts import objects_in_declared_order

                self._plans[gid] = StateKeyPlan.from_tag(gid, text, ordered_objects=objects_in_declared_order())
        else:
            gid = _digest(b"ebnf:" + str(compiled_grammar.grammar).encode())
            if gid not in self._plans:
                self._plans[gid] = StateKeyPlan.opaque(gid)  # unknown elements: key by token ids
        plan = self._plans[gid]
        matcher = self._xgr.GrammarMatcher(compiled_grammar)
        return MaskRequest(self, matcher, plan.keyer(), gid)

    def fill(
        self,
        requests: Sequence[MaskRequest | None],
        bitmask: Any = None,
        indices: Sequence[int] | None = None,
    ) -> Any:
        """Fill one bitmask row per request (row ``indices[i]`` for ``requests[i]``, default
        ``i``); a ``None`` request or a terminated one gets an all-allowed row. Returns the
        bitmask (allocated when not given: int32 CPU ``[len(requests), words]``)."""
        if bitmask is None:
            bitmask = self._xgr.allocate_token_bitmask(len(requests), self.vocab_size)
        if bitmask.dtype != self._int32 or bitmask.device.type != "cpu" or not bitmask.is_contiguous():
            raise ToolwireError("the bitmask must be a contiguous int32 CPU tensor")
        shape = bitmask.shape
        if len(shape) != 2 or shape[1] != self.words:
            raise ToolwireError(f"the bitmask must be [B, {self.words}], got {tuple(shape)}")
        n_rows = shape[0]
        if indices is None:
            rows = list(range(len(requests)))
        else:
            rows = indices.tolist() if hasattr(indices, "tolist") else [int(i) for i in indices]
        if len(rows) != len(requests) or (rows and (min(rows) < 0 or max(rows) >= n_rows)):
            raise ToolwireError("indices must give one in-range bitmask row per request")
        if None not in requests and not any(map(_TERMINATED, requests)):
            live, live_rows = requests, rows
        else:
            live, live_rows = [], []
            for request, row in zip(requests, rows):
                if request is None or request.terminated:
                    bitmask[row].fill_(-1)
                else:
                    live.append(request)
                    live_rows.append(row)
            if not live:
                return bitmask
        ptr = bitmask.data_ptr()
        keyers = [r.keyer for r in live]
        missed, copies = self.cache.unsafe_fill_rows(self.namespace, keyers, ptr, n_rows, self.words, live_rows)
        self.misses += len(missed)
        self.hits += len(live) - len(missed)
        if missed:
            matchers = [live[i].matcher for i in missed]  # brought up to date
            if len(missed) == 1:
                matchers[0].fill_next_token_bitmask(bitmask, live_rows[missed[0]])
            else:
                self._batch.batch_fill_next_token_bitmask(matchers, bitmask, [live_rows[i] for i in missed])
            self.cache.unsafe_store_rows(self.namespace, keyers, ptr, n_rows, self.words, live_rows, missed, copies)
        if self.verify:
            skip = set(missed)
            for i, (request, row) in enumerate(zip(live, live_rows)):
                if i not in skip:
                    self._check(request, bitmask[row], request.state_key())
        return bitmask

    def _check(self, request: MaskRequest, row: Any, key: bytes) -> None:
        scratch = self._scratch
        request.matcher.fill_next_token_bitmask(scratch, 0)  # flushes deferred tokens first
        self.verified += 1
        if not _torch().equal(scratch[0], row):
            diff = (scratch[0] ^ row).nonzero().flatten().tolist()
            raise MaskCacheMismatch(
                f"cached mask differs from the grammar's at step {request.steps} "
                f"(state key {key.hex()}, keyer mode {request.keyer.mode!r}, anchor {request.keyer.family!r}); "
                f"{len(diff)} words differ, first at word {diff[0]}"
            )

    def accept(self, requests: Sequence[MaskRequest | None], token_ids: Sequence[int]) -> list[bool]:
        """Accept one sampled token per request (``None`` requests and terminated ones are skipped
        and report True)."""
        out = [True] * len(requests)
        if hasattr(token_ids, "tolist"):
            token_ids = token_ids.tolist()
        if len(token_ids) != len(requests):
            raise ToolwireError("accept needs one token per request")
        if None not in requests and not any(map(_TERMINATED, requests)):
            live: Sequence[int] = range(len(requests))
            reqs = list(requests)
            tokens = [int(t) for t in token_ids]
        else:
            live = [i for i, r in enumerate(requests) if r is not None and not r.terminated]
            if not live:
                return out
            reqs = [requests[i] for i in live]
            tokens = [int(token_ids[i]) for i in live]
        if self.defer_accept:
            slow = self._table.feed_deferred(self.cache, self.namespace, [r.keyer for r in reqs], tokens)
            for k in slow:
                out[live[k]] = reqs[k].accept_token(tokens[k])
            return out
        # A loop of accept_token: xgrammar's batch_accept_token returns a container whose items
        # cost more to read than the calls they save.
        accepted = [r._matcher.accept_token(t) for r, t in zip(reqs, tokens)]
        if all(accepted):
            fed, toks = reqs, tokens
        else:
            fed = [r for r, ok in zip(reqs, accepted) if ok]
            toks = [t for t, ok in zip(tokens, accepted) if ok]
            for i, ok in zip(live, accepted):
                out[i] = ok
        for k in self._table.feed([r.keyer for r in fed], toks):
            request = fed[k]
            if request._matcher.is_terminated():
                request.terminated = True
            else:
                request.keyer.accept(toks[k], self._token_bytes(toks[k]))
        return out

    def stats(self) -> dict[str, Any]:
        """This masker's hits, misses and verified hits, and its cache's own counters."""
        return {"hits": self.hits, "misses": self.misses, "verified": self.verified, "cache": self.cache.stats()}


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:
        raise ImportError("BatchMasker needs torch for its bitmasks: pip install torch") from e
    return torch
