//! Jamba `<tool_calls>[...]</tool_calls>`. Inputs marked "fixture" are the model texts of the
//! ai-dynamo conformance fixtures (fixtures-batch-v1/inputs/jamba/TOOLCALLING.batch.yaml).

use serde_json::json;

use super::{broken, conformance_tools, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "jamba",
        tools: conformance_tools(),
        // fixture batch.3
        plain_content: sample(
            "Hello, how can I help you today?",
            Some("Hello, how can I help you today?"),
            vec![],
        ),
        // fixture batch.1
        one_call: sample(
            r#"<tool_calls>[{"name": "get_weather", "arguments": {"location": "NYC"}}]</tool_calls>"#,
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        // fixture batch.31.a
        parallel_calls: sample(
            r#"<tool_calls>[{"name": "run_query", "arguments": {"sql": "SELECT a, SELECT b"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]</tool_calls>"#,
            None,
            vec![
                ("run_query", json!({"sql": "SELECT a, SELECT b"})),
                ("get_time", json!({"timezone": "EST"})),
            ],
        ),
        text_before_between_after: sample(
            r#"Sure. <tool_calls>[{"name": "get_weather", "arguments": {"location": "NYC"}}]</tool_calls> and <tool_calls>[{"name": "get_time", "arguments": {"timezone": "EST"}}]</tool_calls> Done."#,
            Some("Sure.  and  Done."),
            vec![
                ("get_weather", json!({"location": "NYC"})),
                ("get_time", json!({"timezone": "EST"})),
            ],
        ),
        nested_json: sample(
            r#"<tool_calls>[{"name": "search", "arguments": {"query": "]}", "filters": {"a": [[1], {"b": null}]}}}]</tool_calls>"#,
            None,
            vec![(
                "search",
                json!({"query": "]}", "filters": {"a": [[1], {"b": null}]}}),
            )],
        ),
        unicode_and_escapes: sample(
            r#"<tool_calls>[{"name": "get_weather", "arguments": {"location": "São Paulo \\ \"SP\" </tool_calls> ☀"}}]</tool_calls>"#,
            None,
            vec![(
                "get_weather",
                json!({"location": "São Paulo \\ \"SP\" </tool_calls> ☀"}),
            )],
        ),
        empty_arguments: sample(
            r#"<tool_calls>[{"name": "ping", "arguments": {}}]</tool_calls>"#,
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            r#"<tool_calls>[{"name": "get_weather", "arguments": {"location": "N"#,
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            r#"<tool_calls>[{"name": "get_weather", "arguments": {"location" "NYC"}}]</tool_calls>After."#,
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // fixture batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // fixture batch.10
            (
                "same_tool_twice",
                sample(
                    r#"<tool_calls>[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_weather", "arguments": {"location": "LA"}}]</tool_calls>"#,
                    None,
                    vec![
                        ("get_weather", json!({"location": "NYC"})),
                        ("get_weather", json!({"location": "LA"})),
                    ],
                ),
            ),
            // fixture batch.30.a / 30.b / 30.c / 31.b
            (
                "separator_inside_string",
                sample(
                    r#"<tool_calls>[{"name": "run_query", "arguments": {"sql": "SELECT a, SELECT b"}}]</tool_calls>"#,
                    None,
                    vec![("run_query", json!({"sql": "SELECT a, SELECT b"}))],
                ),
            ),
            (
                "delimiters_inside_string",
                sample(
                    r#"<tool_calls>[{"name": "run_query", "arguments": {"sql": "SELECT value WHERE note has brace } and bracket ]"}}]</tool_calls>"#,
                    None,
                    vec![(
                        "run_query",
                        json!({"sql": "SELECT value WHERE note has brace } and bracket ]"}),
                    )],
                ),
            ),
            (
                "markers_inside_string",
                sample(
                    r#"<tool_calls>[{"name": "run_query", "arguments": {"sql": "literal <tool_calls marker>[]</tool_calls marker> stays text"}}]</tool_calls>"#,
                    None,
                    vec![(
                        "run_query",
                        json!({"sql": "literal <tool_calls marker>[]</tool_calls marker> stays text"}),
                    )],
                ),
            ),
            (
                "delimiters_inside_first_of_two",
                sample(
                    r#"<tool_calls>[{"name": "run_query", "arguments": {"sql": "SELECT value WHERE note has brace } and bracket ]"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]</tool_calls>"#,
                    None,
                    vec![
                        (
                            "run_query",
                            json!({"sql": "SELECT value WHERE note has brace } and bracket ]"}),
                        ),
                        ("get_time", json!({"timezone": "EST"})),
                    ],
                ),
            ),
            // fixture batch.13.a / 13.c
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    r#"<tool_calls>[{"name": "unknown_tool", "arguments": {"location": "NYC"}}]</tool_calls>"#,
                    None,
                    vec![("unknown_tool", json!({"location": "NYC"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "known_and_unknown",
                broken(
                    r#"<tool_calls>[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "unknown_tool", "arguments": {"location": "LA"}}]</tool_calls>"#,
                    None,
                    vec![
                        ("get_weather", json!({"location": "NYC"})),
                        ("unknown_tool", json!({"location": "LA"})),
                    ],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "sentencepiece_leading_space",
                sample(
                    r#" <tool_calls>[{"name": "get_time", "arguments": {"timezone": "CET"}}]</tool_calls>"#,
                    None,
                    vec![("get_time", json!({"timezone": "CET"}))],
                ),
            ),
            (
                "missing_close_marker_keeps_complete_call",
                sample(
                    r#"<tool_calls>[{"name": "get_time", "arguments": {"timezone": "CET"}}]"#,
                    None,
                    vec![("get_time", json!({"timezone": "CET"}))],
                ),
            ),
            (
                "lone_open_marker_is_truncated",
                broken("Hi<tool_calls>", Some("Hi"), vec![], vec!["truncated"]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- Jamba 1.5+ layout: role tags, a JSON array of calls between <tool_calls> tags. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|bom|><|bos|>assistant\n' + (message.content or '') }}
{%- if message.tool_calls %}
{{- '<tool_calls>[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']</tool_calls>' }}
{%- endif %}
{{- '<|eom|>' }}
{%- elif message.role == 'tool' %}{{- '<|bom|><|bos|>tool\n<tool_output>' + message.content + '</tool_output><|eom|>' }}
{%- else %}{{- '<|bom|><|bos|>' + message.role + '\n' + message.content + '<|eom|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|bom|><|bos|>assistant\n' }}{%- endif %}
"#;
