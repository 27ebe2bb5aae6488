//! InternLM2 `<|action_start|><|plugin|>\n{...}<|action_end|>`. No conformance fixtures exist for
//! this family; the shapes follow vLLM's internlm2 parser and chat template and SGLang's
//! InternlmDetector (which expects the space SentencePiece leaves between the two tokens).

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "internlm",
        tools: weather_tools(),
        plain_content: sample("The weather is {mild} today.", Some("The weather is {mild} today."), vec![]),
        one_call: sample(
            "<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Tokyo\"}}<|action_end|>",
            None,
            vec![("get_weather", json!({"location": "Tokyo"}))],
        ),
        parallel_calls: sample(
            "<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"location\": \"NYC\"}}<|action_end|><|action_start|><|plugin|>\n{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"EST\"}}<|action_end|>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "What's the weather like?<|action_start|> <|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"location\": \"NYC\"}}<|action_end|>\nAnd the time:<|action_start|><|plugin|>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}<|action_end|> ok",
            Some("What's the weather like?\nAnd the time: ok"),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<|action_start|><|plugin|>\n{\"name\": \"search\", \"parameters\": {\"query\": \"<|action_end|>\", \"filters\": {\"a\": [[1], {\"b\": null}]}}}<|action_end|>",
            None,
            vec![("search", json!({"query": "<|action_end|>", "filters": {"a": [[1], {"b": null}]}}))],
        ),
        unicode_and_escapes: sample(
            "<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"location\": \"上海 \\\"浦东\\\" \\u00e9\"}}<|action_end|>",
            None,
            vec![("get_weather", json!({"location": "上海 \"浦东\" é"}))],
        ),
        empty_arguments: sample(
            "<|action_start|><|plugin|>\n{\"name\": \"ping\", \"parameters\": {}}<|action_end|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Checking.<|action_start|><|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"location\": \"NY",
            Some("Checking."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|action_start|><|plugin|>\nget_weather(location=NYC)<|action_end|>After.",
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("code_interpreter_action_is_content", sample(
                "<|action_start|><|interpreter|>\nprint(1)<|action_end|>",
                Some("<|action_start|><|interpreter|>\nprint(1)<|action_end|>"),
                vec![],
            )),
            ("lone_marker_is_truncated", broken("Hi<|action_start|>", Some("Hi"), vec![], vec!["truncated"])),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|action_start|><|plugin|>\n{\"name\": \"launch\", \"parameters\": {}}<|action_end|>",
                None,
                vec![("launch", json!({}))],
                vec!["unknown_tool"],
            )),
            ("missing_close_marker_keeps_complete_call", sample(
                "<|action_start|><|plugin|>\n{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- InternLM2 layout: ChatML turns, calls as <|action_start|><|plugin|> then a JSON object with "parameters". -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' + (message.content or '') }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<|action_start|><|plugin|>\n{"name": "' + tool_call.function.name + '", "parameters": ' + tool_call.function.arguments | tojson + '}<|action_end|>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}{{- '<|im_start|>environment name=<|plugin|>\n' + message.content + '<|im_end|>\n' }}
{%- else %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"#;
