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
* a token that finishes a begin that is a marker itself (``<tool_call>``, spelled out in free
  text) and runs on into a name is read by the scaffold up to the begin's end and by the tools'
  begins after it (``_Scaffold.cross``; the row there adds :meth:`ComposedGrammar.crossing_mask`);
* a token that holds a whole call end and more (``},`` where the end is ``}``) may complete the
  call from inside its arguments: it is split where the piece completes the call, and the rest
  is checked against the scaffold after the stand-in call (``_Scaffold.runs_on``; the rows of
  such a format's pieces carry the scaffold's name and whether a call came before);
* a token that would cross from scaffold text through the whole name-free begin into a name
  otherwise is judged wrongly by the pieces: :func:`compose` refuses (falls back to the whole
  tag) when the vocabulary holds one.

Where a request cannot be composed (per-turn formats, a begin with no text before the name, a
vocabulary with such crossing tokens, token-id markers via ``vocab=``), :func:`compose` returns
a grammar on the whole tag (``ComposedGrammar.fallback`` says why), with the same matcher API.
"""

from __future__ import annotations

import itertools
import marshal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xgrammar as xgr
from xgrammar.structural_tag import ConstStringFormat, StructuralTag, TagFormat

from toolwire._core import CallBegins, StateKeyPlan
from toolwire.masks import _digest

from .cache import tag_json
from .calls import _call_tag, _ToolTags
from .composed_keys import _CALL_STEPS
from .composed_matcher import _CLOSES as _KNOWN_ENDS
from .composed_matcher import _ENTRIES as _CALL_ENTRIES
from .composed_matcher import _LITERAL_ROWS, _LITERAL_SETS, _LITERAL_STEPS, SENTINEL, ComposedMatcher
from .composed_parts import ComposedMismatch, _Branch, _Literals
from .engine_facts import objects_in_declared_order
from .format_view import _format, _turn_channels
from .pieces import PieceCache, _Lru, _set_bits, _vocab, default_pieces
from .tags import _build, structural_tag
from .tools import _read, _Request

#: Formats composed; the differential suite (``tests/test_composed.py``) checks each one against
#: the whole tag. Others get the whole tag until it does.
COMPOSED_FORMATS = frozenset(
    {"hermes", "qwen3_coder", "glm47", "deepseek_v3_2", "kimi_k2", "deepseek_v3", "deepseek_v4", "dots", "ernie45", "functiongemma", "gemma4", "harmony", "internlm", "longcat", "minimax_m2", "minimax_m3", "seed_oss", "step3",
     "glm45", "hunyuan", "deepseek_v3_1", "poolside_v1", "solar_open2", "k2_horizon", "inkling", "plamo3", "kimi_k3", "minicpm5", "gigachat35", "iquest_q1",
     "llama3_json", "granite", "xlam", "jamba", "phi4", "cohere_command", "nemotron_deci", "hunyuan_a13b", "granite_20b_fc", "mistral"}
)


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
    #: Where the head is a marker itself: the bytes of it after which a token may finish it and
    #: run on into a name (``>s`` after a spelled-out ``<tool_call``), 0 where none can.
    cross: int = 0
    #: Whether tokens hold the whole call end and more (``},`` where the end is ``}``): such a
    #: token may complete a call from inside its arguments and run on (``ComposedMatcher._run_on``).
    runs_on: bool = False
    #: The text a call's last bytes end with: its end, or where it has none (mistral), the ``}``
    #: that closes its JSON arguments.
    last: bytes = b""
    #: Names the scaffold in keys (a digest of its tag).
    name: bytes = b""


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
    refusal, cross = None, 0
    tail = head[min(ambiguous, len(head) - 1) :].encode()
    crossing = vocab.containing(tail)
    if crossing and ambiguous == len(head):
        cross, refusal = _crossing_point(vocab, head.encode())
    elif crossing:
        refusal = f"tokens cross the name-free call begin into a name ({crossing[0]!r})"
    last = (fmt.end or "}").encode()
    runs_on = bool(vocab.containing(last))
    tag_text = tag_json(tag)
    plan = _key_plan(tag_text)
    name = _digest(b"scaffold:" + tag_text.encode())
    built = _Scaffold(info, compiler.compile_structural_tag(tag), tag, head, fmt.end, refusal, plan, frozenset(info.stop_token_ids), cross, runs_on, last, name)
    _SCAFFOLDS.put(key, built)
    return built


def _crossing_point(vocab: Any, head: bytes) -> tuple[int, str | None]:
    """Where a head that is a marker itself can be crossed from free text: a token that runs on
    into a name starts with the head's rest after ``k`` of its bytes (the text before it ends
    with the first ``k``; the scaffold's text was free until the token finished the marker) or
    holds the whole head. Composed where one ``k`` is such a place and no token holds the head:
    the matcher judges those tokens by the begins there (``ComposedMatcher._cross_into_call``).
    Returns (``k``, None) or (0, why not)."""
    whole = vocab.containing(head)
    if whole:
        return 0, f"tokens cross the name-free call begin into a name ({whole[0]!r})"
    places = [k for k in range(1, len(head)) if vocab.extending(head[k:])]
    if len(places) > 1:
        return 0, f"tokens cross the name-free call begin into a name after {len(places)} of its prefixes"
    if places and any(t[len(head) - places[0] :].startswith(SENTINEL[0].encode()) for t in vocab.extending(head[places[0] :])):
        return 0, "tokens run on from the call begin into the scaffold's stand-in"
    return (places[0] if places else 0), None


def _key_plan(tag_text: str) -> StateKeyPlan:
    """The state keys of a tag's grammar (``toolwire.masks.BatchMasker``'s, named by the tag)."""
    return StateKeyPlan.from_tag(_digest(b"tag:" + tag_text.encode()), tag_text, ordered_objects=objects_in_declared_order())


#: Key plans of tools' pieces, by the piece's key.
_PIECE_PLANS = _Lru(max_bytes=4 << 20, size=lambda key, plan: 5 * len(key[-1]) + 512)  # about a plan's bytes


#: Masks over several tools' begins, by (tokenizer, the tools, bytes read): shared by requests.
_LITERAL_MASKS = _Lru(max_bytes=8 << 20, size=lambda key, row: row.nbytes + 8 * len(key[1]) + 200)  # tool keys are shared

#: Matchers of tools' pieces that have read part of their begin, by (tool, bytes read): forked
#: where a call's tool is known (about 8 KiB each).
_BEGUN = _Lru(max_bytes=2 << 20, size=lambda key, m: 8 << 10)

#: Whole tags (and their JSON) of composed grammars, by the grammar's serial.
_WHOLE_TAGS = _Lru(max_bytes=4 << 20)

#: Whole-tag key plans of fallback grammars, by the tag's JSON.
_WHOLE_PLANS = _Lru(max_bytes=4 << 20, size=lambda text, plan: 5 * len(text) + 512)  # about a plan's bytes

_SERIALS = itertools.count()


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
    #: Names this grammar in the caches of values derived from it.
    serial: int = field(default_factory=lambda: next(_SERIALS))
    _entry: _Literals | None = None
    _begins: CallBegins | None = None
    _extras: dict[Any, Any] = field(default_factory=dict)  # a few rows: one per rest of the end, the head's crossing tokens, the run-on groups

    def piece(self, i: int) -> xgr.CompiledGrammar:
        """Tool ``i``'s compiled call grammar (from the cache, or compiled now)."""
        tool = self.tools[i]
        compiler = self.compiler
        assert compiler is not None
        return self.pieces.get(tool.key, lambda: compiler.compile_structural_tag(StructuralTag(format=tool.tag)))

    def begun(self, i: int, pos: int) -> xgr.GrammarMatcher:
        """A matcher of tool ``i``'s piece that has read the first ``pos`` bytes of its begin: a
        fork of one kept per (tool, ``pos``), cheaper than a new matcher reading them."""
        key = (self.tools[i].key, pos)
        m = _BEGUN.get(key)
        if m is None:
            m = xgr.GrammarMatcher(self.piece(i))
            if not m.accept_string(self.tools[i].begin[:pos]):
                raise ComposedMismatch("a tool's piece refused its own begin")
            _BEGUN.put(key, m)
        return m.fork()

    def entry_branches(self) -> _Literals:
        """Every tool, at the start of its begin."""
        if self._entry is None:
            self._entry = _Literals(_Branch(i) for i in range(len(self.tools)))
        return self._entry

    def call_begins(self) -> CallBegins:
        """Every tool's begin, for the keyers of a call's text among them."""
        if self._begins is None:
            self._begins = CallBegins([t.begin for t in self.tools])
        return self._begins

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

    def _whole_pair(self) -> tuple[StructuralTag | None, str]:
        pair = _WHOLE_TAGS.get(self.serial)
        if pair is None:
            tag = self._whole_tag()
            pair = (tag, tag_json(tag) if tag is not None else "")
            _WHOLE_TAGS.put(self.serial, pair)
        return pair  # type: ignore[no-any-return]

    @property
    def whole_tag(self) -> StructuralTag | None:
        """The request's whole structural tag (built on first use: composing needs none; kept
        in a byte-bounded cache)."""
        return self._whole_pair()[0]

    def whole_tag_json(self) -> str:
        """The whole tag's JSON text (:func:`toolwire.grammar.tag_json`), kept with the tag."""
        return self._whole_pair()[1]

    def whole(self) -> xgr.CompiledGrammar:
        """The whole structural tag, compiled (the fallback and the reference), kept in the
        piece cache."""
        compiler = self.compiler
        assert compiler is not None
        return self.pieces.get((id(self.tokenizer_info), self.format, "whole", self.whole_tag_json()), lambda: compiler.compile_structural_tag(self.whole_tag))

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

    def crossing_mask(self, k: int) -> np.ndarray:
        """Tokens that finish the head after its first ``k`` bytes and run on into the tools'
        begins (``_Scaffold.cross``): what such a token holds past the head, a prefix of a begin's
        rest or a text past a whole begin that its piece accepts."""
        key = ("cross", k)
        row = self._extras.get(key)
        if row is not None:
            return row
        assert self.scaffold is not None
        vocab = _vocab(self.tokenizer_info)
        head = self.scaffold.head.encode()
        row = np.zeros(vocab.words, dtype=np.uint32)
        by_first: dict[int, list[int]] = {}
        for i, tool in enumerate(self.tools):
            rest = tool.begin[len(head) :]
            if rest:
                by_first.setdefault(rest[0], []).append(i)
        for text in vocab.extending(head[k:]):
            after = text[len(head) - k :]
            for i in by_first.get(after[0], ()):
                rest = self.tools[i].begin[len(head) :]
                if rest.startswith(after) or after.startswith(rest) and self.begun(i, len(self.tools[i].begin)).accept_string(after[len(rest) :]):
                    _set_bits(row, vocab.by_bytes[text])
                    break
        self._extras[key] = row
        return row

    def run_on_groups(self, after_call: Callable[[], xgr.GrammarMatcher], calls: int) -> dict[bytes, np.ndarray]:
        """The tokens that hold a call's last text (``_Scaffold.last``) and more, grouped by
        their text up to it (``c``) where the scaffold after the call (``after_call``) takes the
        rest: a token of group ``c`` runs on past the call where the piece completes the call on
        reading ``c``."""
        key = ("run on", min(calls, 1))
        groups = self._extras.get(key)
        if groups is not None:
            return groups  # type: ignore[return-value]
        assert self.scaffold is not None
        vocab = _vocab(self.tokenizer_info)
        end = self.scaffold.last
        scaffold = after_call()
        out: dict[bytes, np.ndarray] = {}
        for text in vocab.containing(end):
            for i in range(len(end), len(text)):
                if text[:i].endswith(end) and scaffold.accept_string(text[i:]):
                    scaffold.rollback(1)
                    row = out.setdefault(text[:i], np.zeros(vocab.words, dtype=np.uint32))
                    _set_bits(row, vocab.by_bytes[text])
        self._extras[key] = out  # type: ignore[assignment]
        return out

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
_COMPOSED = _Lru(256, max_bytes=4 << 20, size=lambda key, g: 4 * sum(map(len, key[2] or ())) + 200 * len(g.tools) + 4096)  # its tools (as given, and their texts); tool entries are shared


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

    def whole() -> StructuralTag | None:
        return structural_tag(format, tools, tool_choice, parallel_tool_calls, "always", schema, reasoning, constrained_tools=constrained_tools)  # type: ignore[arg-type]

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
_READ_TOOLS = _Lru(max_bytes=2 << 20, size=lambda key, tool: 12 * len(key[1]) + 256)  # about a read tool's objects (measured)


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


_TOOL_ENTRIES = _Lru(max_bytes=4 << 20, size=lambda key, entry: 10 * len(entry.key[-1]) + 256)  # about a tag's objects (measured)


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


_METADATA = {
    "read tools": _READ_TOOLS, "tool entries": _TOOL_ENTRIES, "piece key plans": _PIECE_PLANS, "composed grammars": _COMPOSED, "begin masks": _LITERAL_MASKS,
    "whole tags": _WHOLE_TAGS, "whole-tag key plans": _WHOLE_PLANS, "literal rows": _LITERAL_ROWS, "literal steps": _LITERAL_STEPS, "literal sets": _LITERAL_SETS, "known call ends": _KNOWN_ENDS, "call entries": _CALL_ENTRIES, "begun matchers": _BEGUN,
    "call steps": _CALL_STEPS,
}

#: The byte budgets of the caches of values derived from tools and requests, together (each is
#: an LRU bounded by its own share; sizes are estimates: per byte of a tool's text, as
#: ``pieces._footprint`` measured the Python objects and resident memory the key plans; rows by
#: their bytes).
METADATA_BUDGET: int = sum(lru.max_bytes or 0 for lru in _METADATA.values())


def cache_stats(pieces: PieceCache | None = None) -> dict[str, dict[str, int]]:
    """Entries, bytes and byte budget of the piece cache (``pieces``, default the shared one)
    and of each cache of derived values (:data:`METADATA_BUDGET`)."""
    out = {"pieces": (pieces or default_pieces).stats()}
    for name, lru in _METADATA.items():
        out[name] = {"entries": len(lru), "nbytes": lru.nbytes, "max_bytes": lru.max_bytes or 0}
    return out


__all__ = ["COMPOSED_FORMATS", "METADATA_BUDGET", "SENTINEL", "cache_stats", "ComposedGrammar", "ComposedMatcher", "ComposedMismatch", "PieceCache", "compose"]
