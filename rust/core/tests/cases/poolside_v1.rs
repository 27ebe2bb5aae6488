//! poolside_v1 (Poolside Laguna). Samples in the layout the Laguna XS.2 template writes an
//! assistant turn (content, a newline, each call on its own lines followed by a newline) and the
//! compact XS-2.1 / S-2.1 layout; values as the SGLang and vLLM `poolside_v1` tests write them.

use serde_json::json;

use super::qwen3_coder::xml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "poolside_v1",
        tools: xml_tools(),
        plain_content: sample("Sure, what city should I check?", Some("Sure, what city should I check?"), vec![]),
        one_call: sample(
            "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n",
            None,
            vec![("get_weather", json!({"location": "Paris"}))],
        ),
        parallel_calls: sample(
            "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_time\n<arg_key>timezone</arg_key>\n<arg_value>Europe/Paris</arg_value>\n</tool_call>\n",
            None,
            vec![
                ("get_weather", json!({"location": "Paris", "days": 3})),
                ("get_time", json!({"timezone": "Europe/Paris"})),
            ],
        ),
        text_before_between_after: sample(
            "I'll look both up.\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\nand\n<tool_call>get_time\n<arg_key>timezone</arg_key>\n<arg_value>CET</arg_value>\n</tool_call>\nOne moment.",
            Some("I'll look both up.\n\nand\n\nOne moment."),
            vec![("get_weather", json!({"location": "Paris"})), ("get_time", json!({"timezone": "CET"}))],
        ),
        nested_json: sample(
            "<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>{\"kept\": \"as text\"}</arg_value>\n<arg_key>filters</arg_key>\n<arg_value>{\"lang\": [\"rust\", {\"min\": 2}], \"tag\": \"</arg_key>\"}</arg_value>\n<arg_key>tags</arg_key>\n<arg_value>['a', None, True]</arg_value>\n</tool_call>\n",
            None,
            vec![(
                "search",
                json!({"query": "{\"kept\": \"as text\"}",
                       "filters": {"lang": ["rust", {"min": 2}], "tag": "</arg_key>"},
                       "tags": ["a", null, true]}),
            )],
        ),
        // String values are raw text: code with quotes, backslashes, newlines and tag-like text.
        unicode_and_escapes: sample(
            "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>def f():\n    return \"Zürich\\n\" # 東京 ✓ <tool_call</arg_value>\n</tool_call>\n",
            None,
            vec![("get_weather", json!({"location": "def f():\n    return \"Zürich\\n\" # 東京 ✓ <tool_call"}))],
        ),
        empty_arguments: sample("<tool_call>ping\n</tool_call>\n<tool_call>ping</tool_call>", None, vec![("ping", json!({})), ("ping", json!({}))]),
        truncated: broken(
            "Checking.\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Par",
            Some("Checking.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_call>get_weather\n<arg_key>location</arg_key>\nParis\n</tool_call>\nThen:\n<tool_call>get_time\n<arg_key>timezone</arg_key>\n<arg_value>CET</arg_value>\n</tool_call>",
            Some("\nThen:\n"),
            vec![("get_time", json!({"timezone": "CET"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "compact_xs21_layout",
                sample(
                    "<tool_call>book_flight<arg_key>destination</arg_key><arg_value>Lisbon</arg_value><arg_key>passengers</arg_key><arg_value>2</arg_value><arg_key>first_class</arg_key><arg_value>false</arg_value></tool_call>",
                    None,
                    vec![("book_flight", json!({"destination": "Lisbon", "passengers": 2, "first_class": false}))],
                ),
            ),
            (
                "string_values_are_kept_exactly",
                sample(
                    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>\n  Paris \n</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>null</arg_value>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "\n  Paris \n", "unit": "null"}))],
                ),
            ),
            (
                "missing_call_end_before_next_call",
                sample(
                    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Paris</arg_value>\n<tool_call>ping\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "Paris"})), ("ping", json!({}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>ls -la</arg_value>\n</tool_call>",
                    None,
                    vec![("bash", json!({"command": "ls -la"}))],
                    vec!["unknown_tool"],
                ),
            ),
            ("empty_block_has_no_name", broken("<tool_call></tool_call>ok", Some("ok"), vec![], vec!["missing_name"])),
            ("lone_open_marker_is_truncated", broken("Let me check.\n<tool_call>", Some("Let me check.\n"), vec![], vec!["truncated"])),
            (
                "angle_brackets_in_content",
                sample("if a < b and <arg_key> shows up, <b>bold</b>", Some("if a < b and <arg_key> shows up, <b>bold</b>"), vec![]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Written for toolwire's detection tests: the Laguna layout (role tags, GLM call tags with text argument tags). -#}
〈|EOS|〉{%- if tools %}<system>
### Tools

All available function signatures are listed below:
<available_tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</available_tools>

Return each call as an unescaped XML-like object inside '<tool_call>' and '</tool_call>':
<tool_call>function-name
<arg_key>argument-key</arg_key>
<arg_value>value-of-argument-key</arg_value>
</tool_call>
</system>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'user' %}<user>
{{ message.content }}
</user>
{% elif message.role == 'assistant' %}<assistant>
{% if message.reasoning_content %}<think>
{{ message.reasoning_content }}
</think>
{% else %}</think>
{% endif %}{{ message.content }}
{%- for call in message.tool_calls or [] %}<tool_call>{{ call.function.name }}
{% for k, v in call.function.arguments.items() %}<arg_key>{{ k }}</arg_key>
<arg_value>{{ v if v is string else v | tojson }}</arg_value>
{% endfor %}</tool_call>
{% endfor %}</assistant>
{% elif message.role == 'tool' %}<tool_response>
{{ message.content }}
</tool_response>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<assistant>
</think>{% endif %}
"#;
