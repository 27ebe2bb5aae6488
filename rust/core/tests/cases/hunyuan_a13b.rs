//! Hunyuan-A13B. Inputs from vLLM's `tests/tool_parsers/test_hunyuan_a13b_tool_parser.py`
//! (with this matrix's tools) and the model's `<answer>` wrapper.

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "hunyuan_a13b",
        tools: weather_tools(),
        plain_content: sample("How can I help you today?", Some("How can I help you today?"), vec![]),
        one_call: sample(
            "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"San Francisco\", \"unit\": \"celsius\"}}]</tool_calls>",
            None,
            vec![("get_weather", json!({"location": "San Francisco", "unit": "celsius"}))],
        ),
        parallel_calls: sample(
            "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"San Francisco\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"John Doe\", \"filters\": {\"age\": 37, \"role\": null, \"passed_test\": true}, \"tags\": [\"John\", \"Johnny\"]}}]</tool_calls>",
            None,
            vec![
                ("get_weather", json!({"location": "San Francisco"})),
                ("search", json!({"query": "John Doe", "filters": {"age": 37, "role": null, "passed_test": true}, "tags": ["John", "Johnny"]})),
            ],
        ),
        text_before_between_after: sample(
            "<answer>\nI will call the tool now. <tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Boston\"}}]</tool_calls> and <tool_calls>[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}]</tool_calls>\nThank you!\n</answer>",
            Some("\nI will call the tool now.  and \nThank you!\n"),
            vec![("get_weather", json!({"location": "Boston"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<tool_calls>[{\"name\": \"search\", \"arguments\": {\"filters\": {\"level1\": {\"level2\": {\"level3\": {\"value\": 123}}}}, \"query\": \"]}</tool_calls>\"}}]</tool_calls>",
            None,
            vec![("search", json!({"filters": {"level1": {"level2": {"level3": {"value": 123}}}}, "query": "]}</tool_calls>"}))],
        ),
        unicode_and_escapes: sample(
            "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"北京 \\\"海淀\\\"\\t\\u00e9\"}}]</tool_calls>",
            None,
            vec![("get_weather", json!({"location": "北京 \"海淀\"\té"}))],
        ),
        empty_arguments: sample(
            "<tool_calls>[{\"name\": \"ping\", \"arguments\": {}}, {\"name\": \"get_weather\", \"arguments\": {\"days\": 42}}]</tool_calls>",
            None,
            vec![("ping", json!({})), ("get_weather", json!({"days": 42}))],
        ),
        truncated: broken(
            "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Bos",
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Boston\"]</tool_calls>Sorry.",
            Some("Sorry."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // vLLM streaming fixture: the answer closes after the calls.
            ("answer_close_after_calls", sample(
                "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Boston\"}}]</tool_calls>\n</answer>",
                None,
                vec![("get_weather", json!({"location": "Boston"}))],
            )),
            ("answer_wrapped_reply", sample(
                "<answer>\nThe capital of France is Paris.\n</answer>",
                Some("\nThe capital of France is Paris.\n"),
                vec![],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<tool_calls>[{\"name\": \"register_user\", \"arguments\": {\"name\": \"John Doe\", \"age\": 37}}]</tool_calls>",
                None,
                vec![("register_user", json!({"name": "John Doe", "age": 37}))],
                vec!["unknown_tool"],
            )),
            ("missing_close_keeps_complete_calls", sample(
                "<tool_calls>[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}]",
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
{#- Hunyuan-A13B layout: a JSON array in <tool_calls>, the reply in <answer>, reasoning in <think>. -#}
{%- for message in messages %}
{%- if message.role == 'user' %}
{{- '<|startoftext|>' + message.content + '<|extra_0|>' }}
{%- elif message.role == 'assistant' %}
{%- if message.reasoning_content %}{{- '<think>\n' + message.reasoning_content + '\n</think>\n' }}{%- endif %}
{%- if message.tool_calls %}
{{- '<tool_calls>[' }}
{%- for tool_call in message.tool_calls %}
{%- if not loop.first %}{{- ', ' }}{%- endif %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- endfor %}
{{- ']</tool_calls>' }}
{%- else %}
{{- '<answer>\n' + message.content + '\n</answer>' }}
{%- endif %}
{{- '<|eos|>' }}
{%- elif message.role == 'tool' %}
{{- '<tool_response>' + message.content + '</tool_response>' }}
{%- endif %}
{%- endfor %}
"#;
