"""``toolwire.render``: a whole assistant turn in a format's own syntax (for SFT data, test
outputs and envelopes). The calls and content come from the Rust renderer; the reasoning block
is the format description's own (``format_info(format)["reasoning_block"]``, else its
``reasoning`` markers), so no format is described twice."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolwire._core import ToolCall, ToolwireError, format_info
from toolwire._core import render as _render_calls

__all__ = ["render"]


def render(
    format: str,
    tool_calls: Iterable[ToolCall | Mapping[str, Any]] = (),
    content: str | None = None,
    *,
    reasoning: str | None = None,
) -> str:
    """The model-native text of an assistant turn: ``reasoning`` (in the format's reasoning
    block), then ``content``, then ``tool_calls`` (``ToolCall`` objects, ``{"name", "arguments"}``
    dicts with arguments as a dict or JSON text, or OpenAI ``{"type": "function", ...}`` dicts).

    Raises:
        ToolwireError: an unknown format, or ``reasoning`` for a format without reasoning.
    """
    body = _render_calls(format, tool_calls, content)
    if reasoning is None:
        return body
    info = format_info(format)
    block, markers = info["reasoning_block"], info["reasoning"]
    if block is not None:
        return block["begin"] + reasoning + block["end"] + body
    if markers is None:
        raise ToolwireError(f"format {info['name']!r} has no reasoning syntax")
    return markers["start"] + reasoning + markers["end"] + body
