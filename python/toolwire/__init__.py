"""toolwire: streaming tool-call parsing for LLM serving and RL, with a Rust core.

Parse model output in any supported wire format into OpenAI-compatible tool calls, one-shot or
streamed delta by delta (text or token ids)::

    import toolwire

    parser = toolwire.ToolParser("hermes", tools=[...])
    stream = parser.stream()
    for text in model_deltas:
        for delta in stream.feed(text):
            send(delta.to_openai())
    stream.finish()
    message = stream.message()

Responses API items and events, and whole Chat Completions objects, live in :mod:`toolwire.openai`;
serving-engine adapters in :mod:`toolwire.integrations` (vLLM, SGLang).

Grammar support (structural tags, tool_choice) lives in :mod:`toolwire.grammar` and needs the
``grammar`` extra. The decode loop (torch and xgrammar) is in :mod:`toolwire.torch` (bitmask
application), :mod:`toolwire.masks` (batch masks with a cache, jump-forward), :mod:`toolwire.hf`
(a transformers logits processor) and :mod:`toolwire.rl` (RL episodes token in / token out,
forced-token masks).
"""

from toolwire._core import (
    CallIssue,
    Delta,
    MaskCache,
    ParsedMessage,
    SchemaWarning,
    ToolCall,
    ToolCallDelta,
    ToolParser,
    ToolSet,
    ToolStream,
    ToolwireError,
    Vocab,
    __version__,
    format_info,
    formats,
)
from toolwire._detect import Detection, detect_format
from toolwire._render import render

__all__ = [
    "CallIssue",
    "Delta",
    "Detection",
    "MaskCache",
    "ParsedMessage",
    "SchemaWarning",
    "ToolCall",
    "ToolCallDelta",
    "ToolParser",
    "ToolSet",
    "ToolStream",
    "ToolwireError",
    "Vocab",
    "__version__",
    "detect_format",
    "format_info",
    "formats",
    "render",
]
