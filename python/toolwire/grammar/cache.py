"""Compiled grammars cached per (tokenizer, tag), the tag's canonical JSON (the key), and a
per-tokenizer index of token texts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import xgrammar as xgr
from xgrammar.structural_tag import (
    StructuralTag,
)

from toolwire import ToolwireError

from .subset import _first_line

_VOCAB_LOCK = threading.Lock()


_VOCAB_INDEX: dict[int, tuple[Any, dict[str, int]]] = {}


def _vocab_index(info: xgr.TokenizerInfo) -> dict[str, int]:
    with _VOCAB_LOCK:
        hit = _VOCAB_INDEX.get(id(info))
        if hit is not None and hit[0] is info:
            return hit[1]
    index: dict[str, int] = {}
    for i, tok in enumerate(info.decoded_vocab):
        if isinstance(tok, bytes):
            try:
                tok = tok.decode("utf-8")
            except UnicodeDecodeError:
                continue
        index.setdefault(tok, i)
    with _VOCAB_LOCK:
        _VOCAB_INDEX[id(info)] = (info, index)
    return index


def tag_json(tag: StructuralTag | Mapping[str, Any] | str) -> str:
    """The canonical JSON text of a tag (the cache key): pydantic's field order, dict order kept
    (property order matters to the grammar)."""
    if isinstance(tag, StructuralTag):
        return tag.model_dump_json()
    return StructuralTag.from_json(tag if isinstance(tag, (str, dict)) else dict(tag)).model_dump_json()


class GrammarCache:
    """Compiled grammars keyed by (tokenizer, canonical tag JSON), least recently used first out.

    Compiling a structural tag costs about 20-25 ms per tool on a 150k vocabulary; a hit costs a
    dictionary lookup. One ``xgrammar.GrammarCompiler`` is kept per tokenizer (its own cache off).
    Thread-safe; two threads missing on the same key may both compile.
    """

    def __init__(self, maxsize: int = 256, *, max_threads: int = 1):
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.max_threads = max_threads
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[int, str], xgr.CompiledGrammar] = OrderedDict()
        self._compilers: dict[int, tuple[xgr.TokenizerInfo, xgr.GrammarCompiler]] = {}

    def compiler(self, tokenizer_info: xgr.TokenizerInfo) -> xgr.GrammarCompiler:
        with self._lock:
            entry = self._compilers.get(id(tokenizer_info))
            if entry is not None and entry[0] is tokenizer_info:
                return entry[1]
        compiler = xgr.GrammarCompiler(tokenizer_info, max_threads=self.max_threads, cache_enabled=False)
        with self._lock:
            self._compilers[id(tokenizer_info)] = (tokenizer_info, compiler)
        return compiler

    def get(self, tag: StructuralTag | Mapping[str, Any] | str, tokenizer_info: xgr.TokenizerInfo) -> xgr.CompiledGrammar:
        """The compiled grammar for ``tag``, compiling it on a miss."""
        key = (id(tokenizer_info), tag_json(tag))
        compiler = self.compiler(tokenizer_info)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit
            self.misses += 1
        try:
            compiled = compiler.compile_structural_tag(key[1])
        except Exception as e:
            raise ToolwireError(f"xgrammar could not compile the tag: {_first_line(e)}") from None
        with self._lock:
            self._entries[key] = compiled
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return compiled

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0


default_cache = GrammarCache()


def compile(
    tag: StructuralTag | Mapping[str, Any] | str,
    tokenizer_info: xgr.TokenizerInfo,
    *,
    cache: GrammarCache | None = None,
) -> xgr.CompiledGrammar:
    """Compile ``tag`` for ``tokenizer_info`` through ``cache`` (default: :data:`default_cache`)."""
    return (cache if cache is not None else default_cache).get(tag, tokenizer_info)
