//! apertus (Swiss AI Apertus 2509). Outputs from vLLM's `test_apertus_tool_parser.py` and
//! SGLang's `apertus2509_detector.py` / mlx-lm `apertus.py` (a `null` value for no arguments).

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "apertus",
        tools: weather_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<|tools_prefix|>[{\"get_weather\": {\"location\": \"London\"}}]<|tools_suffix|>",
            None,
            vec![("get_weather", json!({"location": "London"}))],
        ),
        // vLLM `test_mtp_streaming_multiple_tools_burst`.
        parallel_calls: sample(
            "<|tools_prefix|>[{\"get_weather\": {\"location\": \"London\"}}, {\"get_time\": {\"timezone\": \"Europe/Paris\"}}]<|tools_suffix|>",
            None,
            vec![("get_weather", json!({"location": "London"})), ("get_time", json!({"timezone": "Europe/Paris"}))],
        ),
        text_before_between_after: sample(
            "Let me check the weather for you. <|tools_prefix|>[{\"get_weather\": {\"location\": \"Paris\"}}]<|tools_suffix|> and <|tools_prefix|>[{\"get_time\": {\"timezone\": \"CET\"}}]<|tools_suffix|> Done.",
            Some("Let me check the weather for you.  and  Done."),
            vec![("get_weather", json!({"location": "Paris"})), ("get_time", json!({"timezone": "CET"}))],
        ),
        // vLLM `test_nested_arguments` (on `search`).
        nested_json: sample(
            "<|tools_prefix|>[{\"search\": {\"filters\": {\"nested\": {\"inner\": \"value\"}, \"list\": [\"a\", \"}]<|tools_suffix|>\"]}, \"tags\": [1, [2, {\"x\": null}]]}}]<|tools_suffix|>",
            None,
            vec![("search", json!({"filters": {"nested": {"inner": "value"}, "list": ["a", "}]<|tools_suffix|>"]}, "tags": [1, [2, {"x": null}]]}))],
        ),
        unicode_and_escapes: sample(
            "<|tools_prefix|>[{\"get_weather\": {\"location\": \"T\\u014dky\\u014d \\\"central\\\" C:\\\\new \\n 東京 🌧\"}}]<|tools_suffix|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" C:\\new \n 東京 🌧"}))],
        ),
        empty_arguments: sample(
            "<|tools_prefix|>[{\"ping\": {}}, {\"ping\": null}]<|tools_suffix|>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "Sure! <|tools_prefix|>[{\"get_weather\": {\"location\": \"Lon",
            Some("Sure! "),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|tools_prefix|>[{\"get_weather\": {\"location\": \"London\"}, \"get_time\": {}}]<|tools_suffix|>After.",
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `test_incomplete_tool_call`: arguments whole, `}]` and the suffix missing.
                "vllm_incomplete_tool_call",
                sample(
                    "<|tools_prefix|>[{\"get_weather\": {\"location\": \"London\"}",
                    None,
                    vec![("get_weather", json!({"location": "London"}))],
                ),
            ),
            (
                "vllm_missing_tool_suffix",
                sample(
                    "<|tools_prefix|>[{\"get_weather\": {\"location\": \"San Francisco\", \"unit\": \"celsius\"}}]",
                    None,
                    vec![("get_weather", json!({"location": "San Francisco", "unit": "celsius"}))],
                ),
            ),
            (
                // vLLM `test_mtp_streaming_skip_and_catch_up` (unknown tools t1..t3).
                "vllm_three_calls_unknown_tools",
                broken(
                    "<|tools_prefix|>[{\"t1\": {\"a\": 1}}, {\"t2\": {\"b\": 2}}, {\"t3\": {\"c\": 3}}]<|tools_suffix|>",
                    None,
                    vec![("t1", json!({"a": 1})), ("t2", json!({"b": 2})), ("t3", json!({"c": 3}))],
                    vec!["unknown_tool", "unknown_tool", "unknown_tool"],
                ),
            ),
            (
                "single_object_without_array",
                sample(
                    "<|tools_prefix|>{\"get_time\": {\"timezone\": \"UTC\"}}<|tools_suffix|>",
                    None,
                    vec![("get_time", json!({"timezone": "UTC"}))],
                ),
            ),
            (
                "big_integer_kept_exact",
                sample(
                    "<|tools_prefix|>[{\"get_weather\": {\"days\": 9007199254740993}}]<|tools_suffix|>",
                    None,
                    vec![("get_weather", serde_json::from_str("{\"days\": 9007199254740993}").unwrap())],
                ),
            ),
            (
                "empty_object_has_no_name",
                broken("<|tools_prefix|>[{}]<|tools_suffix|>ok", Some("ok"), vec![], vec!["missing_name"]),
            ),
            (
                "stray_suffix_is_reported",
                broken("Hi<|tools_suffix|>", Some("Hi"), vec![], vec!["unexpected_text"]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Apertus layout: role tokens, calls as a JSON list of {NAME: arguments} in <|tools_prefix|>, reasoning in <|inner_prefix|>. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|assistant_start|>' }}
{%- if message.reasoning_content %}{{- '<|inner_prefix|>' + message.reasoning_content + '<|inner_suffix|>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<|tools_prefix|>[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"' + tool_call.function.name + '": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']<|tools_suffix|>' }}
{%- endif %}
{{- '<|assistant_end|>' }}
{%- elif message.role == 'tool' %}{{- '[' + message.content + ']' }}
{%- else %}{{- '<|' + message.role + '_start|>' + message.content + '<|' + message.role + '_end|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|assistant_start|>' }}{%- endif %}
"#;
