//! dots (rednote dots.llm1). Outputs from vLLM's `test_dots_tool_parser.py` and the canonical
//! layout of SGLang's `dots_detector.py`.

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

fn tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "set_location", "parameters": {"type": "object", "properties": {
            "location": {"$ref": "#/$defs/Location"}, "days": {"type": "integer"}, "include_weather": {"type": "boolean"}},
            "$defs": {"Location": {"type": "object", "properties": {"city": {"type": "string"}}}}}}},
        {"type": "function", "function": {"name": "open", "parameters": {"type": "object", "properties": {
            "id": {"type": "integer"}}}}}
    ]);
    tools
        .as_array_mut()
        .unwrap()
        .extend(extra.as_array().unwrap().iter().cloned());
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "dots",
        tools: tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<dots_function_call>\n<invoke name=\"search\">\n<parameter name=\"query\">weather in Shanghai</parameter>\n</invoke>\n</dots_function_call>",
            None,
            vec![("search", json!({"query": "weather in Shanghai"}))],
        ),
        // vLLM `test_non_stream_supports_multiple_invokes_and_json_fallback`.
        parallel_calls: sample(
            "<dots_function_call><invoke name=\"search\"><parameter name=\"query\">chairs</parameter></invoke><invoke name=\"open\"><parameter name=\"id\">7</parameter></invoke></dots_function_call><dots_function_call>{\"name\":\"search\",\"arguments\":{\"query\":\"tables\"}}</dots_function_call>",
            None,
            vec![("search", json!({"query": "chairs"})), ("open", json!({"id": 7})), ("search", json!({"query": "tables"}))],
        ),
        // vLLM `test_streaming_buffers_partial_marker_and_emits_all_complete_calls`, plus after-text.
        text_before_between_after: sample(
            "visible<dots_function_call><invoke name=\"search\"><parameter name=\"query\">chairs</parameter></invoke></dots_function_call> and <dots_function_call><invoke name=\"search\"><parameter name=\"query\">tables</parameter></invoke></dots_function_call> done",
            Some("visible and  done"),
            vec![("search", json!({"query": "chairs"})), ("search", json!({"query": "tables"}))],
        ),
        // vLLM `test_non_stream_xml_converts_schema_types_and_resolves_ref`.
        nested_json: sample(
            "ok<dots_function_call><invoke name=\"set_location\"><parameter name=\"location\">{\"city\": \"Shanghai\"}</parameter><parameter name=\"days\">3</parameter><parameter name=\"include_weather\">true</parameter></invoke></dots_function_call>",
            Some("ok"),
            vec![("set_location", json!({"location": {"city": "Shanghai"}, "days": 3, "include_weather": true}))],
        ),
        unicode_and_escapes: sample(
            "<dots_function_call>\n<invoke name=\"search\">\n<parameter name=\"query\">上海 \"q\" C:\\new\n🌧 </invoke> </dots_function_call></parameter>\n</invoke>\n</dots_function_call>",
            None,
            vec![("search", json!({"query": "上海 \"q\" C:\\new\n🌧 </invoke> </dots_function_call>"}))],
        ),
        empty_arguments: sample(
            "<dots_function_call>\n<invoke name=\"ping\">\n</invoke>\n<invoke name=\"ping\"/>\n</dots_function_call>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "Sure.<dots_function_call>\n<invoke name=\"search\">\n<parameter name=\"query\">cha",
            Some("Sure."),
            vec![],
            vec!["truncated"],
        ),
        // vLLM `test_streaming_malformed_block_does_not_block_later_valid_call`.
        malformed: broken(
            "<dots_function_call>garbage</dots_function_call><dots_function_call><invoke name=\"search\"><parameter name=\"query\">chairs</parameter></invoke></dots_function_call>",
            None,
            vec![("search", json!({"query": "chairs"}))],
            vec!["unexpected_text"],
        ),
        more: vec![
            (
                // vLLM `test_non_stream_unknown_tool_is_left_as_content`: returned and flagged here.
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<dots_function_call><invoke name=\"ghost\"><parameter name=\"query\">chairs</parameter></invoke></dots_function_call>",
                    None,
                    vec![("ghost", json!({"query": "chairs"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                // vLLM `test_streaming_strips_stray_end_marker`.
                "stray_end_marker_is_reported",
                broken("some text </dots_function_call>", Some("some text "), vec![], vec!["unexpected_text"]),
            ),
            (
                "unquoted_name_attribute",
                sample(
                    "<dots_function_call><invoke name=search><parameter name=query>chairs</parameter></invoke></dots_function_call>",
                    None,
                    vec![("search", json!({"query": "chairs"}))],
                ),
            ),
            (
                "json_body_with_blank_lines",
                sample(
                    "<dots_function_call>\n\n{\"name\": \"open\", \"arguments\": {\"id\": 7}}\n</dots_function_call>",
                    None,
                    vec![("open", json!({"id": 7}))],
                ),
            ),
            ("lone_open_marker_is_truncated", broken("Hi<dots_function_call>", Some("Hi"), vec![], vec!["truncated"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=no -#}
{#- dots.llm1 layout: role tags, <invoke name> calls with <parameter name> values in <dots_function_call>. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|response|>' + (message.content or '') }}
{%- if message.tool_calls %}
{{- '<dots_function_call>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<parameter name="' + key + '">' + (value if value is string else value | tojson) + '</parameter>\n' }}
{%- endfor %}
{{- '</invoke>\n' }}
{%- endfor %}
{{- '</dots_function_call>' }}
{%- endif %}
{{- '<|endofresponse|>' }}
{%- elif message.role == 'tool' %}{{- '<|userprompt|><function_result>' + message.content + '</function_result><|endofuserprompt|>' }}
{%- else %}{{- '<|userprompt|>' + message.content + '<|endofuserprompt|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|response|>' }}{%- endif %}
"#;
