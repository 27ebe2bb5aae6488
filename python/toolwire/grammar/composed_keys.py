"""How a :class:`~toolwire.grammar.composed_matcher.ComposedMatcher` names its state for a batch
step, and the steps a batch takes for it alone.

A step of :class:`~toolwire.grammar.composed_batch.ComposedMasker` reads two attributes of each
request, kept current here (:meth:`_Keys._sync_keys`): the keyer whose key names its row in the
mask cache (``_fill_key``) and the keyer that may take a token the cached row allows without a
matcher (``_accept_key``). Between them, most tokens never reach Python. The rest are where the
request changes parts: a call opens, settles on one tool, closes; the output ends. Such a change
is decided by the keyer's state and the token (inside a call, also by the scaffold's state where
the call began, which the call's keyers carry): once Python has made one
(:meth:`_Keys._accept_noted`), ``_core.CallSteps`` keeps it, and ``_core.feed_requests`` makes it
alone for a request in the same state, giving the request its next keyer and journalling the old
one with the token. Before anything reads the request's own state, :meth:`_Keys._catch_up`
replays the journal through the matcher's path and adopts the keyers made in Rust, which hold
the tokens taken alone since. A request served from the cache to its end is never replayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolwire._core import CallSteps, StateKeyer, StateKeyPlan

from .composed_parts import ComposedMismatch, _Literals
from .pieces import _Lru

if TYPE_CHECKING:
    from .composed import ComposedGrammar
    from .composed_parts import _Branch

#: (tool, the scaffold's key where the call began, the call's end, call text) -> the piece's
#: keyer as a call settled on that tool after that text leaves it (never fed: copied).
_SETTLED = _Lru(max_bytes=1 << 20, size=lambda key, value: len(key[1]) + 2 * len(key[3]) + 700)

#: The plan under the keyers naming the rows where several tools' begins are followed
#: (``CallBegins.keyer``): the call's text decides the row, so the grammar and the text name
#: it; this plan's keyer is never fed, so it adds the same bytes to every such key.
_LITERAL_PLAN = StateKeyPlan.opaque(b"composed literal")

#: (grammar, keyer state, token) -> the change of part Python made there (a call opened, moved on
#: to a fresh keyer, closed, or the output ended), for ``_core.feed_requests`` to make alone for
#: a request in the same state.
_CALL_STEPS = CallSteps(4 << 20)


class _Keys:
    """The keyers of a :class:`~toolwire.grammar.composed_matcher.ComposedMatcher` and the steps
    a batch takes for it alone (see the module docs); the walk itself is the matcher's."""

    if TYPE_CHECKING:  # the matcher's state these read
        grammar: ComposedGrammar
        terminated: bool
        _branches: list[_Branch] | None
        _skey: StateKeyer
        _pkey: StateKeyer | None
        _lkey: StateKeyer | None
        _fill_key: StateKeyer | None
        _accept_key: StateKeyer | None
        _journal: list[tuple[StateKeyer, int]]
        _serial: int
        _head: bytes
        _stand_in: bytes
        _end: bytes
        _entry: int
        _entry_key: bytes
        _cross: int
        _calls: int
        _call: bytearray
        _stext: bytearray
        _vocab: Any

        def _accept_allowed(self, token: int) -> bool: ...
        def accept_token(self, token: int) -> bool: ...
        def _flush(self) -> None: ...

    def _sync_piece_keyer(self) -> None:
        """A keyer for the one tool left (fed the call so far), none otherwise: a copy of one
        kept per (tool, labels, call text) in :data:`_SETTLED` (a fresh keyer is a function of
        those alone; reading a begin costs it ~0.1 µs a byte)."""
        one = self._branches is not None and len(self._branches) == 1 and self._branches[0].matcher is not None
        if not one:
            self._pkey = None
        elif self._pkey is None:
            tool = self._branches[0].tool  # type: ignore[index]
            scaffold = self.grammar.scaffold
            # Where tokens may complete the call from inside its arguments and run on, the
            # scaffold's part of the row (what it takes after the call) is everywhere, so the
            # suffix is too: the scaffold and whether a call came before, all that part depends
            # on (as ``ComposedGrammar.run_on_groups`` and ``extras`` are kept), rather than the
            # scaffold's key where the call began, which the text before the call changes.
            runs_on = scaffold.runs_on  # type: ignore[union-attr]
            suffix = scaffold.name + bytes([min(self._calls, 1)]) if runs_on else self._entry_key  # type: ignore[union-attr]
            key = (self.grammar.tools[tool].key, suffix, self._end, bytes(self._call))
            settled: StateKeyer | None = _SETTLED.get(key)
            if settled is None:
                settled = self.grammar.piece_plan(tool).keyer()
                settled.label(b"P", suffix, self._end, suffix_near_stop=not runs_on)
                settled.accept(0, key[3])
                _SETTLED.put(key, settled)
            self._pkey = settled.__copy__()

    def cache_key(self) -> bytes | None:
        """The mask cache's key of this state's row, None where it is not cached: the scaffold's
        state key; in one tool's piece, the piece's state key, and while the call's text ends
        with a start of its end, the scaffold's key where the call began too (the tokens that
        run on past the call's end are the scaffold's there, :meth:`_end_extras`, and only
        there: elsewhere the row is the piece's alone, so calls that began in different
        scaffold states share it; that key holds the scaffold's state, so a first and a later
        call share rows wherever the scaffold's keyer says what follows them is the same)."""
        self._catch_up()
        k = self._cache_keyer()
        return k.key() if k is not None and k.cacheable else None

    def _cache_keyer(self) -> StateKeyer | None:
        """The keyer whose (labelled) key is this state's row's: the scaffold's, the piece's, or
        where a tool left is in its begin's literal text, the call text's. (Past a begin that
        is the start of another's, ``fn_1`` of ``fn_12``, the call's text is a start of that
        other begin: it decides which tools are left and what each piece has read, so the row,
        unless the call's text ends with a start of its end, where the scaffold adds tokens.)"""
        branches = self._branches
        if branches is None:
            return self._crossing_keyer() if self._cross else self._skey
        if self._pkey is not None:
            return self._pkey
        if type(branches) is _Literals:
            return self._literal_keyer()
        if self._call[-1] in self._end[:-1] or all(b.matcher is not None for b in branches):
            return None
        return self._literal_keyer()

    def _crossing_keyer(self) -> StateKeyer:
        """Where a token may cross the head into a name, the row is the scaffold's and the
        grammar's begins': the scaffold's key, named by the grammar (never fed)."""
        k = self._skey.__copy__()
        k.label(b"C" + self.grammar.serial.to_bytes(8, "little"))
        return k

    def _literal_keyer(self) -> StateKeyer:
        """The call text's keyer among the grammar's begins (made on first need after a change)."""
        if self._lkey is None:
            prefix = b"L" + self.grammar.serial.to_bytes(8, "little")
            self._lkey = self.grammar.call_begins().keyer(_LITERAL_PLAN, prefix, bytes(self._call))
        return self._lkey

    def _sync_keys(self) -> None:
        """Keep the keyers a batch step reads as attributes (``_core.unsafe_fill_request_rows``
        reads ``_fill_key``, ``_core.feed_requests`` ``_accept_key``): called after every
        change of part or keyer (an accepted token, a rollback). Inside a call, the keyer also
        holds the scaffold's where the call began, for ``feed_requests`` to close it alone."""
        self._lkey = None
        if self.terminated:  # the masker fills and skips it (the Rust loops read one attribute)
            self._fill_key = self._accept_key = None
            return
        self._fill_key = self._cache_keyer()
        k = self._accept_key = self._deferrable()
        if k is None and self._fill_key is not None and self._fill_key is self._lkey:
            # tools' pieces beside begins: the call text's keyer names the state for steps alone
            k = self._accept_key = self._lkey
            k.set_steps_only()
        if k is not None and self._branches is not None and not k.resumes:
            k.set_resume(self._skey, self._close_feed())

    def _close_feed(self) -> bytes:
        """What the scaffold reads when the current call closes at its end."""
        return self._head[self._entry :] + self._stand_in

    def _catch_up(self) -> None:
        """Replay the steps ``_core.feed_requests`` took alone for this request (its
        ``_journal``), each through this matcher's own path, and adopt the keyer it made after
        each: that keyer holds the tokens taken alone since. Called before anything reads the
        request's state."""
        journal = self._journal
        if not journal:
            return
        self._journal = []
        last = self._accept_key
        self.terminated = False  # no step follows a stop token
        for i, (old, token) in enumerate(journal):
            if i:
                self._adopt(old)
            if not self._accept_allowed(token):
                raise ComposedMismatch("a step the batch took alone was refused when replayed")
        if last is not None:
            self._adopt(last)

    def _adopt(self, k: StateKeyer) -> None:
        """Make ``k`` (made by ``feed_requests`` for the state this matcher is in now) the
        current part's keyer."""
        branches = self._branches
        if branches is None:
            self._skey = k
        elif len(branches) == 1 and branches[0].matcher is not None:
            self._pkey = k
        else:
            self._lkey = k
        self._fill_key = self._accept_key = k

    def _deferrable(self) -> StateKeyer | None:
        """The keyer that may take a token the cached mask allows alone: the scaffold's (in
        free text, where no call begins), the call text's (among several begins), the piece's
        (short of the call's end)."""
        branches = self._branches
        if branches is None:
            return None if self._cross else self._skey
        if type(branches) is _Literals:
            return self._literal_keyer()
        return self._pkey if self._end else None

    def _accept_noted(self, token: int, allowed: bool) -> bool:
        """The masker's accept of a token no keyer took alone (``allowed``: the cached row allows
        it, :meth:`_accept_allowed`); where the step changes parts, it is noted in
        :data:`_CALL_STEPS`, for ``feed_requests`` to take alone in the same state."""
        self._catch_up()
        if self._branches is None:
            self._flush()  # the scaffold's run joins its text (read by no matcher yet)
        old = self._accept_key
        key = _CALL_STEPS.key(self._serial, old, token) if old is not None and old.cacheable else None
        before = (self._branches is not None, len(self._stext), self._calls)
        ok = self._accept_allowed(token) if allowed else self.accept_token(token)
        if ok and key is not None:
            self._note_step(key, old, token, *before)
        return ok

    def _note_step(self, key: bytes, old: StateKeyer, token: int, in_call: bool, stext: int, calls: int) -> None:
        """Note the step just taken from ``old``'s state (``key``) where it is one that
        :class:`CallSteps` can repeat: the scaffold read the token and a call opened, a call
        moved on to a fresh keyer, a call closed with nothing after its end, a stop token."""
        if self.terminated:
            if not in_call:
                _CALL_STEPS.stop(key)
            return
        k = self._accept_key
        if k is None or self._cross:
            return
        if self._branches is None:
            if in_call and self._calls == calls + 1 and len(self._stext) == stext + len(self._close_feed()):
                _CALL_STEPS.close(key)
        elif k is not old and self._calls == calls:
            if in_call and len(self._stext) == stext:
                _CALL_STEPS.within(key, k)
            elif not in_call and len(self._stext) == stext + len(self._vocab.token_bytes[token]):
                _CALL_STEPS.open(key, k, self._close_feed())
