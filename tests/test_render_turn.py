"""toolwire.render of a whole assistant turn (reasoning + content + calls), read back by the parser."""

import json

import pytest
import toolwire

CALLS = [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_time", "arguments": {"tz": "CET"}}]
REASONING_FORMATS = [f for f in toolwire.formats() if toolwire.format_info(f)["reasoning"]]


def test_reasoning_uses_the_format_markers():
    assert toolwire.render("hermes", CALLS[:1], "Sure.", reasoning="Think.").startswith("<think>Think.</think>Sure.")
    harmony = toolwire.render("harmony", CALLS[:1], reasoning="Think.")
    assert harmony.startswith("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary to=")
    assert toolwire.render("hermes", CALLS) == toolwire._core.render("hermes", CALLS)


@pytest.mark.parametrize("fmt", REASONING_FORMATS)
def test_a_rendered_turn_parses_back(fmt):
    text = toolwire.render(fmt, CALLS, reasoning="Two calls.")
    message = toolwire.ToolParser(fmt, reasoning=True).parse(text)
    assert message.reasoning_content.strip() == "Two calls."
    assert [(c.name, json.loads(c.arguments)) for c in message.tool_calls] == [(c["name"], c["arguments"]) for c in CALLS]
    assert message.issues == []


def test_reasoning_for_a_format_without_it_is_refused():
    with pytest.raises(toolwire.ToolwireError, match="no reasoning"):
        toolwire.render("pythonic", CALLS, reasoning="x")
