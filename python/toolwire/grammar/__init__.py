"""Constrained decoding for tool calls: xgrammar structural tags built from the format spec.

Needs the ``grammar`` extra (``pip install toolwire[grammar]``, xgrammar 0.2.8)::

    from toolwire import grammar

    plan = grammar.plan(request, "hermes")           # tool_choice semantics, one constraint
    if plan.constraint == "structural_tag":
        compiled = grammar.compile(plan.payload, tokenizer_info)   # cached per (tokenizer, tag)

Everything here is derived from :func:`toolwire.format_info`: the call template (``begin`` with
``{name}``/``{index}``, ``end``, ``separator``), how arguments are written (``arguments``: JSON,
XML parameter tags, Gemma or Python literals), the layout (a section
around the calls, a content or reasoning block), the markers and the triggers. The grammar writes
one canonical shape of each format; the parser reads that shape (and more) back as the same calls.

Modes (``tool_choice``):

* ``auto``: free text, and a call wherever the format's call (or section) trigger appears. The
  free text cannot contain the format's other call markers, its stray-end markers or its reasoning
  markers, so the parser never sees a call the grammar did not write.
* ``required``: one or more calls and nothing else (no text before or after; up to three
  whitespace characters may lead).
* named (``{"type": "function", "function": {"name": ...}}``): exactly that tool, one or more
  calls of it (one with ``parallel_tool_calls=False``).
* ``parallel_tool_calls=False``: after the first call only the end of the output may follow.
* ``none``: :func:`exclusion_tag`.

Beam holds every turn instead (analysis, then calls or the final message, a ``response_format``
inside the final message): see :func:`structural_tag` and :func:`plan`, switch ``turn_grammar``.

The package, one concern a module (import order, each reading only those before it):
``format_view`` (the format as ``format_info`` describes it), ``tools`` (tools,
``tool_choice`` and reasoning, read by the core's rules), ``subset`` (the JSON-schema subset a grammar enforces), ``cache`` (compiled
grammars and :func:`tag_json`), ``literal_values`` (Gemma 4 and Python literal arguments),
``xml_values`` (XML parameters), ``calls`` (one tool's call tag), ``confirm`` (text that never
completes a confirm pattern), ``request`` (:class:`Plan`), ``beam`` (per-turn grammars), ``tokens``
(markers as token ids, for ``vocab=``), ``tags`` (:func:`structural_tag`, :func:`exclusion_tag`),
``plans`` (:func:`plan`); apart from those, ``pieces`` (compiled per-tool grammars, byte-bounded),
``composed`` (a request's grammar from a per-format scaffold and per-tool pieces, masks equal
to the whole tag's), ``composed_matcher`` (one request's matcher over it; ``composed_parts``: the matchers of
the parts it walks through), ``composed_batch``
(a batch of them through a mask cache, as ``toolwire.masks.BatchMasker``) and ``engine_facts``
(what the mask-cache keys take from xgrammar's reading of a schema, checked against the one
installed).

A decode loop that feeds the parser token ids passes the same vocabulary to the plan
(``grammar.plan(request, fmt, vocab=vocab)``): see ``examples/decode_loop.py``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from . import format_view
from .cache import GrammarCache, compile, default_cache, tag_json
from .format_view import LEAD_WS, MARKUP_ROLES, _format  # noqa: F401 (re-exported)
from .plans import plan
from .request import Plan, SchemaMode, Scope  # noqa: F401 (re-exported)
from .subset import (  # noqa: F401 (re-exported)
    ANNOTATIONS,
    ANY_OBJECT,
    FORMATS,
    NO_ARGUMENTS,
    SUPPORTED,
    UNSUPPORTED,
    check_schema,
)
from .tags import exclusion_tag, structural_tag

__all__ = [
    "GrammarCache",
    "Plan",
    "check_schema",
    "compile",
    "default_cache",
    "exclusion_tag",
    "plan",
    "structural_tag",
    "tag_json",
]

#: Names the package reads and writes through to the module that owns them (a setting).
_SETTINGS = {"MAX_WHITESPACE": format_view}


def __getattr__(name: str) -> Any:
    if name in _SETTINGS:
        return getattr(_SETTINGS[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SETTINGS:
            setattr(_SETTINGS[name], name, value)
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
