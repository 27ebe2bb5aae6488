//! xLAM-2 JSON call arrays: bare (the chat template's form), fenced, after `[TOOL_CALLS]` or in
//! `<tool_call>` (the shapes vLLM's `xlam` parser accepts). No conformance fixtures exist for
//! this family.

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "xlam",
        tools: weather_tools(),
        plain_content: sample(
            "Sure! Here is an example:\n```python\nprint([1, 2])\n```\nand a list [a, b].",
            Some("Sure! Here is an example:\n```python\nprint([1, 2])\n```\nand a list [a, b]."),
            vec![],
        ),
        one_call: sample(
            r#"[{"name": "get_weather", "arguments": {"location": "San Francisco, CA", "unit": "celsius"}}]"#,
            None,
            vec![("get_weather", json!({"location": "San Francisco, CA", "unit": "celsius"}))],
        ),
        parallel_calls: sample(
            r#"[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]"#,
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "I'll check.\n```json\n[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]\n```\nand <tool_call>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}</tool_call> done.",
            Some("I'll check.\n\nand  done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            r#"[{"name": "search", "arguments": {"query": "```]", "filters": {"a": {"b": [1, {"c": "}"}]}}}}]"#,
            None,
            vec![("search", json!({"query": "```]", "filters": {"a": {"b": [1, {"c": "}"}]}}}))],
        ),
        unicode_and_escapes: sample(
            r#"[{"name": "get_weather", "arguments": {"location": "Montréal \"QC\" \u00e9 ✈"}}]"#,
            None,
            vec![("get_weather", json!({"location": "Montréal \"QC\" é ✈"}))],
        ),
        empty_arguments: sample(
            r#"[{"name": "ping", "arguments": {}}]"#,
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            r#"[{"name": "get_weather", "arguments": {"location": "San"#,
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "```json\n[{\"name\": \"get_weather\", \"arguments\": {\"location\": }}]\n```\nAfter.",
            Some("\nAfter."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("fence_without_language_tag", sample(
                "```\n[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}]\n```",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("after_tool_calls_marker", sample(
                r#"[TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}]"#,
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("fenced_json_that_is_not_a_call_is_content", sample(
                "Result:\n```json\n[1, 2, {\"name\": \"x\"}]\n```\n```json\n{\"name\": \"Bob\"}\n```",
                Some("Result:\n```json\n[1, 2, {\"name\": \"x\"}]\n```\n```json\n{\"name\": \"Bob\"}\n```"),
                vec![],
            )),
            ("arguments_as_json_string", sample(
                r#"[{"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}]"#,
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                r#"[{"name": "launch", "arguments": {}}]"#,
                None,
                vec![("launch", json!({}))],
                vec!["unknown_tool"],
            )),
            ("empty_array_is_content", sample("[]", Some("[]"), vec![])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=no -#}
{#- xLAM-2 layout: ChatML turns, calls as a bare JSON array of {"name", "arguments"} objects. -#}
{%- if tools %}
{{- '<|im_start|>system\nReturn function calls as a JSON list: [{"name": "func_name1", "arguments": {"argument1": "value1"}}].\n' + tools | tojson + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' and message.tool_calls %}
{{- '<|im_start|>assistant\n[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']<|im_end|>\n' }}
{%- elif message.role == 'tool' %}{{- '<|im_start|>tool\n' + message.content + '<|im_end|>\n' }}
{%- else %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"#;
