"""The integration layers on recorded model outputs: every ai-dynamo conformance corpus text (see
test_conformance.py) whose family is a toolwire format, with the case's tools, through the OpenAI
shapes (validated by the openai package's types and stream accumulators) and, when installed,
vLLM's and SGLang's own parser paths. Each must give the calls parse() gives (valid or not: the
corpus has malformed and truncated outputs too)."""

from __future__ import annotations

import json
import warnings

import openai_check as check
import pytest
import toolwire
import toolwire.openai as tw_openai
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from test_conformance import CASES as CORPUS_CASES  # skips this module when the corpus is absent
from test_conformance import format_for

CASES = [(case, format_for(case.family)) for case in CORPUS_CASES if format_for(case.family)]
IDS = [case.key for case, _ in CASES]
CHUNK = 3


def pieces(text: str, size: int = CHUNK) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def calls_of(message):
    return [(c.name, c.arguments) for c in message.tool_calls]


def complete(streamed, message):
    """The streamed calls that the message kept: a call whose output turned out truncated or
    malformed was already partly streamed (deltas cannot be taken back), and is in
    ``message.issues`` instead of ``message.tool_calls``."""
    kept = {c.index for c in message.tool_calls}
    return [call for index, call in enumerate(streamed) if index in kept]


@pytest.mark.parametrize(("case", "fmt"), CASES, ids=IDS)
def test_openai_shapes_on_corpus(case, fmt):
    parser = toolwire.ToolParser(fmt, case.tools)
    message = parser.parse(case.text)

    # Chat: the message, and the stream assembled by the openai package's accumulator.
    check.chat_message(message.to_openai())
    stream = parser.stream()
    deltas = [d for p in pieces(case.text) for d in stream.feed(p)] + stream.finish()
    state = ChatCompletionStreamState(input_tools=case.tools)
    for i, delta in enumerate(deltas):
        state.handle_chunk(check.chat_chunk(tw_openai.chat_completion_chunk(delta, id="c", model="m", created=0, role=i == 0)))
    choice = state.get_final_completion().choices[0]
    acc = [(c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
    assert complete(acc, stream.message()) == calls_of(stream.message())
    assert calls_of(stream.message()) == calls_of(message)

    # Responses: items, and the event stream through the openai package's accumulator.
    for item in message.to_responses():
        check.output_item(item)
    events_stream = tw_openai.ResponsesStream(parser.stream(), response={"tools": case.tools})
    events = [e for p in pieces(case.text) for e in events_stream.feed(p)] + events_stream.finish()
    from test_openai_responses import accumulate

    final = accumulate(events, tools=case.tools)
    assert final is not None
    done = [i for i in events_stream.output if i["type"] == "function_call" and i["status"] == "completed"]
    assert [(i["name"], i["arguments"]) for i in done] == calls_of(message)
    assert [i.type for i in final.output] == [i["type"] for i in events_stream.output]


@pytest.mark.parametrize(("case", "fmt"), CASES, ids=IDS)
def test_vllm_on_corpus(case, fmt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("vllm.tool_parsers")
        from test_vllm import ChatCompletionRequest, serve_text  # noqa: F401
    from toolwire.integrations import vllm as tw_vllm

    message = toolwire.ToolParser(fmt, case.tools).parse(case.text)
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=case.tools or None)
    info = tw_vllm.parser_class(fmt)(None).extract_tool_calls(case.text, request)
    assert [(c.function.name, c.function.arguments) for c in info.tool_calls] == calls_of(message)
    assert info.content == message.content

    choice, _ = serve_text(fmt, pieces(case.text), tools=case.tools)
    got = complete([(c.function.name, c.function.arguments) for c in choice.message.tool_calls or []], message)
    assert [(n, json.loads(a)) for n, a in got] == [(n, json.loads(a)) for n, a in calls_of(message)]


@pytest.mark.parametrize(("case", "fmt"), CASES, ids=IDS)
def test_sglang_on_corpus(case, fmt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pytest.importorskip("sglang.srt.function_call.base_format_detector")
        from sglang.srt.entrypoints.openai.protocol import Tool
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from toolwire.integrations import sglang as tw_sglang

    tw_sglang.register()
    tools = [Tool.model_validate(t) for t in case.tools]
    message = toolwire.ToolParser(fmt, case.tools).parse(case.text)
    declared = {t["function"]["name"] for t in case.tools}
    # SGLang drops calls to undeclared tools (its default policy, which the detector follows).
    expected = [(n, a) for n, a in calls_of(message) if n in declared]

    result = tw_sglang.detector_class(fmt)().detect_and_parse(case.text, tools)
    assert [(c.name, c.parameters) for c in result.calls] == expected

    parser = FunctionCallParser(tools, f"toolwire_{fmt}")
    if not tools:
        return  # SGLang's FunctionCallParser passes text through untouched without tools
    calls: dict[int, list[str]] = {}
    for normal, items in [parser.parse_stream_chunk(p) for p in pieces(case.text)] + [parser.parse_stream_end()]:
        for item in items:
            if item.name is not None:
                calls[item.tool_index] = [item.name, ""]
            calls[item.tool_index][1] += item.parameters
    # Streamed calls the detector dropped (unknown tools) are not numbered; calls the message lost
    # (truncated, malformed) were partly streamed already.
    streamed_ok = parser.detector.toolwire_message
    complete_names = [(c.name, c.arguments) for c in streamed_ok.tool_calls if c.name in declared]
    assert [tuple(c) for c in calls.values() if tuple(c) in complete_names] == expected
