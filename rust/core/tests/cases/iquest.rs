//! iquest_q1 (IQuest-Q1). Outputs from IQuest's vLLM plugin tests (`run` with code/count/enabled/
//! items) and the SGLang `iquest_q1` detector's layout (the GLM-4.7 body).

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

fn tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "run", "parameters": {"type": "object", "properties": {
            "code": {"type": "string"}, "count": {"type": "integer"}, "enabled": {"type": "boolean"}, "items": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {
            "text": {"type": "string"}, "count": {"type": "integer"}, "active": {"type": "boolean"}, "data": {"type": "object"}}}}}
    ]);
    tools
        .as_array_mut()
        .unwrap()
        .extend(extra.as_array().unwrap().iter().cloned());
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "iquest_q1",
        tools: tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<iquest_tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></iquest_tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<iquest_tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></iquest_tool_call><iquest_tool_call>get_time<arg_key>timezone</arg_key><arg_value>EST</arg_value></iquest_tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.<iquest_tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></iquest_tool_call> and <iquest_tool_call>get_time<arg_key>timezone</arg_key><arg_value>EST</arg_value></iquest_tool_call> Done.",
            Some("Let me check. and  Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        // IQuest's plugin test `self.call`.
        nested_json: sample(
            "<iquest_tool_call>run\n<arg_key>code</arg_key><arg_value>  \"123\"\n</arg_value><arg_key>count</arg_key> <arg_value>42</arg_value>\n<arg_key>enabled</arg_key><arg_value>true</arg_value><arg_key>items</arg_key><arg_value>[1, null]</arg_value></iquest_tool_call>",
            None,
            vec![("run", json!({"code": "  \"123\"\n", "count": 42, "enabled": true, "items": [1, null]}))],
        ),
        // The typed `lookup` call of an IQuest serving test (Korean text in a JSON object).
        unicode_and_escapes: sample(
            "<iquest_tool_call>lookup<arg_key>text</arg_key><arg_value> 123 </arg_value><arg_key>count</arg_key><arg_value>2</arg_value><arg_key>active</arg_key><arg_value>true</arg_value><arg_key>data</arg_key><arg_value>{\"city\":\"서울\",\"items\":[1,null]}</arg_value></iquest_tool_call>",
            None,
            vec![("lookup", json!({"text": " 123 ", "count": 2, "active": true, "data": {"city": "서울", "items": [1, null]}}))],
        ),
        empty_arguments: sample(
            "<iquest_tool_call>ping</iquest_tool_call>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Sure.<iquest_tool_call>run<arg_key>code</arg_key><arg_value>print(",
            Some("Sure."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<iquest_tool_call>run<arg_key>code</arg_key>print(1)</iquest_tool_call>After.",
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "literal_strings_kept",
                sample(
                    "<iquest_tool_call>lookup<arg_key>text</arg_key><arg_value>true &amp; <tag> \"quoted\" café</arg_value></iquest_tool_call>",
                    None,
                    vec![("lookup", json!({"text": "true &amp; <tag> \"quoted\" café"}))],
                ),
            ),
            (
                "big_integer_kept_exact",
                sample(
                    "<iquest_tool_call>lookup<arg_key>count</arg_key><arg_value>18446744073709551617</arg_value></iquest_tool_call>",
                    None,
                    vec![("lookup", serde_json::from_str("{\"count\": 18446744073709551617}").unwrap())],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<iquest_tool_call>mystery<arg_key>x</arg_key><arg_value>1</arg_value></iquest_tool_call>",
                    None,
                    vec![("mystery", json!({"x": "1"}))],
                    vec!["unknown_tool"],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- IQuest-Q1 layout: ChatML turns, NAME then <arg_key>/<arg_value> pairs in <iquest_tool_call>. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{{- message.content or '' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<iquest_tool_call>' + tool_call.function.name }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<arg_key>' + key + '</arg_key><arg_value>' + (value if value is string else value | tojson) + '</arg_value>' }}
{%- endfor %}
{{- '</iquest_tool_call>' }}
{%- endfor %}
{{- '<|iquest_end|>\n' }}
{%- elif message.role == 'tool' %}{{- '<|im_start|>tool\n<tool_response>' + message.content + '</tool_response><|im_end|>\n' }}
{%- else %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n<think>' }}{%- endif %}
"#;
