"""The parts a :class:`~toolwire.grammar.composed_matcher.ComposedMatcher` walks through: the
scaffold's matcher (fed its text lazily), one tool's piece matcher (made on first use), the
branches of a call among several tools' begins, and the step that lets a rollback undo a call
closed without its piece reading the arguments. Each answers as much of xgrammar's
``GrammarMatcher`` as the walk asks of it; the walk itself, and why it may defer reading, is in
:mod:`toolwire.grammar.composed_matcher`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import xgrammar as xgr

from toolwire import ToolwireError

if TYPE_CHECKING:
    from .composed import ComposedGrammar


class ComposedMismatch(ToolwireError):
    """A part of the composed grammar refused text another part allowed (a bug, never input)."""


class _Piece:
    """One tool's piece matcher once its begin is settled, made on first use: a fork of the
    grammar's matcher that has read the begin (``ComposedGrammar.begun``, ~14 µs) is needed only
    where the piece is asked (a miss, a token no cached row decides, a rollback); a call whose
    arguments the keyer takes and whose end is known (:meth:`ComposedMatcher._known_close`)
    never asks it. Answers as xgrammar's ``GrammarMatcher`` for the methods the walk uses.
    ``tail``: bytes the piece reads past its whole begin (``pos`` is then the begin's length),
    where a call's text runs on past a begin that another tool's continues."""

    __slots__ = ("_grammar", "_tool", "_pos", "_tail", "_m")

    def __init__(self, grammar: ComposedGrammar, tool: int, pos: int, tail: bytes = b"") -> None:
        self._grammar, self._tool, self._pos, self._tail = grammar, tool, pos, tail
        self._m: xgr.GrammarMatcher | None = None

    def real(self) -> xgr.GrammarMatcher:
        if self._m is None:
            m = self._grammar.begun(self._tool, self._pos)
            if self._tail and not m.accept_string(self._tail):
                raise ComposedMismatch("a piece refused the call's text past its begin that it read before")
            self._m = m
        return self._m

    def fork(self) -> _Piece:
        copy = _Piece(self._grammar, self._tool, self._pos, self._tail)
        if self._m is not None:
            copy._m = self._m.fork()
        return copy

    def accept_string(self, data: bytes) -> bool:
        return bool(self.real().accept_string(data))

    def accept_token(self, token: int) -> bool:
        return bool(self.real().accept_token(token))

    def rollback(self, n: int) -> None:
        self.real().rollback(n)

    def is_completed(self) -> bool:
        return bool(self.real().is_completed())

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> bool:
        return bool(self.real().fill_next_token_bitmask(bitmask, index))

    def find_jump_forward_string(self) -> str:
        return str(self.real().find_jump_forward_string())


_Matcher = xgr.GrammarMatcher | _Piece


class _ScaffoldMatcher:
    """The scaffold's xgrammar matcher, reading the scaffold's text (``ComposedMatcher._stext``)
    only when asked: the free text, the tokens that open calls and the stand-ins of closed calls
    reach it in one ``accept_string`` (one xgrammar step), where a request whose rows are all
    cached may never ask it, nor have it made. A rollback undoes the steps past the text kept (a
    step it cuts is undone whole; the part kept is read again when next asked). A stop token
    known to be allowed waits too. Sound for a text-level scaffold, where a token and its bytes
    read alike."""

    __slots__ = ("_m", "_compiled", "_starts", "_fed", "_stop")

    def __init__(self, compiled: xgr.CompiledGrammar, m: xgr.GrammarMatcher | None = None, fed: int = 0) -> None:
        self._compiled = compiled
        self._m = m
        self._starts: list[int] = []  # where in the text each xgrammar step began (a stop token's: at its end)
        self._fed = fed  # the text's bytes read
        self._stop: int | None = None  # a stop token to read after the text

    @property
    def m(self) -> xgr.GrammarMatcher:
        if self._m is None:
            self._m = xgr.GrammarMatcher(self._compiled)
        return self._m

    def synced(self, text: bytearray) -> xgr.GrammarMatcher:
        """The matcher, after it has read ``text`` (and the waiting stop token)."""
        if self._fed < len(text):
            if not self.m.accept_string(bytes(text[self._fed :])):
                raise ComposedMismatch(f"the scaffold refused {len(text) - self._fed} bytes of its own text")
            self._starts.append(self._fed)
            self._fed = len(text)
        if self._stop is not None:
            stop, self._stop = self._stop, None
            if not self.m.accept_token(stop):
                raise ComposedMismatch("the scaffold refused a stop token its cached mask allowed")
            self._starts.append(self._fed)
        return self.m

    def accept_token(self, token: int, text: bytearray, size: int) -> bool:
        """Whether the matcher, after ``text``, takes ``token`` (``size`` bytes: the caller adds
        them to the text; 0 for a stop token)."""
        if not self.synced(text).accept_token(token):
            return False
        self._starts.append(self._fed)
        self._fed += size
        return True

    def stop_later(self, token: int) -> None:
        self._stop = token

    def truncate(self, n: int) -> None:
        """Back to the state after the text's first ``n`` bytes, no stop token read."""
        self._stop = None
        while self._starts and (self._fed > n or self._starts[-1] >= n):
            self.m.rollback(1)
            self._fed = self._starts.pop()
        if self._fed > n:
            raise ComposedMismatch("a rollback reached past the point the scaffold was forked at")

    def fork(self, text: bytearray) -> _ScaffoldMatcher:
        return _ScaffoldMatcher(self._compiled, self.synced(text).fork(), len(text))


@dataclass
class _Branch:
    tool: int
    matcher: _Matcher | None = None  # None: still in the begin's literal text


class _Literals(list):  # type: ignore[type-arg]
    """Branches all still in their begins' literal text: shared by requests, never changed."""


class _CatchUp:
    """A step of a call closed by :meth:`ComposedMatcher._known_close`: undoing it has the
    piece's matcher read the unread run (and the run's history entry undo that)."""

    def __init__(self, matcher: _Matcher, run: bytes, steps: list[tuple[Any, int]]) -> None:
        self.matcher, self.run, self.steps = matcher, run, steps

    def rollback(self, n: int) -> None:
        if not self.matcher.accept_string(self.run):
            raise ComposedMismatch(f"a matcher refused {len(self.run)} bytes its cached masks allowed")
        self.steps.append((self.matcher, 1))


def _take(m: _Matcher, token: int | None, data: bytes) -> bool:
    """A matcher reads a token, or (``token`` None) bytes that are part of one."""
    return bool(m.accept_token(token) if token is not None else m.accept_string(data))
