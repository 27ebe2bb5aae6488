//! Granite 3.x `<|tool_call|>[...]` (no closing marker). No conformance fixtures exist for this
//! family; the shapes follow vLLM's granite parser and the Granite 3.3 system prompt ("respond
//! only with <|tool_call|> followed by a JSON list of tools used").

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "granite",
        tools: weather_tools(),
        plain_content: sample("Plain answer with [brackets] and {braces}.", Some("Plain answer with [brackets] and {braces}."), vec![]),
        one_call: sample(
            r#"<|tool_call|>[{"name": "get_weather", "arguments": {"location": "Boston, MA", "unit": "fahrenheit"}}]"#,
            None,
            vec![("get_weather", json!({"location": "Boston, MA", "unit": "fahrenheit"}))],
        ),
        parallel_calls: sample(
            r#"<|tool_call|>[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]"#,
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            r#"Let me check. <|tool_call|>[{"name": "get_weather", "arguments": {"location": "NYC"}}] and <tool_call>[{"name": "get_time", "arguments": {"timezone": "EST"}}] done."#,
            Some("Let me check.  and  done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            r#"<|tool_call|>[{"name": "search", "arguments": {"query": "a}b]", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}}]"#,
            None,
            vec![("search", json!({"query": "a}b]", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}))],
        ),
        unicode_and_escapes: sample(
            r#"<|tool_call|>[{"name": "get_weather", "arguments": {"location": "Zürich \"HB\"\n<|tool_call|> 🚉"}}]"#,
            None,
            vec![("get_weather", json!({"location": "Zürich \"HB\"\n<|tool_call|> 🚉"}))],
        ),
        empty_arguments: sample(
            r#"<|tool_call|>[{"name": "ping", "arguments": {}}]"#,
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            r#"<|tool_call|>[{"name": "get_weather", "arguments": {"loc"#,
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            r#"<|tool_call|>[{"name": "get_weather", "arguments": {"location": }}]"#,
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("arguments_before_name", sample(
                r#"<|tool_call|>[{"arguments": {"location": "Paris"}, "name": "get_weather"}]"#,
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("granite_3_1_plain_text_marker", sample(
                r#"<tool_call>[{"name": "get_time", "arguments": {"timezone": "UTC"}}]"#,
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("closing_tag_after_array_is_consumed", sample(
                "<tool_call>[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}]</tool_call>\nDone.",
                Some("\nDone."),
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("bare_array_when_the_special_token_was_skipped", sample(
                r#" [{"name": "get_time", "arguments": {"timezone": "UTC"}}]"#,
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("bare_json_that_is_not_a_call_is_content", sample(
                r#"[{"city": "Paris"}, 2]"#,
                Some(r#"[{"city": "Paris"}, 2]"#),
                vec![],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                r#"<|tool_call|>[{"name": "launch", "arguments": {}}]"#,
                None,
                vec![("launch", json!({}))],
                vec!["unknown_tool"],
            )),
            ("lone_marker_is_truncated", broken("<|tool_call|>", None, vec![], vec!["truncated"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- Granite 3.x layout: role tokens, <|tool_call|> then a JSON array of calls. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' and message.tool_calls %}
{{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']<|end_of_text|>\n' }}
{%- elif message.role == 'tool' %}{{- '<|start_of_role|>tool_response<|end_of_role|>' + message.content + '<|end_of_text|>\n' }}
{%- else %}{{- '<|start_of_role|>' + message.role + '<|end_of_role|>' + message.content + '<|end_of_text|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_of_role|>assistant<|end_of_role|>' }}{%- endif %}
"#;
