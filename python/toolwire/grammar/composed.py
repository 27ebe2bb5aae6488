"""Composed constrained decoding: the format's scaffolding from one tool-independent grammar,
each tool's call from a grammar compiled for that tool alone, cached across requests.

xgrammar compiles a structural tag as a whole, about 20-30 ms per strict tool on a 150k
vocabulary, again for every distinct tool list. Here a request's grammar is put together from:

* the *scaffold*: the request's structural tag (:func:`toolwire.grammar.structural_tag`'s, built
  by the same code) with every tool's call replaced by one stand-in call whose begin is the part
  of the format's call begin before the tool's name (``<tool_call>\\n{"name": "``) and whose
  arguments are a sentinel. It depends on the format, the mode, ``parallel_tool_calls`` and the
  reasoning setting only, so it is compiled once per tokenizer and kept;
* each tool's *piece*: that tool's call tag alone (begin with its name, arguments, end), compiled
  the first time a call of it starts (or ahead, :meth:`ComposedGrammar.prefetch`) and kept in a
  byte-bounded LRU (:class:`PieceCache`) keyed by (tokenizer, format, the tag's JSON, which holds
  the tool's schema in the schema mode's reading).

A :class:`ComposedMatcher` runs the scaffold until it is inside a call begin (its forced
continuation reaches the sentinel), then follows the tools whose begin agrees with the text so
far (the names as literals, over the vocabulary's bytes; a tool's piece once its name is written),
and when the piece has read the call's end it hands the scaffold the stand-in call and the rest of
the token. Its masks equal the whole tag's bit for bit, because each token is judged by the part of
the grammar its bytes fall in:

* a token that stays in the scaffold, in one tool's begin or in one piece is judged by it;
* a token that crosses from a begin into the arguments is checked against the piece;
* a token that crosses a call's end into what follows is checked against the scaffold after the
  stand-in call (the call's end is forced there, so such tokens start with the forced text);
* a token that would cross from scaffold text through the whole name-free begin into a name, or
  past a call's complete end text from inside the arguments, is judged wrongly by the pieces:
  :func:`compose` refuses (falls back to the whole tag) when the vocabulary holds one.

Where a request cannot be composed (per-turn formats, a begin with no text before the name, a
vocabulary with such crossing tokens, token-id markers via ``vocab=``), :func:`compose` returns
a grammar on the whole tag (``ComposedGrammar.fallback`` says why), with the same matcher API.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xgrammar as xgr
from xgrammar.structural_tag import ConstStringFormat, StructuralTag, TagFormat

from toolwire import ToolwireError
from toolwire._core import StateKeyer, StateKeyPlan
from toolwire.masks import _digest

from .cache import tag_json
from .calls import _call_tag, _ToolTags
from .format_view import _format, _turn_channels
from .pieces import PieceCache, _Lru, _set_bits, _vocab, default_pieces
from .tags import _build, structural_tag
from .tools import _read, _Request

#: The stand-in call's arguments in the scaffold: no tool name or argument text holds it.
SENTINEL = "\x01\x02\x03"

#: Formats composed; the differential suite (``tests/test_composed.py``) checks each one against
#: the whole tag. Others get the whole tag until it does.
COMPOSED_FORMATS = frozenset(
    {"hermes", "qwen3_coder", "deepseek_v3_2", "kimi_k2", "deepseek_v3", "deepseek_v4", "dots", "ernie45", "functiongemma", "gemma4", "harmony", "internlm", "longcat", "minimax_m2", "minimax_m3", "seed_oss", "step3"}
)


class ComposedMismatch(ToolwireError):
    """A part of the composed grammar refused text another part allowed (a bug, never input)."""


def _lcp(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class _Scaffold:
    info: xgr.TokenizerInfo
    compiled: xgr.CompiledGrammar
    tag: StructuralTag
    head: str  # the call begin before the name
    end: str
    refusal: str | None  # why this tokenizer's vocabulary cannot be composed for it
    plan: StateKeyPlan  # the mask cache's keys for the scaffold's states
    stops: frozenset[int]


_SCAFFOLDS = _Lru(64)


def _scaffold(info: xgr.TokenizerInfo, fmt: Any, mode: str, parallel: bool, reasoning: Any, compiler: xgr.GrammarCompiler) -> _Scaffold:
    key = (id(info), fmt.name, mode, parallel, repr(reasoning))
    hit = _SCAFFOLDS.get(key)
    if hit is not None and hit.info is info:
        return hit  # type: ignore[no-any-return]
    head = fmt.begin.split("{name}", 1)[0]
    stand_in = TagFormat(begin=head, content=ConstStringFormat(value=SENTINEL), end=fmt.end)
    probe = _read(fmt.name, [{"type": "function", "function": {"name": "x"}}], "required" if mode == "named" else mode, reasoning=reasoning)
    tag = _build(fmt, probe.tools, mode, parallel, "auto", reasoning, None, tool_tags=lambda _t: stand_in)  # type: ignore[arg-type]
    vocab = _vocab(info)
    markers = [t for _, t, _ in fmt.markers] + list(fmt.call_triggers()) + list(fmt.section or ()) + list(fmt.reasoning or ())
    ambiguous = max([_lcp(head, m) for m in markers if m] + [0])
    refusal = None
    tail = head[min(ambiguous, len(head) - 1) :].encode()
    crossing = vocab.containing(tail)
    if crossing:
        refusal = f"tokens cross the name-free call begin into a name ({crossing[0]!r})"
    elif fmt.end and vocab.containing(fmt.end.encode()):
        refusal = f"tokens cross the call end {fmt.end!r} into what follows"
    plan = _key_plan(tag_json(tag))
    built = _Scaffold(info, compiler.compile_structural_tag(tag), tag, head, fmt.end, refusal, plan, frozenset(info.stop_token_ids))
    _SCAFFOLDS.put(key, built)
    return built


def _key_plan(tag_text: str) -> StateKeyPlan:
    """The state keys of a tag's grammar (``toolwire.masks.BatchMasker``'s, named by the tag)."""
    return StateKeyPlan.from_tag(_digest(b"tag:" + tag_text.encode()), tag_text)


#: Key plans of tools' pieces, by the piece's key.
_PIECE_PLANS = _Lru(4096)


#: Masks over several tools' begins, by (tokenizer, the tools, bytes read): shared by requests.
_LITERAL_MASKS = _Lru(1024)


@dataclass
class _Tool:
    name: str
    tag: TagFormat
    begin: bytes
    key: tuple[Any, ...]


@dataclass
class ComposedGrammar:
    """One request's grammar: the scaffold, and its tools' call tags (compiled on need)."""

    tokenizer_info: xgr.TokenizerInfo
    format: str
    _whole_tag: Callable[[], StructuralTag | None]
    tools: list[_Tool] = field(default_factory=list)
    scaffold: _Scaffold | None = None
    fallback: str | None = None
    pieces: PieceCache = field(default_factory=lambda: default_pieces)
    compiler: xgr.GrammarCompiler | None = None
    _whole: xgr.CompiledGrammar | None = None
    _whole_json: str | None = None
    #: (call text, token) -> the tools whose begins still agree, where all are in their begins.
    literal_steps: dict[Any, list[_Branch]] = field(default_factory=dict)
    _entry: list[_Branch] | None = None
    #: call text -> the row where all tools agreeing with it are in their begins.
    _literal_rows: dict[bytes, np.ndarray] = field(default_factory=dict)
    _extras: dict[Any, np.ndarray] = field(default_factory=dict)

    def piece(self, i: int) -> xgr.CompiledGrammar:
        """Tool ``i``'s compiled call grammar (from the cache, or compiled now)."""
        tool = self.tools[i]
        compiler = self.compiler
        assert compiler is not None
        return self.pieces.get(tool.key, lambda: compiler.compile_structural_tag(StructuralTag(format=tool.tag)))

    def entry_branches(self) -> list[_Branch]:
        """Every tool, at the start of its begin."""
        if self._entry is None:
            self._entry = [_Branch(i) for i in range(len(self.tools))]
        return self._entry

    def piece_plan(self, i: int) -> StateKeyPlan:
        """The mask cache's keys for tool ``i``'s piece."""
        key = self.tools[i].key
        plan = _PIECE_PLANS.get(key)
        if plan is None:
            # The keyer follows a tag inside a section of calls; the piece is such a section of
            # one call, and keys are only asked for before its end.
            call = self.tools[i].tag.model_dump_json()
            plan = _key_plan('{"type": "tags_with_separator", "tags": [' + call + '], "separator": ""}')
            _PIECE_PLANS.put(key, plan)
        return plan  # type: ignore[no-any-return]

    def prefetch(self, executor: Any = None) -> Any:
        """Compile every tool's piece now (on ``executor``, a ``concurrent.futures`` executor,
        when given: xgrammar compiles without the GIL). Returns the futures, or None."""
        if executor is None:
            for i in range(len(self.tools)):
                self.piece(i)
            return None
        return [executor.submit(self.piece, i) for i in range(len(self.tools))]

    @property
    def whole_tag(self) -> StructuralTag | None:
        """The request's whole structural tag (built on first use: composing needs none)."""
        return self._whole_tag()

    def whole_tag_json(self) -> str:
        """The whole tag's JSON text (:func:`toolwire.grammar.tag_json`), kept."""
        if self._whole_json is None:
            self._whole_json = tag_json(self.whole_tag)  # type: ignore[arg-type]
        return self._whole_json

    def whole(self) -> xgr.CompiledGrammar:
        """The whole structural tag, compiled (the fallback and the reference)."""
        if self._whole is None:
            tag = self.whole_tag
            assert self.compiler is not None and tag is not None
            self._whole = self.compiler.compile_structural_tag(tag)
        return self._whole

    def matcher(self) -> ComposedMatcher | xgr.GrammarMatcher:
        """A new matcher: composed, or xgrammar's on the whole tag for a fallback."""
        if self.fallback is not None:
            return xgr.GrammarMatcher(self.whole())
        return ComposedMatcher(self)

    def literal_mask(self, branches: tuple[int, ...], pos: int) -> np.ndarray:
        """Tokens that continue the begins of ``branches`` (tool indices) from byte ``pos``:
        prefixes of the rest, and texts running past a begin that its piece accepts."""
        key = (id(self.tokenizer_info), tuple(self.tools[i].key for i in branches), pos)
        row = _LITERAL_MASKS.get(key)
        if row is not None:
            return row  # type: ignore[no-any-return]
        vocab = _vocab(self.tokenizer_info)
        row = np.zeros(vocab.words, dtype=np.uint32)
        for i in branches:
            rest = self.tools[i].begin[pos:]
            for n in range(1, min(len(rest), vocab.longest) + 1):
                ids = vocab.by_bytes.get(rest[:n])
                if ids:
                    _set_bits(row, ids)
            longer = vocab.extending(rest)
            if longer:
                probe = xgr.GrammarMatcher(self.piece(i))
                probe.accept_string(self.tools[i].begin)
                for text in longer:
                    if probe.accept_string(text[len(rest) :]):
                        probe.rollback(1)
                        _set_bits(row, vocab.by_bytes[text])
        _LITERAL_MASKS.put(key, row)
        return row

    def extras(self, after_call: Callable[[], xgr.GrammarMatcher], forced: bytes, calls: int) -> np.ndarray:
        """Tokens that spell the forced rest of a call's end and run on into what the scaffold
        allows after the call (``after_call``: the scaffold there)."""
        key = (forced, min(calls, 1))
        row = self._extras.get(key)
        if row is not None:
            return row
        vocab = _vocab(self.tokenizer_info)
        row = np.zeros(vocab.words, dtype=np.uint32)
        longer = vocab.extending(forced)
        scaffold = after_call() if longer else None
        for text in longer:
            if scaffold.accept_string(text[len(forced) :]):  # type: ignore[union-attr]
                scaffold.rollback(1)  # type: ignore[union-attr]
                _set_bits(row, vocab.by_bytes[text])
        self._extras[key] = row
        return row


_COMPILERS: dict[int, tuple[xgr.TokenizerInfo, xgr.GrammarCompiler]] = {}


def _compiler(info: xgr.TokenizerInfo) -> xgr.GrammarCompiler:
    hit = _COMPILERS.get(id(info))
    if hit is None or hit[0] is not info:
        hit = _COMPILERS[id(info)] = (info, xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False))
    return hit[1]




def compose(
    format: str,
    tools: Sequence[Mapping[str, Any]] | None,
    tokenizer_info: xgr.TokenizerInfo,
    tool_choice: Any = "auto",
    parallel_tool_calls: bool | None = True,
    schema: str = "auto",
    reasoning: Any = None,
    *,
    constrained_tools: Sequence[str] | None = None,
    pieces: PieceCache | None = None,
) -> ComposedGrammar:
    """The composed grammar of the request whose whole tag is ``structural_tag(format, tools,
    tool_choice, parallel_tool_calls, scope="always", schema=schema, reasoning=reasoning,
    constrained_tools=constrained_tools)``; nothing per tool is compiled here.

    Raises:
        ToolwireError: what :func:`toolwire.grammar.structural_tag` raises.
    """
    pieces = pieces if pieces is not None else default_pieces
    texts = None if tools is None else tuple(map(_identity, tools))
    key = (id(tokenizer_info), id(pieces), texts, repr((format, tool_choice, parallel_tool_calls, schema, reasoning, constrained_tools)))
    hit = _COMPOSED.get(key)
    if hit is not None and hit.tokenizer_info is tokenizer_info and hit.pieces is pieces:
        return hit  # type: ignore[no-any-return]
    grammar = _compose(format, tools, texts, tokenizer_info, tool_choice, parallel_tool_calls, schema, reasoning, constrained_tools, pieces)
    _COMPOSED.put(key, grammar)
    return grammar


#: Composed grammars by request (tokenizer, piece cache, the request's text): a repeated request
#: reads nothing again.
_COMPOSED = _Lru(256)


def _compose(
    format: str,
    tools: Sequence[Mapping[str, Any]] | None,
    texts: tuple[bytes | str, ...] | None,
    tokenizer_info: xgr.TokenizerInfo,
    tool_choice: Any,
    parallel_tool_calls: bool | None,
    schema: str,
    reasoning: Any,
    constrained_tools: Sequence[str] | None,
    pieces: PieceCache,
) -> ComposedGrammar:
    fmt = _format(format)
    compiler = _compiler(tokenizer_info)
    built: list[StructuralTag | None] = []

    def whole() -> StructuralTag | None:
        if not built:
            built.append(structural_tag(format, tools, tool_choice, parallel_tool_calls, "always", schema, reasoning, constrained_tools=constrained_tools))  # type: ignore[arg-type]
        return built[0]

    grammar = ComposedGrammar(tokenizer_info, fmt.name, whole, pieces=pieces, compiler=compiler)
    if _turn_channels(fmt):
        grammar.fallback = "per-turn formats (channels) hold the whole turn in one tag"
        return grammar
    if fmt.name not in COMPOSED_FORMATS:
        grammar.fallback = f"format {fmt.name!r} is not checked against the whole tag by the differential suite yet"
        return grammar
    read = _read_seen(fmt.name, tools, texts, tool_choice, reasoning, schema)
    allowed = read.allowed_of(read.tools)
    if read.mode == "none" or not allowed:
        grammar.fallback = "no calls: the exclusion tag is compiled whole (it has no tools)"
        return grammar
    head = fmt.begin.split("{name}", 1)[0]
    if "{name}" not in fmt.begin or not head or fmt.section is not None and not fmt.section[0]:
        grammar.fallback = f"format {fmt.name!r}: no call text before the tool's name, or a section without a begin"
        return grammar
    scaffold = _scaffold(tokenizer_info, fmt, read.mode, parallel_tool_calls is not False, reasoning, compiler)
    if scaffold.refusal:
        grammar.fallback = scaffold.refusal
        return grammar
    if constrained_tools is not None:
        whole()  # checks the names
    constrained = frozenset(constrained_tools) if constrained_tools is not None else None
    tags = _ToolTags(fmt, read.schema, None)
    text_of = dict(zip((t.name for t in read.tools), texts or ()))
    for t in allowed:
        free = constrained is not None and t.name not in constrained
        grammar.tools.append(_tool_entry(tokenizer_info, fmt, read.schema, t, text_of[t.name], free, tags))
    grammar.scaffold = scaffold
    return grammar


def _identity(tool: Any) -> bytes | str:
    """A tool's value as a key: its ``marshal`` bytes (plain dicts, lists and scalars, fast),
    else its ``repr``."""
    try:
        return marshal.dumps(tool)
    except ValueError:
        return repr(tool)


#: Tools as the core read them, by (format, the tool's text as given).
_READ_TOOLS = _Lru(4096)


def _read_seen(format: str, tools: Sequence[Mapping[str, Any]] | None, texts: tuple[bytes | str, ...] | None, tool_choice: Any, reasoning: Any, schema: str) -> _Request:
    """:func:`toolwire.grammar.tools._read`, without reading again the tools read before: each
    of those passed the core's checks of one tool, so the core reads the list as stand-ins that
    carry their names (which it checks for repeats and the choice against)."""
    if texts:
        seen = [_READ_TOOLS.get((format, t)) for t in texts]
        if all(s is not None and not s.custom for s in seen):
            names = [{"type": "function", "function": {"name": s.name}} for s in seen]  # type: ignore[union-attr]
            read = _read(format, names, tool_choice, reasoning=reasoning, schema=schema)
            return _Request(seen, read.mode, read.allowed, read.schema)  # type: ignore[arg-type]
    read = _read(format, tools, tool_choice, reasoning=reasoning, schema=schema)
    if texts and len(read.tools) == len(texts):
        for text, tool in zip(texts, read.tools):
            _READ_TOOLS.put((format, text), tool)
    return read


_TOOL_ENTRIES = _Lru(4096)


def _tool_entry(info: xgr.TokenizerInfo, fmt: Any, schema_mode: str, tool: Any, text: bytes | str, free: bool, tags: _ToolTags) -> _Tool:
    """A tool's call tag and cache key, kept per (format, schema mode, the tool's text) so a
    request whose tools were seen builds no tag."""
    key = (id(info), fmt.name, schema_mode, free, text)
    hit = _TOOL_ENTRIES.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    tag = _call_tag(fmt, tool, None, free=True) if free else tags(tool)
    assert isinstance(tag.begin, str)  # markers as token ids are not composed (no vocab= here)
    entry = _Tool(tool.name, tag, tag.begin.encode(), (id(info), fmt.name, tag_json(StructuralTag(format=tag))))
    _TOOL_ENTRIES.put(key, entry)
    return entry


@dataclass
class _Branch:
    tool: int
    matcher: xgr.GrammarMatcher | None = None  # None: still in the begin's literal text


class ComposedMatcher:
    """A request's matcher over a :class:`ComposedGrammar`: ``accept_token``,
    ``fill_next_token_bitmask``, ``find_jump_forward_string``, ``rollback``, ``fork``,
    ``is_terminated``, ``is_completed``, as xgrammar's ``GrammarMatcher``.

    It also names its state for the mask cache (:meth:`cache_key`): a state keyer follows the
    text the scaffold read, another the current call's text while one tool is left. Keyers are
    fed in place; a rollback builds them again from the texts (kept as bytes)."""

    def __init__(self, grammar: ComposedGrammar, *, _copy: ComposedMatcher | None = None) -> None:
        assert grammar.scaffold is not None
        self.grammar = grammar
        self._vocab = _vocab(grammar.tokenizer_info)
        self._head = grammar.scaffold.head.encode()
        self._stand_in = (SENTINEL + grammar.scaffold.end).encode()
        self._end = grammar.scaffold.end.encode()
        self._keep = max(len(self._end) - 1, 1)
        self._stops = grammar.scaffold.stops
        if _copy is None:
            self._scaffold = xgr.GrammarMatcher(grammar.scaffold.compiled)
            self._branches: list[_Branch] | None = None  # None: in the scaffold
            self._pos = 0  # bytes of the call begin read (all branches agree)
            self._entry = 0  # bytes of the name-free head the scaffold had read
            self.calls = 0
            self._stext = bytearray()  # what the scaffold read (its keyer's text)
            self._call = bytearray()  # the current call's text, from the head's start
            self._skey = grammar.scaffold.plan.keyer()
            self._pkey: StateKeyer | None = None  # the piece's keyer, while one tool is left
            self._entry_key = b""  # the scaffold's key where the current call began
        else:
            self._scaffold = _copy._scaffold.fork()
            self._branches = None if _copy._branches is None else [_Branch(b.tool, b.matcher.fork() if b.matcher else None) for b in _copy._branches]
            self._pos, self._entry, self.calls = _copy._pos, _copy._entry, _copy.calls
            self._stext, self._call = bytearray(_copy._stext), bytearray(_copy._call)
            self._skey, self._entry_key = _copy._skey.__copy__(), _copy._entry_key
            self._pkey = None if _copy._pkey is None else _copy._pkey.__copy__()
        self._history: list[tuple[Any, list[tuple[xgr.GrammarMatcher, int]]]] = []
        self._scratch = xgr.allocate_token_bitmask(1, grammar.tokenizer_info.vocab_size)

    # state -----------------------------------------------------------------

    # Branch lists are replaced, never changed in place, so a state holds them as they are.

    def _state(self) -> Any:
        return (self._branches, self._pos, self._entry, self.calls, len(self._stext), self._call, len(self._call), self._entry_key)

    def _restore(self, state: Any, keyers: bool) -> None:
        self._branches, self._pos, self._entry, self.calls, stext, self._call, call, self._entry_key = state
        del self._stext[stext:]
        del self._call[call:]
        if keyers:
            self._skey = self.grammar.scaffold.plan.keyer()  # type: ignore[union-attr]
            if self._stext:
                self._skey.accept(0, bytes(self._stext))
            self._pkey = None
            self._sync_piece_keyer()

    def _feed_scaffold(self, token: int, data: bytes) -> None:
        self._stext += data
        self._skey.accept(token, data)

    def _sync_piece_keyer(self) -> None:
        """A keyer for the one tool left (fed the call so far), none otherwise."""
        one = self._branches is not None and len(self._branches) == 1 and self._branches[0].matcher is not None
        if not one:
            self._pkey = None
        elif self._pkey is None:
            self._pkey = self.grammar.piece_plan(self._branches[0].tool).keyer()  # type: ignore[index]
            self._pkey.accept(0, bytes(self._call))

    def cache_key(self) -> bytes | None:
        """The mask cache's key of this state's row, None where it is not cached: the scaffold's
        state key; in one tool's piece, the piece's state key with the scaffold's key where the
        call began (the tokens that run on past the call's end are the scaffold's there; that
        key holds the scaffold's state, so a first and a later call share rows wherever the
        scaffold's keyer says what follows them is the same)."""
        if self._branches is None:
            k = self._skey
            return b"S" + k.key() if k.cacheable else None
        k = self._pkey  # type: ignore[assignment]
        if k is not None and k.cacheable:
            return b"P" + k.key() + self._entry_key
        return None

    def is_terminated(self) -> bool:
        return self._branches is None and self._scaffold.is_terminated()

    def is_completed(self) -> bool:
        return self._branches is None and self._scaffold.is_completed()

    @property
    def in_call(self) -> bool:
        """True from inside a call's begin to its end."""
        return self._branches is not None

    def fork(self) -> ComposedMatcher:
        return ComposedMatcher(self.grammar, _copy=self)

    # masks -----------------------------------------------------------------

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> bool:
        if self._branches is None:
            return self._scaffold.fill_next_token_bitmask(bitmask, index)
        bitmask[index].copy_(_torch_row(self._mask()))
        return True

    def _one_matcher(self) -> xgr.GrammarMatcher | None:
        """The xgrammar matcher whose mask is this state's (the extras of a call's end aside):
        the scaffold's, or the one tool's piece; None where several begins are followed."""
        if self._branches is None:
            return self._scaffold
        if len(self._branches) == 1:
            return self._branches[0].matcher
        return None

    def _end_extras(self) -> np.ndarray | None:
        """In a single piece's end text: the tokens that run on past the call."""
        assert self._branches is not None and self._branches[0].matcher is not None
        row = None
        for forced in self._forced_ends(self._branches[0].matcher):
            extra = self.grammar.extras(self._after_call, forced, self.calls)
            row = extra if row is None else row | extra
        return row

    def _mask(self) -> np.ndarray:
        """The row where several tools' begins are followed (read-only)."""
        assert self._branches is not None
        rows = self.grammar._literal_rows
        text = bytes(self._call)
        row = rows.get(text) if self._pkey is None else None
        if row is not None:
            return row
        literal = tuple(b.tool for b in self._branches if b.matcher is None)
        if len(literal) == len(self._branches):  # all in their begins: the text decides which
            row = rows[text] = self.grammar.literal_mask(literal, self._pos)
            return row
        row = self.grammar.literal_mask(literal, self._pos).copy() if literal else np.zeros(self._vocab.words, dtype=np.uint32)
        for b in self._branches:
            if b.matcher is None:
                continue
            b.matcher.fill_next_token_bitmask(self._scratch, 0)
            row |= self._scratch[0].numpy().view(np.uint32)
            for forced in self._forced_ends(b.matcher):
                row |= self.grammar.extras(self._after_call, forced, self.calls)
        return row

    def _forced_ends(self, m: xgr.GrammarMatcher) -> list[bytes]:
        """The texts that complete the call from here when it is inside its end text: the rests
        of the end that the call's last bytes started. (A rest the grammar forces, JSON's end
        once the arguments close, is one of them too; the whole end is not, as no token runs on
        past a whole end: :func:`compose` refuses such a vocabulary.)"""
        end = self._end
        tail = bytes(self._call[-self._keep :])  # the call's last bytes
        out = []
        for j in range(len(end) - 1, 0, -1):  # shortest rest first
            if tail.endswith(end[:j]):
                rest = end[j:]
                if m.accept_string(rest):
                    if m.is_completed():
                        out.append(rest)
                    m.rollback(1)
        return out

    def _runs_on(self, rest: bytes) -> bool:
        """Whether the scaffold takes ``rest`` after the call."""
        s = self._after_call()
        return bool(s.accept_string(rest))

    def _after_call(self) -> xgr.GrammarMatcher:
        s = self._scaffold.fork()
        if not s.accept_string(self._head[self._entry :] + self._stand_in):
            raise ComposedMismatch("the scaffold refused the stand-in call")
        return s

    # tokens ----------------------------------------------------------------

    def accept_token(self, token: int) -> bool:
        state = self._state()
        steps: list[tuple[xgr.GrammarMatcher, int]] = []
        ok = self._accept(token, steps)
        if ok:
            self._history.append((state, steps))
        else:
            for m, n in steps:
                m.rollback(n)
            self._restore(state, keyers=False)  # keyers are fed only once a token is taken
        return ok

    def _accept(self, token: int, steps: list[tuple[xgr.GrammarMatcher, int]]) -> bool:
        if self._branches is None:
            if not self._scaffold.accept_token(token):
                return False
            steps.append((self._scaffold, 1))
            if token not in self._stops:
                self._feed_scaffold(token, self._vocab.token_bytes[token])
            self._enter_call()
            return True
        data = self._vocab.token_bytes[token] if 0 <= token < len(self._vocab.token_bytes) else b""
        if not data or token in self._stops:
            return False
        if self._pkey is not None and self._in_piece(token, data, steps):
            return True
        lits = self.grammar.literal_steps
        literal = self._pkey is None and all(b.matcher is None for b in self._branches)
        if literal:
            known = lits.get((bytes(self._call), token))
            if known is not None:
                self._branches = known
                self._pos += len(data)
                self._call += data
                self._settle()
                return True
        alive: list[_Branch] = []
        rest: bytes | None = None  # the token's bytes after a completed call
        for b in self._branches:
            tool = self.grammar.tools[b.tool]
            if b.matcher is None:
                left = tool.begin[self._pos :]
                if left.startswith(data) and len(data) < len(left):
                    alive.append(b)
                    continue
                if not data.startswith(left):
                    continue
                m = xgr.GrammarMatcher(self.grammar.piece(b.tool))
                m.accept_string(tool.begin)
                tail = data[len(left) :]
                if tail and not m.accept_string(tail):
                    continue
                alive.append(_Branch(b.tool, m))
                if m.is_completed():
                    rest = b""
                continue
            m = b.matcher
            if m.accept_token(token):
                steps.append((m, 1))
                alive.append(b)
                if m.is_completed():
                    rest = b""
                continue
            for forced in self._forced_ends(m):
                if data.startswith(forced) and len(data) > len(forced) and self._runs_on(data[len(forced) :]):
                    m.accept_string(forced)
                    steps.append((m, 1))
                    alive.append(b)
                    rest = data[len(forced) :]
                    break
        if not alive:
            return False
        if literal and rest is None and all(b.matcher is None for b in alive):
            lits[(bytes(self._call), token)] = alive  # _Branch objects without a matcher never change
        self._branches = alive
        self._pos += len(data)
        self._call += data
        if rest is not None:
            self._close_call(rest, steps)
        else:
            self._settle()
        return True

    def _settle(self) -> None:
        """Once one tool is left, its piece follows the rest of the begin (and judges the tokens
        that run on into the arguments)."""
        assert self._branches is not None
        if len(self._branches) == 1 and self._branches[0].matcher is None:
            tool = self._branches[0].tool
            m = xgr.GrammarMatcher(self.grammar.piece(tool))
            if not m.accept_string(self.grammar.tools[tool].begin[: self._pos]):
                raise ComposedMismatch("a tool's piece refused its own begin")
            self._branches = [_Branch(tool, m)]
        self._sync_piece_keyer()

    def _in_piece(self, token: int, data: bytes, steps: list[tuple[xgr.GrammarMatcher, int]]) -> bool:
        """The common step: one tool's piece takes the token (False: it does not, or only with
        the run-on past its end, which the general path judges)."""
        m = self._branches[0].matcher  # type: ignore[index]
        if not m.accept_token(token):  # type: ignore[union-attr]
            return False
        steps.append((m, 1))  # type: ignore[arg-type]
        self._pkey.accept(token, data)  # type: ignore[union-attr]
        self._pos += len(data)
        call = self._call
        call += data
        if (not self._end or call.endswith(self._end)) and m.is_completed():  # type: ignore[union-attr]
            self._close_call(b"", steps)
        return True

    def _close_call(self, rest: bytes, steps: list[tuple[xgr.GrammarMatcher, int]]) -> None:
        s = self._scaffold
        n = 0
        call = self._head[self._entry :] + self._stand_in
        if not s.accept_string(call):
            raise ComposedMismatch("the scaffold refused the stand-in call")
        n += 1
        if rest:
            if not s.accept_string(rest):
                raise ComposedMismatch(f"the scaffold refused {rest!r} after a call that the mask allowed")
            n += 1
        steps.append((s, n))
        self._feed_scaffold(0, call + rest)
        self._branches = None
        self._pkey = None
        self.calls += 1
        self._enter_call()

    def _enter_call(self) -> None:
        """Switch to the tools' begins when the scaffold's forced text reaches the stand-in."""
        if self._scaffold.is_terminated():
            return
        try:
            forced = self._scaffold.find_jump_forward_string()
        except UnicodeDecodeError:  # the scaffold stopped inside a character of the begin
            return
        at = forced.find(SENTINEL)
        if at < 0:
            return
        head = self._head.decode()
        if not head.endswith(forced[:at]):
            return  # forced text before the begin (a section's begin): still the scaffold's
        self._entry = len(head[: len(head) - at].encode())
        self._pos = self._entry
        self._call = bytearray(self._head[: self._entry])
        self._entry_key = self._skey.key()
        self._branches = self.grammar.entry_branches()
        self._settle()

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted tokens."""
        if n < 0 or n > len(self._history):
            raise ToolwireError(f"cannot roll back {n} tokens ({len(self._history)} accepted)")
        if not n:
            return
        for _ in range(n):
            state, steps = self._history.pop()
            for m, k in reversed(steps):
                m.rollback(k)
        self._restore(state, keyers=True)

    def find_jump_forward_string(self) -> str:
        if self._branches is None:
            if self._scaffold.is_terminated():
                return ""
            try:
                forced = self._scaffold.find_jump_forward_string()
            except UnicodeDecodeError:
                return ""
            at = forced.find(SENTINEL)
            return forced if at < 0 else forced[:at]
        if len(self._branches) == 1:
            b = self._branches[0]
            if b.matcher is not None:
                try:
                    return b.matcher.find_jump_forward_string()
                except UnicodeDecodeError:
                    return ""
            return self.grammar.tools[b.tool].begin[self._pos :].decode("utf-8", "ignore")
        rests = [self.grammar.tools[b.tool].begin[self._pos :] for b in self._branches if b.matcher is None]
        if len(rests) != len(self._branches):
            return ""
        common = rests[0][: min(map(len, rests))]
        while common and not all(r.startswith(common) for r in rests):
            common = common[:-1]
        return common.decode("utf-8", "ignore")


def _torch_row(row: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(row.view(np.int32))
