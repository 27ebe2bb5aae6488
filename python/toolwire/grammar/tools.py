"""The request's tools, ``tool_choice``, reasoning and schema mode, read by the core's rules.

``ToolParser`` and the grammar must accept and refuse the same requests, so neither reads them
itself: :func:`_read` asks ``toolwire._core.read_request`` (``rust/core/src/request.rs``), which
checks the tool list (unique, non-empty names; text-only custom tools; boolean ``strict``), the
choice against it (``allowed_tools`` included; ``"any"`` refused) and the reasoning vocabulary
(the parser's ``think`` / ``closing_only`` / ... and xgrammar's ``enabled`` / ``auto`` /
``disabled``), and raises the parser's own errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolwire import _core


@dataclass(frozen=True)
class _Tool:
    name: str
    parameters: Any
    strict: bool
    custom: bool = False


@dataclass(frozen=True)
class _Request:
    """A request as the core reads it: ``mode`` is ``none``, ``auto``, ``required`` or ``named``;
    ``allowed`` the names a call may take."""

    tools: list[_Tool]
    mode: str
    allowed: frozenset[str]
    schema: str

    def allowed_of(self, tools: list[_Tool]) -> list[_Tool]:
        """The tools of ``tools`` (these or a changed copy) that the choice allows."""
        return [t for t in tools if t.name in self.allowed]


def _read(
    format: str,
    tools: Sequence[Mapping[str, Any]] | None,
    tool_choice: Any,
    *,
    reasoning: Any = None,
    schema: Any = "auto",
) -> _Request:
    read = _core.read_request(format, tools, tool_choice, reasoning=reasoning, schema=schema)
    declared = [_Tool(t["name"], t["parameters"], t["strict"], t["kind"] == "custom") for t in read.tools]
    return _Request(declared, read.mode, frozenset(read.allowed), read.schema)


def _reasoning_mode(format: str, reasoning: Any) -> tuple[str | None, tuple[str, str] | None]:
    """``(mode, (open, close))`` in the core's vocabulary: mode ``off``, ``think``, ``native``,
    ``optional``, ``closing_only`` or None (not said); the delimiters the parser reads (None for
    no block)."""
    read = _core.read_request(format, reasoning=reasoning)
    return read.reasoning, read.reasoning_delimiters
