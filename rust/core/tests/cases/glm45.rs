//! glm45 (GLM-4.5 / 4.6): the glm47 tags with newlines between the parts, as the GLM-4.5 and
//! GLM-4.6 chat templates write them.

use serde_json::json;

use super::qwen3_coder::xml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "glm45",
        tools: xml_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n</tool_call>\n<tool_call>get_time\n<arg_key>timezone</arg_key>\n<arg_value>EST</arg_value>\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "\nI'll check both.\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n</tool_call>\nthen\n<tool_call>get_time\n<arg_key>timezone</arg_key>\n<arg_value>EST</arg_value>\n</tool_call>\nDone.",
            Some("\nI'll check both.\n\nthen\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<tool_call>search\n<arg_key>query</arg_key>\n<arg_value>[\"a\", \"b\"]</arg_value>\n<arg_key>filters</arg_key>\n<arg_value>{\"year\": {\"gte\": 2020}, \"deep\": [[{\"k\": \"</tool_call\"}]]}</arg_value>\n<arg_key>tags</arg_key>\n<arg_value>[\"x\", 1, true, null]</arg_value>\n</tool_call>",
            None,
            vec![(
                "search",
                json!({"query": "[\"a\", \"b\"]", "filters": {"year": {"gte": 2020}, "deep": [[{"k": "</tool_call"}]]}, "tags": ["x", 1, true, null]}),
            )],
        ),
        unicode_and_escapes: sample(
            "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Zürich \"Altstadt\" \\u00e9 ✓\n2nd line\t</arg_value>\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "Zürich \"Altstadt\" \\u00e9 ✓\n2nd line\t"}))],
        ),
        empty_arguments: sample("<tool_call>ping\n</tool_call>", None, vec![("ping", json!({}))]),
        truncated: broken(
            "Checking.\n<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_val",
            Some("Checking.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_call>get weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n</tool_call>\nAfter.",
            Some("\nAfter."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "glm47_spacing_is_accepted",
                sample(
                    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "literal_backslash_n_between_parts",
                sample(
                    "<tool_call>get_weather\\n<arg_key>location</arg_key>\\n<arg_value>NYC</arg_value>\\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "typed_arguments",
                sample(
                    "<tool_call>book_flight\n<arg_key>destination</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>passengers</arg_key>\n<arg_value>2</arg_value>\n<arg_key>first_class</arg_key>\n<arg_value>True</arg_value>\n</tool_call>",
                    None,
                    vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_call>launch\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
                    None,
                    vec![("launch", json!({"x": "1"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "value_missing_before_next_key_is_malformed",
                broken(
                    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_key>days</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
                    None,
                    vec![],
                    vec!["malformed_json"],
                ),
            ),
            (
                "missing_call_end_at_eof_keeps_complete_call",
                sample(
                    "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>NYC</arg_value>\n",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- GLM-4.5 layout: role tokens, the name after <tool_call>, one <arg_key>/<arg_value> pair per line. -#}
[gMASK]<sop>
{%- for m in messages %}
{%- if m.role == 'user' %}<|user|>
{{ m.content }}
{%- elif m.role == 'assistant' %}<|assistant|>
{%- if m.reasoning_content %}{{ '\n<think>' + m.reasoning_content.strip() + '</think>' }}{%- else %}{{ '\n<think></think>' }}{%- endif %}
{{- '\n' + m.content.strip() if m.content }}
{%- for tc in m.tool_calls or [] %}
{{- '\n<tool_call>' + tc.function.name }}
{% for k, v in tc.function.arguments.items() %}
<arg_key>{{ k }}</arg_key>
<arg_value>{{ v | tojson if v is not string else v }}</arg_value>
{% endfor %}
</tool_call>{% endfor %}
{%- elif m.role == 'tool' %}<|observation|>
<tool_response>
{{ m.content }}
</tool_response>
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|assistant|>{{- '\n<think></think>' if (enable_thinking is defined and not enable_thinking) else '' }}{%- endif %}
"#;
