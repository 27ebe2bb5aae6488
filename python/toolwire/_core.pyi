"""Type stubs for the Rust extension ``toolwire._core``.

The docstrings below are copies of the Rust ``///`` comments in ``rust/python/src/`` (what
``help()`` shows): edit them there, rebuild, and run ``python scripts/sync_stub_docs.py``.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, Literal, TypedDict, final

class MarkerInfo(TypedDict):
    role: str
    text: str
    special_token: bool

class TriggerInfo(TypedDict):
    text: str
    at_output_start: bool
    soft: bool
    confirm: str | None

class StartEnd(TypedDict):
    start: str
    end: str

class BeginEnd(TypedDict):
    begin: str
    end: str

class TemplateInfo(TypedDict):
    begin: str
    end: str
    separator: str

class JsonArguments(TypedDict):
    kind: Literal["json"]

class XmlParamArguments(TypedDict):
    kind: Literal["xml_params"]
    open: str
    close: str
    pad: bool
    between: bool
    nested: bool
    typing: Literal["schema", "string_attribute"]

class GemmaArguments(TypedDict):
    kind: Literal["gemma"]
    string_delimiter: str

class PythonKwargsArguments(TypedDict):
    kind: Literal["python_kwargs"]

ArgumentsInfo = JsonArguments | XmlParamArguments | GemmaArguments | PythonKwargsArguments

class EngineNames(TypedDict):
    sglang: list[str]
    vllm: list[str]
    dynamo: list[str]

class EngineNamesRow(EngineNames):
    format: str

class NotSupportedRow(TypedDict):
    format: str
    reason: str

class EngineNameTable(TypedDict):
    formats: list[EngineNamesRow]
    not_supported: list[NotSupportedRow]

class FormatInfo(TypedDict):

    name: str
    aliases: list[str]
    engine_names: EngineNames
    families: list[str]
    description: str
    markers: list[MarkerInfo]
    triggers: list[TriggerInfo]
    reasoning: StartEnd | None
    stops: list[str]
    template: TemplateInfo | None
    arguments: ArgumentsInfo
    section: BeginEnd | None
    content_block: BeginEnd | None
    reasoning_block: BeginEnd | None
    content_after_calls: bool
    value_excludes: list[str]
    supports_structural_tag: bool

__version__: str

class ToolwireError(ValueError):
    """Misuse of the API: unknown format, feeding a finished stream, tokens without a vocab, ..."""

class SchemaWarning(UserWarning):
    """A non-strict tool's parameters schema is invalid, so its calls' arguments go unchecked (each
    call to it carries an ``unchecked_arguments`` issue). A strict tool with such a schema is
    refused instead."""

def formats() -> list[str]:
    """Canonical names of every supported wire format."""

def format_info(name: str) -> FormatInfo:
    """The format description: the format's ``Syntax`` (``rust/core/src/spec.rs``) serialised, as
    :class:`FormatInfo` types it: ``name``, ``aliases``, ``families``, ``description``,
    ``markers`` (``role``, ``text``, ``special_token``), ``triggers``, ``reasoning``
    (``start``/``end`` or None), ``template`` (``begin``/``end``/``separator`` or None: one call,
    ``begin`` holding ``{name}`` and maybe ``{index}``), ``arguments`` (how the arguments are
    written: ``kind`` ``json``, ``xml_params`` with its tags, ``gemma`` or ``python_kwargs``),
    ``section``, ``content_block`` and ``reasoning_block`` (``begin``/``end`` or None),
    ``content_after_calls``, and ``supports_structural_tag``. ``aliases`` holds every other name
    the format is found by, its ``engine_names`` included: the ``sglang``, ``vllm`` and ``dynamo``
    parser names that read this format (``rust/core/src/formats/engine_names.rs``).

    Raises:
        ToolwireError: ``name`` is neither a format nor an alias.
    """

def engine_names() -> EngineNameTable:
    """The engine-name table (for ``scripts/update_readme_formats.py`` and its test): ``formats``, one
    ``{"format", "sglang", "vllm", "dynamo"}`` per format an engine names (formats toolwire lacks
    included), and ``not_supported``, ``{"format", "reason"}`` for each format not read yet.
    """

def render(format: str, tool_calls: Iterable[ToolCall | Mapping[str, Any]], content: str | None = None) -> str:
    """The model-native text for ``tool_calls`` (``ToolCall`` objects, ``{"name", "arguments"}``
    dicts with arguments as a dict or JSON text, or OpenAI ``{"type": "function", "function": {...}}``
    dicts), preceded by ``content``. ``toolwire.render`` wraps it and adds ``reasoning``.

    Raises:
        TypeError: ``tool_calls`` is one call (a dict or ``ToolCall``) rather than a list.
        ToolwireError: unknown format, or a call without a name or with non-JSON arguments.
    """

@final
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
    def from_sentencepiece(path: str | PathLike[str]) -> Vocab:
        """From a SentencePiece model file (``tokenizer.model``; Mistral's ``tokenizer.model.v3``)."""
    @staticmethod
    def from_pieces(pieces: Iterable[tuple[int, bytes | str, bool]]) -> Vocab:
        """From ``(id, token, is_special)`` triples, for any tokenizer that can list its tokens;
        ``token`` is ``bytes`` (any bytes, partial UTF-8 included) or ``str`` (its UTF-8).

        Mark every control/added token that a format uses as a marker as special: those are
        matched by id only."""
    @staticmethod
    def from_hf(tokenizer: Any) -> Vocab:
        """From a transformers fast tokenizer (its ``backend_tokenizer``)."""
    def special_id(self, text: str) -> int | None:
        """Id of the added/special token with exactly this text."""
    def token_bytes(self, id: int) -> bytes | None:
        """The bytes of a token, or None for an unknown id."""
    def __len__(self) -> int: ...

@final
class ToolSet:
    """The request's tools compiled once (names, kinds, strict flags, schema validators) and
    shared by parsers; equal tool lists share one compiled set (content-hashed).

    A schema is invalid when it is not a JSON Schema (``"parameters": "nope"``), names an unknown
    type, holds a ``pattern`` that is not a regular expression, a ``$ref`` that resolves to
    nothing, or a keyword with a value of the wrong kind. Keywords toolwire does not implement
    are not errors: see :meth:`unsupported_keywords`.

    Raises:
        ToolwireError: a custom tool with a grammar format, or a ``strict`` tool whose schema
            is invalid (the message names the tool and the problem).

    Warns:
        SchemaWarning: a non-strict tool whose schema is invalid; its calls are then returned
            with an ``unchecked_arguments`` issue, and :meth:`validate` / :meth:`is_valid` for
            it raise.
    """

    def __new__(cls, tools: Sequence[Mapping[str, Any]]) -> ToolSet: ...
    @property
    def names(self) -> list[str]: ...
    @property
    def digest(self) -> str:
        """Hex digest of the tool list; equal lists share it (and one compiled set)."""
    @property
    def kinds(self) -> dict[str, Literal["function", "custom"]]:
        """``{name: "function" | "custom"}``."""
    @property
    def strict(self) -> dict[str, bool]:
        """``{name: strict}``."""
    def unsupported_keywords(self) -> dict[str, list[str]]:
        """Schema keywords that are not checked, per tool (only tools that have some); an invalid
        schema is listed as ``"<error> ..."`` with the problem."""
    def validate(self, name: str, arguments: str | Mapping[str, Any]) -> list[dict[str, str]]:
        """Schema violations of ``arguments`` for tool ``name``: ``pointer``, ``keyword``, ``message``."""
    def is_valid(self, name: str, arguments: str | Mapping[str, Any]) -> bool:
        """Whether ``arguments`` satisfy tool ``name``'s schema (no report built); non-JSON text raises."""
    def validate_many(self, calls: Sequence[tuple[str, str]]) -> list[list[dict[str, str]]]:
        """``validate`` for many ``(name, arguments_json)`` pairs in one call."""
    def __len__(self) -> int: ...

@final
class Request:
    """One request read by the rules both the parser and the grammar follow."""

    @property
    def tools(self) -> list[dict[str, Any]]:
        """`[{"name", "kind", "strict", "description", "parameters"}]` in declared order
        (`parameters` None when absent).
        """
    @property
    def mode(self) -> Literal["none", "auto", "required", "named"]:
        """`"none"`, `"auto"`, `"required"` or `"named"` (`allowed_tools` reads as its mode)."""
    @property
    def allowed(self) -> list[str]:
        """Names of the tools a call may name, in declared order (empty under `none`)."""
    @property
    def reasoning(self) -> Literal["off", "think", "native", "optional", "closing_only"] | None:
        """The reasoning mode's canonical name: `"off"`, `"think"`, `"native"`, `"optional"`,
        `"closing_only"`, or None when the request did not say.
        """
    @property
    def reasoning_delimiters(self) -> tuple[str, str] | None:
        """`(open, close)` of the reasoning block the parser reads for this format (None: no block)."""
    @property
    def schema(self) -> Literal["auto", "strict"]:
        """`"auto"` or `"strict"`."""

def read_request(
    format: str,
    tools: Sequence[Mapping[str, Any]] | None = None,
    tool_choice: str | Mapping[str, Any] | None = None,
    *,
    reasoning: bool | str | None = None,
    schema: str | None = None,
) -> Request:
    """Read a request's tools, ``tool_choice``, reasoning and grammar schema mode for ``format``
    by the rules ``ToolParser`` and ``toolwire.grammar.plan`` both follow.

    * tools: names non-empty and unique; ``type`` ``function`` or ``custom`` (custom tools with a
      text format only); ``strict`` true, false or null.
    * tool_choice: unset means ``auto`` with tools and ``none`` without; ``"required"``, a named
      tool (``{"type": "function" | "custom", ...}``) and ``{"type": "allowed_tools",
      "allowed_tools": {"mode": "auto" | "required", "tools": [...]}}`` must refer to declared
      tools. ``"any"`` is refused (say ``"required"``), as vLLM and SGLang refuse it.
    * reasoning: None (not said), False / ``"none"`` / ``"off"`` / ``"disabled"`` (off),
      ``"think"`` / ``"paired"`` (a ``<think>`` block), True / ``"native"`` (the format's block;
      required on per-turn formats), ``"auto"`` / ``"optional"`` (the format's block, optional
      everywhere), ``"closing_only"`` / ``"enabled"`` (the prompt opened the block).
    * schema: ``"auto"`` (None) or ``"strict"``.

    Raises:
        ToolwireError: what the request breaks, in that order (format first).
    """

@final
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
    def type(self) -> Literal["function", "custom"]:
        """``"function"``, or ``"custom"`` for a call to a custom (freeform) tool."""
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

@final
class CallIssue:
    """Something wrong in the model output, reported as data.

    ``kind`` is one of ``malformed_json``, ``truncated``, ``missing_name``, ``unexpected_text``,
    ``unknown_tool``, ``schema_violation``, ``duplicate_call_id``, ``not_allowed_by_tool_choice``,
    ``missing_tool_call``, ``too_large``, ``unchecked_arguments`` (the tool's schema is invalid, so
    the arguments were not checked), ``missing_markers`` (the call was read without its
    special-token opener, stripped by ``skip_special_tokens``). Calls with ``unknown_tool``,
    ``schema_violation``, ``duplicate_call_id``, ``not_allowed_by_tool_choice``,
    ``unchecked_arguments`` or ``missing_markers`` are still returned; the others are not.
    """

    @property
    def index(self) -> int | None:
        """Stream index of the call concerned, or None when no call had started."""
    @property
    def kind(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def raw(self) -> str:
        """The model's text concerned, markers included."""
    @property
    def pointer(self) -> str | None:
        """For ``schema_violation``: JSON pointer into the arguments (``""`` is the root)."""
    @property
    def keyword(self) -> str | None:
        """For ``schema_violation``: the failing schema keyword."""

@final
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
    def to_responses(self, *, id_factory: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
        """The OpenAI Responses API ``output`` items: ``reasoning``, ``message`` (one
        ``output_text``), then one ``function_call`` per call (``call_id`` = the call's id).
        ``id_factory(prefix)`` makes item ids (``rs``/``msg``/``fc``/``ctc``). Written in Python,
        as :func:`toolwire.openai.message_to_responses`."""

@final
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

@final
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
        """The ``choices[0].delta`` dict of an OpenAI chat completion chunk (without the finish
        reason, which belongs to the choice)."""

@final
class ToolStream:
    """The parsing state of one request. Feed it text or token ids, never both."""

    def feed(self, text: str) -> list[Delta]:
        """Feed a text delta; returns only what is new. Content is released as soon as it cannot
        be the start of a marker."""
    def feed_tokens(self, token_ids: Sequence[int]) -> list[Delta]:
        """Feed sampled token ids; needs a parser built with ``vocab``. Markers that are special
        tokens are recognised by id only.

        An id the vocabulary lacks raises before any of ``token_ids`` is fed, and the stream
        stays usable: such an id means the engine's tokenizer and the parser's vocabulary
        disagree (or a padded logits row was sampled), which a serving engine must see at once
        rather than as U+FFFD in the content.

        Raises:
            ToolwireError: no vocab, the stream was fed text, or an id is not in the vocabulary.
            TypeError: ``token_ids`` is not a sequence of ints.
        """
    def finish(self, finish_reason: str | None = None) -> list[Delta]:
        """Flush held-back text; the last delta carries the finish reason (``tool_calls`` when
        calls were made and the reason was None or ``stop``)."""
    def message(self) -> ParsedMessage:
        """Everything parsed so far (complete calls only)."""
    @property
    def finished(self) -> bool: ...

@final
class ToolParser:
    """A parser for one wire format and one tool list; reuse it across requests.

    Arguments:
        format: a name from :func:`formats` or an alias (``qwen25``, ``llama3``, ...).
        tools: OpenAI tool dicts; type XML parameter values and flag unknown tools.
        reasoning: None or False (reasoning stays content), True / ``"native"`` (the
            format's own block may open the output), ``"think"`` / ``"paired"``
            (``<think>...</think>`` may), ``"closing_only"`` (the prompt opened reasoning;
            text up to the close is reasoning); xgrammar's ``"disabled"`` / ``"auto"`` /
            ``"enabled"`` mean off / native / closing_only (see :func:`read_request`).
        vocab: needed for :meth:`ToolStream.feed_tokens`.
        id_factory: ``(index, name) -> id`` for tool-call ids.
        tool_choice: the request's ``tool_choice`` (``"auto"``, ``"none"``, ``"required"``,
            a named tool or ``allowed_tools``, read as :func:`read_request` does; unset:
            calls to any tool are read); calls against it (and a second call when
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
        ToolwireError: unknown format, invalid tools (duplicate or empty names, ...), a
            ``tool_choice`` the tools cannot satisfy, an unknown reasoning mode: the
            requests :func:`read_request` refuses, with the same message.
    """

    def __new__(
        cls,
        format: str,
        tools: Sequence[Mapping[str, Any]] | ToolSet | None = None,
        *,
        reasoning: bool | str | None = None,
        vocab: Vocab | None = None,
        id_factory: Callable[[int, str], str] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool = True,
        max_call_bytes: int | None = None,
    ) -> ToolParser: ...
    @property
    def format(self) -> str:
        """Canonical name of the format."""
    def parse(self, text: str) -> ParsedMessage:
        """Parse a complete model output."""
    def parse_tokens(self, token_ids: Sequence[int], finish_reason: str | None = None) -> ParsedMessage:
        """Parse a complete output from its sampled token ids (needs ``vocab``): what
        :meth:`ToolStream.feed_tokens` then :meth:`ToolStream.finish` give, without the deltas.

        Raises:
            ToolwireError: no vocab, or an id is not in the vocabulary.
            TypeError: ``token_ids`` is not a sequence of ints.
        """
    def stream(self) -> ToolStream:
        """A new stream for one request."""

@final
class MaskCache:
    """A bounded least-recently-used cache of bitmask rows (int32 words) keyed by bytes.

    The byte budget counts keys, rows and a fixed per-entry overhead; inserting past it evicts
    the least recently used entries. Thread-safe. Keys are the caller's business: see
    :class:`toolwire.masks.BatchMasker`, which derives keys from the grammar state.
    """

    def __new__(cls, max_bytes: int = 64 << 20) -> MaskCache: ...
    def get(self, key: bytes) -> bytes | None:
        """The row stored under ``key`` as little-endian int32 bytes (counts a hit or a miss)."""
    def insert(self, key: bytes, mask: bytes) -> bool:
        """Store a row (little-endian int32 bytes); False when this entry alone exceeds the budget."""
    def unsafe_get_into(self, key: bytes, ptr: int, words: int) -> bool:
        """On a hit, copy the row into the ``words`` int32 words at ``ptr`` and return True.

        Raises:
            ToolwireError: null or misaligned ``ptr``, or a cached row of another length.
        """
    def unsafe_insert_from(self, key: bytes, ptr: int, words: int) -> bool:
        """Store the ``words`` int32 words at ``ptr`` under ``key``."""
    def unsafe_fill_rows(
        self, namespace: bytes, keyers: Sequence[StateKeyer], ptr: int, rows: int, words: int, indices: Sequence[int]
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """Fill rows ``indices[i]`` of the contiguous ``rows`` x ``words`` int32 bitmask at ``ptr``
        with the rows cached under ``namespace + keyers[i].key()``.

        Returns the positions that missed (each key once) and ``(i, j)`` pairs of later positions
        whose key equals that of the missed position ``j``. A keyer that is not ``cacheable``
        misses without a lookup, and its row is not stored."""
    def unsafe_store_rows(
        self,
        namespace: bytes,
        keyers: Sequence[StateKeyer],
        ptr: int,
        rows: int,
        words: int,
        indices: Sequence[int],
        missed: Sequence[int],
        copies: Sequence[tuple[int, int]],
    ) -> int:
        """After :meth:`unsafe_fill_rows` over the same ``keyers`` and ``indices`` and filling the
        missed rows: store each missed row under its key, and copy row ``indices[j]`` into row
        ``indices[i]`` for each ``(i, j)`` of ``copies``. Returns how many rows were stored (an
        entry larger than the cache's budget is not).
        """
    def unsafe_insert_keyed(self, namespace: bytes, keyer: StateKeyer, ptr: int, rows: int, words: int, row: int) -> bool:
        """Store row ``row`` of the bitmask at ``ptr`` under ``namespace + keyer.key()``."""
    def remove(self, key: bytes) -> bool: ...
    def clear(self) -> None:
        """Drop every entry and reset the counters."""
    def __len__(self) -> int: ...
    def __contains__(self, key: bytes, /) -> bool: ...
    @property
    def used_bytes(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    def stats(self) -> dict[str, int]:
        """``hits``, ``misses``, ``inserts``, ``evictions``, ``entries``, ``used_bytes``, ``max_bytes``."""

@final
class StateKeyPlan:
    """How a grammar's output is read for mask-cache keys: anchors in free text, after each call
    and inside unconstrained JSON strings of a structural tag (see ``toolwire.masks.BatchMasker``)."""

    @staticmethod
    def from_tag(grammar_id: bytes, tag_json: str, *, ordered_objects: bool = False) -> StateKeyPlan:
        """The plan for a structural tag (JSON text); ``grammar_id`` (16 bytes) names it in keys.
        ``ordered_objects``: the grammar engine takes an object's members in ``properties``
        order (``toolwire.grammar.engine_facts.objects_in_declared_order``), so a key after a
        member names that member alone, not every optional member before it.

        Raises:
            ToolwireError: the id is not 16 bytes or the tag is not JSON.
        """
    @staticmethod
    def opaque(grammar_id: bytes) -> StateKeyPlan:
        """A grammar known only by its id: keys cover the token ids since the start."""
    @property
    def anchored(self) -> bool:
        """Whether the tag's structure is followed (False: keys cover the whole output)."""
    @property
    def text_level(self) -> bool:
        """False when the grammar has token-level elements (keys then use token ids)."""
    def describe(self) -> str:
        """E.g. ``triggered(prefix=[], tags=[json,json])`` or ``whole output (tokens)``."""
    def anchors(self) -> list[str]:
        """The kinds of anchor the keyer can reach (see `KeyPlan::anchors`)."""
    def keyer(self) -> StateKeyer:
        """A keyer for one request."""

@final
class StateKeyer:
    """Follows one request's output and names its grammar state."""

    def accept(self, token: int, data: bytes) -> None:
        """Feed one accepted token (not a stop token): its id and its bytes."""
    def key(self) -> bytes:
        """The key of the current state (34 bytes): grammar id, anchor kind, calls so far (0/1),
        digest; with :meth:`label`'s prefix before and suffix after."""
    def label(self, prefix: bytes, suffix: bytes = b"", stop_at: bytes = b"", free_text_only: bool = False, suffix_near_stop: bool = False) -> None:
        """Put ``prefix`` before and ``suffix`` after every key of this keyer (in :meth:`key` and
        wherever a :class:`MaskCache` or :class:`TokenTable` keys rows by it), and make
        :meth:`TokenTable.feed_deferred` leave to the caller any token that completes
        ``stop_at`` in the text fed from now on (empty: none).
        With ``free_text_only``, it leaves any token after which the keyer is not in the free
        text of a ``triggered_tags`` format (mode ``free``). With ``suffix_near_stop``, the
        suffix is added only while the text fed since ends with a non-empty proper prefix of
        ``stop_at`` (where what the suffix tells apart matters only there)."""
    @property
    def mode(self) -> Literal["prefix", "free", "begin", "between", "content", "end", "lost"]:
        """Where the keyer is; ``lost``: no anchors any more (or no plan)."""
    @property
    def family(self) -> str:
        """The kind of the last anchor: ``S``/``I`` (start, by text/ids), ``F`` (free text), ``A`` (after a
        call), ``X`` (in an XML call), ``J`` (in JSON content, after a member's value)."""
    @property
    def calls(self) -> int:
        """Calls completed so far, as far as the keyer followed them."""
    @property
    def cacheable(self) -> bool:
        """False once more than 128 bytes were read without anchors (mode ``lost``): only a replay
        of the same output could share such a key, so :class:`toolwire.masks.BatchMasker` skips
        the cache for it."""
    @property
    def tokens(self) -> int:
        """Tokens fed so far (stop tokens are not fed)."""
    @property
    def deferred_tokens(self) -> int:
        """Tokens taken by :meth:`TokenTable.feed_deferred` whose bytes the matcher has not read."""
    def take_deferred(self) -> bytes:
        """The deferred bytes, handed over once (the caller gives them to the matcher)."""
    def take_deferred_run(self) -> tuple[bytes, list[int]]:
        """The deferred bytes and each deferred token's length in them, handed over once."""
    def set_resume(self, scaffold: StateKeyer, feed: bytes) -> None:
        """Inside a call: keep a copy of ``scaffold``, the scaffold's keyer where the call began, and
        ``feed``, the text it reads when the call closes, so a batch can close the call alone
        (:class:`CallSteps`)."""
    def set_steps_only(self) -> None:
        """For a keyer of a call's text among begins where some tools' pieces go on beside them:
        take no token alone (the pieces would have to judge it), only :class:`CallSteps`' steps."""
    @property
    def resumes(self) -> bool:
        """Whether :meth:`set_resume` gave it the scaffold's keyer."""
    def __copy__(self) -> StateKeyer: ...

@final
class TokenTable:
    """Token bytes by id and the ids that end generation, for feeding a batch of keyers in one call."""

    def __new__(cls, tokens: Sequence[bytes], stop_ids: Sequence[int]) -> TokenTable: ...
    @staticmethod
    def from_vocab(vocab: Vocab, size: int, stop_ids: Sequence[int]) -> TokenTable:
        """``size`` ids of ``vocab`` (ids without a token have no bytes)."""
    def __len__(self) -> int: ...
    def feed(self, keyers: Sequence[StateKeyer], tokens: Sequence[int]) -> list[int]:
        """Feed ``tokens[i]`` to ``keyers[i]``, stop tokens excepted; returns their positions."""
    def feed_deferred(
        self, cache: MaskCache, namespace: bytes, keyers: Sequence[StateKeyer], tokens: Sequence[int]
    ) -> list[int]:
        """Take ``tokens[i]`` for ``keyers[i]`` without the matcher where the mask cached under the
        keyer's key allows it (the keyer is fed, the bytes deferred); returns the positions left
        to the caller (stop tokens, refused tokens, uncached keys, token-level grammars). The
        cached mask is the one the request's last fill produced, so it answers exactly as the
        matcher's ``accept_token`` would."""

@final
class CallSteps:
    """The steps Python took where a composed request changed parts, by grammar, keyer state and
    token (:meth:`key`), for ``feed_requests`` to take alone. Bounded by an estimate of its bytes
    (a key's, and 1 KiB a kept keyer): past ``max_bytes`` it starts empty again, and Python
    teaches it the steps again as it meets them."""

    def __new__(cls, max_bytes: int) -> CallSteps: ...
    @property
    def nbytes(self) -> int:
        """The bytes the steps kept are counted (an estimate, see the class docs)."""
    @property
    def max_bytes(self) -> int: ...
    def key(self, serial: int, keyer: StateKeyer, token: int) -> bytes:
        """The name of ``keyer`` (of grammar ``serial``) taking ``token``, read before the step."""
    def open(self, key: bytes, keyer: StateKeyer, close_feed: bytes) -> None:
        """The step named ``key`` opened a call whose first keyer is ``keyer`` (fresh: made from the
        call's text); the scaffold reads ``close_feed`` when the call closes."""
    def within(self, key: bytes, keyer: StateKeyer) -> None:
        """The step named ``key`` moved a call on to ``keyer``, a fresh one."""
    def close(self, key: bytes) -> None:
        """The step named ``key`` closed the call, and the scaffold read only ``close_feed``."""
    def stop(self, key: bytes) -> None:
        """The step named ``key`` ended the output."""
    def clear(self) -> None: ...
    def __len__(self) -> int: ...

@final
class CallBegins:
    """The begins of a composed grammar's tools (``<tool_call>\\n{"name": "get_weather", ...``)."""

    def __new__(cls, begins: Sequence[bytes]) -> CallBegins: ...
    def __len__(self) -> int: ...
    def continuing(self, text: bytes) -> int:
        """How many begins continue past ``text`` (start with it and are longer)."""
    def literal_step(self, call: bytes, data: bytes) -> bool:
        """Whether ``data`` read after ``call`` keeps two or more begins in their literal text and
        completes none: the tokens a keyer from :meth:`keyer` takes alone."""
    def keyer(self, plan: StateKeyPlan, prefix: bytes, text: bytes) -> StateKeyer:
        """A keyer whose state is the call text ``text`` (fed tokens append their bytes): its key is
        ``prefix``, the text, and ``plan``'s key (the plan's keyer is never fed).
        :meth:`TokenTable.feed_deferred` (and ``feed_requests``) let it take a token only where
        :meth:`literal_step` holds and the row cached under its key allows the token."""

def unsafe_apply_token_bitmask(
    logits_ptr: int,
    dtype: Literal["float32", "float16", "bfloat16"],
    logits_rows: int,
    width: int,
    row_stride: int,
    bitmask_ptr: int,
    bitmask_rows: int,
    words: int,
    rows: Sequence[int] | None,
    allowed_len: int,
) -> None:
    """Mask logits in place from raw pointers; use :func:`toolwire.torch.apply_token_bitmask_`.

    Each row ``r`` in ``rows`` (default: every logits row) of the logits at ``logits_ptr``
    (``logits_rows`` rows of ``width`` elements, ``row_stride`` elements apart) is masked by row
    ``r`` of the int32 bitmask at ``bitmask_ptr`` (``bitmask_rows`` x ``words``, contiguous):
    columns below ``allowed_len`` whose bit is set keep their value, every other column becomes
    ``-inf``. Pointers are checked for null and alignment and rows against the extents; the
    extents themselves cannot be checked, so wrong ones corrupt memory.

    Raises:
        ToolwireError: on a null or misaligned pointer, an unknown dtype or an out-of-range row.
    """

def unsafe_count_allowed(bitmask_ptr: int, rows: int, words: int, vocab: int) -> list[int]:
    """Allowed-token count of each row of a contiguous int32 bitmask, over the first ``vocab`` ids;
    use :func:`toolwire.torch.count_allowed`."""

# -- RL batch scoring (rust/python/src/batch.rs) ----------------------------------------------------


def unsafe_fill_request_rows(
    cache: MaskCache, namespace: bytes, requests: Sequence[Any], ptr: int, rows: int, words: int, indices: Sequence[int]
) -> tuple[list[int], list[tuple[int, int]], list[int], int]:
    """Fill row ``indices[i]`` of the contiguous ``rows`` x ``words`` int32 bitmask at ``ptr`` for
    ``requests[i]``: all allowed for None, else the row cached under ``namespace`` + the key of its
    ``_fill_key`` keyer.

    Returns ``(missed, copies, unkeyed, hits)``: the positions whose key missed (each key once;
    a keyer that is not ``cacheable`` misses without a lookup), ``(i, j)`` pairs of later
    positions whose key equals that of missed position ``j``, the positions whose ``_fill_key``
    is None, and how many rows the cache served."""

def unsafe_store_request_rows(
    cache: MaskCache,
    namespace: bytes,
    requests: Sequence[Any],
    ptr: int,
    rows: int,
    words: int,
    indices: Sequence[int],
    missed: Sequence[int],
    copies: Sequence[tuple[int, int]],
) -> int:
    """After :func:`unsafe_fill_request_rows` over the same ``requests`` and ``indices`` and filling
    the missed rows: store each missed row under its key, and copy row ``indices[j]`` into row
    ``indices[i]`` for each ``(i, j)`` of ``copies``. Returns how many rows were stored."""

def feed_requests(
    table: TokenTable, cache: MaskCache, namespace: bytes, requests: Sequence[Any], tokens: Sequence[int]
) -> tuple[list[int], list[int], int, int]:
    """Take ``tokens[i]`` for ``requests[i]`` through the request's ``_accept_key`` keyer alone where
    the mask cached under its key allows it (as :meth:`TokenTable.feed_deferred`), or, where
    the keyer does not take it, through a step of the request's ``_steps`` (a :class:`CallSteps`)
    that the row allows (the request gets a new keyer and journals the old one, see
    :class:`CallSteps`). Returns the positions left to the caller (requests without such a
    keyer, and tokens neither took), the positions among those whose token the row cached under
    the keyer's (text-level) key allows, so the request's matcher would accept it, how many
    tokens the keyers took and how many steps were taken. None requests are skipped."""

def detect_template(
    template: str,
    *,
    generation_prompt: str | None = None,
    added_tokens: Sequence[str] | None = None,
    special_tokens: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The format a chat template writes, decided over the format specs; ``toolwire.detect_format``
    reads tokenizers, configs and paths and calls this.

    Arguments:
        template: the chat template's source.
        generation_prompt: what it renders for one user message with ``add_generation_prompt``
            (says whether the prompt opens reasoning); None: read from the template's text.
        added_tokens: the vocabulary's added tokens (None: no vocabulary, markers are read from
            the template alone and ``special_markers`` from the spec).
        special_tokens: those of them that are special (``skip_special_tokens`` strips them).

    Returns:
        A dict: ``status`` (``confident``, ``ambiguous`` or ``unknown``), ``format`` (None unless
        confident), ``reasoning``, ``thinking_style``, ``special_markers``,
        ``vocabulary_checked``, and ``candidates`` (best first: ``format``, ``coverage``,
        ``found``, ``missing``).
    """

def parse_batch(
    parser: ToolParser,
    completions: Iterable[str | Sequence[int]],
    *,
    threads: int | None = None,
    finish_reason: str | None = None,
    strip_ids: Sequence[int] = ...,
) -> tuple[list[ParsedMessage], list[int], list[int]]:
    """Parse every completion (a str, or token ids for a parser built with a vocab); returns
    `(messages, call_counts, issue_counts)`, one of each per completion, in order. Call ids are
    random (an `id_factory` needs the GIL and is refused). `threads`: how many threads share the
    work (default: the machine's cores). `strip_ids`: a last id among them is dropped first.
    """

def parse_batch_counts(
    parser: ToolParser,
    completions: Iterable[str | Sequence[int]],
    *,
    threads: int | None = None,
    finish_reason: str | None = None,
    strip_ids: Sequence[int] = ...,
) -> tuple[list[int], list[int], dict[str, list[int]]]:
    """`parse_batch` as columns, with no Python object per message: `(call_counts, issue_counts,
    issue_kinds)`, where `issue_kinds` maps each issue kind found in the batch to its count per
    completion. The parse is the same; only the messages are not built.
    """
