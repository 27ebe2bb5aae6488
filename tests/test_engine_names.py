"""Every tool-call parser name of SGLang 0.5.23 and vLLM 0.33 resolves to a toolwire format, under
the engine that uses it, or is listed as not supported yet with a reason (the one table is
``rust/core/src/formats/engine_names.rs``; ``docs/formats.md`` renders it).

The name lists are written out here from those releases' registries, so the check runs without
the engines; where an engine is installed, its registry must hold no name missing from them
(a newer engine then fails here until its new names are placed)."""

from pathlib import Path

import pytest
import toolwire
from toolwire import _core

# sorted(FunctionCallParser.ToolCallParserEnum), SGLang 0.5.23
SGLANG_0_5_23 = [
    "apertus2509", "beam", "cohere_command4", "deepseekv3", "deepseekv31", "deepseekv32", "deepseekv4",
    "deepseekv41", "dots", "gemma4", "gigachat3", "gigachat35", "glm", "glm45", "glm47", "gpt-oss", "hermes",
    "hunyuan", "inkling", "interns1", "iquest_q1", "k2_horizon", "kimi_k2", "kimi_k3", "lfm2", "ling3",
    "llama3", "mimo", "minicpm5", "minimax-m2", "minimax-m3", "mistral", "muse", "nanbeige", "poolside_v1",
    "pythonic", "qwen", "qwen25", "qwen3_coder", "response_template", "spark25", "step3", "step3p5",
    "trinity",
]  # fmt: skip

# sorted(ToolParserManager.lazy_parsers), vLLM 0.33
VLLM_0_33 = [
    "apertus", "beam", "cohere_command3", "cohere_command4", "deepseek_v3", "deepseek_v31", "deepseek_v32",
    "deepseek_v4", "deepseek_v41", "dots", "ernie45", "functiongemma", "gemma4", "gigachat3", "glm45",
    "glm47", "granite", "granite-20b-fc", "granite4", "hermes", "hf", "hunyuan_a13b", "hy_v3", "hy_v4",
    "inkling", "internlm", "jamba", "k2_horizon", "kimi_k2", "kimi_k3", "lfm2", "ling3", "llama3_json",
    "llama4_json", "llama4_pythonic", "longcat", "mimo", "minicpm5", "minimax_m2", "minimax_m3", "mistral",
    "muse", "muse_glimmer", "musespark1x", "olmo3", "openai", "phi4_mini_json", "plamo3", "poolside_v1",
    "pythonic", "qwen3_coder", "qwen3_json", "qwen3_xml", "seed_oss", "step3", "step3p5", "step5", "xlam",
]  # fmt: skip

TABLE = _core.engine_names()
NOT_SUPPORTED = {row["format"]: row["reason"] for row in TABLE["not_supported"]}


def row_naming(engine: str, name: str) -> dict:
    rows = [row for row in TABLE["formats"] if name in row[engine]]
    assert len(rows) == 1, f"{engine} {name!r}: in {len(rows)} rows of engine_names.rs"
    return rows[0]


@pytest.mark.parametrize(("engine", "name"), [("sglang", n) for n in SGLANG_0_5_23] + [("vllm", n) for n in VLLM_0_33])
def test_every_engine_name_maps_or_says_why_not(engine, name):
    row = row_naming(engine, name)
    if row["format"] in toolwire.formats():
        info = toolwire.format_info(row["format"])
        assert name in info["engine_names"][engine]
        assert name in info["aliases"] or name == info["name"]
        assert toolwire.ToolParser(name).format == row["format"]
    else:
        assert NOT_SUPPORTED.get(row["format"]), f"{engine} {name!r}: {row['format']} is neither a format nor listed"
        assert f"| `{row['format']}` |" in (_docs_not_supported())


def _docs_not_supported() -> str:
    page = (Path(__file__).resolve().parents[1] / "docs" / "formats.md").read_text(encoding="utf-8")
    return page.split("Not supported yet:", 1)[1]


def test_the_table_holds_only_the_registries_names_for_sglang_and_vllm():
    """A name in the table that neither release has would be a guess."""
    assert sorted(n for row in TABLE["formats"] for n in row["sglang"]) == sorted(SGLANG_0_5_23)
    assert sorted(n for row in TABLE["formats"] for n in row["vllm"]) == sorted(VLLM_0_33)


def _engine_own(names):
    """The registry's names less the `toolwire_*` ones toolwire's own plugins add (other tests in
    the same process register them)."""
    return {name for name in names if not name.startswith("toolwire")}


def test_installed_sglang_has_no_name_missing_here():
    parser = pytest.importorskip("sglang.srt.function_call.function_call_parser")
    registry = parser.FunctionCallParser.ToolCallParserEnum
    assert sorted(_engine_own(registry) - set(SGLANG_0_5_23)) == []


def test_installed_vllm_has_no_name_missing_here():
    tool_parsers = pytest.importorskip("vllm.tool_parsers")
    registry = tool_parsers.ToolParserManager.lazy_parsers
    assert sorted(_engine_own(registry) - set(VLLM_0_33)) == []
