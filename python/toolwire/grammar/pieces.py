"""The caches composed grammars share: :class:`PieceCache` (compiled per-tool grammars, bounded
by their bytes), a small LRU map for derived values, and a tokenizer's token bytes indexed for the
literal and prefix lookups the composed matcher makes over the vocabulary.
"""

from __future__ import annotations

import bisect
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import xgrammar as xgr

from toolwire._core import TokenTable


class PieceCache:
    """Compiled grammars by key, least recently used first out, bounded by their bytes
    (xgrammar's ``memory_size_bytes``). Thread-safe; reports ``nbytes``, hits, misses, evictions."""

    def __init__(self, max_bytes: int = 256 << 20) -> None:
        if max_bytes <= 0:
            raise ValueError("max_bytes must be positive")
        self.max_bytes = max_bytes
        self.nbytes = 0
        self.hits = self.misses = self.evictions = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[Any, tuple[xgr.CompiledGrammar, int]] = OrderedDict()

    def get(self, key: Any, build: Callable[[], xgr.CompiledGrammar]) -> xgr.CompiledGrammar:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit[0]
            self.misses += 1
        compiled = build()
        size = int(compiled.memory_size_bytes) + 64 + (len(key[-1]) if isinstance(key, tuple) and isinstance(key[-1], str) else 0)
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (compiled, size)
                self.nbytes += size
                while self.nbytes > self.max_bytes and len(self._entries) > 1:
                    _, (_, gone) = self._entries.popitem(last=False)
                    self.nbytes -= gone
                    self.evictions += 1
        return compiled

    def __len__(self) -> int:
        return len(self._entries)

    def stats(self) -> dict[str, int]:
        return {"entries": len(self._entries), "nbytes": self.nbytes, "max_bytes": self.max_bytes, "hits": self.hits, "misses": self.misses, "evictions": self.evictions}


default_pieces = PieceCache()


class _Lru:
    """A small thread-safe LRU map (the module's caches of derived, immutable values), bounded by
    entries and/or by bytes: ``size(key, value)``, by default both :func:`_footprint`."""

    def __init__(self, maxsize: int | None = None, *, max_bytes: int | None = None, size: Callable[[Any, Any], int] | None = None) -> None:
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._size = size or (lambda key, value: _footprint(key) + _footprint(value))
        self._lock = threading.Lock()
        self._d: OrderedDict[Any, tuple[Any, int]] = OrderedDict()

    def get(self, key: Any) -> Any:
        # No lock (0.27 -> 0.07 µs, several a call on a matcher's path): the lookup and the move
        # are each atomic, and an entry evicted between them by another thread is a hit anyway.
        hit = self._d.get(key)
        if hit is None:
            return None
        try:
            self._d.move_to_end(key)
        except KeyError:
            pass
        return hit[0]

    def put(self, key: Any, value: Any) -> None:
        size = self._size(key, value) + 100 if self.max_bytes is not None else 0  # + the map's own entry
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            self._d[key] = (value, size)
            self.nbytes += size
            while len(self._d) > 1 and ((self.maxsize is not None and len(self._d) > self.maxsize) or (self.max_bytes is not None and self.nbytes > self.max_bytes)):
                _, (_, gone) = self._d.popitem(last=False)
                self.nbytes -= gone

    def __len__(self) -> int:
        return len(self._d)

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.nbytes = 0


_OPAQUE = (xgr.TokenizerInfo, xgr.CompiledGrammar, xgr.GrammarCompiler, xgr.GrammarMatcher, PieceCache, type, Callable)


def _footprint(value: Any) -> int:
    """About how many bytes ``value`` holds: ``sys.getsizeof`` over the containers, dataclasses
    and pydantic models it reaches, each object once (numpy arrays by their data). Shared
    objects (tokenizers, compiled grammars, caches, callables) are not counted."""
    seen: set[int] = set()
    stack = [value]
    total = 0
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, _OPAQUE):
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            total += o.nbytes + 112
            continue
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack += o.keys()
            stack += o.values()
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack += o
        elif hasattr(o, "__dict__") and not isinstance(o, (str, bytes, int, float)):
            stack.append(o.__dict__)
    return total


class _Vocab:
    """A tokenizer's token bytes as xgrammar reads them (ids with text, stop ids left out), by
    exact bytes and in sorted order for prefix lookups."""

    def __init__(self, info: xgr.TokenizerInfo) -> None:
        self.info = info
        self.size = info.vocab_size
        self.words = (self.size + 31) // 32
        stops = set(info.stop_token_ids)
        # Plain bytes and tuples: xgrammar hands out a bytes subclass with a ``__dict__``, and a
        # list per token would be as many objects for every full garbage collection to walk
        # (tuples of ints, like bytes, are not tracked once a collection has seen them).
        self.token_bytes: list[bytes] = [bytes(b) if isinstance(b, bytes) else b.encode() for b in info.decoded_vocab]
        ids: dict[bytes, list[int]] = {}
        for i, b in enumerate(self.token_bytes[: self.size]):
            if b and i not in stops:
                ids.setdefault(b, []).append(i)
        self.by_bytes: dict[bytes, tuple[int, ...]] = {b: tuple(i) for b, i in ids.items()}
        del ids
        self.sorted = sorted(self.by_bytes)
        self.longest = max(map(len, self.sorted))
        self._containing: dict[bytes, list[bytes]] = {}
        self._table: TokenTable | None = None

    def table(self) -> TokenTable:
        """The token bytes as a :class:`toolwire._core.TokenTable` (built once)."""
        if self._table is None:
            self._table = TokenTable(self.token_bytes[: self.size], list(self.info.stop_token_ids))
        return self._table

    def extending(self, prefix: bytes) -> list[bytes]:
        """The token texts that start with ``prefix`` and are longer."""
        out = []
        i = bisect.bisect_right(self.sorted, prefix)
        while i < len(self.sorted) and self.sorted[i].startswith(prefix):
            out.append(self.sorted[i])
            i += 1
        return out

    def containing(self, needle: bytes) -> list[bytes]:
        """Token texts holding ``needle`` with at least one byte after it (kept per needle)."""
        hit = self._containing.get(needle)
        if hit is None:
            hit = self._containing[needle] = [b for b in self.sorted if needle in b[:-1]]
        return hit


_VOCABS: dict[int, _Vocab] = {}
_VOCABS_LOCK = threading.Lock()


def _vocab(info: xgr.TokenizerInfo) -> _Vocab:
    with _VOCABS_LOCK:
        v = _VOCABS.get(id(info))
        if v is not None and v.info is info:
            return v
    v = _Vocab(info)
    with _VOCABS_LOCK:
        if len(_VOCABS) >= 4:
            _VOCABS.pop(next(iter(_VOCABS)))
        _VOCABS[id(info)] = v
    return v


def _set_bits(row: np.ndarray, ids: Sequence[int]) -> None:
    for t in ids:
        row[t >> 5] |= np.uint32(1 << (t & 31))
