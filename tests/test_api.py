"""The public API contract: names, shapes, errors."""

import json
import re

import pytest
import toolwire
from conftest import WEATHER_TOOLS

HERMES_TWO_CALLS = (
    "Checking.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "CET"}}\n</tool_call>'
)


def test_formats_and_aliases_resolve():
    names = toolwire.formats()
    assert {"hermes", "llama3_json", "mistral", "default"} <= set(names)
    for name in names:
        info = toolwire.format_info(name)
        assert info["name"] == name
        for alias in info["aliases"]:
            assert toolwire.format_info(alias)["name"] == name
            assert toolwire.ToolParser(alias).format == name
    assert toolwire.format_info("qwen25")["name"] == "hermes"
    assert toolwire.format_info("llama3.1")["name"] == "llama3_json"


def test_format_info_describes_markers():
    info = toolwire.format_info("hermes")
    markers = {m["text"]: m for m in info["markers"]}
    assert markers["<tool_call>"]["special_token"] is True
    assert markers["<tool_call>"]["role"] == "call_start"
    assert info["arguments"] == {"kind": "json"}
    assert info["reasoning"] == {"start": "<think>", "end": "</think>"}
    assert info["template"] == {"begin": "<tool_call>\n{\"name\": \"{name}\", \"arguments\": ", "end": "}\n</tool_call>", "separator": "\n"}


def test_format_info_gives_xml_parameter_tags():
    qwen = toolwire.format_info("qwen3_coder")["arguments"]
    assert qwen == {"kind": "xml_params", "open": "<parameter={key}>", "close": "</parameter>", "pad": True,
                    "between": True, "nested": False, "typing": "schema"}
    dsml = toolwire.format_info("deepseek_v3_2")["arguments"]
    assert dsml["typing"] == "string_attribute" and "{string}" in dsml["open"]
    assert toolwire.format_info("minimax_m3")["arguments"]["nested"] is True
    assert toolwire.format_info("gemma4")["arguments"] == {"kind": "gemma", "string_delimiter": '<|"|>'}
    assert toolwire.format_info("pythonic")["arguments"] == {"kind": "python_kwargs"}


def test_misuse_raises_toolwire_error_which_is_a_value_error():
    assert issubclass(toolwire.ToolwireError, ValueError)
    with pytest.raises(toolwire.ToolwireError, match="unknown tool-call format"):
        toolwire.ToolParser("no_such_format")
    with pytest.raises(toolwire.ToolwireError):
        toolwire.format_info("nope")
    with pytest.raises(toolwire.ToolwireError, match="reasoning"):
        toolwire.ToolParser("hermes", reasoning="sometimes")
    with pytest.raises(toolwire.ToolwireError, match="tools"):
        toolwire.ToolParser("hermes", tools={"not": "a list"})
    stream = toolwire.ToolParser("hermes").stream()
    with pytest.raises(toolwire.ToolwireError, match="vocab"):
        stream.feed_tokens([1, 2, 3])
    stream.feed("hi")
    stream.finish()
    with pytest.raises(toolwire.ToolwireError, match="finished"):
        stream.feed("more")
    with pytest.raises(toolwire.ToolwireError, match="finished"):
        stream.finish()


def test_parse_returns_openai_message():
    msg = toolwire.ToolParser("hermes", tools=WEATHER_TOOLS).parse(HERMES_TWO_CALLS)
    assert msg.content == "Checking.\n\n"
    assert [c.name for c in msg.tool_calls] == ["get_weather", "get_time"]
    assert [json.loads(c.arguments) for c in msg.tool_calls] == [{"location": "Paris"}, {"timezone": "CET"}]
    assert msg.valid and msg.issues == []
    assert msg.finish_reason == "tool_calls"
    out = msg.to_openai()
    assert out["role"] == "assistant"
    assert out["content"] == "Checking.\n\n"
    assert out["tool_calls"][0]["type"] == "function"
    assert out["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"location": "Paris"}'}
    ids = [c.id for c in msg.tool_calls]
    assert all(re.fullmatch(r"call_[A-Za-z0-9]{24}", i) for i in ids)
    assert len(set(ids)) == 2


def test_ids_are_unique_across_requests():
    parser = toolwire.ToolParser("hermes")
    ids = [parser.parse(HERMES_TWO_CALLS).tool_calls[i].id for _ in range(50) for i in range(2)]
    assert len(set(ids)) == len(ids)


def test_id_factory_is_used_and_its_errors_raise():
    parser = toolwire.ToolParser("hermes", id_factory=lambda index, name: f"{name}-{index}")
    assert [c.id for c in parser.parse(HERMES_TWO_CALLS).tool_calls] == ["get_weather-0", "get_time-1"]

    def broken(index, name):
        raise RuntimeError("id service down")

    with pytest.raises(RuntimeError, match="id service down"):
        toolwire.ToolParser("hermes", id_factory=broken).parse(HERMES_TWO_CALLS)


def test_stream_deltas_are_openai_chunks():
    stream = toolwire.ToolParser("hermes").stream()
    deltas = []
    for i in range(0, len(HERMES_TWO_CALLS), 4):
        deltas += stream.feed(HERMES_TWO_CALLS[i : i + 4])
    deltas += stream.finish()
    dicts = [d.to_openai() for d in deltas]
    assert "".join(d.get("content", "") for d in dicts) == "Checking.\n\n"
    firsts = [tc for d in dicts for tc in d.get("tool_calls", []) if "id" in tc]
    assert [(tc["index"], tc["type"], tc["function"]["name"]) for tc in firsts] == [
        (0, "function", "get_weather"),
        (1, "function", "get_time"),
    ]
    args = {0: "", 1: ""}
    for d in dicts:
        for tc in d.get("tool_calls", []):
            args[tc["index"]] += tc["function"]["arguments"]
    message = stream.message()
    assert args == {0: message.tool_calls[0].arguments, 1: message.tool_calls[1].arguments}
    assert deltas[-1].finish_reason == "tool_calls"
    assert [d.finish_reason for d in deltas[:-1]] == [None] * (len(deltas) - 1)


def test_content_is_released_before_a_possible_marker_completes():
    stream = toolwire.ToolParser("hermes").stream()
    assert [d.content for d in stream.feed("Hello wor")] == ["Hello wor"]
    assert [d.content for d in stream.feed("ld <tool")] == ["ld "]
    assert stream.feed("_c") == []
    assert [d.content for d in stream.feed("up> done")] == ["<tool_cup> done"]


def test_finish_reason_passthrough():
    stream = toolwire.ToolParser("hermes").stream()
    stream.feed("cut off")
    assert stream.finish("length")[-1].finish_reason == "length"
    assert toolwire.ToolParser("hermes").stream().finish()[-1].finish_reason == "stop"


def test_reasoning_modes():
    text = "<think>plan</think>\n\nAnswer."
    assert toolwire.ToolParser("hermes").parse(text).content == text
    msg = toolwire.ToolParser("hermes", reasoning="think").parse(text)
    assert (msg.reasoning_content, msg.content) == ("plan", "\n\nAnswer.")
    msg = toolwire.ToolParser("hermes", reasoning=True).parse(text)
    assert (msg.reasoning_content, msg.content) == ("plan", "\n\nAnswer.")
    msg = toolwire.ToolParser("hermes", reasoning="closing_only").parse("plan</think>Answer.")
    assert (msg.reasoning_content, msg.content) == ("plan", "Answer.")
    msg = toolwire.ToolParser("mistral", reasoning=True).parse("[THINK]hmm[/THINK]ok")
    assert (msg.reasoning_content, msg.content) == ("hmm", "ok")


def test_broken_calls_are_issues_not_content():
    parser = toolwire.ToolParser("hermes", tools=WEATHER_TOOLS)
    msg = parser.parse('Sure.<tool_call>\n{"name": "get_weather", "arguments": {"location": "Pa')
    assert msg.content == "Sure."
    assert msg.tool_calls == []
    assert [(i.kind, i.index) for i in msg.issues] == [("truncated", 0)]
    assert msg.issues[0].raw.startswith("<tool_call>")
    assert not msg.valid
    msg = parser.parse('<tool_call>{"name": "launch_rockets", "arguments": {}}</tool_call>')
    assert [c.name for c in msg.tool_calls] == ["launch_rockets"]
    assert [i.kind for i in msg.issues] == ["unknown_tool"]


def test_render_accepts_every_call_shape():
    calls = toolwire.ToolParser("hermes").parse(HERMES_TWO_CALLS).tool_calls
    dict_calls = [
        {"name": "get_weather", "arguments": {"location": "Paris"}},
        {"name": "get_time", "arguments": '{"timezone": "CET"}'},
    ]
    openai_calls = [c.to_openai() for c in calls]
    rendered = {toolwire.render("hermes", x) for x in (calls, dict_calls, openai_calls)}
    assert len(rendered) == 1
    again = toolwire.ToolParser("hermes").parse(rendered.pop()).tool_calls
    assert [(c.name, json.loads(c.arguments)) for c in again] == [(c.name, json.loads(c.arguments)) for c in calls]
    with pytest.raises(toolwire.ToolwireError, match="name"):
        toolwire.render("hermes", [{"arguments": {}}])
    with pytest.raises(toolwire.ToolwireError, match="not JSON"):
        toolwire.render("hermes", [{"name": "f", "arguments": "{oops"}])


def test_cli_parse_and_formats(capsys):
    from toolwire.cli import main

    assert main(["formats"]) == 0
    assert "hermes" in capsys.readouterr().out


def test_demo_runs(capsys):
    from toolwire.cli import main

    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    chunks = [json.loads(line) for line in out.splitlines() if line.startswith("{\"id\"")]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_vocab_from_pieces_builds_any_vocabulary():
    # A three-token byte vocabulary plus one special marker: "€" split over two tokens.
    vocab = toolwire.Vocab.from_pieces(
        [(0, b"\xe2\x82", False), (1, b"\xac", False), (2, "x", False), (3, "<tool_call>", True), (4, b"</tool_call>", True)]
    )
    assert len(vocab) == 5
    assert vocab.special_id("<tool_call>") == 3
    assert vocab.special_id("x") is None
    assert vocab.token_bytes(0) == b"\xe2\x82"
    stream = toolwire.ToolParser("hermes", vocab=vocab).stream()
    for i in (2, 0, 1, 2):
        stream.feed_tokens([i])
    stream.finish()
    assert stream.message().content == "x€x"

    with pytest.raises(toolwire.ToolwireError, match="twice"):
        toolwire.Vocab.from_pieces([(1, b"a", False), (1, b"b", False)])
    with pytest.raises(toolwire.ToolwireError, match="UTF-8"):
        toolwire.Vocab.from_pieces([(1, b"\xff", True)])
    with pytest.raises(toolwire.ToolwireError, match=r"pieces\[1\]: expected"):
        toolwire.Vocab.from_pieces([(0, b"a", False), (1, b"b")])
    with pytest.raises(toolwire.ToolwireError, match="bytes or str"):
        toolwire.Vocab.from_pieces([(0, 7, False)])
    assert len(toolwire.Vocab.from_pieces(iter([(0, "a", False)]))) == 1


def test_vocab_from_sentencepiece_rejects_other_files(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {}}')
    with pytest.raises(toolwire.ToolwireError, match="sentencepiece"):
        toolwire.Vocab.from_sentencepiece(path)
    with pytest.raises(toolwire.ToolwireError, match="cannot read"):
        toolwire.Vocab.from_sentencepiece(tmp_path / "missing.model")


def test_reprs_read_as_python():
    parser = toolwire.ToolParser("hermes", tools=WEATHER_TOOLS)
    message = parser.parse('a\x00b\x18<tool_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</tool_call><tool_call>{"x"')
    call, issue = message.tool_calls[0], message.issues[0]
    assert repr(message) == "ParsedMessage(content='a\\x00b\\x18', reasoning_content=None, tool_calls=1, issues=1)"
    assert repr(call) == f"""ToolCall(index=0, id={call.id!r}, name='get_weather', arguments='{{"location": "Paris"}}')"""
    assert repr(issue) == f"CallIssue(index={issue.index!r}, kind={issue.kind!r}, detail={issue.detail!r}, raw={issue.raw!r})"
    stream = parser.stream()
    deltas = stream.feed("it's") + stream.finish()
    assert [repr(d) for d in deltas] == [
        'Delta(content="it\'s", reasoning_content=None, tool_calls=0, finish_reason=None)',
        "Delta(content=None, reasoning_content=None, tool_calls=0, finish_reason='stop')",
    ]
    streamed = parser.stream().feed('<tool_call>{"name": "get_weather", "arguments": {"lo')
    call_delta = streamed[0].tool_calls[0]
    assert repr(call_delta).startswith(f"ToolCallDelta(index=0, id={call_delta.id!r}, name='get_weather', arguments=")
    assert repr(toolwire.ToolSet(WEATHER_TOOLS)) == f"ToolSet({toolwire.ToolSet(WEATHER_TOOLS).names!r})"
    assert repr(parser) == f"ToolParser(format='hermes', tools={len(WEATHER_TOOLS)})"


VOCAB = toolwire.Vocab.from_pieces([(0, "x", False), (1, "y", False), (5, "<tool_call>", True)])

BAD_ARGUMENTS = [
    (lambda: toolwire.ToolParser(b"hermes"), TypeError, "argument 'format': expected str, got bytes"),
    (lambda: toolwire.ToolParser("hermes").parse(b"x"), TypeError, "argument 'text': expected str, got bytes"),
    (lambda: toolwire.ToolParser("hermes").stream().feed(None), TypeError, "argument 'text': expected str, got NoneType"),
    (lambda: toolwire.ToolParser("hermes").stream().finish(3), TypeError, "argument 'finish_reason': expected str"),
    (lambda: toolwire.ToolParser("hermes", vocab=VOCAB).stream().feed_tokens("xy"), TypeError, "argument 'token_ids': expected a sequence of int token ids, got str"),
    (lambda: toolwire.ToolParser("hermes", vocab=VOCAB).stream().feed_tokens([0, 1.0]), TypeError, "argument 'token_ids[1]': expected an int, got float"),
    (lambda: toolwire.ToolParser("hermes", vocab=VOCAB).stream().feed_tokens([-1]), ValueError, "argument 'token_ids[0]': -1 must not be negative"),
    (lambda: toolwire.ToolParser("hermes", vocab=VOCAB).stream().feed_tokens([2**40]), ValueError, "argument 'token_ids[0]': 1099511627776 is too large"),
    (lambda: toolwire.ToolParser("hermes", max_call_bytes=-1), ValueError, "argument 'max_call_bytes': must be a positive int or None, got -1"),
    (lambda: toolwire.ToolParser("hermes", max_call_bytes=0), ValueError, "argument 'max_call_bytes': must be a positive int"),
    (lambda: toolwire.ToolParser("hermes", max_call_bytes=2**80), ValueError, "argument 'max_call_bytes': must be a positive int"),
    (lambda: toolwire.ToolParser("hermes", max_call_bytes="10"), TypeError, "argument 'max_call_bytes': expected an int, got str"),
    (lambda: toolwire.format_info(7), TypeError, "argument 'name': expected str, got int"),
    (lambda: toolwire.render("hermes", [], content=b"x"), TypeError, "argument 'content': expected str, got bytes"),
    (lambda: toolwire.ToolSet(WEATHER_TOOLS).validate(b"get_weather", {}), TypeError, "argument 'name': expected str"),
    (lambda: toolwire.ToolSet(WEATHER_TOOLS).validate_many([("get_weather", b"{}")]), TypeError, "argument 'calls[0]': expected a (name, arguments_json) pair of str, got tuple"),
    (lambda: toolwire.ToolParser("hermes", parallel_tool_calls="no"), TypeError, "argument 'parallel_tool_calls': expected bool, got str"),
    (lambda: VOCAB.special_id(b"<tool_call>"), TypeError, "argument 'text': expected str, got bytes"),
    (lambda: VOCAB.token_bytes(-1), ValueError, "argument 'id': -1 must not be negative"),
    (lambda: toolwire.MaskCache(-1), ValueError, "argument 'max_bytes': -1 must not be negative"),
    (lambda: toolwire.render("hermes", 5), TypeError, "argument 'tool_calls': expected a list of tool calls, got int"),
    (lambda: toolwire.render("hermes", [5]), TypeError, "argument 'tool_calls[0]': expected a ToolCall or a dict, got int"),
]


@pytest.mark.parametrize(("call", "error", "message"), BAD_ARGUMENTS)
def test_wrong_arguments_raise_one_clear_error_naming_the_parameter(call, error, message):
    with pytest.raises(error) as raised:
        call()
    text = str(raised.value)
    assert text.startswith(message)
    assert "\n" not in text and not re.search(r"PyString|Vec|Some\(|Overflow", text)
    assert not isinstance(raised.value, OverflowError)


def test_a_token_id_missing_from_the_vocab_raises_before_anything_is_fed():
    stream = toolwire.ToolParser("hermes", vocab=VOCAB).stream()
    stream.feed_tokens([0])
    with pytest.raises(toolwire.ToolwireError, match=r"token id 3 is not in the vocabulary \(highest id 5\); nothing was fed"):
        stream.feed_tokens([1, 3, 1])
    stream.feed_tokens([1])
    stream.finish()
    assert stream.message().content == "xy"
    assert stream.message().valid


def test_render_refuses_a_single_call_where_a_list_belongs():
    call = {"name": "get_weather", "arguments": {"location": "Paris"}}
    one = toolwire.ToolParser("hermes").parse(toolwire.render("hermes", [call])).tool_calls[0]
    for single in (call, one, "get_weather"):
        with pytest.raises(TypeError, match="argument 'tool_calls': expected a list of tool calls, got one .*; wrap it in a list"):
            toolwire.render("hermes", single)
    assert toolwire.render("hermes", [one]) == toolwire.render("hermes", [call])
