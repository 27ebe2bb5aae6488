//! gigachat35 (GigaChat 3.5 GCML). Samples in the layout of the vLLM GigaChat 3.5 reasoning test
//! (`</think>\n\n` then the block, Moscow weather), the SGLang `gigachat35` detector's regexes and a
//! llama.cpp GigaChat 3.5 log (`bash` with `git diff`).

use serde_json::{json, Value};

use super::{broken, sample, weather_tools_and, Matrix};

fn tools() -> Value {
    weather_tools_and(json!([
        {"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {
            "command": {"type": "string"}, "timeout": {"type": "integer"}}}}}
    ]))
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "gigachat35",
        tools: tools(),
        plain_content: sample("Сейчас в Москве +5 °C.", Some("Сейчас в Москве +5 °C."), vec![]),
        one_call: sample(
            "\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"location\" string=\"true\">Москва</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            None,
            vec![("get_weather", json!({"location": "Москва"}))],
        ),
        parallel_calls: sample(
            "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"bash\">\n<｜GCML｜parameter name=\"command\" string=\"true\">git diff</｜GCML｜parameter>\n<｜GCML｜parameter name=\"timeout\" string=\"false\">30</｜GCML｜parameter>\n</｜GCML｜invoke>\n<｜GCML｜invoke name=\"get_time\">\n<｜GCML｜parameter name=\"timezone\" string=\"true\">Europe/Moscow</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            None,
            vec![("bash", json!({"command": "git diff", "timeout": 30})), ("get_time", json!({"timezone": "Europe/Moscow"}))],
        ),
        text_before_between_after: sample(
            "Проверю.\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"location\" string=\"true\">Москва</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>\nи\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_time\">\n<｜GCML｜parameter name=\"timezone\" string=\"true\">MSK</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>\nГотово.",
            Some("Проверю.\n\n\nи\n\n\nГотово."),
            vec![("get_weather", json!({"location": "Москва"})), ("get_time", json!({"timezone": "MSK"}))],
        ),
        nested_json: sample(
            "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"search\">\n<｜GCML｜parameter name=\"query\" string=\"true\">{\"raw\": 1}</｜GCML｜parameter>\n<｜GCML｜parameter name=\"filters\" string=\"false\">{\"year\": {\"gte\": 2020}, \"langs\": [\"ru\", {\"x\": \"</｜GCML｜invoke>\"}]}</｜GCML｜parameter>\n<｜GCML｜parameter name=\"tags\" string=\"false\">[\"a\", null, 2]</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            None,
            vec![("search", json!({"query": "{\"raw\": 1}", "filters": {"year": {"gte": 2020}, "langs": ["ru", {"x": "</｜GCML｜invoke>"}]}, "tags": ["a", null, 2]}))],
        ),
        unicode_and_escapes: sample(
            "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"bash\">\n<｜GCML｜parameter name=\"command\" string=\"true\">grep -n \"привет\" C:\\new\\t | head\n# 東京 🌧 </｜GCML｜tool_calls> <b>\t</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            None,
            vec![("bash", json!({"command": "grep -n \"привет\" C:\\new\\t | head\n# 東京 🌧 </｜GCML｜tool_calls> <b>\t"}))],
        ),
        empty_arguments: sample(
            "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"ping\">\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Смотрю.\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"location\" string=\"true\">Моск",
            Some("Смотрю.\n\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter string=\"true\">Москва</｜GCML｜parameter>\n</｜GCML｜invoke>\n<｜GCML｜invoke name=\"get_time\">\n<｜GCML｜parameter name=\"timezone\" string=\"true\">MSK</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            None,
            vec![("get_time", json!({"timezone": "MSK"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "not_json_after_string_false_stays_a_string",
                sample(
                    "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"location\" string=\"false\">Москва</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
                    None,
                    vec![("get_weather", json!({"location": "Москва"}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"read_file\">\n<｜GCML｜parameter name=\"path\" string=\"true\">a.txt</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
                    None,
                    vec![("read_file", json!({"path": "a.txt"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "missing_block_end_keeps_the_calls",
                sample(
                    "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_time\">\n<｜GCML｜parameter name=\"timezone\" string=\"true\">MSK</｜GCML｜parameter>\n</｜GCML｜invoke>",
                    None,
                    vec![("get_time", json!({"timezone": "MSK"}))],
                ),
            ),
            ("lone_block_opener_is_truncated", broken("Сейчас.<｜GCML｜tool_calls>", Some("Сейчас."), vec![], vec!["truncated"])),
            (
                "dsml_tags_are_content",
                sample("<｜DSML｜tool_calls> is another family's", Some("<｜DSML｜tool_calls> is another family's"), vec![]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Written for toolwire's detection tests: GigaChat 3.5's GCML calls inside role messages. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}assistant<|role_sep|>
{% if message.reasoning_content %}<think>{{ message.reasoning_content }}</think>

{% endif %}{{ message.content }}
{%- if message.tool_calls %}

<｜GCML｜tool_calls>
{% for call in message.tool_calls %}<｜GCML｜invoke name="{{ call.function.name }}">
{% for k, v in call.function.arguments.items() %}<｜GCML｜parameter name="{{ k }}" string="{{ 'true' if v is string else 'false' }}">{{ v if v is string else v | tojson }}</｜GCML｜parameter>
{% endfor %}</｜GCML｜invoke>
{% endfor %}</｜GCML｜tool_calls>
{%- endif %}<|message_sep|>

{% else %}{{ message.role }}<|role_sep|>
{{ message.content }}<|message_sep|>

{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}assistant<|role_sep|>
{% endif %}
"#;
