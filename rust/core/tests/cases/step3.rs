//! step3 (StepFun Step-3). Outputs from vLLM's `test_step3_tool_parser.py` (the common-suite
//! samples and the whitespace regression) and SGLang's `step3_detector.py` / sgl-router
//! `tool_parser_step3.rs` samples.

use serde_json::{json, Value};

use super::{broken, sample, Matrix};

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "limit": {"type": "integer"}, "filters": {"type": "object"}, "tags": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "refresh", "parameters": {"type": "object", "properties": {}}}},
        {"type": "function", "function": {"name": "test_function", "parameters": {"type": "object", "properties": {
            "string_field": {"type": "string"}, "int_field": {"type": "integer"}, "float_field": {"type": "number"},
            "bool_field": {"type": "boolean"}, "null_field": {"type": "null"}, "array_field": {"type": "array"},
            "object_field": {"type": "object"}, "quoted": {"type": "string"}, "path": {"type": "string"},
            "newline": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "edit_file", "parameters": {"type": "object", "properties": {
            "old_string": {"type": "string"}, "indent": {"type": "integer"}, "enabled": {"type": "boolean"}}}}}
    ])
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "step3",
        tools: tools(),
        plain_content: sample(
            "This is a regular response without any tool calls.",
            Some("This is a regular response without any tool calls."),
            vec![],
        ),
        one_call: sample(
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            None,
            vec![("get_weather", json!({"city": "Tokyo"}))],
        ),
        parallel_calls: sample(
            "<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\">\n<steptml:parameter name=\"city\">Shanghai</steptml:parameter>\n<steptml:parameter name=\"days\">5</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_time\">\n<steptml:parameter name=\"timezone\">Asia/Shanghai</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
            None,
            vec![
                ("get_weather", json!({"city": "Shanghai", "days": 5})),
                ("get_time", json!({"timezone": "Asia/Shanghai"})),
            ],
        ),
        // One section per message: text comes before and after it (vLLM `surrounding_text`).
        text_before_between_after: sample(
            "Let me check the weather for you.\n\n<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>\n\nI'll get that information.",
            Some("Let me check the weather for you.\n\n\n\nI'll get that information."),
            vec![("get_weather", json!({"city": "Tokyo"}))],
        ),
        nested_json: sample(
            "<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"search\">\n<steptml:parameter name=\"query\">a <b>bold</b> </steptml:invoke> query</steptml:parameter>\n<steptml:parameter name=\"filters\">{\"year\": {\"gte\": 2020}, \"langs\": [\"rust\", {\"x\": \"</steptml:invoke>\"}]}</steptml:parameter>\n<steptml:parameter name=\"tags\">['a', None, True]</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>",
            None,
            vec![(
                "search",
                json!({"query": "a <b>bold</b> </steptml:invoke> query",
                       "filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": "</steptml:invoke>"}]},
                       "tags": ["a", null, true]}),
            )],
        ),
        // vLLM `escaped_strings_output`.
        unicode_and_escapes: sample(
            "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"test_function\"><steptml:parameter name=\"quoted\">He said \"hello\"</steptml:parameter><steptml:parameter name=\"path\">C:\\Users\\file.txt</steptml:parameter><steptml:parameter name=\"newline\">line1\nline2 上海 🌧</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            None,
            vec![("test_function", json!({"quoted": "He said \"hello\"", "path": "C:\\Users\\file.txt", "newline": "line1\nline2 上海 🌧"}))],
        ),
        // vLLM `empty_arguments_output`.
        empty_arguments: sample(
            "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"refresh\"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            None,
            vec![("refresh", json!({}))],
        ),
        // vLLM `malformed_input_outputs[0]`.
        truncated: broken(
            "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"func\">",
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter>Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_time\"><steptml:parameter name=\"timezone\">UTC</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>After.",
            Some("After."),
            vec![("get_time", json!({"timezone": "UTC"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "vllm_various_data_types",
                sample(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"test_function\"><steptml:parameter name=\"string_field\">hello</steptml:parameter><steptml:parameter name=\"int_field\">42</steptml:parameter><steptml:parameter name=\"float_field\">3.14</steptml:parameter><steptml:parameter name=\"bool_field\">true</steptml:parameter><steptml:parameter name=\"null_field\">null</steptml:parameter><steptml:parameter name=\"array_field\">[\"a\", \"b\", \"c\"]</steptml:parameter><steptml:parameter name=\"object_field\">{\"nested\": \"value\"}</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
                    None,
                    vec![(
                        "test_function",
                        serde_json::from_str::<Value>(
                            r#"{"string_field": "hello", "int_field": 42, "float_field": 3.14, "bool_field": true,
                                "null_field": null, "array_field": ["a", "b", "c"], "object_field": {"nested": "value"}}"#,
                        )
                        .unwrap(),
                    )],
                ),
            ),
            (
                // vLLM `parallel_tool_calls_output`: a lone `<｜tool_sep｜>` between the entries.
                "vllm_parallel_with_lone_tool_sep",
                sample(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke name=\"get_time\"><steptml:parameter name=\"timezone\">Asia/Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
                    None,
                    vec![("get_weather", json!({"city": "Tokyo"})), ("get_time", json!({"timezone": "Asia/Tokyo"}))],
                ),
            ),
            (
                // vLLM `TestStep3ParameterWhitespace`: string values keep their whitespace, other
                // values are read trimmed. The name repeated after `<｜tool_sep｜>` is text outside
                // any invoke: reported, the call still returned.
                "vllm_string_whitespace_preserved",
                broken(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>edit_file\n<steptml:invoke name=\"edit_file\"><steptml:parameter name=\"old_string\">    if x:\n        return 1\n</steptml:parameter><steptml:parameter name=\"indent\"> 4 </steptml:parameter><steptml:parameter name=\"enabled\"> true </steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
                    None,
                    vec![("edit_file", json!({"old_string": "    if x:\n        return 1\n", "indent": 4, "enabled": true}))],
                    vec!["unexpected_text"],
                ),
            ),
            (
                // sgl-router `test_step3_complete_parsing`.
                "sglang_router_sample",
                sample(
                    "Let me help you.\n<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"search\">\n<steptml:parameter name=\"query\">rust programming</steptml:parameter>\n<steptml:parameter name=\"limit\">10</steptml:parameter>\n</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>\nHere are the results...",
                    Some("Let me help you.\n\nHere are the results..."),
                    vec![("search", json!({"query": "rust programming", "limit": 10}))],
                ),
            ),
            (
                // vLLM `malformed_input_outputs[1]`: no section, so no call; the invoke's end tag
                // in content is reported (and dropped), as every format's stray end marker.
                "entry_without_section_is_content",
                broken(
                    "<｜tool_call_begin｜><steptml:invoke name=\"func\"></steptml:invoke><｜tool_call_end｜>",
                    Some("<｜tool_call_begin｜><steptml:invoke name=\"func\"><｜tool_call_end｜>"),
                    vec![],
                    vec!["unexpected_text"],
                ),
            ),
            (
                "call_end_in_place_of_invoke_end",
                sample(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_time\"><steptml:parameter name=\"timezone\">UTC</steptml:parameter><｜tool_call_end｜><｜tool_calls_end｜>",
                    None,
                    vec![("get_time", json!({"timezone": "UTC"}))],
                ),
            ),
            (
                "missing_section_end_at_eof_keeps_calls",
                sample(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_time\"><steptml:parameter name=\"timezone\">UTC</steptml:parameter></steptml:invoke><｜tool_call_end｜>",
                    None,
                    vec![("get_time", json!({"timezone": "UTC"}))],
                ),
            ),
            (
                "string_parameter_null_stays_a_string",
                sample(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">null</steptml:parameter><steptml:parameter name=\"days\">7.0</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
                    None,
                    vec![("get_weather", json!({"city": "null", "days": 7}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"func\"><steptml:parameter name=\"x\">1</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
                    None,
                    vec![("func", json!({"x": "1"}))],
                    vec!["unknown_tool"],
                ),
            ),
            ("empty_section", broken("Hi<｜tool_calls_begin｜>", Some("Hi"), vec![], vec!["truncated"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- Step-3 layout: a section of tool-call tokens wrapping <steptml:invoke> calls with <steptml:parameter> values. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|BOT|>assistant\n' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<｜tool_calls_begin｜>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<steptml:parameter name="' + key + '">' + (value if value is string else value | tojson) + '</steptml:parameter>\n' }}
{%- endfor %}
{{- '</steptml:invoke><｜tool_call_end｜>\n' }}
{%- endfor %}
{{- '<｜tool_calls_end｜>' }}
{%- endif %}
{{- '<|EOT|>' }}
{%- elif message.role == 'tool' %}{{- '<|BOT|>tool_response\n' + message.content + '<|EOT|>' }}
{%- else %}{{- '<|BOT|>' + message.role + '\n' + message.content + '<|EOT|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|BOT|>assistant\n<think>\n' }}{%- endif %}
"#;
