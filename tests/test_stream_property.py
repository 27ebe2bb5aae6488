"""The chunk-split property through the bindings: any split of any output streams to the same
message as one-shot parsing, for every format."""

import json

import toolwire
from conftest import WEATHER_TOOLS
from hypothesis import given, settings
from hypothesis import strategies as st

CALL_SETS = [
    [{"name": "get_weather", "arguments": {"location": "Tōkyō \"central\"", "days": 3}}],
    [
        {"name": "get_weather", "arguments": {"location": "a<b>c; d", "days": 9007199254740993}},
        {"name": "get_time", "arguments": {"timezone": "UTC"}},
    ],
]


def outputs():
    """Rendered calls with content, plus broken variants (cut in the middle), per format."""
    out = []
    for name in toolwire.formats():
        for calls in CALL_SETS:
            text = toolwire.render(name, calls, content="Let me look that up. ")
            out.append((name, text))
            out.append((name, text[: len(text) * 2 // 3]))
        out.append((name, "Plain text with <angle> [brackets] {braces} and ``` fences."))
    return out


OUTPUTS = outputs()


def summary(message):
    return (
        message.content,
        message.reasoning_content,
        [(c.index, c.name, c.arguments) for c in message.tool_calls],
        [(i.index, i.kind, i.raw) for i in message.issues],
    )


def stream(parser, chunks):
    s = parser.stream()
    deltas = []
    for chunk in chunks:
        deltas += s.feed(chunk)
    deltas += s.finish()
    return s.message(), deltas


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(OUTPUTS), st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_any_split_streams_to_the_parse_result(case, cuts):
    name, text = case
    parser = toolwire.ToolParser(name, tools=WEATHER_TOOLS)
    points = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    assert "".join(chunks) == text
    message, deltas = stream(parser, chunks)
    assert summary(message) == summary(parser.parse(text))
    streamed_content = "".join(d.content or "" for d in deltas)
    assert streamed_content == (message.content or "") or (not message.content and not streamed_content.strip())
    for call in message.tool_calls:
        fragments = [tc.arguments for d in deltas for tc in d.tool_calls if tc.index == call.index]
        assert "".join(fragments) == call.arguments
        json.loads(call.arguments)


def test_rendered_calls_round_trip_for_every_format():
    for name in toolwire.formats():
        parser = toolwire.ToolParser(name, tools=WEATHER_TOOLS)
        for calls in CALL_SETS:
            message = parser.parse(toolwire.render(name, calls))
            assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [
                (c["name"], c["arguments"]) for c in calls
            ], name
            assert message.issues == [], name
