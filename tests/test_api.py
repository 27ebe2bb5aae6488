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
