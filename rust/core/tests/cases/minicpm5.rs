//! minicpm5 (OpenBMB MiniCPM5). Samples from the SGLang `minicpm5` detector's examples (Beijing
//! weather, multi-line CDATA), MiniCPM5 outputs quoted in serving projects' issues (`add_numbers`
//! with `123.0`, Paris weather) and the chat template's layout (calls one per line after the
//! content, CDATA around values with `<`, `&` or newlines).

use serde_json::{json, Value};

use super::{broken, sample, weather_tools_and, Matrix};

fn tools() -> Value {
    weather_tools_and(json!([
        {"type": "function", "function": {"name": "get_forecast", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "date": {"type": "string"}, "unit": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "add_numbers", "parameters": {"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "number"}}}}},
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}, "overwrite": {"type": "boolean"}}}}}
    ]))
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "minicpm5",
        tools: tools(),
        plain_content: sample("北京今天晴，气温 25°C。", Some("北京今天晴，气温 25°C。"), vec![]),
        one_call: sample(
            "<function name=\"get_forecast\"><param name=\"city\">北京</param><param name=\"date\">2024-06-27</param></function>",
            None,
            vec![("get_forecast", json!({"city": "北京", "date": "2024-06-27"}))],
        ),
        parallel_calls: sample(
            "<function name=\"get_forecast\"><param name=\"city\">Paris</param><param name=\"unit\">c</param></function>\n<function name=\"add_numbers\"><param name=\"a\">123.0</param><param name=\"b\">456.0</param></function>",
            None,
            vec![
                ("get_forecast", json!({"city": "Paris", "unit": "c"})),
                ("add_numbers", json!({"a": 123.0, "b": 456.0})),
            ],
        ),
        text_before_between_after: sample(
            "Let me check.\n<function name=\"get_forecast\"><param name=\"city\">Warsaw</param></function>\nand\n<function name=\"get_time\"><param name=\"timezone\">CET</param></function>\nDone.",
            Some("Let me check.\n\nand\n\nDone."),
            vec![("get_forecast", json!({"city": "Warsaw"})), ("get_time", json!({"timezone": "CET"}))],
        ),
        nested_json: sample(
            "<function name=\"search\"><param name=\"query\">{\"kept\": 1}</param><param name=\"filters\">{\"year\": {\"gte\": 2020}, \"langs\": [\"rust\", null]}</param><param name=\"tags\">['a', True, None]</param></function>",
            None,
            vec![(
                "search",
                json!({"query": "{\"kept\": 1}", "filters": {"year": {"gte": 2020}, "langs": ["rust", null]}, "tags": ["a", true, null]}),
            )],
        ),
        // The SGLang detector's multi-line CDATA example, and code with `<`, `&` and `</param>`.
        unicode_and_escapes: sample(
            "<function name=\"write_file\"><param name=\"path\">笔记/多行.txt</param><param name=\"content\"><![CDATA[多行\n文本 a < b && c \"q\" \\n </param> ✓]]></param></function>",
            None,
            vec![("write_file", json!({"path": "笔记/多行.txt", "content": "多行\n文本 a < b && c \"q\" \\n </param> ✓"}))],
        ),
        empty_arguments: sample(
            "<function name=\"ping\"></function>\n<function name=\"ping\"/>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "On it.\n<function name=\"write_file\"><param name=\"content\"><![CDATA[line 1\nline",
            Some("On it.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<function name=\"get_forecast\"><param city>Paris</param></function>After.\n<function name=\"get_time\"><param name=\"timezone\">CET</param></function>",
            Some("After.\n"),
            vec![("get_time", json!({"timezone": "CET"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "typed_values_by_schema",
                sample(
                    "<function name=\"write_file\"><param name=\"path\">a.txt</param><param name=\"overwrite\">true</param><param name=\"content\">123</param></function>",
                    None,
                    vec![("write_file", json!({"path": "a.txt", "overwrite": true, "content": "123"}))],
                ),
            ),
            (
                "single_quoted_attributes",
                sample(
                    "<function name='get_time'><param name='timezone'>UTC</param></function>",
                    None,
                    vec![("get_time", json!({"timezone": "UTC"}))],
                ),
            ),
            (
                "cdata_split_around_its_own_end",
                sample(
                    "<function name=\"write_file\"><param name=\"content\"><![CDATA[x]]]]><![CDATA[>y]]></param></function>",
                    None,
                    vec![("write_file", json!({"content": "x]]>y"}))],
                ),
            ),
            (
                "text_and_cdata_in_one_value",
                sample(
                    "<function name=\"write_file\"><param name=\"content\">head <![CDATA[<b>&</b>]]> tail</param></function>",
                    None,
                    vec![("write_file", json!({"content": "head <b>&</b> tail"}))],
                ),
            ),
            (
                "thinking_block_then_call",
                sample(
                    "<think>\n\n</think>\n\n<function name=\"get_time\"><param name=\"timezone\">UTC</param></function>",
                    Some("<think>\n\n</think>\n\n"),
                    vec![("get_time", json!({"timezone": "UTC"}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<function name=\"bash\"><param name=\"command\">ls</param></function>",
                    None,
                    vec![("bash", json!({"command": "ls"}))],
                    vec!["unknown_tool"],
                ),
            ),
            ("lone_open_marker_is_truncated", broken("Hi\n<function", Some("Hi\n"), vec![], vec!["truncated"])),
            (
                "angle_brackets_in_content",
                sample("a < b, <func> and <b>bold</b>", Some("a < b, <func> and <b>bold</b>"), vec![]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Written for toolwire's detection tests: MiniCPM5's bare function tags with CDATA values. -#}
<s>{%- if tools %}<|im_start|>system
# Tools

<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>

Call a function as <function name="function-name"><param name="param-name">param-value</param></function>; wrap a value holding <, & or newlines in <![CDATA[...]]>.<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}<|im_start|>assistant
<think>

</think>

{{ message.content }}
{%- for call in message.tool_calls or [] %}
<function name="{{ call.function.name }}">{% for k, v in call.function.arguments.items() %}<param name="{{ k }}">{{ v if v is string else v | tojson }}</param>{% endfor %}</function>
{%- endfor %}<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
<think>

</think>

{% endif %}
"#;
