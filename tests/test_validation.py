"""Argument validation, per-call diagnosis, tool_choice checks and custom tools, on every format."""

import json
import re

import jsonschema
import pytest
import toolwire

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "book_flight",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "origin": {"type": "string", "minLength": 3, "maxLength": 3},
                    "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
                    "cabin": {"type": "string", "enum": ["economy", "business"]},
                },
                "required": ["origin", "passengers"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
    {"type": "custom", "custom": {"name": "run_python", "description": "Run code", "format": {"type": "text"}}},
]
GOOD = {"name": "book_flight", "arguments": {"origin": "JFK", "passengers": 2, "cabin": "economy"}}
BAD = {"name": "book_flight", "arguments": {"origin": "JFK", "passengers": 12, "cabin": "first"}}
FORMATS = toolwire.formats()


def kinds(message):
    return [i.kind for i in message.issues]


def stream_all(parser, text, size=5, finish_reason=None):
    s = parser.stream()
    deltas = []
    for i in range(0, len(text), size):
        deltas += s.feed(text[i : i + size])
    deltas += s.finish(finish_reason)
    return s.message(), deltas


@pytest.mark.parametrize("fmt", FORMATS)
def test_schema_violation_reports_pointer_and_keyword(fmt):
    parser = toolwire.ToolParser(fmt, tools=TOOLS)
    message = parser.parse(toolwire.render(fmt, [BAD]))
    assert [c.name for c in message.tool_calls] == ["book_flight"], "a schema violation keeps the call"
    violations = sorted((i.pointer, i.keyword) for i in message.issues if i.kind == "schema_violation")
    assert violations == [("/cabin", "enum"), ("/passengers", "maximum")]
    assert not message.valid
    assert parser.parse(toolwire.render(fmt, [GOOD])).issues == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_unknown_tool_truncated_and_tool_choice_kinds(fmt):
    parser = toolwire.ToolParser(fmt, tools=TOOLS)
    unknown = parser.parse(toolwire.render(fmt, [{"name": "launch", "arguments": {"x": 1}}]))
    assert [c.name for c in unknown.tool_calls] == ["launch"]
    assert kinds(unknown) == ["unknown_tool"]

    text = toolwire.render(fmt, [GOOD])
    cut = text[: text.index("JFK") + 2]
    truncated = parser.parse(cut)
    assert truncated.tool_calls == []
    assert "truncated" in kinds(truncated), (cut, truncated.issues)

    none = toolwire.ToolParser(fmt, tools=TOOLS, tool_choice="none").parse(text)
    assert kinds(none) == ["not_allowed_by_tool_choice"]
    named = toolwire.ToolParser(fmt, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_time"}})
    assert kinds(named.parse(text)) == ["not_allowed_by_tool_choice"]
    assert kinds(named.parse("No call here.")) == ["missing_tool_call"]
    two = toolwire.render(fmt, [GOOD, {"name": "get_time", "arguments": {}}])
    single = toolwire.ToolParser(fmt, tools=TOOLS, parallel_tool_calls=False).parse(two)
    assert [(i.kind, i.index) for i in single.issues] == [("not_allowed_by_tool_choice", single.tool_calls[1].index)]
    assert kinds(toolwire.ToolParser(fmt, tools=TOOLS, tool_choice="required").parse(two)) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_custom_tool_one_shot_and_streamed(fmt):
    code = "print('hi')\nfor i in range(3):\n    print(i)"
    text = toolwire.render(fmt, [{"name": "run_python", "arguments": {"input": code}}, GOOD])
    parser = toolwire.ToolParser(fmt, tools=TOOLS)
    message = parser.parse(text)
    assert [(c.type, c.name) for c in message.tool_calls] == [("custom", "run_python"), ("function", "book_flight")]
    assert message.tool_calls[0].input == code
    assert message.tool_calls[0].to_openai()["custom"] == {"name": "run_python", "input": code}
    assert message.issues == []
    streamed, deltas = stream_all(parser, text)
    assert [(c.type, c.name, c.input) for c in streamed.tool_calls] == [
        (c.type, c.name, c.input) for c in message.tool_calls
    ]
    custom_deltas = [tc for d in deltas for tc in d.tool_calls if tc.index == streamed.tool_calls[0].index]
    assert len(custom_deltas) == 1, "a custom call's input is sent once, whole"
    assert custom_deltas[0].to_openai() == {
        "index": streamed.tool_calls[0].index,
        "id": streamed.tool_calls[0].id,
        "type": "custom",
        "custom": {"name": "run_python", "input": code},
    }


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_custom_call_emits_nothing_and_keeps_length(fmt):
    text = toolwire.render(fmt, [{"name": "run_python", "arguments": {"input": "print(1)\nprint(2)"}}])
    cut = text[: text.index("print(2)")]
    message, deltas = stream_all(toolwire.ToolParser(fmt, tools=TOOLS), cut, finish_reason="length")
    assert message.tool_calls == []
    assert [tc for d in deltas for tc in d.tool_calls] == []
    assert deltas[-1].finish_reason == "length"
    assert "truncated" in kinds(message)


def test_custom_tool_raw_text_and_json_string_inputs():
    parser = toolwire.ToolParser("hermes", tools=TOOLS)
    raw = parser.parse('<tool_call>{"name": "run_python", "arguments": {"code": "x"}}</tool_call>')
    assert raw.tool_calls[0].input == '{"code": "x"}'
    as_string = parser.parse('<tool_call>{"name": "run_python", "arguments": "\\"ls -la\\""}</tool_call>')
    assert as_string.tool_calls[0].input == "ls -la"


def test_tool_set_is_compiled_once_and_checks_before_generation():
    a, b = toolwire.ToolSet(TOOLS), toolwire.ToolSet(json.loads(json.dumps(TOOLS)))
    assert a.digest == b.digest
    assert a.kinds == {"book_flight": "function", "get_time": "function", "run_python": "custom"}
    assert a.strict["book_flight"] is True
    assert [v["keyword"] for v in a.validate("book_flight", {"origin": "JFK"})] == ["required"]
    assert a.validate("book_flight", json.dumps(GOOD["arguments"])) == []
    parser = toolwire.ToolParser("hermes", tools=a)
    assert parser.parse(toolwire.render("hermes", [BAD])).issues[0].kind == "schema_violation"
    with pytest.raises(toolwire.ToolwireError, match="grammar"):
        toolwire.ToolSet([{"type": "custom", "custom": {"name": "sql", "format": {"type": "grammar", "grammar": {}}}}])
    with pytest.raises(toolwire.ToolwireError, match="not among the tools"):
        toolwire.ToolParser("hermes", tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}})
    unsupported = toolwire.ToolSet(
        [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "unevaluatedProperties": False}}}]
    ).unsupported_keywords()
    assert unsupported == {"f": ["unevaluatedProperties"]}


TEXT_CASES = [
    '{"origin": "JFK", "passengers": 2}',
    '{"origin": "JFK", "passengers": 12, "cabin": "first", "pet": true}',
    '{"origin": "J\\u00e9\\nK", "passengers": 2.0}',
    '{"origin": "ZÜRICH", "passengers": 123456789012345678901234567890}',
    '{"origin": "JFK", "passengers": 1e0, "origin": "LAX"}',
    '{"origin": "JFK", "passengers": -0.5, "cabin": {"a": [1, null]}}',
    '  {"passengers": "2"}\n',
    "[]",
]


@pytest.mark.parametrize("text", TEXT_CASES)
def test_text_and_decoded_arguments_get_the_same_violations(text):
    """JSON text is checked without decoding it in Python; the decoded dict takes the other path.
    Both must report the same pointers, keywords and messages."""
    tool_set = toolwire.ToolSet(TOOLS)
    from_text = tool_set.validate("book_flight", text)
    assert from_text == tool_set.validate("book_flight", json.loads(text))
    assert tool_set.validate_many([("book_flight", text), ("get_time", text)]) == [
        from_text,
        tool_set.validate("get_time", text),
    ]
    for violation in from_text:
        assert set(violation) == {"pointer", "keyword", "message"}
        assert violation["message"].startswith((violation["pointer"] or "/") + ": ")


@pytest.mark.parametrize("text", TEXT_CASES)
def test_is_valid_answers_as_validate_and_jsonschema_do(text):
    tool_set = toolwire.ToolSet(TOOLS)
    schemas = {t["function"]["name"]: t["function"].get("parameters") for t in TOOLS if t["type"] == "function"}
    for name, schema in schemas.items():
        verdict = tool_set.is_valid(name, text)
        assert verdict is (tool_set.validate(name, text) == [])
        assert tool_set.is_valid(name, json.loads(text)) is verdict
        if schema is not None:
            assert verdict is jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))


def test_validation_raises_on_text_that_is_not_json_and_on_unknown_tools():
    tool_set = toolwire.ToolSet(TOOLS)
    for text in ['{"origin": "JFK",}', '{"origin": "\\ud800"}', "01", "[" * 200 + "]" * 200, ""]:
        with pytest.raises(toolwire.ToolwireError, match="arguments are not JSON"):
            tool_set.validate("book_flight", text)
        with pytest.raises(toolwire.ToolwireError, match="arguments are not JSON"):
            tool_set.validate_many([("book_flight", text)])
        with pytest.raises(toolwire.ToolwireError, match="arguments are not JSON"):
            tool_set.is_valid("book_flight", text)
    with pytest.raises(toolwire.ToolwireError, match="no tool named"):
        tool_set.validate("nope", "{}")
    with pytest.raises(toolwire.ToolwireError, match="no tool named"):
        tool_set.is_valid("nope", "{}")
    with pytest.raises(toolwire.ToolwireError, match="no tool named"):
        tool_set.validate_many([("book_flight", "{}"), ("nope", "{}")])
    assert tool_set.validate("book_flight", "[" * 100 + "]" * 100) == [
        {"pointer": "", "keyword": "type", "message": "/: expected object, got array"}
    ]


INVALID_SCHEMAS = [
    ({"type": "banana"}, 'unknown type "banana"'),
    ("nope", "a schema must be an object or a boolean"),
    ({"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}}, "invalid regular expression"),
    ({"type": "object", "properties": {"s": {"$ref": "#/$defs/missing"}}}, "no such location"),
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": -1}}}, "non-negative integer"),
]


@pytest.mark.parametrize(("schema", "problem"), INVALID_SCHEMAS)
def test_an_invalid_schema_is_refused_when_strict_and_reported_otherwise(schema, problem):
    def tools(strict):
        return [{"type": "function", "function": {"name": "f", "strict": strict, "parameters": schema}}]

    for build in (toolwire.ToolSet, lambda t: toolwire.ToolParser("hermes", tools=t)):
        with pytest.raises(toolwire.ToolwireError, match='strict tool "f".*' + re.escape(problem)):
            build(tools(True))
    with pytest.warns(toolwire.SchemaWarning, match='tool "f".*' + re.escape(problem)):
        tool_set = toolwire.ToolSet(tools(False))
    with pytest.warns(toolwire.SchemaWarning):
        toolwire.ToolParser("hermes", tools=tools(False))
    parser = toolwire.ToolParser("hermes", tools=tool_set)  # compiled and warned already: silent
    text = toolwire.render("hermes", [{"name": "f", "arguments": {"s": 1}}, {"name": "f", "arguments": {}}])
    for message in (parser.parse(text), stream_all(parser, text)[0]):
        assert [c.name for c in message.tool_calls] == ["f", "f"]
        assert [(i.kind, i.index) for i in message.issues] == [("unchecked_arguments", 0), ("unchecked_arguments", 1)]
        assert problem in message.issues[0].detail
        assert not message.valid
    for check in (tool_set.validate, tool_set.is_valid):
        with pytest.raises(toolwire.ToolwireError, match='cannot check arguments of tool "f"'):
            check("f", {"s": 1})
    assert problem in tool_set.unsupported_keywords()["f"][0]
