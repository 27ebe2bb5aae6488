"""Strict validation against the ``openai`` package's own pydantic types.

The openai models accept unknown keys (``extra="allow"``), so a plain ``model_validate`` would not
notice a misspelt field: :func:`validate` also walks the validated model and fails on any extra
key that is not explicitly allowed.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

openai = pytest.importorskip("openai")

from openai.types.chat import ChatCompletion, ChatCompletionChunk, ChatCompletionMessage  # noqa: E402
from openai.types.responses import Response, ResponseOutputItem, ResponseStreamEvent  # noqa: E402

OUTPUT_ITEM = pydantic.TypeAdapter(ResponseOutputItem)
STREAM_EVENT = pydantic.TypeAdapter(ResponseStreamEvent)

# Chat messages and deltas carry reasoning as ``reasoning_content`` (the vLLM/DeepSeek/SGLang
# convention); the openai types have no field for it.
CHAT_EXTRAS = frozenset({"reasoning_content"})


def no_extra(model: Any, allowed: frozenset[str] = frozenset(), path: str = "") -> None:
    if isinstance(model, pydantic.BaseModel):
        extra = set(model.model_extra or {}) - allowed
        assert not extra, f"unknown fields {sorted(extra)} at {path or type(model).__name__}"
        for name in type(model).model_fields:
            no_extra(getattr(model, name), allowed, f"{path}.{name}")
    elif isinstance(model, (list, tuple)):
        for i, value in enumerate(model):
            no_extra(value, allowed, f"{path}[{i}]")


def validate(adapter_or_model: Any, data: dict, allowed: frozenset[str] = frozenset()) -> Any:
    if isinstance(adapter_or_model, pydantic.TypeAdapter):
        model = adapter_or_model.validate_python(data)
    else:
        model = adapter_or_model.model_validate(data)
    no_extra(model, allowed)
    if "type" in data:
        assert model.type == data["type"]
    return model


def output_item(item: dict) -> Any:
    return validate(OUTPUT_ITEM, item)


def stream_event(event: dict) -> Any:
    return validate(STREAM_EVENT, event)


def response(data: dict) -> Any:
    return validate(Response, data)


def chat_message(data: dict) -> Any:
    return validate(ChatCompletionMessage, data, CHAT_EXTRAS)


def chat_chunk(data: dict) -> Any:
    return validate(ChatCompletionChunk, data, CHAT_EXTRAS)


def chat_completion(data: dict) -> Any:
    return validate(ChatCompletion, data, CHAT_EXTRAS)
