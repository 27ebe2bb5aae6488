"""Checks of the SGLang adapter and the hand-written samples (needs sglang; see README.md).

    python -m pytest benches/test_peers.py
"""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peers  # noqa: E402
import samples  # noqa: E402

if not peers.sglang_available():
    pytest.skip("sglang is not installed", allow_module_level=True)

# Known SGLang 0.5.23 streaming bugs on these samples (not adapter bugs): mistral's JSON-array
# form streams only the first call (sglang#35564); gemma4 and cohere_command4 stream
# tool_index = the tool's position in the tool list, so repeated names collapse into one call.
KNOWN_STREAM_BUGS = {(case, n) for case in ("mistral_array", "gemma4", "cohere_command") for n in (8, 64)}
# gigachat3: SGLang reads one call per message; beam: SGLang 0.5.23 drops the <rfl:parameter>
# arguments of these samples (reported by the benchmark, not asserted here).
KNOWN_STREAM_BUGS |= {("gigachat3", n) for n in (8, 64)}
SKIP = {"beam"} | {f"gigachat3-{n}" for n in (8, 64)}
FORMAT_OF = {"mistral_array": "mistral"}


def _cases():
    for case in samples.RENDERERS:
        if peers.SGLANG_PARSER.get(FORMAT_OF.get(case, case)) is None:
            continue
        # pythonic: SGLang's call regex backtracks exponentially beyond a couple of calls.
        for n in ((1, 2) if case == "pythonic" else (1, 8, 64)):
            yield case, n


def _assert_calls(got, want):
    assert [c["name"] for c in got] == [c["name"] for c in want]
    assert [json.loads(c["arguments"]) for c in got] == [c["arguments"] for c in want]


@pytest.mark.parametrize("case,n", list(_cases()))
def test_sglang_parse_and_stream(case, n):
    if case in SKIP or f"{case}-{n}" in SKIP:
        pytest.skip("known SGLang mismatch on this sample")
    fmt = FORMAT_OF.get(case, case)
    calls = samples.make_calls(n)
    text = samples.render_sample(case, calls)
    got, content = peers.sglang_parse(fmt, samples.TOOLS, text)
    _assert_calls(got, calls)
    if case not in ("harmony", "cohere_command", "beam"):  # there the text is reasoning, not content
        assert samples.PREAMBLE in content
    chunks = samples.chunk(text, 4, samples.SPECIAL_TOKENS[case])
    got, content = peers.sglang_stream(fmt, samples.TOOLS, chunks)
    if (case, n) in KNOWN_STREAM_BUGS:
        assert len(got) < n
        return
    _assert_calls(got, calls)


def test_argument_sizes():
    sizes = [len(json.dumps(c["arguments"], ensure_ascii=False)) for c in samples.make_calls(64)]
    assert 60 <= min(sizes) and max(sizes) <= 125, sizes


def test_chunk_keeps_markers_whole():
    text = samples.render_sample("kimi_k2", samples.make_calls(3))
    markers = samples.SPECIAL_TOKENS["kimi_k2"]
    pieces = samples.chunk(text, 4, markers)
    assert "".join(pieces) == text
    assert all(len(p) <= 4 or p in markers for p in pieces)
    assert "".join(samples.chunk(text, 4)) == text


def test_mapping_names_exist():
    enum = peers._sglang()["FunctionCallParser"].ToolCallParserEnum
    for fmt, name in peers.SGLANG_PARSER.items():
        if name is not None:
            assert name in enum, (fmt, name)
    with pytest.raises(peers.PeerUnavailable):
        peers.sglang_parser_name("default")


def test_tools_from_bare_and_openai_dicts():
    bare = [t["function"] for t in samples.TOOLS]
    a = peers.sglang_tools(samples.TOOLS)
    b = peers.sglang_tools(bare)
    assert [t.function.name for t in a] == [t.function.name for t in b]
