use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

/// The shared weather tools plus the tools of the Dynamo conformance fixtures.
pub fn conformance_tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "book_flight", "parameters": {"type": "object", "properties": {
            "destination": {"type": "string"}, "passengers": {"type": "integer"}, "first_class": {"type": "boolean"}}}}},
        {"type": "function", "function": {"name": "set_temperature", "parameters": {"type": "object", "properties": {
            "celsius": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "process_data", "parameters": {"type": "object", "properties": {
            "items": {"type": "array"}, "config": {"type": "object"}, "payload": {"type": "object"}}}}},
        {"type": "function", "function": {"name": "set_limit", "parameters": {"type": "object", "properties": {
            "count": {"type": "number"}}}}},
        {"type": "function", "function": {"name": "run_query", "parameters": {"type": "object", "properties": {
            "sql": {"type": "string"}}}}}
    ]);
    if let (Some(list), Some(more)) = (tools.as_array_mut(), extra.as_array()) {
        list.extend(more.iter().cloned());
    }
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "deepseek_v3",
        tools: conformance_tools(),
        // TOOLCALLING.batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // TOOLCALLING.batch.1
        one_call: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NYC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        // The chat template joins calls with "\n".
        parallel_calls: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NYC\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"timezone\": \"EST\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check both.\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NYC\"}\n```<｜tool▁call▁end｜>\nAlso the time:\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"timezone\": \"EST\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> Done.",
            Some("Let me check both.\n\n\nAlso the time:\n Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n{\"query\": \"```}\", \"filters\": {\"year\": {\"gte\": 2020}, \"tags\": [\"x\", [1, 2]]}}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("search", json!({"query": "```}", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}))],
        ),
        unicode_and_escapes: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"Tōkyō \\\"central\\\" \\u00e9 <｜tool▁call▁end｜> 東京\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" é <｜tool▁call▁end｜> 東京"}))],
        ),
        empty_arguments: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>ping\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NY",
            Some("Checking."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\nlocation = NYC\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"timezone\": \"EST\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            // TOOLCALLING.batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // TOOLCALLING.batch.10
            ("same_tool_twice", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NYC\"}\n```<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"LA\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // TOOLCALLING.batch.13: returned (as Dynamo and vLLM do) and flagged.
            ("unknown_tool_is_returned_and_flagged", broken(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>unknown_tool\n```json\n{\"location\": \"NYC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("missing_section_end_keeps_calls", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NYC\"}\n```<｜tool▁call▁end｜>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("missing_call_end_and_fence_keeps_complete_call", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"location\": \"NYC\"}",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("unfenced_body_is_read", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n{\"timezone\": \"UTC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("v3_1_shape_is_read", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": \"UTC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("big_integer_kept_exact", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>set_limit\n```json\n{\"count\": 9007199254740993}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
            ("missing_name_is_reported", broken(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>\n```json\n{\"a\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![],
                vec!["missing_name"],
            )),
            ("stray_section_end_is_reported_not_content", broken(
                "All done.<｜tool▁calls▁end｜>",
                Some("All done."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("lone_section_begin_is_truncated", broken("Hi<｜tool▁calls▁begin｜>", Some("Hi"), vec![], vec!["truncated"])),
            ("lookalike_text_is_content", sample(
                "Use <｜tool or <tool▁call> in docs｜>",
                Some("Use <｜tool or <tool▁call> in docs｜>"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- DeepSeek-V3 / R1 layout: tool-call tokens, the type then <｜tool▁sep｜> then the name, JSON in a fence. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<｜User｜>' + message.content }}
{%- elif message.role == 'assistant' and message.tool_calls %}
{{- '<｜Assistant｜>' + (message.content or '') + '<｜tool▁calls▁begin｜>' }}
{%- for tool in message.tool_calls %}
{%- if not loop.first %}{{- '\n' }}{%- endif %}
{{- '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] | tojson + '\n' + '```' + '<｜tool▁call▁end｜>' }}
{%- endfor %}
{{- '<｜tool▁calls▁end｜><｜end▁of▁sentence｜>' }}
{%- elif message.role == 'assistant' %}{{- '<｜Assistant｜>' + message.content + '<｜end▁of▁sentence｜>' }}
{%- elif message.role == 'tool' %}{{- '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message.content + '<｜tool▁output▁end｜><｜tool▁outputs▁end｜>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<｜Assistant｜><think>\n' }}{%- endif %}
"#;
