"""The contract between the grammar builder and the mask keyer: for every format and tool choice,
which anchors the keyer follows in the tag `toolwire.grammar` builds.

The keyer (`rust/core/src/bitmask/key/`) reads the builder's structural tags to find the points
where the grammar's state is canonical; a tag it cannot read is still keyed soundly, by the text
since the last anchor, so a builder change that loses anchors shows only as fewer cache hits. This
test pins them down: it builds each tag, walks the renderer's text for valid calls through a
keyer, and compares the anchor kinds it reached with lists written from the keyer's module docs.

Followed: JSON calls (also after a call id and a constant, Kimi K2), XML calls with declared
parameters whose values cannot hold their close, and sections of calls. Not followed (``lost``):
harmony's and Beam's channels; the gemma4, functiongemma, pythonic and LFM2 call bodies; Cohere's
calls where two tools share the call's begin (the name comes after the id); any-name XML
parameters (a non-strict tool's); a MiniMax M3 value that is text or a number (it might hold its
close); the ``auto`` shapes that allow prose before the calls (llama3_json, mistral, granite,
xlam, default, gigachat3); and ``required`` shapes that end in an optional marker (gemma4,
gigachat3: only constants may follow the calls). Kinds: ``free`` (free text of
``triggered_tags``), ``after`` (between calls of ``tags_with_separator``), ``json``, ``xml``,
``section``, and ``lost`` once the keyer keys by text.
"""

from __future__ import annotations

import pytest

pytest.importorskip("xgrammar")

import toolwire  # noqa: E402
from toolwire import grammar  # noqa: E402
from toolwire._core import StateKeyPlan  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"},
        },
        "required": ["location"],
    }}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"],
    }}},
]
NAMED = {"type": "function", "function": {"name": "get_weather"}}
CHOICES = {"auto": "auto", "required": "required", "named": NAMED}

#: The calls rendered for each choice: both tools, or the named one.
CALLS_WRITTEN = {
    "auto": [{"name": "get_time", "arguments": {"timezone": "Europe/Paris"}},
             {"name": "get_weather", "arguments": {"location": "Paris", "days": 3}}],
    "named": [{"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}],
}
CALLS_WRITTEN["required"] = CALLS_WRITTEN["auto"]

JSON = {"json"}
XML = {"xml"}
LOST = {"lost"}
SECTION = {"section"}

#: format -> (call content, whether calls sit in a section tag, whether ``auto`` is followed)
CALLS: dict[str, tuple[set[str], bool, bool]] = {
    "hermes": (JSON, False, True),
    "llama3_json": (JSON, False, False),
    "mistral": (JSON, False, False),
    "longcat": (JSON, False, True),
    "hunyuan_a13b": (JSON, True, True),
    "cohere_command": (LOST, True, True),
    "qwen3_coder": (XML, False, True),
    "glm45": (XML, False, True),
    "glm47": (XML, False, True),
    "deepseek_v3_2": (XML, True, True),
    "deepseek_v4": (XML, True, True),
    "deepseek_v4_1": (XML, True, True),
    "minimax_m2": (XML, True, True),
    # get_time's text value is followed, then get_weather's `days` (text or a number) is not
    "minimax_m3": (XML | LOST, True, True),
    "default": (JSON, True, False),
    "deepseek_v3": (JSON, True, True),
    "deepseek_v3_1": (JSON, True, True),
    "kimi_k2": (JSON, True, True),
    "gemma4": (LOST, False, True),
    "pythonic": (LOST, True, True),
    "phi4": (JSON, True, True),
    "jamba": (JSON, True, True),
    "nemotron_deci": (JSON, True, True),
    "granite": (JSON, True, False),
    "xlam": (JSON, True, False),
    "internlm": (JSON, False, True),
    "seed_oss": (XML, False, True),
    "step3": (XML, True, True),
    "functiongemma": (LOST, False, True),
    "hunyuan": (XML, True, True),
    "hy_v4": (XML, True, True),
    "apertus": (JSON, True, True),
    "gigachat3": (JSON, False, False),
    "lfm2": (LOST, True, True),
    "dots": (XML, True, True),
    "iquest_q1": (XML, False, True),
    "granite_20b_fc": (JSON, False, True),
    "ernie45": (JSON, False, True),
    # the keyer does not follow the XTML calls yet (keyed by text)
    "kimi_k3": (LOST, True, True),
    "inkling": (JSON, False, True),
    # a turn of messages: `auto` is not followed, as for harmony
    "muse": (XML, False, False),
    "k2_horizon": (XML, True, True),
}
#: Formats whose turns are channels the keyer does not follow: whole-output keys in every mode.
CHANNELS = {"harmony", "beam"}
#: `required` and named shapes with an optional marker after the calls: whole-output keys.
OPTIONAL_END = {"gemma4", "gigachat3"}
#: The content of the named choice's one get_weather call, where it differs from the table's.
NAMED = {"minimax_m3": LOST, "cohere_command": JSON}
#: XML formats whose non-strict calls still list the declared parameters (the close names them).
DECLARED_NAMES = {"minimax_m3"}
FAMILIES = {"F": "free", "A": "after", "J": "json", "X": "xml", "N": "section"}


def expected(fmt: str, choice: str, strict: bool) -> list[str]:
    if fmt in CHANNELS:
        return ["lost"]
    content, section, auto_followed = CALLS[fmt]
    if choice == "named":
        content = NAMED.get(fmt, content)
    if choice == "auto":
        if not auto_followed:
            return ["lost"]
        kinds = {"free"} | content | (SECTION if section else set())
    elif fmt in OPTIONAL_END:
        return ["lost"]
    else:
        # `required` and named tags are the calls after whitespace (and the section's begin),
        # one after another: the section's constants are read as the plan's prefix and suffix
        kinds = {"after"} | content
    if not strict and "xml" in kinds and fmt not in DECLARED_NAMES:
        kinds = kinds - XML | LOST  # a non-strict tool takes any parameter names
    return sorted(kinds)


def tag_plan(fmt: str, choice: str, strict: bool) -> StateKeyPlan:
    tool_choice = {"type": "function", "function": {"name": "get_weather"}} if choice == "named" else choice
    schema = "strict" if strict else "auto"
    tag = grammar.structural_tag(fmt, TOOLS, tool_choice=tool_choice, scope="always", schema=schema)
    assert tag is not None
    return StateKeyPlan.from_tag(b"contract-tag-id!", grammar.tag_json(tag))


def followed(plan: StateKeyPlan, text: str) -> list[str]:
    """The anchor kinds a keyer reaches on ``text``, fed a character at a time."""
    keyer = plan.keyer()
    kinds = set()
    for ch in ["", *text]:
        keyer.accept(0, ch.encode())
        kinds.add("lost" if keyer.mode == "lost" else FAMILIES.get(keyer.family))
    return sorted(kinds - {None})


def test_every_format_is_in_the_table():
    assert set(toolwire.formats()) == set(CALLS) | CHANNELS


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "any_args"])
@pytest.mark.parametrize("choice", list(CALLS_WRITTEN))
@pytest.mark.parametrize("fmt", sorted(set(CALLS) | CHANNELS))
def test_the_keyer_follows_the_builders_tags(fmt, choice, strict):
    plan = tag_plan(fmt, choice, strict)
    kinds = followed(plan, toolwire.render(fmt, CALLS_WRITTEN[choice]))
    assert kinds == expected(fmt, choice, strict)
    # the plan's own account covers what the walk reached
    assert set(kinds) - {"lost"} <= set(plan.anchors())
