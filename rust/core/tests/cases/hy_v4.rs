//! hy_v4 (Tencent HY4, the HY3 layout with `:opensource`-suffixed tokens). Outputs from vLLM's
//! `test_hy_v4_tool_parser.py`.

use serde_json::json;

use super::hunyuan::tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "hy_v4",
        tools: tools(),
        plain_content: sample("A plain response.", Some("A plain response."), vec![]),
        // vLLM `test_values_typed_from_schema`.
        one_call: sample(
            "sure!<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Beijing</arg_value:opensource><arg_key:opensource>days</arg_key:opensource><arg_value:opensource>3</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
            Some("sure!"),
            vec![("get_weather", json!({"city": "Beijing", "days": 3}))],
        ),
        // vLLM `test_multiple_calls_keep_their_order`.
        parallel_calls: sample(
            "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>A</arg_value:opensource></tool_call:opensource><tool_call:opensource>get_current_date</tool_call:opensource></tool_calls:opensource>",
            None,
            vec![("get_weather", json!({"city": "A"})), ("get_current_date", json!({}))],
        ),
        text_before_between_after: sample(
            "hi<tool_calls:opensource>\n  <tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Beijing</arg_value:opensource></tool_call:opensource></tool_calls:opensource> and <tool_calls:opensource><tool_call:opensource>get_current_date</tool_call:opensource></tool_calls:opensource>bye",
            Some("hi and bye"),
            vec![("get_weather", json!({"city": "Beijing"})), ("get_current_date", json!({}))],
        ),
        nested_json: sample(
            "<tool_calls:opensource><tool_call:opensource>search<arg_key:opensource>filters</arg_key:opensource><arg_value:opensource>{\"k\": 1, \"v\": [\"</arg_value>\", {\"x\": null}]}</arg_value:opensource><arg_key:opensource>tags</arg_key:opensource><arg_value:opensource>[\"a\", \"b\"]</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
            None,
            vec![("search", json!({"filters": {"k": 1, "v": ["</arg_value>", {"x": null}]}, "tags": ["a", "b"]}))],
        ),
        // vLLM `test_non_ascii_values_are_not_escaped`, plus escapes.
        unicode_and_escapes: sample(
            "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>北京 \"q\" C:\\new\n🌧</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
            None,
            vec![("get_weather", json!({"city": "北京 \"q\" C:\\new\n🌧"}))],
        ),
        // vLLM `test_zero_arg_call`.
        empty_arguments: sample(
            "<tool_calls:opensource><tool_call:opensource>get_current_date</tool_call:opensource></tool_calls:opensource>",
            None,
            vec![("get_current_date", json!({}))],
        ),
        truncated: broken(
            "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Bei",
            None,
            vec![],
            vec!["truncated"],
        ),
        // vLLM `MALFORMED["unbalanced_arg_tags"]`.
        malformed: broken(
            "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource></tool_call:opensource></tool_calls:opensource>",
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `MALFORMED["missing_tool_calls_end"]`: the call is whole.
                "vllm_missing_tool_calls_end",
                sample(
                    "<tool_calls:opensource><tool_call:opensource>get_current_date</tool_call:opensource>",
                    None,
                    vec![("get_current_date", json!({}))],
                ),
            ),
            (
                // vLLM `MALFORMED["unbalanced_tool_call"]`: every argument closed, only
                // `</tool_call>` missing, so the call is returned.
                "vllm_unbalanced_tool_call",
                sample(
                    "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>X</arg_value:opensource></tool_calls:opensource>",
                    None,
                    vec![("get_weather", json!({"city": "X"}))],
                ),
            ),
            (
                "vllm_empty_function_name",
                broken(
                    "<tool_calls:opensource><tool_call:opensource></tool_call:opensource></tool_calls:opensource>",
                    None,
                    vec![],
                    vec!["missing_name"],
                ),
            ),
            (
                // vLLM `MALFORMED["unparsed_argument_payload"]`: the junk is content.
                "vllm_unparsed_argument_payload",
                sample(
                    "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>X</arg_value:opensource>JUNK</tool_call:opensource></tool_calls:opensource>",
                    Some("JUNK"),
                    vec![("get_weather", json!({"city": "X"}))],
                ),
            ),
            (
                "vllm_unknown_tool_keeps_values_as_text",
                broken(
                    "<tool_calls:opensource><tool_call:opensource>mystery<arg_key:opensource>x</arg_key:opensource><arg_value:opensource>1</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
                    None,
                    vec![("mystery", json!({"x": "1"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "unsuffixed_tags_are_content",
                sample(
                    "<tool_calls><tool_call>get_current_date</tool_call></tool_calls>",
                    Some("<tool_calls><tool_call>get_current_date</tool_call></tool_calls>"),
                    vec![],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- Hunyuan HY4 layout: every tag carries the :opensource suffix; a section of calls with key/value pairs. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<｜hy_Assistant｜>' }}
{%- if message.reasoning_content %}{{- '<think:opensource>' + message.reasoning_content + '</think:opensource>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<tool_calls:opensource>' }}
{%- for tool_call in message.tool_calls %}
{{- '<tool_call:opensource>' + tool_call.function.name }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<arg_key:opensource>' + key + '</arg_key:opensource><arg_value:opensource>' + (value if value is string else value | tojson) + '</arg_value:opensource>' }}
{%- endfor %}
{{- '</tool_call:opensource>' }}
{%- endfor %}
{{- '</tool_calls:opensource>' }}
{%- endif %}
{%- elif message.role == 'tool' %}{{- '<tool_response:opensource>' + message.content + '</tool_response:opensource>' }}
{%- else %}{{- '<｜hy_User｜>' + message.content }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<｜hy_Assistant｜><think:opensource>' }}{%- endif %}
"#;
