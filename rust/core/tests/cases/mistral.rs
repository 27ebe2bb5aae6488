use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "mistral",
        tools: weather_tools(),
        plain_content: sample("[1] See the docs.", Some("[1] See the docs."), vec![]),
        one_call: sample(
            "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"NYC\"}[TOOL_CALLS]get_time[ARGS]{\"timezone\": \"EST\"}",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check. [TOOL_CALLS]get_weather{\"location\": \"NYC\"} and [TOOL_CALLS] [{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}][/TOOL_CALLS] ok",
            Some("Let me check.  and  ok"),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"]}\", \"filters\": {\"a\": [[1], {\"b\": null}]}}, \"id\": \"abc123XYZ\"}]",
            None,
            vec![("search", json!({"query": "]}", "filters": {"a": [[1], {"b": null}]}}))],
        ),
        unicode_and_escapes: sample(
            "[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{\"location\": \"São Paulo \\\\ \\\"SP\\\" ☀\"}",
            None,
            vec![("get_weather", json!({"location": "São Paulo \\ \"SP\" ☀"}))],
        ),
        empty_arguments: sample("[TOOL_CALLS]ping[ARGS]{}", None, vec![("ping", json!({}))]),
        truncated: broken("[TOOL_CALLS]get_weather[ARGS]{\"location\": \"N", None, vec![], vec!["truncated"]),
        malformed: broken("[TOOL_CALLS]get weather(NYC)", None, vec![], vec!["malformed_json"]),
        more: vec![
            ("pre_v11_call_with_its_id", sample(
                "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}, \"id\": \"a1B2c3D4e\"}, {\"id\": \"Z9y8X7w6v\", \"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}]",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            ("bare_array_when_marker_was_skipped", sample(
                "[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"CET\"}}]",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("array_with_two_calls", sample(
                "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}, {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}]",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Mistral v11+ / Magistral layout: [TOOL_CALLS]name[ARGS]{json}, reasoning in [THINK]. -#}
{{- bos_token }}
{%- if tools %}{{- '[AVAILABLE_TOOLS]' + tools | tojson + '[/AVAILABLE_TOOLS]' }}{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' %}
{{- '[INST]' + message.content + '[/INST]' }}
{%- elif message.role == 'assistant' %}
{%- if message.reasoning_content %}{{- '[THINK]' + message.reasoning_content + '[/THINK]' }}{%- endif %}
{{- message.content or '' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '[TOOL_CALLS]' + tool_call.function.name + '[ARGS]' + tool_call.function.arguments | tojson }}
{%- endfor %}
{{- eos_token }}
{%- elif message.role == 'tool' %}
{{- '[TOOL_RESULTS]' + message.content + '[/TOOL_RESULTS]' }}
{%- endif %}
{%- endfor %}
"#;
