"""Validate realistic tool-call arguments: toolwire's Rust validator vs the `jsonschema` package.

    python benches/bench_validation.py [--repeat N]

Both sides get a validator built once per schema (jsonschema's through
``validator_for(schema)(schema, format_checker=...)``, so it checks ``format`` as toolwire does).
Both return every violation with a message: toolwire's ``ToolSet.validate`` a list of dicts,
jsonschema's ``iter_errors`` drained into a list. toolwire is timed from Python on JSON text (the
form arguments arrive in, so its time includes parsing); single calls give jsonschema the
already-decoded dict (it is spared ``json.loads``), the batch makes it decode the text too.
Times are this thread's CPU time, best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import json
import time

import jsonschema
import toolwire

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14},
                },
                "required": ["location"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "create_event",
            "parameters": {
                "type": "object",
                "$defs": {
                    "person": {
                        "type": "object",
                        "properties": {"name": {"type": "string", "minLength": 1}, "email": {"type": "string", "format": "email"}},
                        "required": ["name", "email"],
                    }
                },
                "properties": {
                    "title": {"type": "string", "maxLength": 200},
                    "start": {"type": "string", "format": "date-time"},
                    "duration_minutes": {"type": "integer", "multipleOf": 15, "minimum": 15},
                    "attendees": {"type": "array", "items": {"$ref": "#/$defs/person"}, "minItems": 1, "uniqueItems": True},
                    "room": {"type": ["string", "null"], "pattern": "^[A-Z]-[0-9]{3}$"},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                },
                "required": ["title", "start", "attendees"],
            },
        },
    },
]

CASES = [
    ("get_weather", {"location": "San Francisco, CA", "unit": "celsius", "days": 5}),
    (
        "create_event",
        {
            "title": "Quarterly planning",
            "start": "2026-12-01T15:00:00Z",
            "duration_minutes": 60,
            "attendees": [{"name": "Ada", "email": "ada@example.com"}, {"name": "Lin", "email": "lin@example.com"}],
            "room": "B-204",
            "tags": ["planning", "q1"],
        },
    ),
    ("get_weather", {"location": "Oslo", "unit": "kelvin", "days": 30, "extra": True}),
]


def best_ns(fn, repeat: int, inner: int) -> float:
    """Best CPU time of this thread per call (steadier than wall time on a shared machine)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.thread_time_ns()
        for _ in range(inner):
            fn()
        best = min(best, (time.thread_time_ns() - t) / inner)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    tool_set = toolwire.ToolSet(TOOLS)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    checker = jsonschema.FormatChecker()
    validators = {n: jsonschema.validators.validator_for(s)(s, format_checker=checker) for n, s in schemas.items()}
    print(f"{'case':32} {'toolwire':>12} {'jsonschema':>12} {'ratio':>8}")
    ratios = []
    for i, (name, arguments) in enumerate(CASES):
        text = json.dumps(arguments)
        ours = tool_set.validate(name, text)
        theirs = list(validators[name].iter_errors(arguments))
        assert sorted(v["keyword"] for v in ours) == sorted(e.validator for e in theirs), (name, ours, theirs)
        tw = best_ns(lambda: tool_set.validate(name, text), args.repeat, 2000)
        js = best_ns(lambda: list(validators[name].iter_errors(arguments)), args.repeat, 200)
        ratios.append(js / tw)
        label = f"{name}#{i} ({'invalid' if theirs else 'valid'})"
        print(f"{label:32} {tw / 1000:>10.2f}us {js / 1000:>10.2f}us {js / tw:>7.0f}x")
    print(f"single calls from Python: min ratio {min(ratios):.0f}x (goal: >= 50x)")
    print("the execution gate, valid or not (ToolSet.is_valid vs jsonschema is_valid):")
    for i, (name, arguments) in enumerate(CASES):
        text = json.dumps(arguments)
        verdict = validators[name].is_valid(arguments)
        assert tool_set.is_valid(name, text) is verdict
        tw = best_ns(lambda: tool_set.is_valid(name, text), args.repeat, 2000)
        js = best_ns(lambda: validators[name].is_valid(arguments), args.repeat, 200)
        label = f"{name}#{i} ({'valid' if verdict else 'invalid'})"
        print(f"{label:32} {tw / 1000:>10.2f}us {js / 1000:>10.2f}us {js / tw:>7.0f}x")
    batch = [(name, json.dumps(arguments)) for name, arguments in CASES] * 100
    decoded = [(name, json.loads(text)) for name, text in batch]
    assert [bool(v) for v in tool_set.validate_many(batch)] == [
        bool(list(validators[n].iter_errors(a))) for n, a in decoded
    ]
    tw = best_ns(lambda: tool_set.validate_many(batch), args.repeat, 20) / len(batch)
    js = best_ns(lambda: [list(validators[n].iter_errors(json.loads(t))) for n, t in batch], args.repeat, 2)
    js /= len(batch)
    print(
        f"batch of {len(batch)} JSON texts (jsonschema also json.loads them): "
        f"{tw / 1000:.2f}us vs {js / 1000:.2f}us per call, {js / tw:.0f}x (goal: >= 50x)"
    )


if __name__ == "__main__":
    main()
