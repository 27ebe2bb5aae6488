"""Facts about the grammar engine that toolwire's mask-cache keys rely on, checked against the
xgrammar installed rather than assumed from the version pinned.

A state key may leave out what the engine's language does not depend on. Most of what the keyer
leaves out follows from the structural tag alone; :func:`objects_in_declared_order` is about how
xgrammar reads a JSON schema: it writes an object's declared members in the order of
``properties`` (each at most once, optional ones skipped, additional members after them), so
after a member's value the rest of the object is known from that member's key, whichever
optional members came before. Keys are then coarser (the last key, not every key written),
which is what lets a tool's masks be shared by calls that fill different optional members.
"""

from __future__ import annotations

import functools
import json


@functools.cache
def objects_in_declared_order() -> bool:
    """Whether the installed xgrammar takes an object's members only in ``properties`` order:
    it must refuse a later declared member before an earlier one, accept any skipped optional
    ones, and put additional members after the declared ones (and refuse a declared one after
    them). False (keys then name every key written) if any of that does not hold."""
    import xgrammar as xgr

    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "required": ["b"],
        "additionalProperties": {"type": "integer"},
    }
    info = xgr.TokenizerInfo([chr(c) for c in range(32, 127)])
    compiled = xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False).compile_json_schema(json.dumps(schema), any_whitespace=False)

    def takes(text: str) -> bool:
        m = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
        return bool(m.accept_string(text)) and m.is_completed()

    in_order = ('{"b": 1}', '{"a": 1, "b": 2}', '{"b": 1, "c": 2}', '{"a": 1, "b": 2, "c": 3}', '{"b": 1, "x": 2}', '{"a": 1, "b": 2, "x": 3, "y": 4}')
    out_of_order = ('{"b": 1, "a": 2}', '{"c": 1, "b": 2}', '{"x": 1, "b": 2}', '{"b": 1, "x": 2, "c": 3}', '{"b": 1, "c": 2, "a": 3}')
    return all(map(takes, in_order)) and not any(map(takes, out_of_order))
