//! glm47 (GLM-4.7 / GLM-5). Fixture cases are the model outputs of the frontend-crates
//! conformance batch for glm47 (GLM-5.1 captures).

use serde_json::{json, Value};

use super::qwen3_coder::xml_tools;
use super::{broken, sample, Matrix};

fn big(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "glm47",
        tools: xml_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call><tool_call>get_time<arg_key>timezone</arg_key><arg_value>EST</arg_value></tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "I'll check both.<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call> and <tool_call>get_time<arg_key>timezone</arg_key><arg_value>EST</arg_value></tool_call>Done.",
            Some("I'll check both. and Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<tool_call>search<arg_key>query</arg_key><arg_value>{\"not\": \"parsed\"}</arg_value><arg_key>filters</arg_key><arg_value>{\"year\": {\"gte\": 2020}, \"langs\": [\"rust\", {\"x\": \"</arg_key>\"}]}</arg_value><arg_key>tags</arg_key><arg_value>['a', None, (1, 2)]</arg_value></tool_call>",
            None,
            vec![(
                "search",
                json!({"query": "{\"not\": \"parsed\"}",
                       "filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": "</arg_key>"}]},
                       "tags": ["a", null, [1, 2]]}),
            )],
        ),
        unicode_and_escapes: sample(
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>  Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two &amp; <tool_call </arg_value></tool_call>",
            None,
            vec![("get_weather", json!({"location": "  Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two &amp; <tool_call "}))],
        ),
        empty_arguments: sample("<tool_call>ping</tool_call><tool_call>ping\n</tool_call>", None, vec![("ping", json!({})), ("ping", json!({}))]),
        truncated: broken(
            "I'll look.<tool_call>get_weather<arg_key>location</arg_key><arg_value>NY",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_call>get_weather<arg_key>location</arg_key>NYC</tool_call>After.<tool_call>get_time<arg_key>timezone</arg_key><arg_value>EST</arg_value></tool_call>",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            // Conformance fixtures (TOOLCALLING.batch*.yaml, glm47).
            ("fixture_9a_empty_text", sample("", None, vec![])),
            ("fixture_9b_blank_text", sample("   ", Some("   "), vec![])),
            (
                "fixture_10_duplicate_calls",
                sample(
                    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call><tool_call>get_weather<arg_key>location</arg_key><arg_value>LA</arg_value></tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
                ),
            ),
            (
                // Dynamo drops this call; vLLM returns it. Parsing is not validation: returned, flagged.
                "fixture_13_unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_call>unknown_tool<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>",
                    None,
                    vec![("unknown_tool", json!({"location": "NYC"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "fixture_7a_typed_arguments",
                sample(
                    "<tool_call>book_flight<arg_key>destination</arg_key><arg_value>Paris</arg_value><arg_key>passengers</arg_key><arg_value>2</arg_value><arg_key>first_class</arg_key><arg_value>true</arg_value></tool_call>",
                    None,
                    vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
                ),
            ),
            (
                "fixture_7b_unicode_value",
                sample(
                    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Tōkyō central</arg_value></tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "Tōkyō central"}))],
                ),
            ),
            (
                "fixture_7f_big_number_kept_exact",
                sample(
                    "<tool_call>set_limit<arg_key>count</arg_key><arg_value>9007199254740993</arg_value></tool_call>",
                    None,
                    vec![("set_limit", big("{\"count\": 9007199254740993}"))],
                ),
            ),
            (
                "glm45_spacing_is_accepted",
                sample(
                    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC", "days": 3}))],
                ),
            ),
            (
                "string_values_are_not_trimmed_or_parsed",
                sample(
                    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>\n[1, 2]\n</arg_value><arg_key>unit</arg_key><arg_value>null</arg_value><arg_key>days</arg_key><arg_value> 4 </arg_value></tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "\n[1, 2]\n", "unit": "null", "days": 4}))],
                ),
            ),
            (
                "type_lists_nullable_any_of_and_python_literals",
                sample(
                    "<tool_call>set_limit<arg_key>cap</arg_key><arg_value>null</arg_value><arg_key>note</arg_key><arg_value>null</arg_value><arg_key>mode</arg_key><arg_value>{'fast': False}</arg_value><arg_key>count</arg_key><arg_value>-2.50</arg_value></tool_call>",
                    None,
                    vec![("set_limit", big("{\"cap\": null, \"note\": null, \"mode\": {\"fast\": false}, \"count\": -2.50}"))],
                ),
            ),
            (
                "misfit_value_falls_back_to_string",
                sample(
                    "<tool_call>book_flight<arg_key>passengers</arg_key><arg_value>two</arg_value><arg_key>first_class</arg_key><arg_value>maybe</arg_value></tool_call>",
                    None,
                    vec![("book_flight", json!({"passengers": "two", "first_class": "maybe"}))],
                ),
            ),
            (
                "missing_value_end_and_call_end",
                sample(
                    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC<arg_key>days</arg_key><arg_value>2</arg_value>",
                    None,
                    vec![("get_weather", json!({"location": "NYC", "days": 2}))],
                ),
            ),
            (
                "missing_call_end_before_next_call",
                sample(
                    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value><tool_call>ping</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"})), ("ping", json!({}))],
                ),
            ),
            (
                "reasoning_markers_stay_content_without_reasoning_mode",
                sample(
                    "\n<think>Need weather.</think>\n<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>",
                    Some("\n<think>Need weather.</think>\n"),
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            ("empty_block_has_no_name", broken("<tool_call></tool_call>ok", Some("ok"), vec![], vec!["missing_name"])),
            (
                "key_without_name_is_missing_name",
                broken("<tool_call><arg_key>a</arg_key><arg_value>1</arg_value></tool_call>", None, vec![], vec!["missing_name"]),
            ),
            ("lone_open_marker_is_truncated", broken("Hi<tool_call>", Some("Hi"), vec![], vec!["truncated"])),
            ("name_only_is_truncated", broken("<tool_call>get_time", None, vec![], vec!["truncated"])),
            (
                "angle_brackets_in_content",
                sample("a < b and <tool or <arg_key> or <b>bold</b>", Some("a < b and <tool or <arg_key> or <b>bold</b>"), vec![]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- GLM-4.7 layout: as GLM-4.5 with no newlines between the name and the key/value pairs. -#}
[gMASK]<sop>
{%- for m in messages %}
{%- if m.role == 'user' %}<|user|>{{ m.content }}
{%- elif m.role == 'assistant' %}<|assistant|>
{%- if m.reasoning_content %}{{ '<think>' + m.reasoning_content.strip() + '</think>' }}{%- else %}{{ '</think>' }}{%- endif %}
{{- m.content.strip() if m.content }}
{%- for tc in m.tool_calls or [] %}
{{- '<tool_call>' + tc.function.name }}
{%- for k, v in tc.function.arguments.items() %}<arg_key>{{ k }}</arg_key><arg_value>{{ v | tojson if v is not string else v }}</arg_value>{%- endfor %}
</tool_call>{% endfor %}
{%- elif m.role == 'tool' %}<|observation|><tool_response>{{ m.content }}</tool_response>
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|assistant|>{{- '</think>' if (enable_thinking is defined and not enable_thinking) else '<think>' }}{%- endif %}
"#;
