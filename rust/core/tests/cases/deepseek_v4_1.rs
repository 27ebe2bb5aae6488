//! DeepSeek V4.1 DSML: the V4 markup with a space before every tag name (SGLang
//! `deepseekv41_detector.py`: block ` calls`, ` invoke`, ` parameter`, joined to the content by a
//! blank line). Samples: the block shape of SGLang's V4.1 structural tag, V4.1 outputs quoted in
//! public client code (a Bash call after Chinese text, a leaked block with a bare `<owner>` tag).

use serde_json::json;

use super::deepseek_v3_2::dsml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "deepseek_v4_1",
        tools: dsml_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"location\" string=\"true\">Rome</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"unit\" string=\"true\">celsius</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            None,
            vec![("get_weather", json!({"location": "Rome", "unit": "celsius"}))],
        ),
        parallel_calls: sample(
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"location\" string=\"true\">NYC</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n<｜DSML｜ invoke name=\"get_time\">\n<｜DSML｜ parameter name=\"timezone\" string=\"true\">EST</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "好的，我来帮你执行该命令：\n<｜DSML｜ calls><｜DSML｜ invoke name=\"get_weather\"><｜DSML｜ parameter name=\"location\" string=\"true\">NYC</｜DSML｜ parameter></｜DSML｜ invoke></｜DSML｜ calls>\nand\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_time\">\n<｜DSML｜ parameter name=\"timezone\" string=\"true\">EST</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>\nDone.",
            Some("好的，我来帮你执行该命令：\n\nand\n\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"search\">\n<｜DSML｜ parameter name=\"query\" string=\"true\">a}b] </｜DSML｜ invoke></｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"filters\" string=\"false\">{\"year\": {\"gte\": 2020}, \"tags\": [\"x\", [1, 2]], \"note\": \"</｜DSML｜ calls>\"}</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            None,
            vec![("search", json!({"query": "a}b] </｜DSML｜ invoke>", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]], "note": "</｜DSML｜ calls>"}}))],
        ),
        unicode_and_escapes: sample(
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"location\" string=\"true\">Tōkyō \"central\" \\ é\n東京 🌧 <b>\t</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é\n東京 🌧 <b>\t"}))],
        ),
        empty_arguments: sample(
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"ping\">\n</｜DSML｜ invoke>\n<｜DSML｜ invoke name=\"ping\"/>\n</｜DSML｜ calls>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"location\" string=\"true\">NY",
            Some("I'll look.\n\n"),
            vec![],
            vec!["truncated"],
        ),
        // A V4.1 block leaked by a chat bot (chickenbot tests): the body is not DSML parameters.
        malformed: broken(
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"github_issue\"><owner>iconidentify</owner></｜DSML｜ parameter>",
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("typed_parameters", sample(
                "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"book_flight\">\n<｜DSML｜ parameter name=\"destination\" string=\"true\">Paris</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"passengers\" string=\"false\">2</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"first_class\" string=\"false\">true</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"Bash\">\n<｜DSML｜ parameter name=\"command\" string=\"true\">ls -la</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
                None,
                vec![("Bash", json!({"command": "ls -la"}))],
                vec!["unknown_tool"],
            )),
            ("invoke_body_as_json_object", sample(
                "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">{\"location\": \"Paris\", \"days\": 2}</｜DSML｜ invoke>\n</｜DSML｜ calls>",
                None,
                vec![("get_weather", json!({"location": "Paris", "days": 2}))],
            )),
            ("missing_block_opener_still_calls", sample(
                "Checking.\n\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"location\" string=\"true\">NYC</｜DSML｜ parameter>\n</｜DSML｜ invoke>\nDone.",
                Some("Checking.\n\n\nDone."),
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("missing_block_close_keeps_complete_calls", sample(
                "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"location\" string=\"true\">NYC</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("unspaced_v4_tags_are_content", sample(
                "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"ping\"/>\n",
                Some("<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"ping\"/>\n"),
                vec![],
            )),
            ("lone_open_marker_is_truncated", broken("Hi<｜DSML｜ calls>", Some("Hi"), vec![], vec!["truncated"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- DeepSeek-V4.1 layout: DSML with a space after the namespace token: <｜DSML｜ calls>, <｜DSML｜ invoke>. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<｜User｜>' + message.content }}
{%- elif message.role == 'assistant' %}
{{- '<｜Assistant｜>' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- '\n\n<｜DSML｜ calls>\n' }}
{%- for tool_call in message.tool_calls %}
{{- '<｜DSML｜ invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<｜DSML｜ parameter name="' + key + '" string="' + ('true' if value is string else 'false') + '">' + (value if value is string else value | tojson) + '</｜DSML｜ parameter>\n' }}
{%- endfor %}
{{- '</｜DSML｜ invoke>\n' }}
{%- endfor %}
{{- '</｜DSML｜ calls>' }}
{%- endif %}
{{- '<｜end▁of▁sentence｜>' }}
{%- elif message.role == 'tool' %}{{- '<｜Tool｜>' + message.content }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<｜Assistant｜>' }}{%- endif %}
"#;
