"""Which toolwire format a model writes, from its tokenizer: :func:`detect_format`.

The decision is made in the Rust core over the format specs (see ``toolwire._core.detect_template``
and ``rust/core/src/detect``); this module only gathers what it reads from a tokenizer in any of
its shapes: the chat template's text, the prompt the template renders for one user message with
``add_generation_prompt`` (rendered with jinja2 when it is installed; without it, the template's
text is read for the same answer), and the vocabulary's added tokens with their ``special`` flag.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire._core import ToolwireError, detect_template

__all__ = ["Candidate", "Detection", "detect_format", "special_tokens"]


@dataclass(frozen=True)
class Candidate:
    """A format the template may be written for: the share of its evidence found (layout pieces
    count twice), and the evidence found and missing."""

    format: str
    coverage: float
    found: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True)
class Detection:
    """What :func:`detect_format` decided.

    ``status`` is ``"confident"`` (``format`` is set), ``"ambiguous"`` (several formats fit and
    nothing in their specs tells them apart here) or ``"unknown"`` (the template shows no tool
    syntax, or too little of any format's); ``candidates`` ranks the formats that fit, best first. ``reasoning`` is the
    ``reasoning=`` value to parse with (``"closing_only"`` when the generation prompt opens the
    block, ``"native"`` or ``"think"`` when the model writes it, None when the template shows no
    reasoning) and ``thinking_style`` says the same as ``"closing_only"`` / ``"paired"``.
    ``special_markers`` are the format's markers that are special tokens (from the vocabulary when
    ``vocabulary_checked``, else as the spec records them): decoding must keep them
    (``skip_special_tokens=False``)."""

    status: str
    format: str | None
    reasoning: str | None
    thinking_style: str | None
    special_markers: tuple[str, ...]
    vocabulary_checked: bool
    candidates: tuple[Candidate, ...]

    @property
    def needs_special_tokens(self) -> bool:
        """Whether decoding with ``skip_special_tokens=True`` would strip markers of the format."""
        return bool(self.special_markers)

    def __iter__(self) -> Iterator[Any]:
        """``format, reasoning, needs_special_tokens = detect_format(...)``."""
        return iter((self.format, self.reasoning, self.needs_special_tokens))

    def require(self) -> str:
        """The format, or a :class:`ToolwireError` naming the candidates."""
        if self.format is None:
            raise ToolwireError(f"cannot detect the tool-call format: {self}; pass a format name")
        return self.format

    def __str__(self) -> str:
        if self.format is not None:
            return f"{self.format} (reasoning {self.reasoning})"
        ranked = ", ".join(f"{c.format} ({c.coverage:.2f})" for c in self.candidates[:5])
        return f"{self.status}, candidates: {ranked or 'none'}"


def detect_format(tokenizer_or_chat_template: Any) -> Detection:
    """Detect the format a model writes, from its tokenizer.

    Takes a transformers (or vLLM / SGLang) tokenizer, a chat template's text, a tokenizer config
    (``tokenizer_config.json`` as a dict), or a path: a model directory, its
    ``tokenizer_config.json``, or a chat template file. A template alone gives no vocabulary, so ``special_markers`` then
    come from the spec. Never falls back to a generic format: read ``status`` or call
    :meth:`Detection.require`."""
    template, added, special, tokens = _read(tokenizer_or_chat_template)
    if not isinstance(template, str) or not template:
        raise ToolwireError("detect_format needs a chat template: the tokenizer or config has none")
    result = detect_template(
        template,
        generation_prompt=_generation_prompt(template, tokens),
        added_tokens=added,
        special_tokens=special,
    )
    return Detection(
        status=result["status"],
        format=result["format"],
        reasoning=result["reasoning"],
        thinking_style=result["thinking_style"],
        special_markers=tuple(result["special_markers"]),
        vocabulary_checked=result["vocabulary_checked"],
        candidates=tuple(
            Candidate(c["format"], c["coverage"], tuple(c["found"]), tuple(c["missing"])) for c in result["candidates"]
        ),
    )


def special_tokens(tokenizer: Any) -> list[str]:
    """The special tokens (those ``skip_special_tokens=True`` strips) of a tokenizer, config or
    model path, as :func:`detect_format` reads them; empty when it shows no vocabulary."""
    return _read(tokenizer)[2] or []


def _read(source: Any) -> tuple[Any, list[str] | None, list[str] | None, dict[str, str]]:
    """``(template, added tokens, special tokens, {bos_token, eos_token})``; no vocabulary: None."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "{" not in source and os.path.exists(source)):
        return _read(_load_config(Path(source)))
    if isinstance(source, str):
        return source, None, None, {}
    if isinstance(source, dict):
        decoder = source.get("added_tokens_decoder") or {}
        entries = [(t.get("content"), bool(t.get("special"))) for t in decoder.values() if isinstance(t, dict)]
        entries += [(t.get("content"), bool(t.get("special"))) for t in source.get("added_tokens") or []]
        extra = [_content(t) for t in source.get("additional_special_tokens") or []]
        return _tokens(_pick(source.get("chat_template")), entries, extra, source)
    tokenizer = getattr(source, "tokenizer", source)  # a processor or an engine wrapper
    decoder = getattr(tokenizer, "added_tokens_decoder", None) or {}
    entries = [(_content(t), bool(getattr(t, "special", True))) for t in decoder.values()]
    extra = list(getattr(tokenizer, "all_special_tokens", None) or [])
    names = {k: getattr(tokenizer, k, None) for k in ("bos_token", "eos_token")}
    return _tokens(_pick(getattr(tokenizer, "chat_template", None)), entries, extra, names)


def _tokens(template: Any, entries: list[tuple[Any, bool]], extra: list[Any], names: Any) -> Any:
    added = [c for c, _ in entries if isinstance(c, str)] + [c for c in extra if isinstance(c, str)]
    special = [c for c, s in entries if isinstance(c, str) and s] + [c for c in extra if isinstance(c, str)]
    tokens = {k: _content(names.get(k)) or "" for k in ("bos_token", "eos_token")}
    vocabulary = bool(entries or extra)
    return template, (added if vocabulary else None), (special if vocabulary else None), tokens


def _content(token: Any) -> Any:
    if isinstance(token, dict):
        return token.get("content")
    return getattr(token, "content", token)


def _pick(template: Any) -> Any:
    """One template from a config's list of named templates: ``tool_use`` when there is one."""
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        return named.get("tool_use") or named.get("default") or next(iter(named.values()), None)
    if isinstance(template, dict):
        return template.get("tool_use") or template.get("default")
    return template


def _load_config(path: Path) -> dict[str, Any]:
    if path.is_file() and path.suffix != ".json":
        return {"chat_template": path.read_text(encoding="utf-8")}
    folder = path if path.is_dir() else path.parent
    config_file = path / "tokenizer_config.json" if path.is_dir() else path
    config: dict[str, Any] = json.loads(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    jinja_file = folder / "chat_template.jinja"
    if not config.get("chat_template") and jinja_file.is_file():
        config["chat_template"] = jinja_file.read_text(encoding="utf-8")
    tokenizer_json = folder / "tokenizer.json"
    if not config.get("added_tokens_decoder") and tokenizer_json.is_file():
        config["added_tokens"] = json.loads(tokenizer_json.read_text(encoding="utf-8")).get("added_tokens", [])
    return config


def _generation_prompt(template: str, tokens: dict[str, str]) -> str | None:
    """What the template writes for one user message with ``add_generation_prompt``, rendered as
    transformers renders chat templates; None without jinja2 or when the template needs more."""
    try:
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        return None

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda value, indent=None, **_: json.dumps(value, indent=indent, ensure_ascii=False)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
    messages = [{"role": "user", "content": "Hi"}]
    try:
        return env.from_string(template).render(messages=messages, add_generation_prompt=True, tools=None, **tokens)
    except Exception:
        return None
