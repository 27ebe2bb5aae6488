//! LongCat-Flash-Chat. Shapes from SGLang's `LongCatDetector` docstring and vLLM's `longcat`
//! parser (a Hermes parser with `<longcat_tool_call>` tags): blocks back to back, no separator.

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "longcat",
        tools: weather_tools(),
        plain_content: sample("Sure, here is a haiku about rain.", Some("Sure, here is a haiku about rain."), vec![]),
        one_call: sample(
            "<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Beijing\"}}\n</longcat_tool_call>",
            None,
            vec![("get_weather", json!({"location": "Beijing"}))],
        ),
        parallel_calls: sample(
            "<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</longcat_tool_call><longcat_tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}\n</longcat_tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</longcat_tool_call> then <longcat_tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}\n</longcat_tool_call>\nDone.",
            Some("Let me check.\n then \nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<longcat_tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"}]</longcat_tool_call>\", \"filters\": {\"range\": {\"from\": [1, {\"x\": null}]}}}}\n</longcat_tool_call>",
            None,
            vec![("search", json!({"query": "}]</longcat_tool_call>", "filters": {"range": {"from": [1, {"x": null}]}}}))],
        ),
        unicode_and_escapes: sample(
            "<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"北京 \\\"朝阳\\\" \\u00e9\\n🌧\"}}\n</longcat_tool_call>",
            None,
            vec![("get_weather", json!({"location": "北京 \"朝阳\" é\n🌧"}))],
        ),
        empty_arguments: sample(
            "<longcat_tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</longcat_tool_call>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Checking.<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Bei",
            Some("Checking."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<longcat_tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": Beijing}}\n</longcat_tool_call>After.",
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // The GLM-4.5 key/value body under LongCat's tags, values typed by the schema.
            ("key_value_body", sample(
                "<longcat_tool_call>get_weather\n<longcat_arg_key>location</longcat_arg_key>\n<longcat_arg_value>Paris</longcat_arg_value>\n<longcat_arg_key>days</longcat_arg_key>\n<longcat_arg_value>3</longcat_arg_value>\n</longcat_tool_call><longcat_tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</longcat_tool_call>",
                None,
                vec![("get_weather", json!({"location": "Paris", "days": 3})), ("get_time", json!({}))],
            )),
            ("key_value_body_cut", broken(
                "<longcat_tool_call>get_weather\n<longcat_arg_key>location</longcat_arg_key>\n<longcat_arg_value>Par",
                None,
                vec![],
                vec!["truncated"],
            )),
            ("missing_close_keeps_complete_call", sample(
                "<longcat_tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<longcat_tool_call>\n{\"name\": \"launch\", \"arguments\": {}}\n</longcat_tool_call>",
                None,
                vec![("launch", json!({}))],
                vec!["unknown_tool"],
            )),
            ("stray_close_tag", broken("Done.</longcat_tool_call>", Some("Done."), vec![], vec!["unexpected_text"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- LongCat-Flash layout: [Round N] turns, JSON calls in <longcat_tool_call> tags. -#}
{%- for message in messages %}
{%- if message.role == 'user' %}
{{- '[Round ' + loop.index0 | string + '] USER:' + message.content }}
{%- elif message.role == 'assistant' %}
{{- ' ASSISTANT:' }}
{%- if message.reasoning_content %}{{- '<longcat_think>\n' + message.reasoning_content + '\n</longcat_think>\n' }}{%- endif %}
{{- message.content or '' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<longcat_tool_call>\n{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}\n</longcat_tool_call>' }}
{%- endfor %}
{{- '</longcat_s>' }}
{%- elif message.role == 'tool' %}
{{- '<longcat_tool_response>\n' + message.content + '\n</longcat_tool_response>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- ' ASSISTANT:' }}{%- endif %}
"#;
