use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "deepseek_v3_1",
        tools: conformance_tools(),
        // TOOLCALLING.batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // TOOLCALLING.batch.1
        one_call: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\":\"EST\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "The following tool call retrieves weather information: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"New York\"}<｜tool▁call▁end｜> and then <｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": \"EST\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\nThat is all.",
            Some("The following tool call retrieves weather information:  and then \nThat is all."),
            vec![("get_weather", json!({"location": "New York"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>process_data<｜tool▁sep｜>{\"payload\":{\"regions\":[{\"name\":\"west\",\"scores\":[1,2,3]},{\"name\":\"east\",\"scores\":[4,5,6]}],\"flags\":{\"enabled\":true,\"retry\":null},\"empty\":{}}}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}, {"name": "east", "scores": [4, 5, 6]}], "flags": {"enabled": true, "retry": null}, "empty": {}}}))],
        ),
        unicode_and_escapes: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"上海 \\\"浦东\\\" \\\\ <｜tool▁sep｜> \\ud83c\\udf27\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("get_weather", json!({"location": "上海 \"浦东\" \\ <｜tool▁sep｜> 🌧"}))],
        ),
        empty_arguments: sample(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>ping<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁call▁begin｜>ping<｜tool▁sep｜><｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"Ber",
            None,
            vec![],
            vec!["truncated"],
        ),
        // Seen in the wild (Dynamo's test): a stray token instead of <｜tool▁sep｜>. Not a call.
        malformed: broken(
            "<｜tool▁call▁begin｜>get_current_weather宽带}{location\": \"Tokyo\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // TOOLCALLING.batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // TOOLCALLING.batch.10
            ("same_tool_twice", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"LA\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // TOOLCALLING.batch.13
            ("unknown_tool_is_returned_and_flagged", broken(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>unknown_tool<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            // Dynamo TOOLCALLING.stream.4.c: no wrapper, repeated orphan call ends. The call is
            // kept; the orphans are reported, not content.
            ("orphan_call_ends_do_not_leak", broken(
                "Before <｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁call▁end｜><｜tool▁call▁end｜>",
                Some("Before "),
                vec![("get_weather", json!({"location": "NYC"}))],
                vec!["unexpected_text"],
            )),
            // vLLM's streaming test shape: the call begin after the section begin is skipped.
            ("skipped_call_begin", sample(
                "<｜tool▁calls▁begin｜>get_weather<｜tool▁sep｜>{\"location\": \"上海\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_weather", json!({"location": "上海"}))],
            )),
            ("missing_section_end_keeps_calls", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\":\"NYC\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\":\"EST\"}",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            ("v3_shape_is_read", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{\"timezone\": \"UTC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("garbage_after_arguments_is_reported", broken(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": \"UTC\"} oops<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
                vec!["unexpected_text"],
            )),
            ("non_object_arguments_are_malformed", broken(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>UTC<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("big_integer_kept_exact", sample(
                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>set_limit<｜tool▁sep｜>{\"count\":9007199254740993}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- DeepSeek-V3.1 layout: tool-call tokens, the name then <｜tool▁sep｜> then the JSON arguments. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<｜User｜>' + message.content }}
{%- elif message.role == 'assistant' %}
{{- '<｜Assistant｜></think>' + (message.content or '') }}
{%- if message.tool_calls %}
{{- '<｜tool▁calls▁begin｜>' }}
{%- for tool in message.tool_calls %}
{{- '<｜tool▁call▁begin｜>' + tool['function']['name'] + '<｜tool▁sep｜>' + tool['function']['arguments'] | tojson + '<｜tool▁call▁end｜>' }}
{%- endfor %}
{{- '<｜tool▁calls▁end｜>' }}
{%- endif %}
{{- '<｜end▁of▁sentence｜>' }}
{%- elif message.role == 'tool' %}{{- '<｜tool▁output▁begin｜>' + message.content + '<｜tool▁output▁end｜>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<｜Assistant｜>' }}{%- if thinking %}{{- '<think>' }}{%- else %}{{- '</think>' }}{%- endif %}{%- endif %}
"#;
