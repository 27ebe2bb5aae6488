//! Cohere Command R7B / Command A. Inputs from the R7B tool-use chat template
//! (`CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja`), the transformers chat-schema test
//! (`{"tool_call_id": "0", "tool_name": "simple_tool", ...}` with a trailing
//! `<|END_OF_TURN_TOKEN|>`) and SGLang's `cohere_command4` detector docstring.

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "cohere_command",
        tools: weather_tools(),
        plain_content: sample(
            "<|START_RESPONSE|>Hello! How can I help you today?<|END_RESPONSE|>",
            Some("Hello! How can I help you today?"),
            vec![],
        ),
        one_call: sample(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"unit\": \"celsius\"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>",
            None,
            vec![("get_weather", json!({"unit": "celsius"}))],
        ),
        parallel_calls: sample(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}},    {\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {}}\n]<|END_ACTION|>",
            None,
            vec![("get_weather", json!({"location": "Paris"})), ("get_time", json!({}))],
        ),
        text_before_between_after: sample(
            "<|START_RESPONSE|>Checking.<|END_RESPONSE|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"NYC\"}}]<|END_ACTION|> and <|START_ACTION|>[{\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {\"timezone\": \"EST\"}}]<|END_ACTION|><|START_TEXT|>Done.<|END_TEXT|>",
            Some("Checking. and Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"]<|END_ACTION|>\", \"filters\": {\"a\": [1, {\"b\": [true, null]}]}}}\n]<|END_ACTION|>",
            None,
            vec![("search", json!({"query": "]<|END_ACTION|>", "filters": {"a": [1, {"b": [true, null]}]}}))],
        ),
        unicode_and_escapes: sample(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"Zürich \\\"HB\\\" \\u00e9 東京\\n\"}}\n]<|END_ACTION|>",
            None,
            vec![("get_weather", json!({"location": "Zürich \"HB\" é 東京\n"}))],
        ),
        empty_arguments: sample(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"ping\", \"parameters\": {}}\n]<|END_ACTION|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"Par",
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"]\n]<|END_ACTION|><|START_RESPONSE|>Sorry.<|END_RESPONSE|>",
            Some("Sorry."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // SGLang accepts one object and the `name` key too.
            ("single_object_with_name_key", sample(
                "<|START_ACTION|>{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}<|END_ACTION|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            // The template's own document tool: a hyphenated name, not among the request's tools.
            ("hyphenated_unknown_tool", broken(
                "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"direct-injected-document\", \"parameters\": {}}\n]<|END_ACTION|>",
                None,
                vec![("direct-injected-document", json!({}))],
                vec!["unknown_tool"],
            )),
            ("missing_end_action_keeps_complete_calls", sample(
                "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}}]",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("stray_end_action", broken("Hi.<|END_ACTION|>", Some("Hi."), vec![], vec!["unexpected_text"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Command A layout: turn tokens, a JSON list of actions in <|START_ACTION|>, text in <|START_RESPONSE|>. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'user' %}
{{- '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + message.content + '<|END_OF_TURN_TOKEN|>' }}
{%- elif message.role == 'assistant' %}
{{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}
{%- if message.reasoning_content %}{{- '<|START_THINKING|>' + message.reasoning_content + '<|END_THINKING|>' }}{%- endif %}
{%- if message.tool_calls %}
{{- '<|START_ACTION|>[\n' }}
{%- for tool_call in message.tool_calls %}
{{- '    {"tool_call_id": "' + loop.index0 | string + '", "tool_name": "' + tool_call.function.name + '", "parameters": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ',\n' }}{%- endif %}
{%- endfor %}
{{- '\n]<|END_ACTION|>' }}
{%- else %}
{{- '<|START_RESPONSE|>' + message.content + '<|END_RESPONSE|>' }}
{%- endif %}
{{- '<|END_OF_TURN_TOKEN|>' }}
{%- elif message.role == 'tool' %}
{{- '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|><|START_TOOL_RESULT|>' + message.content + '<|END_TOOL_RESULT|><|END_OF_TURN_TOKEN|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{%- endif %}
"#;
