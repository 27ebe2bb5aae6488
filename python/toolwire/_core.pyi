"""Type stubs for the Rust extension ``toolwire._core``."""

from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, Literal

__version__: str

class ToolwireError(ValueError):
    """Misuse of the API: unknown format, feeding a finished stream, tokens without a vocab, ..."""

def formats() -> list[str]:
    """Canonical names of every supported wire format."""

def format_info(name: str) -> dict[str, Any]:
    """The format description: ``name``, ``aliases``, ``families``, ``description``, ``markers``
    (``role``, ``text``, ``special_token``), ``triggers``, ``name_encoding``,
    ``argument_encoding``, ``call_separator``, ``reasoning`` (``start``/``end`` or None),
    ``template`` (``begin``/``style``/``end``/``separator`` or None) and
    ``supports_structural_tag``.

    Raises:
        ToolwireError: ``name`` is neither a format nor an alias.
    """

def render(format: str, tool_calls: Iterable[ToolCall | Mapping[str, Any]], content: str | None = None) -> str:
    """The model-native text for ``tool_calls`` (``ToolCall`` objects, ``{"name", "arguments"}``
    dicts with arguments as a dict or JSON text, or OpenAI ``{"type": "function", "function": {...}}``
    dicts), preceded by ``content``."""

class Vocab:
    """A tokenizer's id -> bytes table, for :meth:`ToolStream.feed_tokens`."""

    @staticmethod
    def from_tokenizer_json(path: str | PathLike[str]) -> Vocab:
        """From a Hugging Face ``tokenizer.json`` (ByteLevel or Metaspace/SentencePiece)."""
    @staticmethod
    def from_tiktoken(path: str | PathLike[str], special_tokens: Mapping[str, int] | None = None) -> Vocab:
        """From a tiktoken rank file plus ``{text: id}`` special tokens."""
    @staticmethod
    def from_tekken_json(path: str | PathLike[str]) -> Vocab:
        """From a Mistral Tekken ``tekken*.json`` file."""
    @staticmethod
    def from_hf(tokenizer: Any) -> Vocab:
        """From a transformers fast tokenizer."""
    def special_id(self, text: str) -> int | None:
        """Id of the added/special token with exactly this text."""
    def token_bytes(self, id: int) -> bytes | None: ...
    def __len__(self) -> int: ...

class ToolSet:
    """The request's tools compiled once (names, kinds, strict flags, schema validators) and
    shared by parsers; equal tool lists share one compiled set (content-hashed).

    Raises:
        ToolwireError: a custom tool with a grammar format, or a ``strict`` tool whose schema
            cannot be compiled.
    """

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def digest(self) -> str: ...
    @property
    def kinds(self) -> dict[str, Literal["function", "custom"]]: ...
    @property
    def strict(self) -> dict[str, bool]: ...
    def unsupported_keywords(self) -> dict[str, list[str]]:
        """Schema keywords that are not checked, per tool (only tools that have some)."""
    def validate(self, name: str, arguments: str | Mapping[str, Any]) -> list[dict[str, str]]:
        """Schema violations of ``arguments`` for tool ``name``: ``pointer``, ``keyword``, ``message``."""
    def validate_many(self, calls: Sequence[tuple[str, str]]) -> list[list[dict[str, str]]]:
        """``validate`` for many ``(name, arguments_json)`` pairs in one call."""
    def __len__(self) -> int: ...

class ToolCall:
    """One complete tool call."""

    @property
    def index(self) -> int:
        """Position of the call in the stream (as in the deltas)."""
    @property
    def id(self) -> str:
        """``call_`` + 24 alphanumerics, the model's own id where the format carries one, or
        what ``id_factory`` returned."""
    @property
    def type(self) -> Literal["function", "custom"]: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str:
        """Arguments as JSON text (the concatenation of the streamed fragments)."""
    @property
    def input(self) -> str | None:
        """A custom tool call's raw input: a ``{"input": "..."}`` wrapper or JSON string is
        unwrapped, anything else is the text the model wrote. None for function calls."""
    def to_openai(self) -> dict[str, Any]:
        """``{"id", "type": "function", "function": {"name", "arguments"}}`` or, for a custom
        tool, ``{"id", "type": "custom", "custom": {"name", "input"}}``."""

class CallIssue:
    """Something wrong in the model output, reported as data.

    ``kind`` is one of ``malformed_json``, ``truncated``, ``missing_name``, ``unexpected_text``,
    ``unknown_tool``, ``schema_violation``, ``duplicate_call_id``, ``not_allowed_by_tool_choice``,
    ``missing_tool_call``, ``too_large``. Calls with ``unknown_tool``, ``schema_violation``,
    ``duplicate_call_id`` or ``not_allowed_by_tool_choice`` are still returned; the others are not.
    """

    @property
    def index(self) -> int | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def raw(self) -> str:
        """The model's text concerned, markers included."""
    @property
    def pointer(self) -> str | None:
        """For ``schema_violation``: JSON pointer into the arguments."""
    @property
    def keyword(self) -> str | None:
        """For ``schema_violation``: the failing schema keyword."""

class ParsedMessage:
    """A parsed assistant message."""

    @property
    def content(self) -> str | None:
        """Text outside calls; None when empty (or only whitespace around calls)."""
    @property
    def reasoning_content(self) -> str | None: ...
    @property
    def tool_calls(self) -> list[ToolCall]: ...
    @property
    def issues(self) -> list[CallIssue]: ...
    @property
    def finish_reason(self) -> str | None: ...
    @property
    def valid(self) -> bool:
        """True when there are no issues."""
    def to_openai(self) -> dict[str, Any]:
        """The OpenAI assistant message (``role``, ``content``, ``tool_calls``, ``reasoning_content``)."""

class ToolCallDelta:
    """One entry of a delta's ``tool_calls``: the first for a call carries ``id`` and ``name``."""

    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str | None: ...
    @property
    def type(self) -> Literal["function", "custom"] | None: ...
    @property
    def name(self) -> str | None: ...
    @property
    def arguments(self) -> str: ...
    @property
    def input(self) -> str | None:
        """A custom tool call's whole input, sent once when the call completes."""
    def to_openai(self) -> dict[str, Any]: ...

class Delta:
    """A streamed update."""

    @property
    def content(self) -> str | None: ...
    @property
    def reasoning_content(self) -> str | None: ...
    @property
    def tool_calls(self) -> list[ToolCallDelta]: ...
    @property
    def finish_reason(self) -> str | None:
        """Set on the last delta of a stream: ``tool_calls`` when calls were made."""
    def to_openai(self) -> dict[str, Any]:
        """The ``choices[0].delta`` dict of an OpenAI chat completion chunk."""

class ToolStream:
    """The parsing state of one request. Feed it text or token ids, never both."""

    def feed(self, text: str) -> list[Delta]:
        """Feed a text delta; returns only what is new. Content is released as soon as it cannot
        be the start of a marker."""
    def feed_tokens(self, token_ids: Sequence[int]) -> list[Delta]:
        """Feed sampled token ids; needs a parser built with ``vocab``. Markers that are special
        tokens are recognised by id only.

        Raises:
            ToolwireError: no vocab, or the stream was fed text.
        """
    def finish(self, finish_reason: str | None = None) -> list[Delta]:
        """Flush held-back text; the last delta carries the finish reason (``tool_calls`` when
        calls were made and the reason was None or ``stop``)."""
    def message(self) -> ParsedMessage:
        """Everything parsed so far (complete calls only)."""
    @property
    def finished(self) -> bool: ...

class ToolParser:
    """A parser for one wire format and one tool list; reuse it across requests."""

    def __init__(
        self,
        format: str,
        tools: Sequence[Mapping[str, Any]] | ToolSet | None = None,
        *,
        reasoning: bool | str | None = None,
        vocab: Vocab | None = None,
        id_factory: Callable[[int, str], str] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool = True,
        max_call_bytes: int | None = None,
    ) -> None:
        """
        Arguments:
            format: a name from :func:`formats` or an alias (``qwen25``, ``llama3``, ...).
            tools: OpenAI tool dicts; type XML parameter values and flag unknown tools.
            reasoning: None (reasoning stays content), True (the format's own syntax),
                ``"think"``/``"paired"`` (``<think>...</think>`` may open the output) or
                ``"closing_only"`` (the prompt opened reasoning; text up to the close is reasoning).
            vocab: needed for :meth:`ToolStream.feed_tokens`.
            id_factory: ``(index, name) -> id`` for tool-call ids.
            tool_choice: the request's ``tool_choice``; calls against it (and a second call when
                ``parallel_tool_calls`` is false) are flagged ``not_allowed_by_tool_choice``, and
                a missing call under ``required``/named is ``missing_tool_call``.
            max_call_bytes: the most bytes one tool call may take (None: no limit). A call
                region that runs past it without producing content, reasoning, or a call start
                or end is cut (checked every ``max_call_bytes // 16`` bytes): the call is dropped
                and reported as ``too_large`` with the text the parser had kept of it as ``raw``,
                and the rest of the region, up to the format's next section-end marker (call-end
                for formats without sections; the end of the output when none comes), is
                dropped; the issue's detail says how many bytes. Bounds the
                memory a runaway or hostile output can make the parser hold.

        Raises:
            ToolwireError: unknown format, invalid tools, or a named choice not among the tools.
        """
    @property
    def format(self) -> str: ...
    def parse(self, text: str) -> ParsedMessage: ...
    def stream(self) -> ToolStream: ...
