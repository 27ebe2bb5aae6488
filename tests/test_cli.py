"""The `toolwire` command: every misuse is one line on stderr and exit status 2, never a traceback;
`parse --stream` prints JSON Lines."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
import toolwire
from toolwire.cli import main

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]  # fmt: skip
OUTPUT = 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def run(capsys, monkeypatch, argv, stdin: bytes = b""):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(capsys, monkeypatch, argv, stdin: bytes = b"") -> str:
    code, out, err = run(capsys, monkeypatch, argv, stdin)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert line.startswith("toolwire") and "Traceback" not in line
    return line


def test_missing_tools_file(capsys, monkeypatch, tmp_path):
    line = one_line_error(capsys, monkeypatch, ["parse", "--format", "hermes", "--tools", str(tmp_path / "missing.json")])
    assert "tools file not found" in line and "missing.json" in line


def test_tools_path_is_a_directory(capsys, monkeypatch, tmp_path):
    assert "is a directory" in one_line_error(capsys, monkeypatch, ["parse", "--format", "hermes", "--tools", str(tmp_path)])


def test_tools_file_with_a_json_error(capsys, monkeypatch, tmp_path):
    bad = tmp_path / "tools.json"
    bad.write_text('[{"type": "function",\n "function": }]')
    line = one_line_error(capsys, monkeypatch, ["parse", "--format", "hermes", "--tools", str(bad)])
    assert "is not valid JSON" in line and "line 2" in line


def test_tools_file_that_is_not_utf8(capsys, monkeypatch, tmp_path):
    bad = tmp_path / "tools.json"
    bad.write_bytes(b"[\xff]")
    assert "not UTF-8" in one_line_error(capsys, monkeypatch, ["parse", "--format", "hermes", "--tools", str(bad)])


def test_tools_of_the_wrong_shape_read_as_in_the_api(capsys, monkeypatch, tmp_path):
    bad = tmp_path / "tools.json"
    bad.write_text('{"tools": [{"type": "function"}]}')
    with pytest.raises(toolwire.ToolwireError) as api:
        toolwire.ToolParser("hermes", tools=[{"type": "function"}])
    line = one_line_error(capsys, monkeypatch, ["parse", "--format", "hermes", "--tools", str(bad)])
    assert line == f"toolwire: {api.value}"


def test_parse_takes_a_request_with_a_tools_key(capsys, monkeypatch, tmp_path):
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"model": "m", "tools": TOOLS}))
    other = OUTPUT.replace("get_weather", "get_time")
    code, out, _ = run(capsys, monkeypatch, ["parse", "--format", "hermes", "--tools", str(request)], other.encode())
    assert code == 0
    # the tools were read: a call to an undeclared tool is reported
    assert [i["kind"] for i in json.loads(out)["issues"]] == ["unknown_tool"]


def test_tool_choice_with_a_json_error(capsys, monkeypatch):
    line = one_line_error(capsys, monkeypatch, ["tag", "--format", "hermes", "--tool-choice", "{bad"])
    assert "--tool-choice is not valid JSON" in line


@pytest.mark.parametrize("stream", [[], ["--stream"]])
@pytest.mark.parametrize("data", [b"ok \xff\xfe <tool_call>", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x80"])
def test_stdin_that_is_not_utf8(capsys, monkeypatch, stream, data):
    # decoded before anything is printed, so --stream cannot stop half way through its chunks
    line = one_line_error(capsys, monkeypatch, ["parse", "--format", "hermes", *stream], data)
    assert "stdin is not UTF-8 text" in line


def test_unknown_format_suggests_the_closest(capsys, monkeypatch):
    line = one_line_error(capsys, monkeypatch, ["parse", "--format", "qwen3_codr"], b"hi")
    assert "did you mean qwen3_coder" in line and "toolwire.formats()" not in line
    assert "`toolwire formats`" in line


def test_aliases_are_formats(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["parse", "--format", "qwen25"], OUTPUT.encode())
    assert code == 0 and json.loads(out)["tool_calls"][0]["function"]["name"] == "get_weather"


def test_argument_errors_are_one_line(capsys, monkeypatch):
    assert "--format" in one_line_error(capsys, monkeypatch, ["parse"])
    assert "invalid choice" in one_line_error(capsys, monkeypatch, ["no-such-command"])


def test_stream_prints_json_lines(capsys, monkeypatch, tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    argv = ["parse", "--format", "hermes", "--tools", str(tools), "--stream", "--model", "qwen"]
    code, out, _ = run(capsys, monkeypatch, argv, OUTPUT.encode())
    assert code == 0
    *chunks, message = [json.loads(line) for line in out.splitlines()]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"} and {c["model"] for c in chunks} == {"qwen"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert message["content"] == "Sure." and message["tool_calls"][0]["function"]["name"] == "get_weather"
    one_shot = json.loads(run(capsys, monkeypatch, argv[:-3], OUTPUT.encode())[1])
    for call in [*message["tool_calls"], *one_shot["tool_calls"]]:
        call.pop("id")  # random per parse
    assert message == one_shot


def test_version_and_plain_help():
    version = subprocess.run([sys.executable, "-m", "toolwire", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"toolwire {toolwire.__version__}"
    for argv in ([], ["parse"], ["demo"], ["tag"]):
        text = subprocess.run([sys.executable, "-m", "toolwire", *argv, "--help"], capture_output=True, text=True, check=True).stdout
        assert "``" not in text and ":class:" not in text and ":func:" not in text


def test_no_traceback_in_a_real_process():
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "parse", "--format", "hermes", "--stream"],
        input=b"<tool_call>\xc3(", capture_output=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().splitlines() == ["toolwire: stdin is not UTF-8 text (byte 0xc3 at offset 11)"]
