//! functiongemma (FunctionGemma). Outputs from vLLM's `test_functiongemma_tool_parser.py` and
//! Google's FunctionGemma formatting guide (ai.google.dev, "Formatting and best practices").

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

fn tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "get_current_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}},
        {"type": "function", "function": {"name": "get_current_temperature", "parameters": {"type": "object", "properties": {
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
        format: "functiongemma",
        tools: tools(),
        plain_content: sample(
            "Hello, how can I help you today?",
            Some("Hello, how can I help you today?"),
            vec![],
        ),
        one_call: sample(
            "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>",
            None,
            vec![("get_weather", json!({"location": "London"}))],
        ),
        parallel_calls: sample(
            "<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call><start_function_call>call:get_time{timezone:<escape>UTC<escape>}<end_function_call>",
            None,
            vec![("get_weather", json!({"location": "London"})), ("get_time", json!({"timezone": "UTC"}))],
        ),
        text_before_between_after: sample(
            "Let me check the weather for you. <start_function_call>call:get_weather{location:<escape>Paris<escape>}<end_function_call> and <start_function_call>call:get_time{timezone:<escape>CET<escape>}<end_function_call>Done.",
            Some("Let me check the weather for you.  and Done."),
            vec![("get_weather", json!({"location": "Paris"})), ("get_time", json!({"timezone": "CET"}))],
        ),
        nested_json: sample(
            "<start_function_call>call:search{filters:{year:{gte:2020},langs:[<escape>rust<escape>,{x:<escape>a,b}c<escape>}]},query:<escape>rust {tags}, \"quotes\"<escape>,tags:[<escape>a<escape>,1.5,true,null]}<end_function_call>",
            None,
            vec![(
                "search",
                json!({"filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": "a,b}c"}]},
                       "query": "rust {tags}, \"quotes\"", "tags": ["a", 1.5, true, null]}),
            )],
        ),
        unicode_and_escapes: sample(
            "<start_function_call>call:get_weather{location:<escape>Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two <start_function_call> {x:1}<escape>}<end_function_call>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two <start_function_call> {x:1}"}))],
        ),
        empty_arguments: sample(
            "<start_function_call>call:ping{}<end_function_call>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.<start_function_call>call:get_weather{location:<escape>Lon",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<start_function_call>call:get_weather location<end_function_call>After.<start_function_call>call:get_time{timezone:<escape>UTC<escape>}<end_function_call>",
            Some("After."),
            vec![("get_time", json!({"timezone": "UTC"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `test_multiple_arguments`.
                "vllm_two_string_arguments",
                sample(
                    "<start_function_call>call:get_weather{location:<escape>San Francisco<escape>,unit:<escape>celsius<escape>}<end_function_call>",
                    None,
                    vec![("get_weather", json!({"location": "San Francisco", "unit": "celsius"}))],
                ),
            ),
            (
                // Google's guide, "Make Semantic Connection".
                "google_guide_temperature",
                sample(
                    "<start_function_call>call:get_current_temperature{location:<escape>Paris<escape>,unit:<escape>celsius<escape>}<end_function_call>",
                    None,
                    vec![("get_current_temperature", json!({"location": "Paris", "unit": "celsius"}))],
                ),
            ),
            (
                // Google's guide, "Turn 3: Model Issues Function Call".
                "google_guide_weather",
                sample(
                    "<start_function_call>call:get_current_weather{location:<escape>Tokyo, Japan<escape>}<end_function_call>",
                    None,
                    vec![("get_current_weather", json!({"location": "Tokyo, Japan"}))],
                ),
            ),
            (
                "bare_numbers_and_booleans",
                sample(
                    "<start_function_call>call:get_weather{days:3,location:<escape>NYC<escape>}<end_function_call>",
                    None,
                    vec![("get_weather", json!({"days": 3, "location": "NYC"}))],
                ),
            ),
            (
                // vLLM JSON-decodes escaped values (`count:<escape>42<escape>` gives 42); the
                // delimiters say string, so the text stays a string.
                "escaped_number_stays_a_string",
                sample(
                    "<start_function_call>call:search{query:<escape>42<escape>}<end_function_call>",
                    None,
                    vec![("search", json!({"query": "42"}))],
                ),
            ),
            (
                // vLLM's streaming test writes two arguments without a comma; not the model's
                // syntax.
                "missing_comma_is_malformed",
                broken(
                    "<start_function_call>call:get_weather{location:<escape>NYC<escape>unit:<escape>celsius<escape>}<end_function_call>",
                    None,
                    vec![],
                    vec!["malformed_json"],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<start_function_call>call:unknown_tool{location:<escape>NYC<escape>}<end_function_call>",
                    None,
                    vec![("unknown_tool", json!({"location": "NYC"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "missing_end_marker_at_eof_keeps_complete_call",
                sample(
                    "<start_function_call>call:get_weather{location:<escape>NYC<escape>}",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "stray_end_marker_is_reported",
                broken("Hi<end_function_call>there", Some("Hithere"), vec![], vec!["unexpected_text"]),
            ),
            (
                "escape_token_in_content_stays_content",
                sample("Use <escape> to quote a string.", Some("Use <escape> to quote a string."), vec![]),
            ),
            (
                "gemma4_markers_are_content",
                sample(
                    "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|>",
                    Some("<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|>"),
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
{#- FunctionGemma layout: Gemma turns, call:NAME{key:<escape>value<escape>} in call tokens. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<start_of_turn>model\n' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<start_function_call>call:' + tool_call.function.name + '{' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- key + ':<escape>' + value | string + '<escape>' }}{%- if not loop.last %}{{- ',' }}{%- endif %}
{%- endfor %}
{{- '}<end_function_call>' }}
{%- endfor %}
{{- (message.content or '') + '<end_of_turn>\n' }}
{%- elif message.role == 'tool' %}
{{- '<start_function_response>response:' + message.name + '{value:<escape>' + message.content + '<escape>}<end_function_response>' }}
{%- else %}
{{- '<start_of_turn>' + message.role + '\n' + message.content + '<end_of_turn>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<start_of_turn>model\n' }}{%- endif %}
"#;
