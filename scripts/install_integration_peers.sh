#!/usr/bin/env bash
# Installs the serving engines that tests/test_vllm.py and tests/test_sglang.py run against, on a
# CPU-only machine, into the Python that runs pytest ($PYTHON, default python3).
#
# Neither engine can come through the `test` extra: their wheels pin a CUDA stack (vLLM 0.33.0
# pins torch==2.14.0, flashinfer, cutlass, ...; SGLang 0.5.23 pins xgrammar==0.2.7, which clashes
# with the grammar extra's 0.2.8), so each is installed with --no-deps, followed by the few
# packages that the code paths toolwire plugs into import:
#   vLLM:   vllm.tool_parsers (ToolParser, ToolParserManager), vllm.parser.parser_manager,
#           vllm.entrypoints.openai.chat_completion.{protocol,stream_processor}
#   SGLang: sglang.srt.function_call.{base_format_detector,core_types,function_call_parser},
#           sglang.srt.entrypoints.openai.protocol
# Both import torch and transformers at module level. torch is installed only when missing (from
# PyPI that is the CUDA build, several GB; any torch >= 2.4 imports fine on a CPU machine).
#
# Usage: bash scripts/install_integration_peers.sh [vllm] [sglang]   (both when no argument)
set -euo pipefail

PYTHON=${PYTHON:-python3}
VLLM_VERSION=0.33.0
SGLANG_VERSION=0.5.23
# pip's resolver lists every requirement of the --no-deps wheels that is not installed; that is
# expected here, so those lines are dropped (anything else pip says is kept).
pip() {
    "$PYTHON" -m pip install --disable-pip-version-check -q "$@" 2> >(grep -v -E \
        "^(vllm|sglang) [0-9.]+ requires |dependency resolver does not currently take into account" >&2)
}

want=("$@")
[ ${#want[@]} -eq 0 ] && want=(vllm sglang)

# Shared by both engines (torch only when absent: never replace a working torch).
"$PYTHON" -c "import torch" 2>/dev/null || pip torch
pip transformers openai pydantic numpy pillow pyzmq msgspec orjson partial-json-parser \
    aiohttp psutil pybase64 tiktoken requests pyyaml
# xgrammar: both engines import it; keep the grammar extra's version when one is there.
"$PYTHON" -c "import xgrammar" 2>/dev/null || pip xgrammar==0.2.8

for engine in "${want[@]}"; do
    case "$engine" in
    vllm)
        pip --no-deps "vllm==$VLLM_VERSION"
        pip fastapi cachetools cbor2 cloudpickle openai-harmony prometheus-client py-cpuinfo \
            uvloop opentelemetry-api
        "$PYTHON" - <<'EOF'
import warnings
warnings.simplefilter("ignore")
from vllm.tool_parsers import ToolParser, ToolParserManager
from vllm.parser.parser_manager import ParserManager
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
import vllm
print("vllm", vllm.__version__, "tool parser path imports")
EOF
        ;;
    sglang)
        pip --no-deps "sglang==$SGLANG_VERSION"
        pip starlette ipython
        "$PYTHON" - <<'EOF'
import warnings
warnings.simplefilter("ignore")
from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.entrypoints.openai.protocol import Tool
import importlib.metadata as md
print("sglang", md.version("sglang"), "function-call path imports")
EOF
        ;;
    *)
        echo "unknown engine: $engine (vllm or sglang)" >&2
        exit 2
        ;;
    esac
done
