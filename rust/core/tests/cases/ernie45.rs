//! ernie45 (Baidu ERNIE 4.5). Outputs from vLLM's `test_ernie45_moe_tool_parser.py`
//! (ERNIE-4.5-21B-A3B-Thinking tokenizer) and the `<response>` wrapper its parser strips.

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

fn tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "get_current_temperature", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "get_temperature_unit", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "unit": {"type": "string"}}}}}
    ]);
    tools
        .as_array_mut()
        .unwrap()
        .extend(extra.as_array().unwrap().iter().cloned());
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "ernie45",
        tools: tools(),
        plain_content: sample("This is a test", Some("This is a test"), vec![]),
        one_call: sample(
            "<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"Beijing\"}}\n</tool_call>\n",
            None,
            vec![("get_current_temperature", json!({"location": "Beijing"}))],
        ),
        parallel_calls: sample(
            "<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"Beijing\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_temperature_unit\", \"arguments\": {\"location\": \"Guangzhou\", \"unit\": \"c\"}}\n</tool_call>\n",
            None,
            vec![
                ("get_current_temperature", json!({"location": "Beijing"})),
                ("get_temperature_unit", json!({"location": "Guangzhou", "unit": "c"})),
            ],
        ),
        // vLLM `tool_call_with_content_before` (no reasoning parser: `</think>` stays content).
        text_before_between_after: sample(
            "I need to call two tools to handle these two issues separately.\n</think>\n\n<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"Beijing\"}}\n</tool_call>\nthen\n<tool_call>\n{\"name\": \"get_temperature_unit\", \"arguments\": {\"location\": \"Guangzhou\", \"unit\": \"c\"}}\n</tool_call>\nDone.",
            Some("I need to call two tools to handle these two issues separately.\n</think>\n\n\nthen\n\nDone."),
            vec![
                ("get_current_temperature", json!({"location": "Beijing"})),
                ("get_temperature_unit", json!({"location": "Guangzhou", "unit": "c"})),
            ],
        ),
        nested_json: sample(
            "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"</tool_call> {}\", \"filters\": {\"year\": {\"gte\": 2020}}, \"tags\": [1, [2, {\"x\": null}]]}}\n</tool_call>",
            None,
            vec![("search", json!({"query": "</tool_call> {}", "filters": {"year": {"gte": 2020}}, "tags": [1, [2, {"x": null}]]}))],
        ),
        unicode_and_escapes: sample(
            "<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"北京 \\\"中心\\\" C:\\\\new\\n\\u00e9 🌧\"}}\n</tool_call>",
            None,
            vec![("get_current_temperature", json!({"location": "北京 \"中心\" C:\\new\né 🌧"}))],
        ),
        empty_arguments: sample(
            "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Let me check.\n<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": \"Bei",
            Some("Let me check.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_call>\n{\"name\": \"get_current_temperature\", \"arguments\": {\"location\": }}\n</tool_call>After.",
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "response_wrapper_is_dropped",
                sample(
                    "<response>It is 20°C in Beijing.</response>",
                    Some("It is 20°C in Beijing."),
                    vec![],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_call>\n{\"name\": \"mystery\", \"arguments\": {\"x\": 1}}\n</tool_call>",
                    None,
                    vec![("mystery", json!({"x": 1}))],
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
{#- ERNIE-4.5 thinking layout: reasoning, then JSON calls in <tool_call> tags or the reply in <response>. -#}
{{- '<|begin_of_sentence|>' }}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- 'User: ' + message.content + '\n' }}
{%- elif message.role == 'assistant' %}
{{- 'Assistant: ' }}
{%- if message.reasoning_content %}{{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' }}{%- endif %}
{%- if message.tool_calls %}
{%- for tool_call in message.tool_calls %}
{{- '<tool_call>\n{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}\n</tool_call>\n' }}
{%- endfor %}
{%- else %}
{{- '<response>\n' + message.content + '\n</response>\n' }}
{%- endif %}
{{- '<|end_of_sentence|>' }}
{%- elif message.role == 'tool' %}{{- '<tool_output>\n' + message.content + '\n</tool_output>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- 'Assistant: <think>\n' }}{%- endif %}
"#;
