//! K2 Horizon's `xml` tool-call format (`<ifm|...>` tags). Samples follow the framing of vLLM's
//! `k2_horizon_tool_parser.py` and SGLang's `k2_v3_detector.py` (one group, one tag per line).

use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "k2_horizon",
        tools: conformance_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>location</ifm|arg_key>\n<ifm|arg_value>NYC</ifm|arg_value>\n<ifm|arg_key>days</ifm|arg_key>\n<ifm|arg_value>3</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
            None,
            vec![("get_weather", json!({"location": "NYC", "days": 3}))],
        ),
        parallel_calls: sample(
            "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>location</ifm|arg_key>\n<ifm|arg_value>NYC</ifm|arg_value>\n</ifm|tool_call>\n<ifm|tool_call>get_time\n<ifm|arg_key>timezone</ifm|arg_key>\n<ifm|arg_value>EST</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>location</ifm|arg_key>\n<ifm|arg_value>NYC</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls> and <ifm|tool_calls>\n<ifm|tool_call>get_time\n<ifm|arg_key>timezone</ifm|arg_key>\n<ifm|arg_value>EST</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>Done.",
            Some("Let me check.\n and Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<ifm|tool_calls>\n<ifm|tool_call>process_data\n<ifm|arg_key>payload</ifm|arg_key>\n<ifm|arg_value>{\"regions\": [{\"name\": \"west\", \"scores\": [1, 2, 3]}], \"flags\": {\"enabled\": true, \"retry\": null}}</ifm|arg_value>\n<ifm|arg_key>items</ifm|arg_key>\n<ifm|arg_value>[\"x\", [1, 2]]</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}], "flags": {"enabled": true, "retry": null}}, "items": ["x", [1, 2]]}))],
        ),
        unicode_and_escapes: sample(
            "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>location</ifm|arg_key>\n<ifm|arg_value>Tōkyō \"central\" \\ é\n東京 🌧 <b>\t</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é\n東京 🌧 <b>\t"}))],
        ),
        empty_arguments: sample(
            "<ifm|tool_calls>\n<ifm|tool_call>ping\n</ifm|tool_call>\n</ifm|tool_calls>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.\n<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>location</ifm|arg_key>\n<ifm|arg_value>NY",
            Some("I'll look.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>location</ifm|arg_key>\n</ifm|tool_call>\n</ifm|tool_calls>",
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("reasoning_tags_are_declared", sample(
                "Plain <ifm|think> text.",
                Some("Plain <ifm|think> text."),
                vec![],
            )),
            ("unknown_tool_keeps_values_as_text", broken(
                "<ifm|tool_calls>\n<ifm|tool_call>mystery\n<ifm|arg_key>x</ifm|arg_key>\n<ifm|arg_value>1</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
                None,
                vec![("mystery", json!({"x": "1"}))],
                vec!["unknown_tool"],
            )),
            // Not read yet: the `xml_typed` format's argument type and the `json` format's body.
            ("typed_argument_is_not_read", broken(
                "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>days</ifm|arg_key>\n<ifm|arg_type>integer</ifm|arg_type>\n<ifm|arg_value>3</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>",
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("json_body_is_not_read", broken(
                "<ifm|tool_calls>\n<ifm|tool_call>{\"name\": \"get_time\", \"arguments\": {}}</ifm|tool_call>\n</ifm|tool_calls>",
                None,
                vec![],
                vec!["missing_name"],
            )),
            ("missing_group_close_keeps_the_call", sample(
                "<ifm|tool_calls>\n<ifm|tool_call>get_time\n<ifm|arg_key>timezone</ifm|arg_key>\n<ifm|arg_value>UTC</ifm|arg_value>\n</ifm|tool_call>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=no -#}
{#- K2 Horizon IFM layout: one group of calls, a key tag and a value tag per argument. -#}
{%- for message in messages %}
{{- '<ifm|' + message.role + '>' }}
{%- if message.role == 'assistant' %}
{%- if message.reasoning_content %}{{- '<ifm|think>' + message.reasoning_content + '</ifm|think>\n' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<ifm|tool_calls>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<ifm|tool_call>' + tool_call.function.name + '\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<ifm|arg_key>' + key + '</ifm|arg_key>\n<ifm|arg_value>' + (value if value is string else value | tojson) + '</ifm|arg_value>\n' }}
{%- endfor %}
{{- '</ifm|tool_call>\n' }}
{%- endfor %}
{{- '</ifm|tool_calls>' }}
{%- endif %}
{%- else %}{{- message.content }}
{%- endif %}
{{- '</ifm|' + message.role + '>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<ifm|assistant>' }}{%- endif %}
"#;
