//! DeepSeek V4 DSML (the V3.2 markup with a `tool_calls` block). Samples follow DeepSeek's encoder
//! (`encoding_dsv4.py`, mirrored by mlx-lm `deepseek_dsml.py`) and the conformance fixtures
//! `deepseek_v4/TOOLCALLING.batch` (1, 3, 9.a, 9.b, 10, 13) and `TOOLCALLING.batch.7` (7.a, 7.b, 7.f).

use serde_json::json;

use super::deepseek_v3_2::dsml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "deepseek_v4",
        tools: dsml_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>\nand\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>\nDone.",
            Some("Let me check.\n\n\nand\n\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">a}b]</｜DSML｜parameter>\n<｜DSML｜parameter name=\"filters\" string=\"false\">{\"year\": {\"gte\": 2020}, \"tags\": [\"x\", [1, 2]], \"note\": \"</｜DSML｜invoke>\"}</｜DSML｜parameter>\n<｜DSML｜parameter name=\"tags\" string=\"false\">[\"x\", \"y\"]</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            None,
            vec![("search", json!({"query": "a}b]", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]], "note": "</｜DSML｜invoke>"}, "tags": ["x", "y"]}))],
        ),
        unicode_and_escapes: sample(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">Tōkyō \"central\" \\ é\n東京 🌧 </｜DSML｜invoke> <b>\t</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é\n東京 🌧 </｜DSML｜invoke> <b>\t"}))],
        ),
        empty_arguments: sample(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"ping\">\n\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"ping\"/>\n</｜DSML｜tool_calls>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NY",
            Some("I'll look.\n\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\nlocation: NYC\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>After.",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            ("fixture_duplicate_calls", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">LA</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            ("fixture_unknown_tool_is_returned_and_flagged", broken(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"unknown_tool\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("fixture_empty_text", sample("", None, vec![])),
            ("fixture_blank_text", sample("   ", Some("   "), vec![])),
            ("fixture_unicode_parameter", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">Tōkyō central</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_weather", json!({"location": "Tōkyō central"}))],
            )),
            ("self_closing_parameterless_call", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"ping\"/>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_time", json!({"timezone": "EST"})), ("ping", json!({}))],
            )),
            ("typed_parameters", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"book_flight\">\n<｜DSML｜parameter name=\"destination\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"passengers\" string=\"false\">2</｜DSML｜parameter>\n<｜DSML｜parameter name=\"first_class\" string=\"false\">true</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            ("big_integer_kept_exact", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"set_limit\">\n<｜DSML｜parameter name=\"count\" string=\"false\">9007199254740993</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
            ("non_json_value_falls_back_to_string", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"false\">New York</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\"> 3 </｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_weather", json!({"location": "New York", "days": 3}))],
            )),
            ("missing_string_attribute_reads_json", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_weather", json!({"location": "Paris", "days": 3}))],
            )),
            ("string_value_kept_verbatim", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">  42\n</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("search", json!({"query": "  42\n"}))],
            )),
            ("markers_inside_string_value", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">use </｜DSML｜tool_calls> or <｜DSML｜invoke name=\"x\"> or </｜DSML｜param</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("search", json!({"query": "use </｜DSML｜tool_calls> or <｜DSML｜invoke name=\"x\"> or </｜DSML｜param"}))],
            )),
            ("v3_2_block_name_accepted", sample(
                "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">UTC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("mismatched_block_close_accepted", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">UTC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls> ok",
                Some(" ok"),
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("missing_block_opener_still_calls", sample(
                "Checking.\n\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"ping\"/>\nDone.",
                Some("Checking.\n\n\n\nDone."),
                vec![("get_weather", json!({"location": "NYC"})), ("ping", json!({}))],
            )),
            ("missing_block_close_keeps_complete_calls", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("missing_invoke_close_before_block_close", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("eof_before_invoke_close_keeps_call", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("eof_inside_block_close_keeps_calls", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_ca",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("eof_inside_next_invoke_tag_is_truncated", broken(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invo",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["truncated"],
            )),
            ("eof_inside_invoke_close_keeps_call", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜inv",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("lone_open_marker_is_truncated", broken("Hi<｜DSML｜tool_calls>", Some("Hi"), vec![], vec!["truncated"])),
            ("invoke_body_as_json_object", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n{\"location\": \"Paris\", \"days\": 2}\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_weather", json!({"location": "Paris", "days": 2}))],
            )),
            ("stray_text_in_block_is_reported", broken(
                "<｜DSML｜tool_calls>\nI will call it now.\n<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"timezone\" string=\"true\">EST</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["unexpected_text"],
            )),
            ("missing_name_is_reported", broken(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke>\n<｜DSML｜parameter name=\"location\" string=\"true\">NYC</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"ping\"/>\n</｜DSML｜tool_calls>",
                None,
                vec![("ping", json!({}))],
                vec!["missing_name"],
            )),
            ("single_quoted_attributes", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name='get_time'>\n<｜DSML｜parameter name='timezone' string='true'>CET</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("dsml_like_text_in_content", sample(
                "a < b, <｜DSML｜ and <｜DSML｜invok or <b>x</b>",
                Some("a < b, <｜DSML｜ and <｜DSML｜invok or <b>x</b>"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- DeepSeek-V4 layout: DSML <｜DSML｜tool_calls> block with invoke / parameter tags. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<｜User｜>' + message.content }}
{%- elif message.role == 'assistant' %}
{{- '<｜Assistant｜>' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- else %}{{- '</think>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '\n\n<｜DSML｜tool_calls>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<｜DSML｜invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<｜DSML｜parameter name="' + key + '" string="' + ('true' if value is string else 'false') + '">' + (value if value is string else value | tojson) + '</｜DSML｜parameter>\n' }}
{%- endfor %}
{{- '</｜DSML｜invoke>\n' }}
{%- endfor %}
{{- '</｜DSML｜tool_calls>' }}
{%- endif %}
{{- '<｜end▁of▁sentence｜>' }}
{%- elif message.role == 'tool' %}{{- '<function_results><result>' + message.content + '</result></function_results>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<｜Assistant｜><think>' }}{%- endif %}
"#;
