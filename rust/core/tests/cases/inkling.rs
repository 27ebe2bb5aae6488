//! Inkling (Thinking Machines TML). Samples follow the block layout of SGLang's
//! `inkling_detector.py` (docstring and structural tag) and the SGLang gateway's
//! `tests/tool_parser_inkling.rs` (a text block, then one message per call, then
//! `<|content_model_end_sampling|>`; a malformed call between good ones).

use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "inkling",
        tools: conformance_tools(),
        plain_content: sample(
            "<|message_model|><|content_text|>Hello, how can I help you today?<|end_message|><|content_model_end_sampling|>",
            Some("Hello, how can I help you today?"),
            vec![],
        ),
        one_call: sample(
            "<|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"location\":\"NYC\"}}<|end_message|>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"location\":\"NYC\"}}<|end_message|><|message_model|>get_time<|content_invoke_tool_json|>{\"name\":\"get_time\",\"args\":{\"timezone\":\"EST\"}}<|end_message|><|content_model_end_sampling|>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "<|message_model|><|content_text|>I'll check.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"location\":\"NYC\"}}<|end_message|><|message_model|><|content_text|> Then<|end_message|><|message_model|>get_time<|content_invoke_tool_json|>{\"name\":\"get_time\",\"args\":{\"timezone\":\"EST\"}}<|end_message|><|message_model|><|content_text|> done.<|end_message|><|content_model_end_sampling|>",
            Some("I'll check. Then done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<|message_model|>process_data<|content_invoke_tool_json|>{\"name\":\"process_data\",\"args\":{\"payload\":{\"regions\":[{\"name\":\"west\",\"scores\":[1,2,3]}],\"flags\":{\"enabled\":true,\"retry\":null},\"note\":\"<|end_message|> in a string\"}}}<|end_message|>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}], "flags": {"enabled": true, "retry": null}, "note": "<|end_message|> in a string"}}))],
        ),
        unicode_and_escapes: sample(
            "<|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"location\":\"Tōkyō \\\"central\\\" \\\\ é\\n東京 🌧 \\u00e9\"}}<|end_message|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é\n東京 🌧 é"}))],
        ),
        empty_arguments: sample(
            "<|message_model|>ping<|content_invoke_tool_json|>{\"name\":\"ping\",\"args\":{}}<|end_message|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "<|message_model|><|content_text|>I'll look.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"location\":\"NY",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        // The SGLang gateway's `recovers_after_malformed_tool_frame`.
        malformed: broken(
            "<|message_model|><|content_text|>Before<|end_message|><|content_invoke_tool_json|>not-json<|end_message|><|message_model|><|content_text|>After malformed.<|end_message|><|content_invoke_tool_json|>{\"name\":\"search\",\"args\":{}}<|end_message|><|message_model|><|content_text|>Tail<|end_message|><|content_model_end_sampling|>",
            Some("BeforeAfter malformed.Tail"),
            vec![("search", json!({}))],
            vec!["malformed_json"],
        ),
        more: vec![
            ("thinking_block_is_reasoning_and_calls_follow", sample(
                "<|content_thinking|>The user wants <|message_model|>-free weather.<|end_message|><|message_model|>get_weather<|content_invoke_tool_json|>{\"name\":\"get_weather\",\"args\":{\"location\":\"Paris\"}}<|end_message|>",
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("text_mode_invocation_is_an_issue", broken(
                "<|message_model|><|content_text|>Before<|end_message|><|content_invoke_tool_text|>search for weather in SF<|end_message|><|content_model_end_sampling|>",
                Some("Before"),
                vec![],
                vec!["unexpected_text"],
            )),
            ("headerless_call", sample(
                "Before<|content_invoke_tool_json|>{\"name\":\"get_time\",\"args\":{\"timezone\":\"UTC\"}}<|end_message|>",
                Some("Before"),
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|message_model|>not_declared<|content_invoke_tool_json|>{\"name\":\"not_declared\",\"args\":{}}<|end_message|>",
                None,
                vec![("not_declared", json!({}))],
                vec!["unknown_tool"],
            )),
            ("missing_end_message_keeps_a_complete_call", sample(
                "<|message_model|>get_time<|content_invoke_tool_json|>{\"name\":\"get_time\",\"args\":{\"timezone\":\"UTC\"}}",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("output_ends_in_a_header", broken(
                "<|message_model|><|content_text|>Hi<|end_message|><|message_model|>get_wea",
                Some("Hi"),
                vec![],
                vec!["truncated"],
            )),
            ("author_name_before_text_is_metadata", sample(
                "<|message_model|>assistant<|content_text|>Hi<|end_message|>",
                Some("Hi"),
                vec![],
            )),
            ("prose_in_a_header_is_text", sample(
                "<|message_model|>Let me check.<|content_text|>Hi<|end_message|>",
                Some("Let me check.Hi"),
                vec![],
            )),
            ("marker_like_text_in_content", sample(
                "a <|message_model> b <|content_invoke_tool_json| c",
                Some("a <|message_model> b <|content_invoke_tool_json| c"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Inkling TML layout: typed content blocks after a message token; a call is a JSON block naming the tool. -#}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<|message_user|><|content_text|>' + message.content + '<|end_message|>' }}
{%- elif message.role == 'assistant' %}
{%- if message.reasoning_content %}{{- '<|message_model|><|content_thinking|>' + message.reasoning_content + '<|end_message|>' }}{%- endif %}
{%- if message.content %}{{- '<|message_model|><|content_text|>' + message.content + '<|end_message|>' }}{%- endif %}
{%- for tool_call in message.tool_calls or [] %}
{{- '<|message_model|>' + tool_call.function.name + '<|content_invoke_tool_json|>' }}
{{- {'name': tool_call.function.name, 'args': tool_call.function.arguments} | tojson + '<|end_message|>' }}
{%- endfor %}
{%- elif message.role == 'tool' %}{{- '<|message_tool|>' + message.name + '<|content_text|>' + message.content + '<|end_message|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|message_model|>' }}{%- endif %}
"#;
