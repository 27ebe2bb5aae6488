//! MiniMax M2. Samples follow the M2 chat template (block, one invoke per call, one parameter per
//! line, values raw) and the conformance fixtures `minimax_m2/TOOLCALLING.batch` (1, 3, 9.a, 9.b,
//! 10, 13) and `TOOLCALLING.batch.7` (7.a, 7.b, 7.f). Values are typed by the tools' schemas.

use serde_json::json;

use super::deepseek_v3_2::dsml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "minimax_m2",
        tools: dsml_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NYC</parameter>\n</invoke>\n</minimax:tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NYC</parameter>\n</invoke>\n<invoke name=\"get_time\">\n<parameter name=\"timezone\">EST</parameter>\n</invoke>\n</minimax:tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NYC</parameter>\n</invoke>\n</minimax:tool_call>\nand\n<minimax:tool_call>\n<invoke name=\"get_time\">\n<parameter name=\"timezone\">EST</parameter>\n</invoke>\n</minimax:tool_call>\nDone.",
            Some("Let me check.\n\nand\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<minimax:tool_call>\n<invoke name=\"search\">\n<parameter name=\"query\">a}b]</parameter>\n<parameter name=\"filters\">{\"year\": {\"gte\": 2020}, \"tags\": [\"x\", [1, 2]], \"note\": \"</parameter\"}</parameter>\n<parameter name=\"tags\">[\"x\", \"y\"]</parameter>\n</invoke>\n</minimax:tool_call>",
            None,
            vec![("search", json!({"query": "a}b]", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]], "note": "</parameter"}, "tags": ["x", "y"]}))],
        ),
        unicode_and_escapes: sample(
            "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">Tōkyō \"central\" \\ é &amp;\n東京 🌧 </invoke> </minimax:tool_call> <b>\t</parameter>\n</invoke>\n</minimax:tool_call>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é &amp;\n東京 🌧 </invoke> </minimax:tool_call> <b>\t"}))],
        ),
        empty_arguments: sample(
            "<minimax:tool_call>\n<invoke name=\"ping\">\n</invoke>\n<invoke name=\"ping\"></invoke>\n</minimax:tool_call>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NY",
            Some("I'll look.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<minimax:tool_call>\n<invoke name=\"get_weather\">\nlocation=NYC\n</invoke>\n<invoke name=\"get_time\">\n<parameter name=\"timezone\">EST</parameter>\n</invoke>\n</minimax:tool_call>After.",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            ("fixture_duplicate_calls", sample(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NYC</parameter>\n</invoke>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">LA</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // Not the M2 syntax (no invoke): reported, not returned; Dynamo and SGLang drop it, vLLM
            // leaves it in the content.
            ("fixture_block_without_invoke_is_reported", broken(
                "<minimax:tool_call>\n<minimax:tool_name>unknown_tool</minimax:tool_name>\n<minimax:tool_args>{\"location\":\"NYC\"}</minimax:tool_args>\n</minimax:tool_call>",
                None,
                vec![],
                vec!["unexpected_text"],
            )),
            ("fixture_empty_text", sample("", None, vec![])),
            ("fixture_blank_text", sample("   ", Some("   "), vec![])),
            ("fixture_typed_parameters", sample(
                "<minimax:tool_call>\n<invoke name=\"book_flight\">\n<parameter name=\"destination\">Paris</parameter>\n<parameter name=\"passengers\">2</parameter>\n<parameter name=\"first_class\">true</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            ("fixture_unicode_parameter", sample(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">Tōkyō central</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("get_weather", json!({"location": "Tōkyō central"}))],
            )),
            ("fixture_big_integer_kept_exact", sample(
                "<minimax:tool_call>\n<invoke name=\"set_limit\">\n<parameter name=\"count\">9007199254740993</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<minimax:tool_call>\n<invoke name=\"unknown_tool\">\n<parameter name=\"location\">NYC</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("unknown_tool", json!({"location": "NYC", "days": "3"}))],
                vec!["unknown_tool"],
            )),
            ("schema_typing", sample(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">123</parameter>\n<parameter name=\"days\"> 7 </parameter>\n<parameter name=\"unit\">null</parameter>\n<parameter name=\"extra\">42</parameter>\n</invoke>\n<invoke name=\"search\">\n<parameter name=\"filters\">{'open': True, 'near': None}</parameter>\n<parameter name=\"tags\">not a list</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![
                    ("get_weather", json!({"location": "123", "days": 7, "unit": "null", "extra": "42"})),
                    ("search", json!({"filters": {"open": true, "near": null}, "tags": "not a list"})),
                ],
            )),
            ("null_for_a_typed_parameter", sample(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"days\">null</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("get_weather", json!({"days": null}))],
            )),
            ("block_close_inside_string_keeps_the_call", sample(
                "<minimax:tool_call>\n<invoke name=\"search\">\n<parameter name=\"query\">explain </minimax:tool_call> please</parameter>\n</invoke>\n</minimax:tool_call>ok",
                Some("ok"),
                vec![("search", json!({"query": "explain </minimax:tool_call> please"}))],
            )),
            ("string_value_kept_verbatim", sample(
                "<minimax:tool_call>\n<invoke name=\"search\">\n<parameter name=\"query\">\n  line one\n</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("search", json!({"query": "\n  line one\n"}))],
            )),
            ("missing_block_close_keeps_complete_calls", sample(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NYC</parameter>\n</invoke>\n",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("missing_invoke_close_before_block_close", sample(
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"location\">NYC</parameter>\n</minimax:tool_call>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("eof_before_invoke_close_keeps_call", sample(
                "<minimax:tool_call>\n<invoke name=\"get_time\">\n<parameter name=\"timezone\">EST</parameter>\n",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("eof_inside_block_close_keeps_calls", sample(
                "<minimax:tool_call>\n<invoke name=\"get_time\">\n<parameter name=\"timezone\">EST</parameter>\n</invoke>\n</minimax:tool_c",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("lone_open_marker_is_truncated", broken("Hi<minimax:tool_call>", Some("Hi"), vec![], vec!["truncated"])),
            ("unquoted_and_single_quoted_names", sample(
                "<minimax:tool_call>\n<invoke name=get_time>\n<parameter name='timezone'>CET</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("stray_text_in_block_is_reported", broken(
                "<minimax:tool_call>\nCalling now.\n<invoke name=\"get_time\">\n<parameter name=\"timezone\">EST</parameter>\n</invoke>\n</minimax:tool_call>",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["unexpected_text"],
            )),
            ("markup_like_text_in_content", sample(
                "a < b, <minimax:tool or <invoke name=\"x\"> and <b>x</b>",
                Some("a < b, <minimax:tool or <invoke name=\"x\"> and <b>x</b>"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- MiniMax-M2 layout: ]~b] role markers, <invoke name> calls with <parameter name> values in <minimax:tool_call>. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- ']~b]ai\n' }}
{%- if message.reasoning_content %}{{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '\n<minimax:tool_call>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<parameter name="' + key + '">' + (value if value is string else value | tojson) + '</parameter>\n' }}
{%- endfor %}
{{- '</invoke>\n' }}
{%- endfor %}
{{- '</minimax:tool_call>' }}
{%- endif %}
{{- '[e~[\n' }}
{%- elif message.role == 'tool' %}
{{- ']~b]tool\n<response>' + message.content + '</response>[e~[\n' }}
{%- else %}
{{- ']~b]' + message.role + '\n' + message.content + '[e~[\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- ']~b]ai\n<think>\n' }}{%- endif %}
"#;
