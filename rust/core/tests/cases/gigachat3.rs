//! gigachat3 (GigaChat 3 / 3.1). Outputs from vLLM's `test_gigachat3_tool_parser.py`
//! (`manage_user_memory` calls, both headers, with and without `</s>`) and the GigaChat3 chat
//! template's message layout.

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

fn tools() -> Value {
    let mut tools = weather_tools();
    tools.as_array_mut().unwrap().push(json!(
        {"type": "function", "function": {"name": "manage_user_memory", "parameters": {"type": "object", "properties": {
            "action": {"type": "string"}, "id": {"type": "string"}, "content": {"type": "object"}}}}}
    ));
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "gigachat3",
        tools: tools(),
        plain_content: sample("How can I help you today?", Some("How can I help you today?"), vec![]),
        one_call: sample(
            "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"create\", \"id\": \"preferences\"}}",
            None,
            vec![("manage_user_memory", json!({"action": "create", "id": "preferences"}))],
        ),
        parallel_calls: sample(
            "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Moscow\"}}<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"MSK\"}}<|message_sep|>\n\n",
            None,
            vec![("get_weather", json!({"location": "Moscow"})), ("get_time", json!({"timezone": "MSK"}))],
        ),
        text_before_between_after: sample(
            "I'll check that for you.<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Moscow\"}} and <|function_call|>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"MSK\"}}\nDone.",
            Some("I'll check that for you. and \nDone."),
            vec![("get_weather", json!({"location": "Moscow"})), ("get_time", json!({"timezone": "MSK"}))],
        ),
        // vLLM `COMPLEX_FUNCTION_OUTPUT_GIGACHAT3`.
        nested_json: sample(
            "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"create\", \"id\": \"preferences\", \"content\": {\"short_answers\": true, \"hate_emojis\": true, \"english_ui\": false, \"russian_math_explanations\": true}}}",
            None,
            vec![(
                "manage_user_memory",
                json!({"action": "create", "id": "preferences", "content": {"short_answers": true, "hate_emojis": true, "english_ui": false, "russian_math_explanations": true}}),
            )],
        ),
        unicode_and_escapes: sample(
            "<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Москва \\\"центр\\\" C:\\\\new\\n🌧 \\u00e9 <|message_sep|>\"}}",
            None,
            vec![("get_weather", json!({"location": "Москва \"центр\" C:\\new\n🌧 é <|message_sep|>"}))],
        ),
        // vLLM `PARAMETERLESS_FUNCTION_OUTPUT_GIGACHAT31`.
        empty_arguments: sample(
            "<|function_call|>{\"name\": \"manage_user_memory\", \"arguments\": {}}",
            None,
            vec![("manage_user_memory", json!({}))],
        ),
        truncated: broken(
            "I'll check.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"cr",
            Some("I'll check."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "Sure.<|function_call|>{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": }}",
            Some("Sure."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `mixed_content_nonstreaming_with_eos_gigachat3`.
                "vllm_mixed_content_with_eos_gigachat3",
                sample(
                    "I'll check that for you.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"create\", \"id\": \"preferences\"}}</s>",
                    Some("I'll check that for you."),
                    vec![("manage_user_memory", json!({"action": "create", "id": "preferences"}))],
                ),
            ),
            (
                "vllm_mixed_content_with_eos_gigachat31",
                sample(
                    "I'll check that for you.<|function_call|>{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"create\", \"id\": \"preferences\"}}</s>",
                    Some("I'll check that for you."),
                    vec![("manage_user_memory", json!({"action": "create", "id": "preferences"}))],
                ),
            ),
            (
                "message_end_without_call_is_dropped",
                sample("Hello!<|message_sep|>\n\n", Some("Hello!"), vec![]),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<|function_call|>{\"name\": \"mystery\", \"arguments\": {\"x\": 1}}",
                    None,
                    vec![("mystery", json!({"x": 1}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "eof_inside_header_is_truncated",
                broken("Hi<|message_sep|>\n\nfunction ca", Some("Hi"), vec![], vec!["truncated"]),
            ),
            (
                "function_call_text_in_content_stays_content",
                sample(
                    "A function call<|role_sep|> is written after the message.",
                    Some("A function call<|role_sep|> is written after the message."),
                    vec![],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- GigaChat 3 layout: messages end with <|message_sep|>, a call is a "function call" message with a JSON object. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'assistant' and message.tool_calls %}
{{- 'assistant<|role_sep|>\n' + (message.content or '') }}
{%- set tool_call = message.tool_calls[0].function %}
{{- '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "' + tool_call.name + '", "arguments": ' + tool_call.arguments | tojson + '}<|message_sep|>\n\n' }}
{%- elif message.role == 'tool' %}
{{- 'function result<|role_sep|>\n' + message.content + '<|message_sep|>\n\n' }}
{%- else %}
{{- message.role + '<|role_sep|>\n' + message.content + '<|message_sep|>\n\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- 'assistant<|role_sep|>\n' }}{%- endif %}
"#;
