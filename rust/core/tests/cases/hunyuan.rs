//! hunyuan (Tencent HY3; vLLM `hy_v3`, SGLang `hunyuan`). Outputs from vLLM's
//! `test_hy_v3_tool_parser.py` (Hy3-preview tokenizer) and SGLang's `hunyuan_detector.py` layout.

use serde_json::{json, Value};

use super::{broken, sample, Matrix};

pub fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_current_date", "parameters": {}}},
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "date": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}, "tags": {"type": "array"}}}}}
    ])
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "hunyuan",
        tools: tools(),
        plain_content: sample("This is a plain response.", Some("This is a plain response."), vec![]),
        // vLLM `test_args_with_newlines`.
        one_call: sample(
            "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n</tool_calls>",
            None,
            vec![("get_weather", json!({"city": "Beijing", "date": "2026-03-30"}))],
        ),
        // vLLM `test_multiple`.
        parallel_calls: sample(
            "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Hangzhou</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n</tool_calls>",
            None,
            vec![
                ("get_weather", json!({"city": "Beijing", "date": "2026-03-30"})),
                ("get_weather", json!({"city": "Hangzhou", "date": "2026-03-30"})),
            ],
        ),
        text_before_between_after: sample(
            "Checking.<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>Then the weather: <tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n</tool_calls> Done.",
            Some("Checking.Then the weather:  Done."),
            vec![("get_current_date", json!({})), ("get_weather", json!({"city": "Beijing"}))],
        ),
        nested_json: sample(
            "<tool_calls>\n<tool_call>search<tool_sep>\n<arg_key>query</arg_key>\n<arg_value>a <b>bold</b> </arg_key> {\"x\": 1}</arg_value>\n<arg_key>filters</arg_key>\n<arg_value>{\"year\": {\"gte\": 2020}, \"langs\": [\"rust\", {\"x\": \"</tool_sep>\"}]}</arg_value>\n<arg_key>tags</arg_key>\n<arg_value>[\"a\", null, true]</arg_value>\n</tool_call>\n</tool_calls>",
            None,
            vec![(
                "search",
                json!({"query": "a <b>bold</b> </arg_key> {\"x\": 1}",
                       "filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": "</tool_sep>"}]},
                       "tags": ["a", null, true]}),
            )],
        ),
        unicode_and_escapes: sample(
            "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value> 北京 \"Tōkyō\" C:\\new\\t 🌧\n\tline two </tool_call </arg_value>\n</tool_call>\n</tool_calls>",
            None,
            vec![("get_weather", json!({"city": " 北京 \"Tōkyō\" C:\\new\\t 🌧\n\tline two </tool_call "}))],
        ),
        // vLLM `test_zero_arg_inline`.
        empty_arguments: sample(
            "<tool_calls><tool_call>get_current_date<tool_sep></tool_call></tool_calls>",
            None,
            vec![("get_current_date", json!({}))],
        ),
        truncated: broken(
            "Checking.<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beij",
            Some("Checking."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\nBeijing\n</tool_call>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>After.",
            Some("After."),
            vec![("get_current_date", json!({}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `test_zero_arg_newline` / `test_content_before`.
                "vllm_content_before_zero_arg_call",
                sample(
                    "Checking.<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n</tool_calls>",
                    Some("Checking."),
                    vec![("get_current_date", json!({}))],
                ),
            ),
            (
                // vLLM `test_args_same_line`.
                "vllm_args_same_line",
                sample(
                    "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Beijing</arg_value><arg_key>date</arg_key><arg_value>2026-03-30</arg_value></tool_call></tool_calls>",
                    None,
                    vec![("get_weather", json!({"city": "Beijing", "date": "2026-03-30"}))],
                ),
            ),
            (
                "values_typed_by_schema",
                sample(
                    "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>123</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n</tool_calls>",
                    None,
                    vec![("get_weather", json!({"city": "123", "days": 3}))],
                ),
            ),
            (
                "call_without_section",
                sample(
                    "Sure.<tool_call>get_current_date<tool_sep>\n</tool_call>",
                    Some("Sure."),
                    vec![("get_current_date", json!({}))],
                ),
            ),
            (
                "call_without_tool_sep",
                sample(
                    "<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>A</arg_value></tool_call></tool_calls>",
                    None,
                    vec![("get_weather", json!({"city": "A"}))],
                ),
            ),
            (
                "missing_section_end_at_eof_keeps_calls",
                sample(
                    "<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\n",
                    None,
                    vec![("get_current_date", json!({}))],
                ),
            ),
            (
                "missing_call_end_before_section_end",
                sample(
                    "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>X</arg_value>\n</tool_calls>",
                    None,
                    vec![("get_weather", json!({"city": "X"}))],
                ),
            ),
            (
                "stray_text_in_section_is_content",
                sample(
                    "<tool_calls>\n<tool_call>get_current_date<tool_sep>\n</tool_call>\nand then\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>A</arg_value>\n</tool_call>\n</tool_calls>",
                    Some("and then"),
                    vec![("get_current_date", json!({})), ("get_weather", json!({"city": "A"}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_calls>\n<tool_call>mystery<tool_sep>\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n</tool_calls>",
                    None,
                    vec![("mystery", json!({"x": "1"}))],
                    vec!["unknown_tool"],
                ),
            ),
            ("empty_call_has_no_name", broken("<tool_calls><tool_call><tool_sep></tool_call></tool_calls>ok", Some("ok"), vec![], vec!["missing_name"])),
            ("lone_section_opener_is_truncated", broken("Hi<tool_calls>\n", Some("Hi"), vec![], vec!["truncated"])),
            ("empty_section_is_dropped", sample("<tool_calls>\n</tool_calls>ok", Some("ok"), vec![])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Hunyuan HY3 layout: a <tool_calls> section, NAME<tool_sep> then <arg_key>/<arg_value> pairs per call. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<｜hy_Assistant｜>' }}
{%- if message.reasoning_content %}{{- '<think>\n' + message.reasoning_content + '\n</think>\n' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<tool_calls>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<tool_call>' + tool_call.function.name + '<tool_sep>\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<arg_key>' + key + '</arg_key>\n<arg_value>' + (value if value is string else value | tojson) + '</arg_value>\n' }}
{%- endfor %}
{{- '</tool_call>\n' }}
{%- endfor %}
{{- '</tool_calls>' }}
{%- endif %}
{{- '<｜hy_place▁holder▁no▁2｜>' }}
{%- elif message.role == 'tool' %}{{- '<tool_response>' + message.content + '</tool_response>' }}
{%- else %}{{- '<｜hy_' + message.role | capitalize + '｜>' + message.content }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<｜hy_Assistant｜>' }}{%- endif %}
"#;
