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

import os
import sys


def sglang_plugin() -> None:
    """SGLang general-plugin hook (toolwire's ``sglang.srt.plugins`` entry point, which SGLang's
    ``launch_server`` runs before parsing its arguments): registers the toolwire detectors when the
    command line names a ``toolwire_`` parser or ``TOOLWIRE_SGLANG=1``, and otherwise imports
    nothing, so SGLang processes that do not use toolwire pay nothing."""
    if os.environ.get("TOOLWIRE_SGLANG") == "1" or any("toolwire_" in arg for arg in sys.argv):
        from toolwire.integrations.sglang import register

        register()
