"""The matcher of a :class:`~toolwire.grammar.composed.ComposedGrammar`: one request's walk
through the scaffold, the tools' begins and one tool's piece (the argument for its masks is in
:mod:`toolwire.grammar.composed`'s docs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xgrammar as xgr

from toolwire import ToolwireError
from toolwire._core import StateKeyer

from .composed_keys import _CALL_STEPS, _Keys
from .composed_parts import ComposedMismatch, _Branch, _CatchUp, _Literals, _Matcher, _Piece, _ScaffoldMatcher, _take
from .pieces import _Lru, _vocab

if TYPE_CHECKING:
    from .composed import ComposedGrammar

#: The stand-in call's arguments in the scaffold: no tool name or argument text holds it.
SENTINEL = "\x01\x02\x03"


#: A grammar's rows where several tools' begins are followed, by (grammar, call text so far).
_LITERAL_ROWS = _Lru(max_bytes=4 << 20)

#: (grammar, call text, token) -> the tools whose begins still agree, where the call's text is a
#: start of a begin (so it decides which tools are left and what their pieces read): where all
#: are in their begins, a list of shared branches; else a tuple of the shared branches still in
#: their begins and the tools past their whole begins, whose pieces
#: :meth:`ComposedMatcher._literal_step` makes (lazy) for each request.
_LITERAL_STEPS = _Lru(max_bytes=(3 << 20) // 2, size=lambda key, value: 8 * len(value) + 56 + 3 * len(key[1]) + 550)

#: (grammar, a piece's labelled state key, token) -> True where the piece read that token as its
#: call's end from a state of that key: later, :meth:`ComposedMatcher._known_close` closes the
#: call there without the piece's matcher reading the deferred arguments (equal keys give equal
#: masks, so equal states as far as the end is concerned: the differential test checks it).
_CLOSES = _Lru(max_bytes=1 << 19, size=lambda key, value: len(key[1]) + 200)

#: (grammar, call text) -> the tools whose begins continue past that text, where all are in
#: their begins (what a run of tokens taken by the call's keyer alone leaves).
_LITERAL_SETS = _Lru(max_bytes=1 << 20, size=lambda key, value: 8 * len(value) + 56 + len(key[1]) + 200)

#: (grammar, the scaffold's state key) -> (where a call begins in the head from a state of that
#: key (the bytes of it already read), or -1 where the scaffold's forced text does not reach a
#: call there; where a token may finish the head from there and run on into a name, the head's
#: bytes read, else 0): equal keys give equal masks, so equal forced text and equal tokens
#: that finish the trigger (:meth:`ComposedMatcher._enter_call`).
_ENTRIES = _Lru(max_bytes=1 << 18, size=lambda key, value: len(key[1]) + 150)


class ComposedMatcher(_Keys):
    """A request's matcher over a :class:`ComposedGrammar`: ``accept_token``,
    ``fill_next_token_bitmask``, ``find_jump_forward_string``, ``rollback``, ``fork``,
    ``is_terminated``, ``is_completed``, as xgrammar's ``GrammarMatcher``.

    It also names its state for the mask cache (:meth:`cache_key`): a state keyer follows the
    text the scaffold read, another the current call's text while one tool is left, and while
    several tools' begins are followed a keyer of the call's text among the grammar's begins
    (``CallBegins.keyer``). Keyers are fed in place; a rollback builds them again from the texts
    (kept as bytes). :class:`~toolwire.grammar.composed_batch.ComposedMasker` may take tokens
    the cached mask allows through a keyer alone (``TokenTable.feed_deferred``): in the
    scaffold's free text, inside one tool's piece (never a token that completes the call's end),
    and among several begins (only a token that keeps two or more going and completes none).
    The part's matcher reads them in one ``accept_string`` before anything else asks it (the
    begins have no matcher: the run only moves the call's text), kept as one history entry that
    a rollback into it splits (:meth:`_flush`); a call's end seen before from a state of the
    same key closes the call without that read (:meth:`_known_close`). The masker may also make
    a change of part an earlier request made in the same state (``CallSteps``): the request
    replays those steps when next asked (:mod:`toolwire.grammar.composed_keys`)."""

    def __init__(self, grammar: ComposedGrammar, *, _copy: ComposedMatcher | None = None) -> None:
        assert grammar.scaffold is not None
        self.grammar = grammar
        self._vocab = _vocab(grammar.tokenizer_info)
        self._head = grammar.scaffold.head.encode()
        self._stand_in = (SENTINEL + grammar.scaffold.end).encode()
        self._end = grammar.scaffold.end.encode()
        self._keep = max(len(self._end) - 1, 1)
        self._stops = grammar.scaffold.stops
        self._text_level = grammar.scaffold.plan.text_level  # type: ignore[union-attr]
        if _copy is None:
            self._scaffold = _ScaffoldMatcher(grammar.scaffold.compiled)
            self._branches: list[_Branch] | None = None  # None: in the scaffold
            self._pos = 0  # bytes of the call begin read (all branches agree)
            self._entry = 0  # bytes of the name-free head the scaffold had read
            self._calls = 0
            self._stext = bytearray()  # what the scaffold read (its keyer's text)
            self._call = bytearray()  # the current call's text, from the head's start
            self._skey = self._scaffold_keyer()
            self._pkey: StateKeyer | None = None  # the piece's keyer, while one tool is left
            self._lkey: StateKeyer | None = None  # the call text's keyer, among several begins
            self._entry_key = b""  # the scaffold's key where the current call began
            self._cross = 0  # the head's bytes the free text ends with, where a token may cross it
        else:
            self._scaffold = _copy._scaffold.fork(_copy._stext)
            branches = _copy._branches
            self._branches = branches if branches is None or type(branches) is _Literals else [_Branch(b.tool, b.matcher.fork() if b.matcher else None) for b in branches]
            self._pos, self._entry, self._calls = _copy._pos, _copy._entry, _copy._calls
            self._stext, self._call = bytearray(_copy._stext), bytearray(_copy._call)
            self._skey, self._entry_key, self._cross = _copy._skey.__copy__(), _copy._entry_key, _copy._cross
            self._pkey = None if _copy._pkey is None else _copy._pkey.__copy__()
            self._lkey = None
        # (state before, matcher steps, the lengths of a deferred run's tokens or None for one)
        self._history: list[tuple[Any, list[tuple[_Matcher, int]], list[int] | None]] = []
        # Read by ``_core.feed_requests``: the steps it may take alone, and where it notes them
        # (the keyer it replaced, the token) for :meth:`_catch_up`.
        self._steps, self._serial = _CALL_STEPS, grammar.serial
        self._journal: list[tuple[StateKeyer, int]] = []
        self._accepted = 0
        self.terminated = _copy is not None and _copy.terminated  # a stop token ended the output
        self._scratch: Any = None  # a one-row bitmask (:meth:`_row_of`)
        self._sync_keys()

    # state -----------------------------------------------------------------

    # Branch lists are replaced, never changed in place, so a state holds them as they are.

    def _state(self) -> Any:
        return (self._branches, self._pos, self._entry, self._calls, len(self._stext), self._call, len(self._call), self._entry_key, self._cross)

    def _restore(self, state: Any, keyers: bool) -> None:
        self._branches, self._pos, self._entry, self._calls, stext, self._call, call, self._entry_key, self._cross = state
        del self._stext[stext:]
        del self._call[call:]
        if keyers:
            self._skey = self._scaffold_keyer()
            if self._stext:
                self._skey.accept(0, bytes(self._stext))
            self._pkey = None
            self._sync_piece_keyer()

    def _scaffold_keyer(self) -> StateKeyer:
        scaffold = self.grammar.scaffold
        k = scaffold.plan.keyer()  # type: ignore[union-attr]
        # A token that leaves the text ending with the start of the head that a token may cross
        # is for Python to take (:meth:`_enter_call` notes it).
        k.label(b"S", stop_at=self._head[: scaffold.cross], free_text_only=True)  # type: ignore[union-attr]
        return k

    def _feed_scaffold(self, token: int, data: bytes) -> None:
        self._stext += data
        self._skey.accept(token, data)

    @property
    def calls(self) -> int:
        """Calls completed so far."""
        self._catch_up()
        return self._calls

    def _flush(self) -> None:
        """Give the matcher the tokens its keyer took alone (see the class docs)."""
        if self._journal:
            self._catch_up()
        branches = self._branches
        k = self._skey if branches is None else self._lkey if type(branches) is _Literals else self._pkey
        if k is None or not k.deferred_tokens:
            return
        self._read_deferred(*k.take_deferred_run())

    def _read_deferred(self, data: bytes, lengths: list[int]) -> None:
        state = self._state()
        m = self._read_run(data)
        self._history.append((state, [] if m is None else [(m, 1)], lengths))
        self._accepted += len(lengths)

    def _read_run(self, data: bytes) -> _Matcher | None:
        """Give the current part's matcher a run of tokens its keyer has read, or None where
        there is none to give it now: in the scaffold (its text grows; its matcher reads it when
        asked) and among several begins (the run moves the call's text)."""
        if self._branches is None:
            self._stext += data
            return None
        self._pos += len(data)
        self._call += data
        if type(self._branches) is _Literals:
            self._branches = self._literals_left()
            return None
        m = self._branches[0].matcher
        assert m is not None
        if not m.accept_string(data):
            raise ComposedMismatch(f"a matcher refused {len(data)} bytes its cached masks allowed")
        return m

    def is_terminated(self) -> bool:
        return self.terminated

    def is_completed(self) -> bool:
        self._flush()
        return self._branches is None and self._scaffold.synced(self._stext).is_completed()

    @property
    def in_call(self) -> bool:
        """True from inside a call's begin to its end."""
        self._catch_up()
        return self._branches is not None

    def fork(self) -> ComposedMatcher:
        self._flush()
        return ComposedMatcher(self.grammar, _copy=self)

    # masks -----------------------------------------------------------------

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> bool:
        self._flush()
        if self._branches is None and not self._cross:
            return self._scaffold.synced(self._stext).fill_next_token_bitmask(bitmask, index)
        bitmask[index].copy_(_torch_row(self._mask()))
        return True

    def _one_matcher(self) -> xgr.GrammarMatcher | None:
        """The xgrammar matcher whose mask is this state's (the extras of a call's end aside):
        the scaffold's, or the one tool's piece; None where several begins are followed or a
        token may cross the head into them."""
        self._flush()
        if self._branches is None:
            return None if self._cross else self._scaffold.synced(self._stext)
        if len(self._branches) == 1:
            m = self._branches[0].matcher
            return m.real() if type(m) is _Piece else m
        return None

    def _end_extras(self) -> np.ndarray | None:
        """In a single piece's end text: the tokens that run on past the call."""
        assert self._branches is not None and self._branches[0].matcher is not None
        self._flush()
        return self._past_end(self._branches[0].matcher)

    def _past_end(self, m: _Matcher) -> np.ndarray | None:
        """The tokens that complete the call from ``m``'s state and run on into what the scaffold
        takes after it: through the whole end (:meth:`_run_on`) or through the rest of an end the
        call's last bytes started (:meth:`_forced_ends`). Read-only; None where there are none."""
        row = self._run_on(m)
        for forced in self._forced_ends(m):
            extra = self.grammar.extras(self._after_call, forced, self._calls)
            row = extra if row is None else row | extra
        return row

    def _run_on(self, m: _Matcher) -> np.ndarray | None:
        """Where tokens hold the whole call end and more: those that complete the call from here
        (the piece completes on their text up to an end) and run on into what the scaffold takes
        after it."""
        if not self.grammar.scaffold.runs_on:  # type: ignore[union-attr]
            return None
        row = None
        for text, tokens in self.grammar.run_on_groups(self._after_call, self._calls).items():
            if m.accept_string(text):
                done = m.is_completed()
                m.rollback(1)
                if done:
                    row = tokens if row is None else row | tokens
        return row

    def _run_on_cut(self, m: _Matcher, data: bytes) -> int:
        """Where a token the piece refuses completes the call and runs on into what the scaffold
        takes after it (``m`` has then read the token up to there), else 0."""
        end = self.grammar.scaffold.last  # type: ignore[union-attr]
        for i in range(len(end), len(data)):
            if data[:i].endswith(end) and m.accept_string(data[:i]):
                if m.is_completed() and self._runs_on(data[i:]):
                    return i
                m.rollback(1)
        return 0

    def _mask(self) -> np.ndarray:
        """The row where several tools' begins are followed, or where a token may cross the head
        into them (read-only)."""
        if self._branches is None:
            return self._row_of(self._scaffold.synced(self._stext)) | self.grammar.crossing_mask(self._cross)
        key = (self.grammar.serial, bytes(self._call))
        row = _LITERAL_ROWS.get(key) if self._pkey is None else None
        if row is not None:
            return row  # type: ignore[no-any-return]
        literal = tuple(b.tool for b in self._branches if b.matcher is None)
        if len(literal) == len(self._branches):  # all in their begins: the text decides which
            row = self.grammar.literal_mask(literal, self._pos)
            _LITERAL_ROWS.put(key, row)
            return row
        row = self.grammar.literal_mask(literal, self._pos).copy() if literal else np.zeros(self._vocab.words, dtype=np.uint32)
        for b in self._branches:
            if b.matcher is None:
                continue
            row |= self._row_of(b.matcher)
            past = self._past_end(b.matcher)
            if past is not None:
                row |= past
        return row

    def _row_of(self, m: _Matcher) -> np.ndarray:
        """``m``'s mask, in a scratch row (read it before the next call)."""
        if self._scratch is None:
            self._scratch = xgr.allocate_token_bitmask(1, self.grammar.tokenizer_info.vocab_size)
        m.fill_next_token_bitmask(self._scratch, 0)
        return self._scratch[0].numpy().view(np.uint32)  # type: ignore[no-any-return]

    def _forced_ends(self, m: _Matcher) -> list[bytes]:
        """The texts that complete the call from here when it is inside its end text: the rests
        of the end that the call's last bytes started. (A rest the grammar forces, JSON's end
        once the arguments close, is one of them too; the whole end is not: the tokens that hold a
        whole end and more are :meth:`_run_on`'s.)"""
        end = self._end
        tail = bytes(self._call[-self._keep :])  # the call's last bytes
        if not tail or tail[-1] not in end[:-1]:  # no start of the end's text is the call's last
            return []
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
        s = self._scaffold.synced(self._stext).fork()
        if not s.accept_string(self._close_feed()):
            raise ComposedMismatch("the scaffold refused the stand-in call")
        return s

    # tokens ----------------------------------------------------------------

    def accept_token(self, token: int) -> bool:
        if self._journal:
            self._catch_up()
        if self._branches is not None and self._pkey is None:  # among begins
            self._flush()
            if self._literal_step(token):
                return True
        elif self._pkey is not None and self._known_close(token):
            return True
        self._flush()
        state = self._state()
        steps: list[tuple[_Matcher, int]] = []
        ok = self._accept(token, steps)
        if ok:
            self._history.append((state, steps, None))
            self._accepted += 1
        else:
            for m, n in steps:
                m.rollback(n)
            self._restore(state, keyers=False)  # keyers are fed only once a token is taken
        self._sync_keys()
        return ok

    def _accept_allowed(self, token: int) -> bool:
        """:meth:`accept_token` for a token the row cached under this state's key allows
        (``_core.feed_requests`` says which): in a text-level scaffold its matcher need not judge
        it, and is not asked (:class:`_ScaffoldMatcher`); a stop token ends the output."""
        if self._journal:
            self._catch_up()
        if self._branches is not None or not self._text_level or self.terminated or self._cross:
            return self.accept_token(token)
        self._flush()
        state = self._state()
        if token in self._stops:
            self._scaffold.stop_later(token)
            self.terminated = True
        else:
            self._feed_scaffold(token, self._vocab.token_bytes[token])
            self._enter_call()
        self._history.append((state, [], None))
        self._accepted += 1
        self._sync_keys()
        return True

    def _ends_call(self, data: bytes, pending: bytes = b"") -> bool:
        """Whether the call's text with ``pending`` (a run not read yet) and ``data`` after it
        ends with the call's end."""
        end = self._end
        if len(data) >= len(end):
            return data.endswith(end)
        if not end.endswith(data):
            return False
        before = end[: len(end) - len(data)]
        if not pending:
            return self._call.endswith(before)
        return (bytes(self._call[-len(end) :]) + pending).endswith(before)

    def _known_close(self, token: int) -> bool:
        """A call's end known from a state of the same key (:data:`_CLOSES`): close the call; the
        run the piece's keyer took alone stays unread, one history entry, read by the matcher
        only where a rollback undoes the close (:class:`_CatchUp`). False: the general path."""
        k = self._pkey
        end = self._end
        data = self._vocab.token_bytes[token] if 0 <= token < len(self._vocab.token_bytes) else b""
        if not data or not end or token in self._stops or not k.cacheable or not (end.endswith(data) or data.endswith(end)):  # type: ignore[union-attr]
            return False
        if _CLOSES.get((self.grammar.serial, k.key(), token)) is None:  # type: ignore[union-attr]
            return False
        m = self._branches[0].matcher  # type: ignore[index]
        steps: list[tuple[Any, int]] = []
        if k.deferred_tokens:  # type: ignore[union-attr]
            run, lengths = k.take_deferred_run()  # type: ignore[union-attr]
            if not self._ends_call(data, run):
                self._read_deferred(run, lengths)  # not the end after all: the general path decides
                return False
            run_steps: list[tuple[Any, int]] = []  # the matcher's, once a rollback had it read the run
            self._history.append((self._state(), run_steps, lengths))
            self._accepted += len(lengths)
            self._pos += len(run)
            self._call += run
            steps.append((_CatchUp(m, run, run_steps), 1))  # type: ignore[arg-type]
        elif not self._ends_call(data):
            return False
        state = self._state()
        self._pos += len(data)
        self._call += data
        self._close_call(b"")
        self._history.append((state, steps, None))
        self._accepted += 1
        self._sync_keys()
        return True

    def _literals_left(self) -> _Literals:
        """The branches whose begins continue past the call's text, all in their begins (after
        a run the call's keyer took: it took only such steps)."""
        call = bytes(self._call)
        key = (self.grammar.serial, call)
        left = _LITERAL_SETS.get(key)
        if left is None:
            tools = self.grammar.tools
            left = _Literals(b for b in self._branches if len(tools[b.tool].begin) > len(call) and tools[b.tool].begin.startswith(call))  # type: ignore[union-attr]
            if len(left) < 2:
                raise ComposedMismatch("the call's keyer took a token that leaves fewer than two begins")
            _LITERAL_SETS.put(key, left)
        return left  # type: ignore[no-any-return]

    def _literal_step(self, token: int) -> bool:
        """The common step among several tools' begins, known from an earlier request: the token
        keeps some of them in their literal text and takes others past their whole begins (their
        pieces made lazily, reading what follows the begin when first asked; where one is left
        in its begin, its piece follows the rest of it: the general path of :meth:`_accept` does
        the same). False: not known."""
        known = _LITERAL_STEPS.get((self.grammar.serial, bytes(self._call), token))
        if known is None:
            return False
        self._history.append((self._state(), [], None))
        self._accepted += 1
        data = self._vocab.token_bytes[token]
        self._pos += len(data)
        self._call += data
        if type(known) is _Literals:
            self._branches = known
        else:
            grammar, call = self.grammar, bytes(self._call)
            self._branches = [b if type(b) is _Branch else _Branch(b, _Piece(grammar, b, len(grammar.tools[b].begin), call[len(grammar.tools[b].begin) :])) for b in known]
        self._settle()
        self._sync_keys()
        return True

    def _accept(self, token: int, steps: list[tuple[_Matcher, int]]) -> bool:
        data = self._vocab.token_bytes[token] if 0 <= token < len(self._vocab.token_bytes) else b""
        if self._branches is None:
            stop = token in self._stops
            rest = self._head[self._cross :]
            if self._cross and not stop and len(data) > len(rest) and data.startswith(rest):
                return self._cross_into_call(token, data, steps)
            if not self._scaffold.accept_token(token, self._stext, 0 if stop else len(data)):
                return False
            if stop:
                self.terminated = self._scaffold.m.is_terminated()
            else:
                self._feed_scaffold(token, data)
            self._enter_call()
            return True
        if token in self._stops:
            return False
        return self._accept_in_call(token, data, steps)

    def _cross_into_call(self, token: int, data: bytes, steps: list[tuple[_Matcher, int]]) -> bool:
        """A token that finishes the head from the free text (its first ``_cross`` bytes read
        there) and runs on into a name: the scaffold reads the head's rest, the begins the
        token's bytes after it."""
        row = self.grammar.crossing_mask(self._cross)
        if not (int(row[token >> 5]) >> (token & 31)) & 1:
            return False
        rest = self._head[self._cross :]
        self._feed_scaffold(0, rest)
        self._enter_call()
        if self._branches is None or self._pos != len(self._head) or not self._accept_in_call(None, data[len(rest) :], steps):
            raise ComposedMismatch("the begins refused a token that crosses the head, which its mask allowed")
        return True

    def _accept_in_call(self, token: int | None, data: bytes, steps: list[tuple[_Matcher, int]]) -> bool:
        """A token inside a call (``token`` None: ``data`` is the part of one past the head)."""
        if not data:
            return False
        if self._pkey is not None and self._in_piece(token, data, steps):
            return True
        # From a start of a begin, the step is the text's (:meth:`_literal_step` repeats it).
        from_text = token is not None and any(b.matcher is None for b in self._branches)  # type: ignore[union-attr]
        alive: list[_Branch] = []
        rest: bytes | None = None  # the token's bytes after a completed call
        for b in self._branches:  # type: ignore[union-attr]
            tool = self.grammar.tools[b.tool]
            if b.matcher is None:
                left = tool.begin[self._pos :]
                if left.startswith(data) and len(data) < len(left):
                    alive.append(b)
                    continue
                if not data.startswith(left):
                    continue
                m = self.grammar.begun(b.tool, len(tool.begin))
                tail = data[len(left) :]
                if tail and not m.accept_string(tail):
                    continue
                alive.append(_Branch(b.tool, m))
                if m.is_completed():
                    rest = b""
                continue
            m = b.matcher
            if _take(m, token, data):
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
            else:
                cut = self._run_on_cut(m, data) if self.grammar.scaffold.runs_on else 0  # type: ignore[union-attr]
                if cut:
                    steps.append((m, 1))
                    alive.append(b)
                    rest = data[cut:]
        if not alive:
            return False
        if rest is None:
            literal = all(b.matcher is None for b in alive)
            if literal:
                alive = _Literals(alive)
            if from_text:
                _LITERAL_STEPS.put((self.grammar.serial, bytes(self._call), token), alive if literal else tuple(b if b.matcher is None else b.tool for b in alive))
        self._branches = alive
        self._pos += len(data)
        self._call += data
        if rest is not None:
            self._close_call(rest)
        else:
            self._settle()
        return True

    def _settle(self) -> None:
        """Once one tool is left, its piece follows the rest of the begin (and judges the tokens
        that run on into the arguments)."""
        assert self._branches is not None
        if len(self._branches) == 1 and self._branches[0].matcher is None:
            tool = self._branches[0].tool
            self._branches = [_Branch(tool, _Piece(self.grammar, tool, self._pos))]
        self._sync_piece_keyer()

    def _in_piece(self, token: int | None, data: bytes, steps: list[tuple[_Matcher, int]]) -> bool:
        """The common step: one tool's piece takes the token (False: it does not, or only with
        the run-on past its end, which the general path judges)."""
        m = self._branches[0].matcher  # type: ignore[index]
        if not _take(m, token, data):  # type: ignore[arg-type]
            return False
        steps.append((m, 1))  # type: ignore[arg-type]
        k = self._pkey
        key = k.key() if token is not None and self._end and k.cacheable and self._ends_call(data) else None  # type: ignore[union-attr]
        k.accept(token or 0, data)  # type: ignore[union-attr]
        self._pos += len(data)
        call = self._call
        call += data
        if (not self._end or call.endswith(self._end)) and m.is_completed():  # type: ignore[union-attr]
            if key is not None:
                _CLOSES.put((self.grammar.serial, key, token), True)
            self._close_call(b"")
        return True

    def _close_call(self, rest: bytes) -> None:
        """The call is done: the scaffold's text gets its stand-in (and ``rest``, the token's bytes
        past the call's end, which :meth:`_runs_on` checked), read by its matcher when asked."""
        self._feed_scaffold(0, self._close_feed() + rest)
        self._branches = None
        self._pkey = None
        self._calls += 1
        self._enter_call()

    def _enter_call(self) -> None:
        """Switch to the tools' begins when the scaffold's forced text reaches the stand-in; else
        note whether a token may finish the head from here and run on into a name."""
        self._cross = 0
        if self.terminated:
            return
        k = self._skey
        key = (self.grammar.serial, k.key()) if k.cacheable else None
        known = _ENTRIES.get(key) if key is not None else None
        if known is None:
            entry = self._entry_offset()
            known = (entry, self._crossing() if entry < 0 else 0)
            if key is not None:
                _ENTRIES.put(key, known)
        entry, self._cross = known
        if entry < 0:
            return
        self._entry = entry
        self._pos = self._entry
        self._call = bytearray(self._head[: self._entry])
        self._entry_key = key[1] if key is not None else k.key()
        self._branches = self.grammar.entry_branches()
        self._settle()

    def _entry_offset(self) -> int:
        """Where in the head the call begins if the scaffold's forced text runs from here into the
        stand-in (the head's bytes already read there), else -1."""
        try:
            forced = self._scaffold.synced(self._stext).find_jump_forward_string()
        except UnicodeDecodeError:  # the scaffold stopped inside a character of the begin
            return -1
        at = forced.find(SENTINEL)
        if at < 0:
            return -1
        head = self._head.decode()
        if not head.endswith(forced[:at]):
            return -1  # forced text before the begin (a section's begin): still the scaffold's
        return len(head[: len(head) - at].encode())

    def _crossing(self) -> int:
        """The head's bytes the free text ends with where a token may finish the head and run on
        into a name (``_Scaffold.cross``: the scaffold would read the head's rest as a call's
        begin), else 0."""
        cross = self.grammar.scaffold.cross  # type: ignore[union-attr]
        if not cross or not self._stext.endswith(self._head[:cross]):
            return 0
        s = self._scaffold.synced(self._stext).fork()
        if not s.accept_string(self._head[cross:]):
            return 0
        try:
            forced = s.find_jump_forward_string()
        except UnicodeDecodeError:
            return 0
        return cross if forced.startswith(SENTINEL) else 0

    def rollback(self, n: int = 1) -> None:
        """Undo the last ``n`` accepted tokens."""
        self._flush()
        if n < 0 or n > self._accepted:
            raise ToolwireError(f"cannot roll back {n} tokens ({self._accepted} accepted)")
        if not n:
            return
        self._accepted -= n
        self.terminated = False  # nothing follows the token that ended the output
        while n:
            state, steps, run = self._history.pop()
            for m, k in reversed(steps):
                m.rollback(k)
            size = 1 if run is None else len(run)
            if size > n:  # keep the run's first tokens, as one shorter run
                assert run is not None
                keep = run[: size - n]
                scaffold = state[0] is None
                start = state[4] if scaffold else state[6]  # the text's length before the run
                # the run's own call text (a later call has its own: ``_enter_call``)
                data = bytes((self._stext if scaffold else state[5])[start : start + sum(keep)])
                self._restore(state, keyers=False)
                reader = self._read_run(data)
                self._history.append((state, [] if reader is None else [(reader, 1)], keep))
                state = self._state()
                break
            n -= size
        self._restore(state, keyers=True)
        self._scaffold.truncate(len(self._stext))
        self._sync_keys()

    def find_jump_forward_string(self) -> str:
        self._flush()
        if self._branches is None:
            if self.terminated:
                return ""
            try:
                forced = self._scaffold.synced(self._stext).find_jump_forward_string()
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
