//! plamo3 (PLaMo 3). Samples in the shape vLLM's `plamo3` structural tag and parser write (tags
//! back to back, `<|plamo:constrain|>json<|plamo:msg|>` before the JSON), the `<|plamo:msg|>`-only
//! form a serving client's test quotes (`read` of `README.md`).

use serde_json::{json, Value};

use super::{broken, sample, weather_tools_and, Matrix};

fn tools() -> Value {
    weather_tools_and(json!([
        {"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}}}}}
    ]))
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "plamo3",
        tools: tools(),
        plain_content: sample("東京は晴れです。", Some("東京は晴れです。"), vec![]),
        one_call: sample(
            "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"location\": \"Tokyo\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
            None,
            vec![("get_weather", json!({"location": "Tokyo"}))],
        ),
        parallel_calls: sample(
            "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"location\": \"Tokyo\", \"days\": 2}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_time<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"timezone\": \"Asia/Tokyo\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
            None,
            vec![("get_weather", json!({"location": "Tokyo", "days": 2})), ("get_time", json!({"timezone": "Asia/Tokyo"}))],
        ),
        text_before_between_after: sample(
            "I will inspect the file.\n<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>read<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:msg|>{\"path\":\"README.md\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|> then <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_time<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"timezone\": \"JST\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>Done.",
            Some("I will inspect the file.\n then Done."),
            vec![("read", json!({"path": "README.md"})), ("get_time", json!({"timezone": "JST"}))],
        ),
        nested_json: sample(
            "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>search<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"query\": \"q\", \"filters\": {\"year\": {\"gte\": 2020}, \"tag\": \"<|plamo:end_tool_arguments:plamo|>\"}, \"tags\": [\"a\", [1, null]]}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
            None,
            vec![("search", json!({"query": "q", "filters": {"year": {"gte": 2020}, "tag": "<|plamo:end_tool_arguments:plamo|>"}, "tags": ["a", [1, null]]}))],
        ),
        unicode_and_escapes: sample(
            "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"location\": \"東京 \\\"渋谷\\\" \\\\ \\u00e9\\n🌧\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
            None,
            vec![("get_weather", json!({"location": "東京 \"渋谷\" \\ é\n🌧"}))],
        ),
        empty_arguments: sample(
            "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>ping<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "調べます。<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"location\": \"Tok",
            Some("調べます。"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>location=Tokyo<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_time<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"timezone\": \"JST\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
            None,
            vec![("get_time", json!({"timezone": "JST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "arguments_without_a_preamble",
                sample(
                    "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>read<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>{\"path\": \"a.txt\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
                    None,
                    vec![("read", json!({"path": "a.txt"}))],
                ),
            ),
            (
                "missing_section_end_keeps_the_call",
                sample(
                    "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>read<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"path\": \"a.txt\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>",
                    None,
                    vec![("read", json!({"path": "a.txt"}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>bash<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{\"cmd\": \"ls\"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
                    None,
                    vec![("bash", json!({"cmd": "ls"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "empty_name_is_missing_name",
                broken(
                    "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|><|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>{}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
                    None,
                    vec![],
                    vec!["missing_name"],
                ),
            ),
            (
                "partial_plamo_text_in_content",
                sample("a <|plamo: b <|plamo:begin_x", Some("a <|plamo: b <|plamo:begin_x"), vec![]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- Written for toolwire's detection tests: PLaMo 3's tool-request tags, think markers and end of turn (role headers simplified). -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}assistant: {% if message.reasoning_content %}<|plamo:begin_think:plamo|>{{ message.reasoning_content }}<|plamo:end_think:plamo|>{% endif %}{{ message.content }}
{%- if message.tool_calls %}<|plamo:begin_tool_requests:plamo|>
{%- for call in message.tool_calls %}<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>{{ call.function.name }}<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{{ call.function.arguments | tojson }}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>
{%- endfor %}<|plamo:end_tool_requests:plamo|>
{%- endif %}<|plamo:tag|>
{% else %}{{ message.role }}: {{ message.content }}<|plamo:tag|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}assistant: <|plamo:begin_think:plamo|>{% endif %}
"#;
