"""Text that never contains a pattern: a small regex -> DFA -> EBNF compiler, for the soft triggers
whose call is confirmed by what follows them (pythonic's ``[name(``, xlam's fence and ``[``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from xgrammar.structural_tag import (
    GrammarFormat,
)

from toolwire import ToolwireError

from .format_view import _Format

MAX_CP = 0x10FFFF


#: Rust's char::is_whitespace (the parsers skip this whitespace).
_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
          (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]  # fmt: skip


def _norm(intervals):
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(intervals):
    out, prev = [], 0
    for lo, hi in _norm(intervals):
        if lo > prev:
            out.append((prev, lo - 1))
        prev = hi + 1
    if prev <= MAX_CP:
        out.append((prev, MAX_CP))
    return tuple(out)


class _Nfa:
    """Thompson NFA over code-point interval sets: edges (state, set or None for epsilon, state)."""

    def __init__(self):
        self.edges: list[list[tuple[Any, int]]] = []

    def state(self) -> int:
        self.edges.append([])
        return len(self.edges) - 1

    def parse(self, pattern: str) -> tuple[int, int]:
        self.p, self.i = pattern, 0
        start, end = self._alt()
        if self.i != len(self.p):
            raise ToolwireError(f"pattern {pattern!r}: unexpected {self.p[self.i]!r}")
        return start, end

    def literal(self, text: str) -> tuple[int, int]:
        start = cur = self.state()
        for ch in text:
            nxt = self.state()
            self.edges[cur].append((((ord(ch), ord(ch)),), nxt))
            cur = nxt
        return start, cur

    def _alt(self):
        branches = [self._seq()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self._seq())
        if len(branches) == 1:
            return branches[0]
        s, e = self.state(), self.state()
        for bs, be in branches:
            self.edges[s].append((None, bs))
            self.edges[be].append((None, e))
        return s, e

    def _seq(self):
        start = cur = self.state()
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            a, b = self._atom()
            op = self.p[self.i] if self.i < len(self.p) else ""
            if op in ("*", "+", "?"):
                self.i += 1
                s, e = self.state(), self.state()
                self.edges[s].append((None, a))
                self.edges[b].append((None, e))
                if op in ("*", "?"):
                    self.edges[s].append((None, e))
                if op in ("*", "+"):
                    self.edges[b].append((None, a))
                a, b = s, e
            self.edges[cur].append((None, a))
            cur = b
        return start, cur

    def _atom(self):
        c = self.p[self.i]
        self.i += 1
        if c == "(":
            s, e = self._alt()
            if self.i >= len(self.p) or self.p[self.i] != ")":
                raise ToolwireError(f"pattern {self.p!r}: unclosed group")
            self.i += 1
            return s, e
        if c == "[":
            cls = self._class()
        elif c == "\\":
            cls = self._escape()
        else:
            cls = ((ord(c), ord(c)),)
        s, e = self.state(), self.state()
        self.edges[s].append((cls, e))
        return s, e

    def _escape(self):
        c = self.p[self.i]
        self.i += 1
        if c == "s":
            return tuple(_SPACE)
        if c == "d":
            return ((48, 57),)
        if c in "uUx":
            n = {"u": 4, "U": 8, "x": 2}[c]
            cp = int(self.p[self.i : self.i + n], 16)
            self.i += n
            return ((cp, cp),)
        return ((ord(c), ord(c)),)

    def _class(self):
        negate = self.p[self.i] == "^"
        if negate:
            self.i += 1
        items: list[tuple[int, int]] = []
        while self.p[self.i] != "]":
            if self.p[self.i] == "\\":
                self.i += 1
                lo_set = self._escape()
            else:
                lo_set = ((ord(self.p[self.i]), ord(self.p[self.i])),)
                self.i += 1
            if len(lo_set) == 1 and lo_set[0][0] == lo_set[0][1] and self.p[self.i] == "-" and self.p[self.i + 1] != "]":
                self.i += 1
                if self.p[self.i] == "\\":
                    self.i += 1
                    hi = self._escape()[0][0]
                else:
                    hi = ord(self.p[self.i])
                    self.i += 1
                items.append((lo_set[0][0], hi))
            else:
                items.extend(lo_set)
        self.i += 1
        return _negate(items) if negate else _norm(items)


def _cls_text(intervals) -> str:
    def ch(cp: int) -> str:
        return f"\\U{cp:08x}"

    return "[" + "".join(ch(lo) if lo == hi else f"{ch(lo)}-{ch(hi)}" for lo, hi in _norm(intervals)) + "]"


def _confirm_rules(trigger: str, pattern: str, prefix: str, unsafe: set[str], then: str) -> tuple[str, list[str]]:
    """EBNF rules for what may follow ``trigger`` in text that must not complete ``pattern`` (a
    regex starting with the trigger), walking the pattern's DFA after the trigger. Each live state
    ``{prefix}f{q}`` takes a character that keeps the pattern alive, or a character that kills it
    and then the rule ``then`` (the rest of the text); ``{prefix}p{q}`` keeps it alive to the end
    of the text. The killing character is consumed (xgrammar's lookahead does not restrict), so it
    may not start another banned text (``unsafe``), except a one-character trigger, which restarts
    the walk. Returns (the rule to dispatch to, rules)."""
    nfa = _Nfa()
    start, accept = nfa.parse(pattern)

    def closure(states):
        stack, seen = list(states), set(states)
        while stack:
            for cls, nxt in nfa.edges[stack.pop()]:
                if cls is None and nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)

    def step(states, cp):
        return closure({t for st in states for cls, t in nfa.edges[st] if cls and any(a <= cp <= b for a, b in cls)})

    cur = closure({start})
    for ch in trigger:
        cur = step(cur, ord(ch))
    if not cur or accept in cur:
        raise ToolwireError(f"pattern {pattern!r} does not extend its trigger {trigger!r}")
    bounds = {0, MAX_CP + 1}
    for edges in nfa.edges:
        for cls, _ in edges:
            for lo, hi in cls or ():
                bounds.update((lo, hi + 1))
    for u in unsafe:
        bounds.update((ord(u), ord(u) + 1))
    cuts = sorted(bounds)
    pieces = list(zip(cuts[:-1], (c - 1 for c in cuts[1:])))
    index = {cur: 0}
    order = [cur]
    rules = []
    k = 0
    while k < len(order):
        here = order[k]
        q = k
        k += 1
        moves: dict[int, list[tuple[int, int]]] = {}
        ends: list[tuple[int, int]] = []
        restart = False
        for lo, hi in pieces:
            nxt = step(here, lo)
            if accept in nxt:
                continue  # completes the pattern: banned
            if nxt:
                if nxt not in index:
                    if len(index) > 16:
                        raise ToolwireError(f"pattern {pattern!r} is too complex to exclude")
                    index[nxt] = len(order)
                    order.append(nxt)
                moves.setdefault(index[nxt], []).append((lo, hi))
            elif lo == hi and chr(lo) == trigger:
                restart = True
            elif not (lo == hi and chr(lo) in unsafe):
                ends.append((lo, hi))
        full = [f"{_cls_text(iv)} {prefix}f{j}" for j, iv in sorted(moves.items())]
        part = ['""'] + [f"{_cls_text(iv)} {prefix}p{j}" for j, iv in sorted(moves.items())]
        if ends:
            full.append(f"{_cls_text(ends)} {then}")
        if restart:
            full.append(f"{json.dumps(trigger)} {prefix}f0")
            part.append(f"{json.dumps(trigger)} {prefix}p0")
        rules.append(f"{prefix}f{q} ::= " + (" | ".join(full) if full else '""'))
        rules.append(f"{prefix}p{q} ::= " + " | ".join(part))
    rules.append(f"{prefix}d ::= {prefix}f0 | {prefix}p0")
    return f"{prefix}d", rules


def _avoiding(fmt: _Format, banned: Sequence[str]) -> Any:
    """Any text with none of ``banned`` and none of the soft triggers' confirmed calls: xgrammar's
    TagDispatch bans the strings, and on a confirmed trigger walks what follows it (a segment of
    text per trigger occurrence)."""
    confirmed = sorted({(t, c) for t, _, _, c in fmt.confirms if c})
    unsafe = {t[0] for t in banned} | {t[0] for t, _ in confirmed}
    dispatch, rules = [], []
    for i, (trigger, pattern) in enumerate(confirmed):
        first, r = _confirm_rules(trigger, pattern, f"cf{i}", unsafe, "seg")
        dispatch.append(f"({json.dumps(trigger)}, {first})")
        rules += r
    excludes = ", ".join(json.dumps(t, ensure_ascii=False) for t in banned)
    seg = f"seg ::= TagDispatch({', '.join(dispatch)}, loop_after_dispatch=false, excludes=({excludes}{',' if banned else ''}))"
    return GrammarFormat(grammar="\n".join(["root ::= seg", seg, *rules]) + "\n")
