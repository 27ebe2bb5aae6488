use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "kimi_k2",
        tools: conformance_tools(),
        // TOOLCALLING.batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // TOOLCALLING.batch.1
        one_call: sample(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_calls_section_end|>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"timezone\":\"EST\"}<|tool_call_end|><|tool_calls_section_end|>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "I'll check the weather first. <|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\": \"NYC\"}<|tool_call_end|>\nthen the time\n<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"timezone\": \"EST\"}<|tool_call_end|>\n<|tool_calls_section_end|>Back soon.",
            Some("I'll check the weather first. \nthen the time\nBack soon."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        // TOOLCALLING.batch.7.e
        nested_json: sample(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.process_data:0<|tool_call_argument_begin|>{\"payload\":{\"regions\":[{\"name\":\"west\",\"scores\":[1,2,3]},{\"name\":\"east\",\"scores\":[4,5,6]}],\"flags\":{\"enabled\":true,\"retry\":null},\"empty\":{}}}<|tool_call_end|><|tool_calls_section_end|>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}, {"name": "east", "scores": [4, 5, 6]}], "flags": {"enabled": true, "retry": null}, "empty": {}}}))],
        ),
        // TOOLCALLING.batch.7.b
        unicode_and_escapes: sample(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"Tōkyō \\\"central\\\"\"}<|tool_call_end|><|tool_calls_section_end|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\""}))],
        ),
        empty_arguments: sample(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.ping:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Looking it up.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NY",
            Some("Looking it up."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>location=NYC<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"timezone\":\"EST\"}<|tool_call_end|><|tool_calls_section_end|>",
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
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{\"location\":\"LA\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // TOOLCALLING.batch.13
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.unknown_tool:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            // TOOLCALLING.batch.7.a
            ("scalar_types", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.book_flight:0<|tool_call_argument_begin|>{\"destination\":\"Paris\",\"passengers\":2,\"first_class\":true}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            // TOOLCALLING.batch.7.c: JSON arguments are not coerced to the schema.
            ("schema_mismatch_kept_as_written", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.set_temperature:0<|tool_call_argument_begin|>{\"celsius\":\"20\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("set_temperature", json!({"celsius": "20"}))],
            )),
            // TOOLCALLING.batch.7.d
            ("nested_object_and_array", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.process_data:0<|tool_call_argument_begin|>{\"items\":[1,2,3],\"config\":{\"nested\":true}}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("process_data", json!({"items": [1, 2, 3], "config": {"nested": true}}))],
            )),
            // TOOLCALLING.batch.7.f
            ("big_integer_kept_exact", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.set_limit:0<|tool_call_argument_begin|>{\"count\":9007199254740993}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
            // Dynamo PR #8208: max_tokens cut the section end; the complete calls stay.
            ("missing_section_end_keeps_calls", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"timezone\":\"EST\"}<|tool_call_end|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            ("missing_call_end_keeps_complete_call", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("singular_section_markers", sample(
                "<|tool_call_section_begin|><|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>{\"timezone\":\"CET\"}<|tool_call_end|><|tool_call_section_end|>",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("id_without_functions_prefix", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>get_time:3<|tool_call_argument_begin|>{\"timezone\":\"CET\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("duplicate_model_ids_are_reported", broken(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"location\":\"LA\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
                vec!["duplicate_call_id"],
            )),
            ("bare_counter_id_has_no_name", broken(
                "<|tool_calls_section_begin|><|tool_call_begin|>0<|tool_call_argument_begin|>{\"location\":\"NYC\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![],
                vec!["missing_name"],
            )),
            ("truncated_in_header_leaks_no_markers", broken(
                "Sure.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_wea",
                Some("Sure."),
                vec![],
                vec!["truncated"],
            )),
            ("stray_section_markers_are_reported", broken(
                "Done.<|tool_calls_section_end|>",
                Some("Done."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("empty_section", sample(
                "Nothing to call.<|tool_calls_section_begin|><|tool_calls_section_end|>",
                Some("Nothing to call."),
                vec![],
            )),
            ("markers_inside_json_strings", sample(
                "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{\"query\":\"<|tool_call_end|><|tool_calls_section_end|> }\"}<|tool_call_end|><|tool_calls_section_end|>",
                None,
                vec![("search", json!({"query": "<|tool_call_end|><|tool_calls_section_end|> }"}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Kimi K2 layout: role tokens, a section of calls, each with its id functions.NAME:INDEX. -#}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<|im_user|>user<|im_middle|>' + message.content + '<|im_end|>' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_assistant|>assistant<|im_middle|>' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '<|tool_calls_section_begin|>' }}
{%- for tool_call in message.tool_calls %}
{{- '<|tool_call_begin|>' + tool_call.id + '<|tool_call_argument_begin|>' + tool_call.function.arguments | tojson + '<|tool_call_end|>' }}
{%- endfor %}
{{- '<|tool_calls_section_end|>' }}
{%- endif %}
{{- '<|im_end|>' }}
{%- elif message.role == 'tool' %}{{- '<|im_system|>tool<|im_middle|>## Return of ' + message.tool_call_id + '\n' + message.content + '<|im_end|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_assistant|>assistant<|im_middle|>' }}{%- endif %}
"#;
