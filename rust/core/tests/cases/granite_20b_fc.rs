//! granite_20b_fc (Granite-20B-FunctionCalling). Outputs from vLLM's
//! `test_granite_20b_fc_tool_parser.py` (the common-suite samples).

use serde_json::{json, Value};

use super::{broken, sample, Matrix};

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "refresh", "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "test_function", "parameters": {"type": "object"}}}
    ])
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "granite_20b_fc",
        tools: tools(),
        plain_content: sample(
            "This is a regular response without any tool calls.",
            Some("This is a regular response without any tool calls."),
            vec![],
        ),
        one_call: sample(
            "<function_call> {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}",
            None,
            vec![("get_weather", json!({"city": "Tokyo"}))],
        ),
        parallel_calls: sample(
            "<function_call> {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\n<function_call> {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}",
            None,
            vec![("get_weather", json!({"city": "Tokyo"})), ("get_time", json!({"timezone": "Asia/Tokyo"}))],
        ),
        text_before_between_after: sample(
            "Let me check the weather for you.\n<function_call> {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\nand\n<function_call> {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}\nDone.",
            Some("Let me check the weather for you.\n\nand\n\nDone."),
            vec![("get_weather", json!({"city": "Tokyo"})), ("get_time", json!({"timezone": "Asia/Tokyo"}))],
        ),
        // vLLM `various_data_types_output`.
        nested_json: sample(
            "<function_call> {\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"string_field\": \"hello\",\n    \"int_field\": 42,\n    \"bool_field\": true,\n    \"null_field\": null,\n    \"array_field\": [\"a\", \"b\", \"c\"],\n    \"object_field\": {\"nested\": \"value\"},\n    \"empty_array\": [],\n    \"empty_object\": {}\n  }\n}",
            None,
            vec![(
                "test_function",
                json!({"string_field": "hello", "int_field": 42, "bool_field": true, "null_field": null,
                       "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}, "empty_array": [], "empty_object": {}}),
            )],
        ),
        // vLLM `escaped_strings_output`.
        unicode_and_escapes: sample(
            "<function_call> {\n  \"name\": \"test_function\",\n  \"arguments\": {\n    \"quoted\": \"He said \\\"hello\\\"\",\n    \"path\": \"C:\\\\Users\\\\file.txt\",\n    \"newline\": \"line1\\nline2\",\n    \"unicode\": \"emoji: 🎉\"\n  }\n}",
            None,
            vec![("test_function", json!({"quoted": "He said \"hello\"", "path": "C:\\Users\\file.txt", "newline": "line1\nline2", "unicode": "emoji: 🎉"}))],
        ),
        empty_arguments: sample(
            "<function_call> {\"name\": \"refresh\", \"arguments\": {}}",
            None,
            vec![("refresh", json!({}))],
        ),
        // vLLM `malformed_input_outputs[0]`.
        truncated: broken(
            "<function_call> {\"name\": \"func\", \"arguments\": {",
            None,
            vec![],
            vec!["truncated"],
        ),
        // vLLM `malformed_input_outputs[3]`.
        malformed: broken("<function_call> {\"name\": 123}", None, vec![], vec!["missing_name"]),
        more: vec![
            (
                // vLLM `malformed_input_outputs[2]`: no marker, so content.
                "json_without_marker_is_content",
                sample(
                    "{\"name\": \"func\", \"arguments\": {}}",
                    Some("{\"name\": \"func\", \"arguments\": {}}"),
                    vec![],
                ),
            ),
            (
                // vLLM `malformed_input_outputs[1]`: an array after the marker is read.
                "array_after_marker",
                broken(
                    "<function_call> [{\"name\": \"func\", \"arguments\": {}}]",
                    None,
                    vec![("func", json!({}))],
                    vec!["unknown_tool"],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=no -#}
{#- granite-20b-functioncalling layout: SYSTEM/USER/ASSISTANT sections, each call as <function_call> {json}. -#}
{%- for message in messages %}
{%- if message.role == 'system' %}{{- 'SYSTEM: ' + message.content + '\n' }}
{%- elif message.role == 'user' %}{{- 'USER: ' + message.content + '\n' }}
{%- elif message.role == 'assistant' %}
{{- 'ASSISTANT: ' + (message.content or '') }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<function_call> {"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}\n' }}
{%- endfor %}
{{- '<|endoftext|>\n' }}
{%- elif message.role == 'tool' %}{{- 'FUNCTION RESPONSE: ' + message.content + '\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- 'ASSISTANT: ' }}{%- endif %}
"#;
