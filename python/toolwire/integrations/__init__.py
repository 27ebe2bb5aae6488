"""Adapters that let serving engines use toolwire as their tool-call parser.

- :mod:`toolwire.integrations.vllm`: a vLLM ``ToolParser`` per toolwire format, registered with
  vLLM's ``ToolParserManager`` as ``toolwire_<format>`` (``--tool-parser-plugin
  toolwire.integrations.vllm --tool-call-parser toolwire_hermes``).
- :mod:`toolwire.integrations.sglang`: an SGLang function-call detector per format, registered
  with SGLang's ``FunctionCallParser`` as ``toolwire_<format>``.
- :mod:`toolwire.integrations.common`: the engine-independent pieces (tool lists from engine
  request objects, merging toolwire deltas).

Importing this package imports neither engine; each adapter module imports its engine.
"""
