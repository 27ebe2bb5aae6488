"""The contract between the grammar builder and the mask keyer: for every format and tool choice,
which anchors the keyer follows in the tag `toolwire.grammar` builds.

The keyer (`rust/core/src/bitmask/key/`) reads the builder's structural tags to find the points
where the grammar's state is canonical; a tag it cannot read is still keyed soundly, by the text
since the last anchor, so a builder change that loses anchors shows only as fewer cache hits. This
test pins them down: it builds each tag, walks the renderer's text for valid calls through a
keyer, and compares the anchor kinds it reached with what the format's syntax (``format_info``, not
the keyer) predicts by the rules of the keyer's module docs, less a few listed exceptions; a new
format needs no row.

Followed: JSON calls (also after a call id and a constant, Kimi K2), XML calls with declared
parameters whose values cannot hold their close, and sections of calls. Not followed (``lost``):
the messages of harmony, Beam and Muse (a content block, or calls); the gemma4, functiongemma, pythonic and LFM2 call bodies; Cohere's
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

#: What the keyer follows in a call's content, by the syntax's argument style.
CONTENT = {"json": JSON, "xml_params": XML}
#: Formats where the rule in `calls` does not hold, with the reason in the module docs.
CALLS_EXCEPTIONS: dict[str, tuple[set[str], bool, bool]] = {
    "cohere_command": (LOST, True, True),  # two tools share the call's begin
    # get_time's text value is followed, then get_weather's `days` (text or a number) is not
    "minimax_m3": (XML | LOST, True, True),
    "gigachat3": (JSON, False, False),  # auto allows prose first, with no trigger at the start
    "pythonic": (LOST, True, True),  # followed in auto although its `[` stands at the start
    "kimi_k3": (LOST, True, True),  # the XTML calls are not followed yet (keyed by text)
}


def calls(fmt: str) -> tuple[set[str], bool, bool]:
    """(call content, whether calls sit in a section tag, whether ``auto`` is followed), from the
    format's syntax: the argument style, the layout's section, and whether a trigger stands only
    at the start of the output (then ``auto`` allows prose before the calls)."""
    if fmt in CALLS_EXCEPTIONS:
        return CALLS_EXCEPTIONS[fmt]
    info = toolwire.format_info(fmt)
    content = CONTENT.get(info["arguments"]["kind"], LOST)
    at_start = any(trigger["at_output_start"] for trigger in info["triggers"])
    return content, info["section"] is not None, not at_start


#: Formats whose turns are messages (a content block, or calls: harmony, beam, muse), which the
#: keyer does not follow: whole-output keys in every mode.
CHANNELS = {fmt for fmt in toolwire.formats() if toolwire.format_info(fmt)["content_block"] is not None}
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
    content, section, auto_followed = calls(fmt)
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


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "any_args"])
@pytest.mark.parametrize("choice", list(CALLS_WRITTEN))
@pytest.mark.parametrize("fmt", toolwire.formats())
def test_the_keyer_follows_the_builders_tags(fmt, choice, strict):
    plan = tag_plan(fmt, choice, strict)
    kinds = followed(plan, toolwire.render(fmt, CALLS_WRITTEN[choice]))
    assert kinds == expected(fmt, choice, strict)
    # the plan's own account covers what the walk reached
    assert set(kinds) - {"lost"} <= set(plan.anchors())
