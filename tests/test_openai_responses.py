"""Responses API output: ParsedMessage.to_responses() and toolwire.openai.ResponsesStream, for
every format, validated against the openai package's types and accumulated by its own stream
helper (openai.lib.streaming.responses.ResponseStreamState)."""

from __future__ import annotations

import itertools
import json
from types import SimpleNamespace

import openai_check as check
import pytest
import toolwire
import toolwire.openai as tw_openai
from integration_cases import CASE_IDS, CASES, check_reference, chunkings
from openai._types import omit  # noqa: E402
from openai.lib.streaming.responses._responses import ResponseStreamState  # noqa: E402


def counter_ids():
    n = itertools.count()
    return lambda prefix: f"{prefix}_{next(n)}"


def strip_ids(items):
    return [{k: v for k, v in item.items() if k != "id"} for item in items]


def expected_items(message):
    """What to_responses() must hold for a message, built from the message's own fields."""
    items = []
    if message.reasoning_content is not None:
        items.append(
            {
                "type": "reasoning",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": message.reasoning_content}],
                "status": "completed",
            }
        )
    if message.content is not None:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": message.content, "annotations": [], "logprobs": []}],
            }
        )
    for call in message.tool_calls:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "status": "completed",
            }
        )
    return items


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_to_responses_items_validate(case):
    message = case.parser().parse(case.text)
    check_reference(case, message)
    items = message.to_responses()
    for item in items:
        check.output_item(item)
    assert strip_ids(items) == expected_items(message)
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids)
    prefixes = {"reasoning": "rs_", "message": "msg_", "function_call": "fc_"}
    assert all(item["id"].startswith(prefixes[item["type"]]) for item in items)


def drop_parsed(value):
    """The accumulator's Parsed* types add ``parsed``/``parsed_arguments`` (structured outputs)."""
    if isinstance(value, dict):
        return {k: drop_parsed(v) for k, v in value.items() if k not in ("parsed", "parsed_arguments")}
    if isinstance(value, list):
        return [drop_parsed(v) for v in value]
    return value


def accumulate(events, tools=()):
    """Run the events through the openai package's own Responses stream accumulator."""
    state = ResponseStreamState(input_tools=list(tools) or omit, text_format=omit)
    final = None
    for event in events:
        model = check.stream_event(event)
        for out in state.handle_event(model):
            if out.type == "response.completed":
                final = out.response
    return final


def run_stream(case, pieces, **kwargs):
    stream = tw_openai.ResponsesStream(case.parser().stream(), response={"model": "test-model"}, **kwargs)
    events = []
    for piece in pieces:
        events.extend(stream.feed(piece))
    events.extend(stream.finish())
    return stream, events


def check_event_invariants(events):
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created"
    assert events[1]["type"] == "response.in_progress"
    assert events[-1]["type"] == "response.completed"
    opened, closed = {}, {}
    for event in events[2:-1]:
        kind = event["type"]
        if kind == "response.output_item.added":
            index = event["output_index"]
            assert index == len(opened), "output indexes count up from 0"
            assert not set(opened) - set(closed), "the previous item is done before the next is added"
            opened[index] = event["item"]["id"]
        elif kind == "response.output_item.done":
            assert opened[event["output_index"]] == event["item"]["id"]
            closed[event["output_index"]] = event["item"]
        else:
            index = event["output_index"]
            assert index in opened and index not in closed
            assert event["item_id"] == opened[index]
    assert set(opened) == set(closed)
    return [closed[i] for i in sorted(closed)]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_responses_stream_events_validate_and_accumulate(case):
    reference = case.parser().parse(case.text)
    check_reference(case, reference)
    for pieces in chunkings(case.text):
        stream, events = run_stream(case, pieces)
        done_items = check_event_invariants(events)
        final = accumulate(events)
        assert final is not None
        assert final.status == "completed"
        output = [drop_parsed(item.to_dict(mode="json")) for item in final.output]
        assert output == stream.output == done_items
        assert events[-1]["response"]["output"] == output

        message = stream.message()
        calls = [i for i in output if i["type"] == "function_call"]
        assert [(c["name"], c["arguments"], c["call_id"]) for c in calls] == [
            (c.name, c.arguments, c.id) for c in message.tool_calls
        ]
        assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
            (c.name, json.loads(c.arguments)) for c in reference.tool_calls
        ]
        reasoning = "".join(i["content"][0]["text"] for i in output if i["type"] == "reasoning")
        assert reasoning == (reference.reasoning_content or "")
        text = "".join(i["content"][0]["text"] for i in output if i["type"] == "message")
        if not calls:
            assert text == (reference.content or "")
        else:
            # Whitespace-only text between items opens no message item.
            assert text.strip() == (reference.content or "").strip()
        for item in output:
            assert item["status"] == "completed"


@pytest.mark.parametrize("case", [c for c in CASES if c.kind in ("reasoning_content", "content", "one_call")], ids=lambda c: c.id)
def test_stream_items_match_to_responses(case):
    """Where the output has one item of each kind, streamed items equal to_responses() (whose order
    is fixed: reasoning, message, calls; gemma4 writes its calls before the text)."""
    stream, _ = run_stream(case, list(case.text))
    order = {"reasoning": 0, "message": 1, "function_call": 2}
    streamed = sorted(strip_ids(stream.output), key=lambda item: order[item["type"]])
    assert streamed == strip_ids(stream.message().to_responses())


def test_event_sequence_for_reasoning_text_and_call():
    parser = toolwire.ToolParser("hermes", reasoning=True)
    stream = tw_openai.ResponsesStream(parser.stream(), id_factory=counter_ids())
    events = []
    for piece in ["<think>hm", "m</think>Sure.", '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>']:
        events.extend(stream.feed(piece))
    events.extend(stream.finish())
    assert [(e["type"], e.get("output_index")) for e in events] == [
        ("response.output_item.added", 0),
        ("response.content_part.added", 0),
        ("response.reasoning_text.delta", 0),
        ("response.reasoning_text.delta", 0),
        ("response.reasoning_text.done", 0),
        ("response.content_part.done", 0),
        ("response.output_item.done", 0),
        ("response.output_item.added", 1),
        ("response.content_part.added", 1),
        ("response.output_text.delta", 1),
        ("response.output_text.done", 1),
        ("response.content_part.done", 1),
        ("response.output_item.done", 1),
        ("response.output_item.added", 2),
        ("response.function_call_arguments.delta", 2),
        ("response.function_call_arguments.done", 2),
        ("response.output_item.done", 2),
    ]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["item"] == {
        "id": "rs_0",
        "type": "reasoning",
        "summary": [],
        "content": [],
        "status": "in_progress",
    }
    assert events[4]["text"] == "hmm"
    assert events[13]["item"]["arguments"] == "" and events[13]["item"]["name"] == "f"
    assert events[15]["arguments"] == '{"a": 1}'
    for event in events:
        check.stream_event(event)
    # Without response=, no lifecycle events and no response object.
    assert stream.response is None


def test_sequence_and_output_index_offsets():
    parser = toolwire.ToolParser("hermes")
    stream = tw_openai.ResponsesStream(parser.stream(), sequence_start=10, output_index_start=3)
    events = stream.feed("Hello") + stream.finish()
    assert events[0]["sequence_number"] == 10
    assert {e["output_index"] for e in events} == {3}
    assert [e["sequence_number"] for e in events] == list(range(10, 10 + len(events)))


def test_length_finish_gives_incomplete_response():
    parser = toolwire.ToolParser("hermes")
    stream = tw_openai.ResponsesStream(parser.stream(), response={"model": "m", "id": "resp_1"})
    events = stream.feed("Partial answer") + stream.finish("length")
    assert events[-1]["type"] == "response.incomplete"
    resp = check.response(events[-1]["response"])
    assert resp.status == "incomplete"
    assert resp.incomplete_details.reason == "max_output_tokens"
    assert resp.output[0].status == "incomplete"
    assert resp.id == "resp_1"


def test_truncated_call_item_ends_incomplete():
    parser = toolwire.ToolParser("hermes")
    stream = tw_openai.ResponsesStream(parser.stream(), response={})
    events = stream.feed('<tool_call>\n{"name": "f", "arguments": {"a": ') + stream.finish()
    message = stream.message()
    assert [i.kind for i in message.issues] == ["truncated"]
    done = [e for e in events if e["type"] == "response.output_item.done"]
    assert [d["item"]["status"] for d in done] == ["incomplete"]
    for event in events:
        check.stream_event(event)


def test_whitespace_between_calls_opens_no_message_item():
    text = toolwire.render("hermes", [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}])
    stream = tw_openai.ResponsesStream(toolwire.ToolParser("hermes").stream())
    stream.feed(text)
    stream.finish()
    assert [i["type"] for i in stream.output] == ["function_call", "function_call"]


def test_text_after_a_call_is_a_new_message_item():
    stream = tw_openai.ResponsesStream(toolwire.ToolParser("hermes").stream(), response={})
    events = stream.feed('A <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>\nB') + stream.finish()
    assert [i["type"] for i in stream.output] == ["message", "function_call", "message"]
    assert stream.output[2]["content"][0]["text"] == "\nB"
    assert accumulate(events) is not None


def test_response_fields_and_tools_are_carried():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    stream = tw_openai.ResponsesStream(
        toolwire.ToolParser("hermes", tools).stream(),
        response={"model": "my-model", "tools": tools, "tool_choice": "required", "temperature": 0.5},
    )
    events = stream.feed('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>') + stream.finish()
    created = check.response(events[0]["response"])
    assert created.status == "in_progress" and created.output == []
    final = check.response(events[-1]["response"])
    assert final.model == "my-model" and final.tool_choice == "required" and final.temperature == 0.5
    assert final.tools[0].name == "f" and final.tools[0].type == "function"
    assert created.id == final.id and created.created_at == final.created_at
    assert accumulate(events, tools=[check_tool.model_dump() for check_tool in final.tools]) is not None


def test_responses_tools_converts_chat_tools():
    chat = [
        {"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}},
        {"type": "custom", "custom": {"name": "c", "description": "raw"}},
        {"type": "function", "name": "already", "parameters": {}},
    ]
    out = tw_openai.responses_tools(chat)
    assert out == [
        {"type": "function", "name": "f", "description": "d", "parameters": {}},
        {"type": "custom", "name": "c", "description": "raw"},
        {"type": "function", "name": "already", "parameters": {}},
    ]
    resp = tw_openai.response_object(fields={"tools": chat, "model": "m"})
    check.response(resp)


# -- custom tools: the hook is duck typed on an ``input`` attribute ------------------------------


def fake_delta(content=None, reasoning=None, calls=()):
    return SimpleNamespace(content=content, reasoning_content=reasoning, tool_calls=list(calls), finish_reason=None)


def test_custom_tool_call_hook_items_and_events():
    call = SimpleNamespace(index=0, id="call_x", name="apply_patch", arguments="", input="*** Begin Patch")
    message = SimpleNamespace(
        content="Patching.", reasoning_content=None, tool_calls=[call], finish_reason="tool_calls"
    )
    items = tw_openai.message_to_responses(message, id_factory=counter_ids())
    assert items[1] == {
        "id": "ctc_1",
        "type": "custom_tool_call",
        "call_id": "call_x",
        "name": "apply_patch",
        "input": "*** Begin Patch",
    }
    for item in items:
        check.output_item(item)

    events = tw_openai.ResponsesEvents(id_factory=counter_ids())
    out = events.push(fake_delta(content="Patching."))
    out += events.push(fake_delta(calls=[call]))
    out += events.close(message=message)
    types = [e["type"] for e in out]
    assert types[-4:] == [
        "response.output_item.added",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
    ]
    assert out[-2]["input"] == "*** Begin Patch"
    for event in out:
        check.stream_event(event)
    assert events.output[1]["type"] == "custom_tool_call"


def test_events_after_close_are_refused():
    events = tw_openai.ResponsesEvents()
    events.close()
    with pytest.raises(RuntimeError):
        events.push(fake_delta(content="x"))


CUSTOM_TOOLS = [
    *__import__("conftest").WEATHER_TOOLS,
    {"type": "custom", "custom": {"name": "run_python", "description": "Run code", "format": {"type": "text"}}},
]
CODE = "print('hi')\nfor i in range(3):\n    print(i)"


@pytest.mark.parametrize("fmt", toolwire.formats())
def test_custom_tool_calls_on_every_format(fmt):
    text = toolwire.render(
        fmt, [{"name": "run_python", "arguments": {"input": CODE}}, {"name": "get_time", "arguments": {}}], "On it."
    )
    parser = toolwire.ToolParser(fmt, CUSTOM_TOOLS)
    message = parser.parse(text)
    assert message.valid, message.issues
    items = message.to_responses()
    for item in items:
        check.output_item(item)
    calls = [i for i in items if i["type"] in ("custom_tool_call", "function_call")]
    assert [(i["type"], i["name"]) for i in calls] == [("custom_tool_call", "run_python"), ("function_call", "get_time")]
    assert calls[0]["input"] == CODE and calls[0]["call_id"] == message.tool_calls[0].id

    for pieces in chunkings(text):
        stream = tw_openai.ResponsesStream(parser.stream(), response={"tools": CUSTOM_TOOLS})
        events = [e for piece in pieces for e in stream.feed(piece)] + stream.finish()
        check_event_invariants(events)
        final = accumulate(events)
        streamed = [i for i in stream.output if i["type"] in ("custom_tool_call", "function_call")]
        same = lambda items: [{k: v for k, v in i.items() if k not in ("id", "call_id")} for i in items]  # noqa: E731
        assert same(streamed) == same(calls)
        assert [i["call_id"] for i in streamed] == [c.id for c in stream.message().tool_calls]
        assert [drop_parsed(i.to_dict(mode="json")) for i in final.output] == stream.output
        deltas = [e for e in events if e["type"] == "response.custom_tool_call_input.delta"]
        assert [d["delta"] for d in deltas] == [CODE], "a custom call's input comes whole, once"


@pytest.mark.parametrize("text", ["   ", "\n", "<think>x</think>  "])
def test_whitespace_only_content_without_calls_is_a_message(text):
    parser = toolwire.ToolParser("hermes", reasoning=True)
    stream = tw_openai.ResponsesStream(parser.stream(), response={})
    events = [e for ch in text for e in stream.feed(ch)] + stream.finish()
    assert strip_ids(stream.output) == strip_ids(stream.message().to_responses())
    assert stream.output[-1]["type"] == "message"
    assert accumulate(events) is not None
