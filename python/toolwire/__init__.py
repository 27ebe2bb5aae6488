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

Grammar support (structural tags, tool_choice) lives in :mod:`toolwire.grammar` and needs the
``grammar`` extra; bitmask application lives in :mod:`toolwire.torch`.
"""

from toolwire._core import (
    CallIssue,
    Delta,
    MaskCache,
    ParsedMessage,
    ToolCall,
    ToolCallDelta,
    ToolParser,
    ToolStream,
    ToolwireError,
    Vocab,
    __version__,
    format_info,
    formats,
    render,
)

__all__ = [
    "CallIssue",
    "Delta",
    "MaskCache",
    "ParsedMessage",
    "ToolCall",
    "ToolCallDelta",
    "ToolParser",
    "ToolStream",
    "ToolwireError",
    "Vocab",
    "__version__",
    "format_info",
    "formats",
    "render",
]
