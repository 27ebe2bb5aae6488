"""toolwire.integrations.sglang against the real SGLang package: the detector interface called
directly, and through SGLang's own FunctionCallParser (the object its serving layer uses), for
every format. Skipped when SGLang is not installed (it is in the ``bench`` extra, not ``test``;
see scripts/install_integration_peers.sh)."""

from __future__ import annotations

import json
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pytest.importorskip("sglang.srt.function_call.base_format_detector")
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.core_types import StreamingParseResult, StructureInfo, ToolCallItem
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

import toolwire  # noqa: E402
import toolwire.integrations  # noqa: E402
from _detect_templates import detect_template  # noqa: E402
from conftest import WEATHER_TOOLS  # noqa: E402
from integration_cases import CASES, WEATHER, chunkings  # noqa: E402
from toolwire.integrations import sglang as tw_sglang  # noqa: E402

tw_sglang.register()

# Reasoning is SGLang's reasoning parser's job; harmony's analysis channel is call syntax.
SGLANG_CASES = [c for c in CASES if not c.has_reasoning or c.format == "harmony"]
SGLANG_IDS = [c.id for c in SGLANG_CASES]
TOOLS = [Tool.model_validate(t) for t in WEATHER_TOOLS]


def reference(case):
    return toolwire.ToolParser(case.format, WEATHER_TOOLS).parse(case.text)


def calls_of(message):
    return [(c.name, json.loads(c.arguments)) for c in message.tool_calls]


def test_every_format_and_alias_is_registered():
    enum = FunctionCallParser.ToolCallParserEnum
    for fmt in toolwire.formats():
        cls = enum[f"toolwire_{fmt}"]
        assert issubclass(cls, tw_sglang.ToolwireDetector) and cls.toolwire_format == fmt
        for alias in toolwire.format_info(fmt)["aliases"]:
            assert enum[f"toolwire_{alias}"].toolwire_format == fmt
        FunctionCallParser(TOOLS, f"toolwire_{fmt}")  # SGLang builds it without arguments


def test_plugin_hook_registers_only_when_asked(monkeypatch):
    enum = FunctionCallParser.ToolCallParserEnum
    saved = dict(enum)
    try:
        for name in list(enum):
            if name.startswith("toolwire_"):
                del enum[name]
        monkeypatch.delenv("TOOLWIRE_SGLANG", raising=False)
        monkeypatch.setattr("sys.argv", ["launch_server", "--tool-call-parser", "qwen25"])
        toolwire.integrations.sglang_plugin()
        assert "toolwire_hermes" not in enum
        monkeypatch.setattr("sys.argv", ["launch_server", "--tool-call-parser", "toolwire_hermes"])
        toolwire.integrations.sglang_plugin()
        assert "toolwire_hermes" in enum
    finally:
        enum.clear()
        enum.update(saved)


@pytest.mark.parametrize("case", SGLANG_CASES, ids=SGLANG_IDS)
def test_detect_and_parse(case):
    ref = reference(case)
    detector = tw_sglang.detector_class(case.format)()
    result = detector.detect_and_parse(case.text, TOOLS)
    assert isinstance(result, StreamingParseResult)
    assert all(isinstance(c, ToolCallItem) for c in result.calls)
    assert [(c.name, json.loads(c.parameters)) for c in result.calls] == calls_of(ref)
    names = [t["function"]["name"] for t in WEATHER_TOOLS]
    assert [c.tool_index for c in result.calls] == [names.index(c.name) for c in result.calls]
    assert result.normal_text == (ref.content or "")
    assert detector.has_tool_call(case.text) or not case.calls

    # Through SGLang's FunctionCallParser, as its non-streaming serving path calls it.
    normal, calls = FunctionCallParser(TOOLS, f"toolwire_{case.format}").parse_non_stream(case.text)
    assert [(c.name, json.loads(c.parameters)) for c in calls] == calls_of(ref)
    if detector.has_tool_call(case.text):
        assert normal == (ref.content or "")
    else:
        assert normal == case.text == ref.content


@pytest.mark.parametrize("case", SGLANG_CASES, ids=SGLANG_IDS)
def test_streaming_through_function_call_parser(case):
    ref = reference(case)
    for pieces in chunkings(case.text):
        parser = FunctionCallParser(TOOLS, f"toolwire_{case.format}")
        text, calls = "", {}
        results = [parser.parse_stream_chunk(piece) for piece in pieces] + [parser.parse_stream_end()]
        for normal, items in results:
            text += normal
            for item in items:
                assert isinstance(item, ToolCallItem)
                if item.name is not None:
                    assert item.tool_index not in calls, "name sent once per call"
                    assert item.tool_index == len(calls), "streamed tool_index is the call ordinal"
                    calls[item.tool_index] = [item.name, ""]
                calls[item.tool_index][1] += item.parameters
        assert [(n, json.loads(a)) for n, a in calls.values()] == calls_of(ref)
        if ref.content is None:
            assert not text.strip()
        else:
            assert text == ref.content
        # SGLang's end-of-stream check (serving_chat: expected minus streamed arguments).
        detector = parser.detector
        for expected, streamed in zip(detector.prev_tool_call_arr, detector.streamed_args_for_tool, strict=True):
            assert expected["arguments"] == streamed
        assert [a for a in detector.streamed_args_for_tool] == [c.arguments for c in ref.tool_calls]


def test_unknown_tools_follow_sglang_policy(monkeypatch):
    text = toolwire.render("hermes", [{"name": "nope", "arguments": {}}, WEATHER])
    detector = tw_sglang.detector_class("hermes")()
    result = detector.detect_and_parse(text, TOOLS)
    assert [c.name for c in result.calls] == ["get_weather"]
    assert [i.kind for i in detector.toolwire_message.issues] == ["unknown_tool"]

    parser = FunctionCallParser(TOOLS, "toolwire_hermes")
    items = [i for piece in text for i in parser.parse_stream_chunk(piece)[1]] + parser.parse_stream_end()[1]
    assert {i.tool_index for i in items} == {0}
    assert [i.name for i in items if i.name] == ["get_weather"]

    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "1")
    detector = tw_sglang.detector_class("hermes")()
    result = detector.detect_and_parse(text, TOOLS)
    assert [(c.name, c.tool_index) for c in result.calls] == [("nope", -1), ("get_weather", 0)]


@pytest.mark.parametrize("fmt", toolwire.formats())
def test_structure_info_writes_what_the_parser_reads(fmt):
    detector = tw_sglang.detector_class(fmt)()
    info = toolwire.format_info(fmt)
    template = info["template"]
    # SGLang's legacy tag writes one call alone: JSON arguments, no section, no content block.
    standalone = info["section"] is None and info["content_block"] is None
    if template is None or info["arguments"]["kind"] != "json" or not standalone or "{index}" in template["begin"]:
        with pytest.raises(NotImplementedError):
            detector.structure_info()
        if tw_sglang._grammar_structural_tag() is None:
            assert not detector.supports_structural_tag()
        return
    assert detector.supports_structural_tag()
    structure = detector.structure_info()("get_weather")
    assert isinstance(structure, StructureInfo)
    assert structure.begin.startswith(structure.trigger)
    # What a grammar built from the StructureInfo lets the model write: begin, JSON args, end.
    text = "Sure. " + structure.begin + json.dumps(WEATHER["arguments"]) + structure.end
    message = toolwire.ToolParser(fmt, WEATHER_TOOLS).parse(text)
    assert calls_of(message) == [("get_weather", WEATHER["arguments"])], message.issues
    # And SGLang builds its legacy structural tag from it for required tool choice.
    kind, tag = FunctionCallParser(TOOLS, f"toolwire_{fmt}").get_structure_constraint("required")
    assert kind == "structural_tag"


def test_base_detector_takes_a_format_and_builds_without_one_only_via_registry():
    assert tw_sglang.ToolwireDetector("qwen25").toolwire_format == "hermes"
    with pytest.raises(TypeError):
        tw_sglang.ToolwireDetector()


def test_harmony_reasoning_stays_out_of_normal_text():
    text = "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>"
    detector = tw_sglang.detector_class("harmony")()
    result = detector.detect_and_parse(text, TOOLS)
    assert result.normal_text == "Hi"
    assert detector.toolwire_message.reasoning_content == "think"


def test_model_native_tags_come_from_toolwire_grammar(monkeypatch):
    """The hook into toolwire.grammar, wired with a stand-in module (the real one is exercised
    below when it is installed)."""
    import sys
    import types

    seen = {}
    sentinel = object()

    def structural_tag(format, tools, tool_choice="auto", parallel_tool_calls=True, scope="auto", schema="auto", reasoning=None):
        seen.update(format=format, tools=tools, tool_choice=tool_choice, parallel=parallel_tool_calls, scope=scope, reasoning=reasoning)
        return sentinel

    monkeypatch.setitem(sys.modules, "toolwire.grammar", types.SimpleNamespace(structural_tag=structural_tag))
    monkeypatch.delattr(toolwire, "grammar", raising=False)
    parser = FunctionCallParser(TOOLS, "toolwire_qwen3_coder")
    assert parser.detector.supports_structural_tag()
    assert parser.get_structure_constraint("required", parallel_tool_calls=False, thinking_mode=True) == (
        "structural_tag",
        sentinel,
    )
    assert seen["format"] == "qwen3_coder" and seen["tool_choice"] == "required"
    assert seen["parallel"] is False and seen["scope"] == "always" and seen["reasoning"] is True
    assert [t["function"]["name"] for t in seen["tools"]] == ["get_weather", "get_time"]


def test_model_native_tags_with_the_real_grammar_module():
    grammar = pytest.importorskip("toolwire.grammar")
    parser = FunctionCallParser(TOOLS, "toolwire_qwen3_coder")
    kind, tag = parser.get_structure_constraint("required")
    assert kind == "structural_tag"
    assert tag is not None and type(tag).__name__ == "StructuralTag", grammar


def test_sglang_launch_path_accepts_toolwire_parsers():
    """What `python -m sglang.launch_server --tool-call-parser toolwire_hermes` runs before
    serving: SGLang's plugin loading (toolwire's entry point), then its argument parsing, in a
    fresh interpreter."""
    import importlib.metadata
    import subprocess
    import sys

    if not any(ep.value == "toolwire.integrations:sglang_plugin" for ep in importlib.metadata.entry_points(group="sglang.srt.plugins")):
        pytest.skip("toolwire is not installed with its entry points (pip install -e .)")
    code = (
        "import sys, warnings; warnings.simplefilter('ignore')\n"
        "sys.argv = ['launch_server', '--tool-call-parser', 'toolwire_hermes']\n"
        "from sglang.srt.plugins import load_plugins\n"
        "load_plugins()\n"
        "from sglang.srt.server_args import prepare_server_args\n"
        "args = prepare_server_args(['--model-path', 'm', '--tool-call-parser', 'toolwire_hermes'])\n"
        "print('PARSER=' + args.tool_call_parser)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert "PARSER=toolwire_hermes" in out.stdout, out.stderr[-2000:]


def _model_dir(tmp_path, chat_template, special=()):
    decoder = {str(i): {"content": t, "special": True} for i, t in enumerate(special)}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": chat_template, "added_tokens_decoder": decoder}))
    return str(tmp_path)


def test_toolwire_auto_from_the_model_directory(tmp_path, monkeypatch, caplog):
    """The plugin reads --model-path itself (SGLang builds detectors without a tokenizer): the
    detected format is registered as toolwire_auto, with a warning for special-token markers."""
    enum = FunctionCallParser.ToolCallParserEnum
    saved = dict(enum)
    model = _model_dir(tmp_path, detect_template("glm47"), special=["<tool_call>", "</tool_call>"])
    try:
        monkeypatch.setattr("sys.argv", ["launch_server", "--model-path", model, "--tool-call-parser", "toolwire_auto"])
        with caplog.at_level("WARNING", logger="toolwire.integrations.sglang"):
            toolwire.integrations.sglang_plugin()
        assert enum["toolwire_auto"].toolwire_format == "glm47"
        assert any("<tool_call>, </tool_call>" in r.getMessage() and "SGLang" in r.getMessage() for r in caplog.records)
        parser = FunctionCallParser(TOOLS, "toolwire_auto")
        text = toolwire.render("glm47", [{"name": "get_weather", "arguments": {"location": "Paris"}}])
        _, calls = parser.parse_non_stream(text)
        assert [(c.name, json.loads(c.parameters)) for c in calls] == [("get_weather", {"location": "Paris"})]
    finally:
        enum.clear()
        enum.update(saved)


def test_toolwire_auto_stops_the_start_when_it_cannot_decide(tmp_path, monkeypatch):
    enum = FunctionCallParser.ToolCallParserEnum
    saved = dict(enum)
    model = _model_dir(tmp_path, "{% for m in messages %}{{ m.content }}{% endfor %}")
    try:
        monkeypatch.setattr("sys.argv", ["launch_server", "--model-path", model, "--tool-call-parser=toolwire_auto"])
        with pytest.raises(SystemExit, match="toolwire_auto: cannot detect the tool-call format: unknown, candidates"):
            toolwire.integrations.sglang_plugin()
        with pytest.raises(toolwire.ToolwireError, match="unknown"):
            tw_sglang.register(tokenizer=model)
        monkeypatch.setattr("sys.argv", ["launch_server", "--tool-call-parser", "toolwire_auto"])
        with pytest.raises(SystemExit, match="--model-path"):
            toolwire.integrations.sglang_plugin()
    finally:
        enum.clear()
        enum.update(saved)
