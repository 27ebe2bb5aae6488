"""Model outputs for the integration tests (OpenAI shapes, vLLM, SGLang), for every format.

Each format gets: content only, reasoning + content, one call (content before it), parallel calls,
and reasoning + a call. Call text comes from ``toolwire.render`` (the format's own writer, checked
against the models' chat templates in the core tests), reasoning from the format's native markers,
so every format that lands is covered without editing this file.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

import toolwire
from conftest import WEATHER_TOOLS

WEATHER = {"name": "get_weather", "arguments": {"location": "Paris", "days": 2}}
TIME = {"name": "get_time", "arguments": {"timezone": "CET"}}
THOUGHT = "The user wants the weather; I should call a tool."


@dataclass(frozen=True)
class Case:
    format: str
    kind: str  # content, reasoning_content, one_call, parallel_calls, reasoning_call
    text: str
    reasoning: object = None  # the ToolParser reasoning= argument
    calls: list = field(default_factory=list)  # [{"name", "arguments"}] expected
    has_reasoning: bool = False

    @property
    def id(self) -> str:
        return f"{self.format}-{self.kind}"

    def parser(self, **kwargs) -> toolwire.ToolParser:
        return toolwire.ToolParser(self.format, WEATHER_TOOLS, reasoning=self.reasoning, **kwargs)


def _reasoning_prefix(fmt: str) -> str | None:
    if fmt == "harmony":
        return f"<|channel|>analysis<|message|>{THOUGHT}<|end|><|start|>assistant"
    info = toolwire.format_info(fmt)
    if info["reasoning"] is None:
        return None
    return info["reasoning"]["start"] + THOUGHT + info["reasoning"]["end"]


def _plain(fmt: str, text: str) -> str:
    # Harmony content is a final-channel message; every other format's content is bare text.
    if fmt == "harmony":
        return f"<|channel|>final<|message|>{text}<|return|>"
    return text


def cases_for(fmt: str) -> list[Case]:
    out = [
        Case(fmt, "content", _plain(fmt, "Hello! How can I help you today?")),
        Case(fmt, "one_call", toolwire.render(fmt, [WEATHER], "Let me check."), calls=[WEATHER]),
        Case(fmt, "parallel_calls", toolwire.render(fmt, [WEATHER, TIME], "Checking both."), calls=[WEATHER, TIME]),
    ]
    prefix = _reasoning_prefix(fmt)
    if prefix is not None:
        out.append(Case(fmt, "reasoning_content", prefix + _plain(fmt, "It is sunny."), True, has_reasoning=True))
        call_text = toolwire.render(fmt, [WEATHER])
        if fmt == "harmony":
            call_text = call_text.removeprefix("<|start|>assistant")
        out.append(Case(fmt, "reasoning_call", prefix + call_text, True, calls=[WEATHER], has_reasoning=True))
    return out


def all_cases() -> list[Case]:
    return [case for fmt in toolwire.formats() for case in cases_for(fmt)]


CASES = all_cases()
CASE_IDS = [case.id for case in CASES]


def chunkings(text: str, seed: int = 0) -> list[list[str]]:
    """The text whole, one character at a time, and in random pieces of 1-7 characters."""
    rng = random.Random(f"{seed}:{text}")
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, 7)
        pieces.append(text[i : i + n])
        i += n
    return [[text], list(text), pieces]


def check_reference(case: Case, message) -> None:
    """What every adapter is compared against: parse() itself, checked against the case."""
    assert message.valid, message.issues
    assert [c.name for c in message.tool_calls] == [c["name"] for c in case.calls]
    assert [json.loads(c.arguments) for c in message.tool_calls] == [c["arguments"] for c in case.calls]
    assert (message.reasoning_content is not None) == case.has_reasoning
    if case.kind in ("content", "reasoning_content"):
        assert message.content
