"""Checks of a finished ``examples/rl_rollout.py`` episode against what the engine recorded and
envelopes written out here, shared by tests/test_rl_rollout.py (the random model on CPU) and
scripts/gpu_check_rl_vllm.py (vLLM on a GPU)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_example():
    """examples/rl_rollout.py as a module."""
    if "rl_rollout" not in sys.modules:
        spec = importlib.util.spec_from_file_location("rl_rollout", ROOT / "examples" / "rl_rollout.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["rl_rollout"] = module
        spec.loader.exec_module(module)
    return sys.modules["rl_rollout"]


def expected_envelope(messages) -> str:
    """The Hermes family's ChatML after a turn that ended with its own <|im_end|>: the separator,
    the tool results in one user turn inside <tool_response> blocks (or a user message), the
    next opening."""
    text = "\n"
    tools = [m for m in messages if m["role"] == "tool"]
    if tools:
        text += "<|im_start|>user" + "".join(f"\n<tool_response>\n{m['content']}\n</tool_response>" for m in tools)
        text += "<|im_end|>\n"
    text += "".join(f"<|im_start|>user\n{m['content']}<|im_end|>\n" for m in messages if m["role"] == "user")
    return text + "<|im_start|>assistant\n"


def forced_by_matcher(compiled_grammar, token_ids) -> list[bool]:
    """Walk an xgrammar matcher over the ids: a position is forced when one token is allowed
    (popcount of the bitmask row). Raises when the grammar refuses an id."""
    import torch
    import xgrammar

    matcher = xgrammar.GrammarMatcher(compiled_grammar)
    bitmask = xgrammar.allocate_token_bitmask(1, compiled_grammar.tokenizer_info.vocab_size)
    out = []
    for pos, token in enumerate(token_ids):
        matcher.fill_next_token_bitmask(bitmask)
        out.append(sum(b.bit_count() for b in bitmask[0].view(torch.uint8).tolist()) == 1)
        if not matcher.accept_token(token):
            raise AssertionError(f"the grammar refuses token {token} at position {pos}: not sampled under it")
    return out


def rollout_mismatches(example, result, completions, prompts, encode, forced) -> list[str]:
    """What is wrong with ``result`` (an ``example.Rollout``) given, per turn, the engine's
    ``completions``, the ``prompts`` it was sent and which sampled positions the grammar
    ``forced``; ``encode`` is the tokenizer's own text-to-ids. Empty when all holds."""
    import toolwire

    bad: list[str] = []

    def check(ok: bool, what: str) -> None:
        if not ok:
            bad.append(what)

    ep = result.episode
    sample = ep.sample()
    turns = ep.turns
    check(len(turns) >= 2, f"{len(turns)} turns: submit is refused before a lookup, so at least 2")
    check(len(turns) == len(completions) == len(prompts) == len(forced), "one completion, prompt and forced mask per turn")
    check(len(result.results) == len(turns) - 1, "tool results after every turn but the last")
    ids = encode(example.PROMPT)
    mask = [0] * len(ids)
    for k, c in enumerate(completions):
        check(prompts[k] == ids, f"turn {k}: the engine was not sent the episode so far")
        ended = c.finish_reason == "stop" and c.token_ids[-1:] == [example.IM_END]
        # Only an unconstrained tool's call (any text up to </tool_call>) may run to the length limit.
        check(ended or (c.finish_reason == "length" and not turns[k].message.valid), f"turn {k}: did not end with <|im_end|>")
        check(len(c.logprobs) == len(c.token_ids), f"turn {k}: one logprob per sampled id")
        ids = ids + c.token_ids
        mask += [0 if f else 1 for f in forced[k]]
        if k < len(result.results):
            envelope = encode(expected_envelope(result.results[k]))
            ids, mask = ids + envelope, mask + [0] * len(envelope)
    check(sample.token_ids == ids, "ids are not prompt + sampled + envelope, in order")
    check(sample.loss_mask == mask, "the loss mask is not 0 on prompt, envelope and forced ids, 1 elsewhere")
    parser = toolwire.ToolParser("hermes", example.TOOLS)
    for turn, c, f in zip(turns, completions, forced):
        span = slice(turn.start, turn.start + len(c.token_ids))
        check(sample.token_ids[span] == c.token_ids, f"turn {turn.index}: sampled ids changed")
        check(sample.logprobs[span] == [float(x) for x in c.logprobs], f"turn {turn.index}: logprobs moved")
        check(any(f) and not all(f), f"turn {turn.index}: expected both forced and free positions")
        reparsed = parser.parse(ep.tokenizer.decode(c.token_ids[:-1] if c.finish_reason == "stop" else c.token_ids))
        got = (turn.message.content, [(x.name, x.arguments) for x in turn.message.tool_calls])
        check(got == (reparsed.content, [(x.name, x.arguments) for x in reparsed.tool_calls]),
              f"turn {turn.index}: parsing from ids differs from parsing the decoded text")
        check(len(turn.message.tool_calls) == 1 or not turn.message.valid, f"turn {turn.index}: neither one call nor an invalid action")
    check(all(r == "assistant" for r, s in zip(sample.role, sample.sampled) if s), "a sampled id not owned by an assistant turn")
    check((sample.invalid_actions == 0) == all(t.message.valid for t in turns), "invalid actions do not match the invalid turns")
    check(all(t.message.valid for t in turns if t.message.tool_calls and t.message.tool_calls[0].name == "submit"),
          "an invalid submit call under a grammar that holds submit")
    return bad
