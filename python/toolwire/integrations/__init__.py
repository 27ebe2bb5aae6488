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
    nothing, so SGLang processes that do not use toolwire pay nothing. For ``toolwire_auto`` it
    detects the format from the model's tokenizer, and exits when it cannot decide (SGLang logs and
    ignores a plugin's exceptions, which would leave the parser name unknown without the reason)."""
    if not (os.environ.get("TOOLWIRE_SGLANG") == "1" or any("toolwire_" in arg for arg in sys.argv)):
        return
    from toolwire import ToolwireError
    from toolwire.integrations.sglang import register

    parser = _argument("--tool-call-parser")
    if parser != "toolwire_auto":
        register()
        return
    source = _argument("--tokenizer-path") or _argument("--model-path") or _argument("--model")
    try:
        register(tokenizer=_tokenizer(source))
    except (ToolwireError, OSError, ValueError) as err:
        raise SystemExit(f"--tool-call-parser toolwire_auto: {err}") from err


def _argument(flag: str) -> str | None:
    for i, arg in enumerate(sys.argv):
        if arg == flag and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def _tokenizer(source: str | None) -> object:
    """A local model directory as it is (detect_format reads its files), otherwise the tokenizer
    transformers loads for it."""
    if source is None:
        raise ValueError("toolwire_auto needs --model-path or --tokenizer-path to detect the format")
    if os.path.isdir(source):
        return source
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(source, trust_remote_code="--trust-remote-code" in sys.argv)
