"""OpenAI wire shapes beyond ``to_openai()``: Responses API output items and streaming events, and
whole Chat Completions objects (``chat.completion`` and ``chat.completion.chunk``).

Everything here returns plain JSON-ready dicts and needs no ``openai`` package; the test suite
validates every shape against the ``openai`` package's own pydantic types.

Responses API, one shot::

    items = parser.parse(text).to_responses()      # reasoning, message, function_call items

Responses API, streamed::

    events = toolwire.openai.ResponsesStream(parser.stream(), response={"model": "m"})
    for text in model_deltas:
        for event in events.feed(text):             # response.output_item.added, ...
            send(event)
    for event in events.finish():                  # closes every item, then response.completed
        send(event)

Custom (freeform) tools: a call whose ``input`` attribute is not None (a custom tool's raw text
input) becomes a ``custom_tool_call`` item with ``input`` instead of a ``function_call`` item with
``arguments``, and streams as ``response.custom_tool_call_input.delta``/``.done``. This is duck
typed, so it follows the core as soon as its calls and deltas carry ``input``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "ResponsesEvents",
    "ResponsesStream",
    "chat_completion",
    "chat_completion_chunk",
    "message_to_responses",
    "response_object",
    "responses_tools",
]

#: ``(prefix) -> item id``; prefixes are ``rs`` (reasoning), ``msg`` (message), ``fc`` (function
#: call), ``ctc`` (custom tool call) and ``resp`` (the response).
IdFactory = Callable[[str], str]


def _random_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(24)}"


def _input_of(call: Any) -> str | None:
    """A custom tool call's raw input, or None for a function call (the custom-tool hook)."""
    value = getattr(call, "input", None)
    return value if isinstance(value, str) else None


def _incomplete(finish_reason: str | None) -> bool:
    return finish_reason == "length"


# --------------------------------------------------------------------------------------------
# Responses API: items
# --------------------------------------------------------------------------------------------


def _reasoning_item(item_id: str, text: str | None, status: str) -> dict[str, Any]:
    content = [] if text is None else [{"type": "reasoning_text", "text": text}]
    return {"id": item_id, "type": "reasoning", "summary": [], "content": content, "status": status}


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _message_item(item_id: str, text: str | None, status: str) -> dict[str, Any]:
    content = [] if text is None else [_output_text(text)]
    return {"id": item_id, "type": "message", "role": "assistant", "status": status, "content": content}


def _function_call_item(item_id: str, call_id: str, name: str, arguments: str, status: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def _custom_call_item(item_id: str, call_id: str, name: str, input: str, status: str) -> dict[str, Any]:
    # ResponseCustomToolCall has no status field.
    del status
    return {"id": item_id, "type": "custom_tool_call", "call_id": call_id, "name": name, "input": input}


def message_to_responses(message: Any, *, id_factory: IdFactory | None = None) -> list[dict[str, Any]]:
    """The Responses API ``output`` items of a parsed message, in this order: a ``reasoning``
    item (when there is reasoning), a ``message`` item with one ``output_text`` part (when there is
    content), then one ``function_call`` item per call (``call_id`` is the call's id), or a
    ``custom_tool_call`` item for a call that carries ``input``.

    Item ids come from ``id_factory(prefix)`` (random ``rs_``/``msg_``/``fc_``/``ctc_`` ids by
    default). Items are ``incomplete`` when the message finished for ``length``. Issues are not
    represented (the Responses API has no place for them); read ``message.issues``.

    :meth:`toolwire.ParsedMessage.to_responses` calls this.
    """
    new_id = id_factory or _random_id
    status = "incomplete" if _incomplete(message.finish_reason) else "completed"
    items: list[dict[str, Any]] = []
    if message.reasoning_content is not None:
        items.append(_reasoning_item(new_id("rs"), message.reasoning_content, status))
    if message.content is not None:
        items.append(_message_item(new_id("msg"), message.content, status))
    for call in message.tool_calls:
        custom_input = _input_of(call)
        if custom_input is not None:
            items.append(_custom_call_item(new_id("ctc"), call.id, call.name, custom_input, "completed"))
        else:
            items.append(_function_call_item(new_id("fc"), call.id, call.name, call.arguments, "completed"))
    return items


def responses_tools(tools: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Chat Completions tool dicts (``{"type": "function", "function": {...}}``, ``{"type":
    "custom", "custom": {...}}``) as Responses API tools (``{"type": "function", "name", ...}``).
    Tools already in the Responses shape pass through."""
    out: list[dict[str, Any]] = []
    for tool in tools or []:
        kind = tool.get("type", "function")
        inner = tool.get(kind)
        if isinstance(inner, Mapping):
            out.append({"type": kind, **inner})
        else:
            out.append(dict(tool))
    return out


def response_object(
    output: Sequence[Mapping[str, Any]] = (),
    *,
    status: str = "completed",
    fields: Mapping[str, Any] | None = None,
    id_factory: IdFactory | None = None,
) -> dict[str, Any]:
    """A Responses API ``response`` object carrying ``output``: ``fields`` (``id``, ``model``,
    ``tools``, ``tool_choice``, ...) over defaults for the required fields. ``status``
    ``incomplete`` adds ``incomplete_details`` (``max_output_tokens``) unless given."""
    fields = dict(fields or {})
    resp: dict[str, Any] = {
        "id": fields.pop("id", None) or (id_factory or _random_id)("resp"),
        "object": "response",
        "created_at": fields.pop("created_at", None) or time.time(),
        "model": fields.pop("model", ""),
        "parallel_tool_calls": fields.pop("parallel_tool_calls", True),
        "tool_choice": fields.pop("tool_choice", "auto"),
        "tools": responses_tools(fields.pop("tools", None)),
    }
    resp.update(fields)
    resp["status"] = status
    resp["output"] = [dict(item) for item in output]
    if status == "incomplete":
        resp.setdefault("incomplete_details", {"reason": "max_output_tokens"})
    return resp


# --------------------------------------------------------------------------------------------
# Responses API: streaming events
# --------------------------------------------------------------------------------------------


class _Item:
    """One output item being streamed."""

    def __init__(self, kind: str, item_id: str, output_index: int, **fields: Any) -> None:
        self.kind = kind  # "reasoning", "message", "function_call", "custom_tool_call"
        self.id = item_id
        self.output_index = output_index
        self.text = ""  # reasoning/message text, call arguments, or custom input
        self.call_id: str = fields.get("call_id", "")
        self.name: str = fields.get("name", "")
        self.call_index: int | None = fields.get("call_index")
        self.done: dict[str, Any] | None = None

    def snapshot(self, status: str) -> dict[str, Any]:
        if self.kind == "reasoning":
            return _reasoning_item(self.id, self.text if status != "in_progress" else None, status)
        if self.kind == "message":
            return _message_item(self.id, self.text if status != "in_progress" else None, status)
        if self.kind == "function_call":
            args = self.text if status != "in_progress" else ""
            return _function_call_item(self.id, self.call_id, self.name, args, status)
        return _custom_call_item(self.id, self.call_id, self.name, self.text if status != "in_progress" else "", status)


class ResponsesEvents:
    """Turns toolwire :class:`~toolwire.Delta` objects into Responses API streaming events.

    Items follow the output: reasoning text opens a ``reasoning`` item, content a ``message`` item,
    each call a ``function_call`` (or ``custom_tool_call``) item; a new item closes the open one,
    so an item is finished (``...done`` events, then ``response.output_item.done``) as soon as the
    model moves on. Whitespace-only text between items (the newline between two calls) opens no
    message item; it is kept if more text follows, and is the message when the output has no
    call (as ``ParsedMessage.content`` has it).

    Events are dicts shaped like the ``openai`` package's ``ResponseStreamEvent`` types.
    ``sequence_number`` counts up from ``sequence_start`` and ``output_index`` from
    ``output_index_start``, so a server can put its own events around these.
    """

    def __init__(
        self,
        *,
        id_factory: IdFactory | None = None,
        sequence_start: int = 0,
        output_index_start: int = 0,
    ) -> None:
        self._new_id = id_factory or _random_id
        self._seq = sequence_start
        self._next_index = output_index_start
        self._open: _Item | None = None
        self._calls: dict[int, _Item] = {}
        self._items: list[_Item] = []
        self._pending_space = ""
        self._closed = False

    # -- public -----------------------------------------------------------------------------

    @property
    def output(self) -> list[dict[str, Any]]:
        """The finished output items so far (what ``response.completed`` carries)."""
        return [item.done for item in self._items if item.done is not None]

    @property
    def sequence_number(self) -> int:
        """The sequence number the next event will get."""
        return self._seq

    def push(self, delta: Any) -> list[dict[str, Any]]:
        """Events for one delta (a :class:`toolwire.Delta` or anything with its attributes)."""
        if self._closed:
            raise RuntimeError("ResponsesEvents is closed")
        events: list[dict[str, Any]] = []
        if delta.reasoning_content:
            self._text("reasoning", delta.reasoning_content, events)
        if delta.content:
            self._text("message", delta.content, events)
        for call in delta.tool_calls:
            self._call(call, events)
        return events

    def close(self, *, finish_reason: str | None = None, message: Any = None) -> list[dict[str, Any]]:
        """Finish the open item. With the stream's final ``message``, a call that was streamed but
        did not make it into the message (its body turned out malformed or truncated, see
        ``message.issues``) ends ``incomplete``; so does the open item when ``finish_reason`` is
        ``length``."""
        if self._closed:
            return []
        self._closed = True
        events: list[dict[str, Any]] = []
        kept = None if message is None else {call.index for call in message.tool_calls}
        if self._pending_space and not self._calls and (self._open is None or self._open.kind != "message"):
            # Whitespace is content when there is no call (as in ParsedMessage.content).
            self._text("message", "", events, force=True)
        if self._open is not None:
            item = self._open
            dropped = item.call_index is not None and kept is not None and item.call_index not in kept
            status = "incomplete" if _incomplete(finish_reason) or dropped else "completed"
            self._finish(item, status, events)
        return events

    # -- internals --------------------------------------------------------------------------

    def _event(self, events: list[dict[str, Any]], type_: str, **fields: Any) -> None:
        events.append({"type": type_, "sequence_number": self._seq, **fields})
        self._seq += 1

    def _start(self, item: _Item, events: list[dict[str, Any]]) -> None:
        if self._open is not None:
            self._finish(self._open, "completed", events)
        self._items.append(item)
        self._open = item
        self._event(events, "response.output_item.added", output_index=item.output_index, item=item.snapshot("in_progress"))
        if item.kind in ("reasoning", "message"):
            part = {"type": "reasoning_text", "text": ""} if item.kind == "reasoning" else _output_text("")
            self._event(
                events,
                "response.content_part.added",
                item_id=item.id,
                output_index=item.output_index,
                content_index=0,
                part=part,
            )

    def _new_item(self, kind: str, prefix: str, **fields: Any) -> _Item:
        item = _Item(kind, self._new_id(prefix), self._next_index, **fields)
        self._next_index += 1
        return item

    def _text(self, kind: str, text: str, events: list[dict[str, Any]], *, force: bool = False) -> None:
        open_ = self._open
        if open_ is None or open_.kind != kind:
            if kind == "message" and not text.strip() and not force:
                self._pending_space += text
                return
            if kind == "message":
                text, self._pending_space = self._pending_space + text, ""
            self._start(self._new_item(kind, "rs" if kind == "reasoning" else "msg"), events)
            open_ = self._open
            assert open_ is not None
        open_.text += text
        where = {"item_id": open_.id, "output_index": open_.output_index, "content_index": 0}
        if kind == "reasoning":
            self._event(events, "response.reasoning_text.delta", delta=text, **where)
        else:
            self._event(events, "response.output_text.delta", delta=text, logprobs=[], **where)

    def _call(self, call: Any, events: list[dict[str, Any]]) -> None:
        item = self._calls.get(call.index)
        custom_input = _input_of(call)
        if item is None:
            if call.name is None:
                raise RuntimeError(f"arguments for call {call.index} before its name")
            self._pending_space = ""
            if custom_input is not None:
                item = self._new_item("custom_tool_call", "ctc", call_id=call.id or "", name=call.name, call_index=call.index)
            else:
                item = self._new_item("function_call", "fc", call_id=call.id or "", name=call.name, call_index=call.index)
            self._calls[call.index] = item
            self._start(item, events)
        elif item is not self._open:
            raise RuntimeError(f"call {call.index} continued after another item started")
        where = {"item_id": item.id, "output_index": item.output_index}
        if item.kind == "custom_tool_call":
            if custom_input:
                item.text += custom_input
                self._event(events, "response.custom_tool_call_input.delta", delta=custom_input, **where)
        elif call.arguments:
            item.text += call.arguments
            self._event(events, "response.function_call_arguments.delta", delta=call.arguments, **where)

    def _finish(self, item: _Item, status: str, events: list[dict[str, Any]]) -> None:
        where = {"item_id": item.id, "output_index": item.output_index}
        if item.kind == "reasoning":
            self._event(events, "response.reasoning_text.done", content_index=0, text=item.text, **where)
            part = {"type": "reasoning_text", "text": item.text}
            self._event(events, "response.content_part.done", content_index=0, part=part, **where)
        elif item.kind == "message":
            self._event(events, "response.output_text.done", content_index=0, text=item.text, logprobs=[], **where)
            self._event(events, "response.content_part.done", content_index=0, part=_output_text(item.text), **where)
        elif item.kind == "function_call":
            self._event(events, "response.function_call_arguments.done", arguments=item.text, **where)
        else:
            self._event(events, "response.custom_tool_call_input.done", input=item.text, **where)
        item.done = item.snapshot(status)
        self._event(events, "response.output_item.done", output_index=item.output_index, item=item.done)
        if self._open is item:
            self._open = None


class ResponsesStream:
    """A :class:`toolwire.ToolStream` that answers with Responses API streaming events.

    ``feed``/``feed_tokens``/``finish`` take what the tool stream takes and return event dicts
    (see :class:`ResponsesEvents`). With ``response`` (a dict of Response fields such as ``id``,
    ``model``, ``tools``; ``{}`` for defaults), the whole event stream is produced:
    ``response.created`` and ``response.in_progress`` before the first item event, and
    ``response.completed`` (``response.incomplete`` when the finish reason is ``length``) last,
    carrying every finished item.
    """

    def __init__(
        self,
        stream: Any,
        *,
        response: Mapping[str, Any] | None = None,
        id_factory: IdFactory | None = None,
        sequence_start: int = 0,
        output_index_start: int = 0,
    ) -> None:
        self.stream = stream
        self._events = ResponsesEvents(
            id_factory=id_factory, sequence_start=sequence_start, output_index_start=output_index_start
        )
        self._fields: dict[str, Any] | None = None
        if response is not None:
            self._fields = dict(response)
            self._fields.setdefault("id", (id_factory or _random_id)("resp"))
            self._fields.setdefault("created_at", time.time())
        self._started = False
        self._id_factory = id_factory
        self.response: dict[str, Any] | None = None
        """The final response object once :meth:`finish` ran (with ``response`` given)."""

    @property
    def output(self) -> list[dict[str, Any]]:
        """The finished output items so far."""
        return self._events.output

    def start(self) -> list[dict[str, Any]]:
        """``response.created`` and ``response.in_progress`` (once; ``feed`` calls it)."""
        if self._started or self._fields is None:
            self._started = True
            return []
        self._started = True
        out: list[dict[str, Any]] = []
        for type_ in ("response.created", "response.in_progress"):
            resp = response_object((), status="in_progress", fields=self._fields)
            out.append({"type": type_, "sequence_number": self._events._seq, "response": resp})
            self._events._seq += 1
        return out

    def _push(self, deltas: Iterable[Any]) -> list[dict[str, Any]]:
        events = self.start()
        for delta in deltas:
            events.extend(self._events.push(delta))
        return events

    def feed(self, text: str) -> list[dict[str, Any]]:
        return self._push(self.stream.feed(text))

    def feed_tokens(self, token_ids: Sequence[int]) -> list[dict[str, Any]]:
        return self._push(self.stream.feed_tokens(token_ids))

    def finish(self, finish_reason: str | None = None) -> list[dict[str, Any]]:
        events = self._push(self.stream.finish(finish_reason))
        message = self.stream.message()
        reason = message.finish_reason or finish_reason
        events.extend(self._events.close(finish_reason=reason, message=message))
        if self._fields is not None:
            status = "incomplete" if _incomplete(reason) else "completed"
            self.response = response_object(self.output, status=status, fields=self._fields)
            type_ = "response.incomplete" if status == "incomplete" else "response.completed"
            events.append({"type": type_, "sequence_number": self._events._seq, "response": self.response})
            self._events._seq += 1
        return events

    def message(self) -> Any:
        return self.stream.message()


# --------------------------------------------------------------------------------------------
# Chat Completions: whole objects
# --------------------------------------------------------------------------------------------


def chat_completion_chunk(
    delta: Any,
    *,
    id: str,
    model: str,
    created: int | None = None,
    index: int = 0,
    role: bool = False,
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` dict for one toolwire delta: ``choices[index].delta`` is
    ``delta.to_openai()`` (plus ``role: assistant`` when ``role``) and the choice's
    ``finish_reason`` is the delta's."""
    body = delta.to_openai()
    if role:
        body = {"role": "assistant", **body}
    return {
        "id": id,
        "object": "chat.completion.chunk",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [{"index": index, "delta": body, "finish_reason": delta.finish_reason, "logprobs": None}],
    }


def chat_completion(
    message: Any,
    *,
    id: str,
    model: str,
    created: int | None = None,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` dict with one choice: ``message.to_openai()`` and the message's
    finish reason (``finish_reason``, else ``stop``, when it has none)."""
    return {
        "id": id,
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message.to_openai(),
                "finish_reason": message.finish_reason or finish_reason or "stop",
                "logprobs": None,
            }
        ],
    }
