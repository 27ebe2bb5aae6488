//! Nemotron `<TOOLCALL>[...]</TOOLCALL>`. Inputs marked "fixture" are the model texts of the
//! ai-dynamo conformance fixtures (fixtures-batch-v1/inputs/nemotron_deci/TOOLCALLING.batch.yaml;
//! the fixtures mark the separator cases 30/31 not applicable for lack of a peer parser).

use serde_json::json;

use super::{broken, conformance_tools, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "nemotron_deci",
        tools: conformance_tools(),
        // fixture batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // fixture batch.1
        one_call: sample(
            r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"location": "NYC"}}]</TOOLCALL>"#,
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]</TOOLCALL>"#,
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "I will check both.\n\n<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]</TOOLCALL>\nthen\n<TOOLCALL>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}</TOOLCALL>\nOK.",
            Some("I will check both.\n\n\nthen\n\nOK."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            r#"<TOOLCALL>[{"name": "search", "arguments": {"filters": {"a": {"b": {"c": [1, 2, {"d": "]}</TOOLCALL>"}]}}}}}]</TOOLCALL>"#,
            None,
            vec![("search", json!({"filters": {"a": {"b": {"c": [1, 2, {"d": "]}</TOOLCALL>"}]}}}}))],
        ),
        unicode_and_escapes: sample(
            r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"location": "\u00c5re \t ✓ \"q\""}}]</TOOLCALL>"#,
            None,
            vec![("get_weather", json!({"location": "Åre \t ✓ \"q\""}))],
        ),
        empty_arguments: sample(
            r#"<TOOLCALL>[{"name": "ping", "arguments": {}}, {"name": "ping", "arguments": "{}"}]</TOOLCALL>"#,
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"#,
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            r#"<TOOLCALL>[{"name": get_weather}]</TOOLCALL>"#,
            None,
            vec![],
            vec!["missing_name"],
        ),
        more: vec![
            // fixture batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // fixture batch.10
            ("same_tool_twice", sample(
                r#"<TOOLCALL>[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_weather", "arguments": {"location": "LA"}}]</TOOLCALL>"#,
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // fixture batch.13
            ("unknown_tool_is_returned_and_flagged", broken(
                r#"<TOOLCALL>[{"name": "unknown_tool", "arguments": {"location": "NYC"}}]</TOOLCALL>"#,
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("arguments_as_json_string", sample(
                r#"<TOOLCALL>[{"name": "get_weather", "arguments": "{\"location\": \"Paris\", \"days\": 3}"}]</TOOLCALL>"#,
                None,
                vec![("get_weather", json!({"location": "Paris", "days": 3}))],
            )),
            ("arguments_string_that_is_not_json", broken(
                r#"<TOOLCALL>[{"name": "get_weather", "arguments": "tool_args1"}]</TOOLCALL>"#,
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("think_tags_are_content_without_reasoning_parsing", sample(
                "<think>\nNeed weather.\n</think>\n<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]</TOOLCALL>",
                Some("<think>\nNeed weather.\n</think>\n"),
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("missing_close_marker_keeps_complete_call", sample(
                r#"<TOOLCALL>[{"name": "get_time", "arguments": {"timezone": "CET"}}]"#,
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=no -#}
{#- Llama-Nemotron layout: Llama 3 headers, a JSON array in <TOOLCALL>, plain-text <think> reasoning. -#}
{{- bos_token }}
{{- '<|start_header_id|>system<|end_header_id|>\n\ndetailed thinking on' }}
{%- if tools %}{{- '\n<AVAILABLE_TOOLS>' + tools | tojson + '</AVAILABLE_TOOLS>' }}{%- endif %}
{{- '<|eot_id|>' }}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<TOOLCALL>[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']</TOOLCALL>' }}
{%- endif %}
{{- '<|eot_id|>' }}
{%- elif message.role == 'tool' %}{{- '<|start_header_id|>user<|end_header_id|>\n\n<TOOL_RESPONSE>[' + message.content + ']</TOOL_RESPONSE><|eot_id|>' }}
{%- else %}{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\n\n' + message.content + '<|eot_id|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}
"#;
