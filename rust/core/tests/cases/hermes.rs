use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "hermes",
        tools: weather_tools(),
        plain_content: sample("Hello! How can I help you today?", Some("Hello! How can I help you today?"), vec![]),
        one_call: sample(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call>\nand\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}\n</tool_call>\nDone.",
            Some("Let me check.\n\nand\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"a}b]\", \"filters\": {\"year\": {\"gte\": 2020}, \"tags\": [\"x\", [1, 2]]}}}\n</tool_call>",
            None,
            vec![("search", json!({"query": "a}b]", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}))],
        ),
        unicode_and_escapes: sample(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Tōkyō \\\"central\\\" \\u00e9 </tool_call> 東京 🌧\"}}\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" é </tool_call> 東京 🌧"}))],
        ),
        empty_arguments: sample(
            "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call><tool_call>{\"name\": \"ping\"}</tool_call>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NY",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_call>\nnot json at all\n</tool_call>After.<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}\n</tool_call>",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "missing_close_marker_keeps_complete_call",
                sample(
                    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "arguments_before_name",
                sample(
                    "<tool_call>{\"arguments\": {\"location\": \"Paris\"}, \"name\": \"get_weather\"}</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "Paris"}))],
                ),
            ),
            (
                "arguments_as_json_string",
                sample(
                    "<tool_call>{\"name\": \"get_weather\", \"arguments\": \"{\\\"location\\\": \\\"Paris\\\"}\"}</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "Paris"}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_call>{\"name\": \"launch\", \"arguments\": {}}</tool_call>",
                    None,
                    vec![("launch", json!({}))],
                    vec!["unknown_tool"],
                ),
            ),
            ("big_integer_kept_exact", sample(
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"days\": 9007199254740993}}</tool_call>",
                None,
                vec![("get_weather", serde_json::from_str("{\"days\": 9007199254740993}").unwrap())],
            )),
            ("lone_open_marker_is_truncated", broken("Hi<tool_call>", Some("Hi"), vec![], vec!["truncated"])),
            (
                "stray_end_marker_is_not_content",
                broken(
                    "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call></tool_call> ok",
                    Some(" ok"),
                    vec![("get_time", json!({}))],
                    vec!["unexpected_text"],
                ),
            ),
            ("angle_brackets_in_content", sample("a < b and <tool or <b>bold</b>", Some("a < b and <tool or <b>bold</b>"), vec![])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Qwen3 layout: ChatML turns, JSON calls in <tool_call> tags, results in <tool_response>. -#}
{%- if tools %}
{{- '<|im_start|>system\n# Tools\n\n<tools>' }}
{%- for tool in tools %}{{- '\n' + tool | tojson }}{%- endfor %}
{{- '\n</tools>\n\nReturn each call as a JSON object in <tool_call></tool_call> tags.<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == "assistant" %}
{{- '<|im_start|>assistant\n' }}
{%- if message.reasoning_content %}{{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' }}{%- endif %}
{{- message.content or '' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '\n<tool_call>\n{"name": "' + tool_call.function.name + '", "arguments": ' }}
{{- tool_call.function.arguments | tojson }}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == "tool" %}
{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- endif %}
"#;
