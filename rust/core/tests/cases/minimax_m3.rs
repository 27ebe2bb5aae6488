//! MiniMax M3. Samples follow the conformance fixtures `minimax_m3/TOOLCALLING.batch` (1, 3, 5.a-g,
//! 9.a, 9.b, 10, 13, 13.a, 13.c; the Dynamo expectations, the only peer with an M3 parser there) and
//! the nested example of Dynamo's M3 parser docs. `]<]minimax[>[` is the namespace token.

use serde_json::{json, Value};

use super::deepseek_v3_2::dsml_tools;
use super::{broken, sample, Matrix};

fn m3_tools() -> Value {
    let mut tools = dsml_tools();
    tools.as_array_mut().unwrap().push(json!({"type": "function", "function": {"name": "create_order", "parameters": {"type": "object", "properties": {
        "user_id": {"type": "integer"},
        "shipping": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}}}}}}));
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "minimax_m3",
        tools: m3_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"get_time\">\n]<]minimax[>[<timezone>EST]<]minimax[>[</timezone>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>\nand\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_time\">\n]<]minimax[>[<timezone>EST]<]minimax[>[</timezone>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>\nDone.",
            Some("Let me check.\n\nand\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"create_order\">\n]<]minimax[>[<user_id>42]<]minimax[>[</user_id>\n]<]minimax[>[<shipping>\n]<]minimax[>[<city>Singapore]<]minimax[>[</city>\n]<]minimax[>[<zip>018956]<]minimax[>[</zip>\n]<]minimax[>[</shipping>\n]<]minimax[>[<items>\n]<]minimax[>[<item>\n]<]minimax[>[<sku>book-001]<]minimax[>[</sku>\n]<]minimax[>[<qty>2]<]minimax[>[</qty>\n]<]minimax[>[</item>\n]<]minimax[>[<item>]<]minimax[>[<sku>pen }]]<]minimax[>[</sku>]<]minimax[>[<qty>10]<]minimax[>[</qty>]<]minimax[>[</item>\n]<]minimax[>[</items>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
            None,
            vec![("create_order", json!({"user_id": 42, "shipping": {"city": "Singapore", "zip": 18956}, "items": [{"sku": "book-001", "qty": 2}, {"sku": "pen }]", "qty": 10}]}))],
        ),
        unicode_and_escapes: sample(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>Tōkyō \"central\" \\ é &amp;\n東京 🌧 </location> </invoke> <b>\t]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é &amp;\n東京 🌧 </location> </invoke> <b>\t"}))],
        ),
        empty_arguments: sample(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"ping\">\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"ping\"/>\n]<]minimax[>[</tool_call>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NY",
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\nlocation=NYC\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"get_time\">\n]<]minimax[>[<timezone>EST]<]minimax[>[</timezone>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>After.",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            ("fixture_missing_block_close_recovered", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("fixture_orphan_block_close_after_bare_invoke", sample(
                "]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("fixture_multi_call_missing_block_close", sample(
                "I'll start by fetching the weather for both Boston and New York at the same time!\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>Boston]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>New York]<]minimax[>[</location>\n]<]minimax[>[</invoke>",
                Some("I'll start by fetching the weather for both Boston and New York at the same time!\n"),
                vec![("get_weather", json!({"location": "Boston"})), ("get_weather", json!({"location": "New York"}))],
            )),
            ("fixture_last_call_truncated", broken(
                "I'll start by fetching the weather for both Boston and New York at the same time!\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>Boston]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>New York",
                Some("I'll start by fetching the weather for both Boston and New York at the same time!\n"),
                vec![("get_weather", json!({"location": "Boston"}))],
                vec!["truncated"],
            )),
            ("fixture_bare_invoke_then_block", sample(
                "]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>Boston]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "Boston"}))],
            )),
            ("fixture_bare_invoke_after_prose", sample(
                "I will check that. ]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                Some("I will check that. "),
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("fixture_empty_text", sample("", None, vec![])),
            ("fixture_blank_text", sample("   ", Some("   "), vec![])),
            ("fixture_duplicate_calls", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>LA]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            ("fixture_unknown_tool_is_returned_and_flagged", broken(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"unknown_tool\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("fixture_mixed_known_and_unknown", broken(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NYC]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"unknown_tool\">\n]<]minimax[>[<location>LA]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("unknown_tool", json!({"location": "LA"}))],
                vec!["unknown_tool"],
            )),
            ("typed_parameters", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"book_flight\">\n]<]minimax[>[<destination>Paris]<]minimax[>[</destination>\n]<]minimax[>[<passengers>2]<]minimax[>[</passengers>\n]<]minimax[>[<first_class>true]<]minimax[>[</first_class>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            ("big_integer_kept_exact", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"set_limit\">\n]<]minimax[>[<count>9007199254740993]<]minimax[>[</count>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
            ("untyped_object_infers_exact_scalars_and_items", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<filters>]<]minimax[>[<year>2024]<]minimax[>[</year>]<]minimax[>[<open>true]<]minimax[>[</open>]<]minimax[>[<zip>007]<]minimax[>[</zip>]<]minimax[>[<tag>a]<]minimax[>[</tag>]<]minimax[>[<tag>b]<]minimax[>[</tag>]<]minimax[>[<list>]<]minimax[>[<item>1]<]minimax[>[</item>]<]minimax[>[<item>x]<]minimax[>[</item>]<]minimax[>[</list>]<]minimax[>[</filters>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("search", json!({"filters": {"year": 2024, "open": true, "zip": "007", "tag": ["a", "b"], "list": [1, "x"]}}))],
            )),
            ("mixed_text_kept_under_dollar_text", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<filters>note: ]<]minimax[>[<a>1]<]minimax[>[</a> end]<]minimax[>[</filters>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("search", json!({"filters": {"a": 1, "$text": "note:  end"}}))],
            )),
            ("empty_array_and_self_closing", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<tags>]<]minimax[>[</tags>\n]<]minimax[>[<filters/>\n]<]minimax[>[<query>]<]minimax[>[</query>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("search", json!({"tags": [], "filters": {}, "query": ""}))],
            )),
            ("string_value_kept_verbatim", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<query>  two  words\n]<]minimax[>[</query>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("search", json!({"query": "  two  words\n"}))],
            )),
            ("structure_overrides_a_string_schema", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<query>]<]minimax[>[<a>1]<]minimax[>[</a>]<]minimax[>[</query>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("search", json!({"query": {"a": 1}}))],
            )),
            ("unclosed_inner_tag_closed_by_outer", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<filters>]<]minimax[>[<a>]<]minimax[>[<b>1]<]minimax[>[</a>]<]minimax[>[</filters>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("search", json!({"filters": {"a": {"b": 1}}}))],
            )),
            ("mismatched_closing_tag_is_malformed", broken(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"search\">\n]<]minimax[>[<filters>]<]minimax[>[<a>1]<]minimax[>[</b>]<]minimax[>[</filters>\n]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"ping\"/>\n]<]minimax[>[</tool_call>",
                None,
                vec![("ping", json!({}))],
                vec!["malformed_json"],
            )),
            ("tag_inside_a_scalar_is_malformed", broken(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<location>NY]<]minimax[>[<b>C]<]minimax[>[</b>]<]minimax[>[</location>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("stray_namespace_token_never_reaches_content", broken(
                "Hi ]<]minimax[>[there",
                Some("Hi there"),
                vec![],
                vec!["unexpected_text"],
            )),
            ("orphan_block_close_in_content_is_reported", broken(
                "Done.]<]minimax[>[</tool_call>",
                Some("Done."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("lone_open_marker_is_truncated", broken("Hi]<]minimax[>[<tool_call>", Some("Hi"), vec![], vec!["truncated"])),
            ("eof_before_invoke_close_keeps_call", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_time\">\n]<]minimax[>[<timezone>EST]<]minimax[>[</timezone>\n",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("missing_invoke_close_before_block_close", sample(
                "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_time\">\n]<]minimax[>[<timezone>EST]<]minimax[>[</timezone>\n]<]minimax[>[</tool_call>",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("stray_text_in_block_is_reported", broken(
                "]<]minimax[>[<tool_call>\nCalling now.\n]<]minimax[>[<invoke name=\"get_time\">\n]<]minimax[>[<timezone>EST]<]minimax[>[</timezone>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["unexpected_text"],
            )),
            ("markup_like_text_in_content", sample(
                "a < b, ]<]mini and <tool_call> or <invoke name=\"x\">",
                Some("a < b, ]<]mini and <tool_call> or <invoke name=\"x\">"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- MiniMax-M3 layout: every tag behind the ]<]minimax[>[ namespace token; the parameter tag is the key. -#}
{%- set ns_tag = ']<]minimax[>[' %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- ']~b]ai\n' }}
{%- if message.reasoning_content %}{{- '<mm:think>' + message.reasoning_content + '</mm:think>' }}{%- endif %}
{{- message.content or '' }}
{%- if message.tool_calls %}
{{- ']<]minimax[>[<tool_call>\n' }}
{%- for tool_call in message.tool_calls %}
{{- ']<]minimax[>[<invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- ']<]minimax[>[<' + key + '>' + (value if value is string else value | tojson) + ']<]minimax[>[</' + key + '>\n' }}
{%- endfor %}
{{- ']<]minimax[>[</invoke>\n' }}
{%- endfor %}
{{- ']<]minimax[>[</tool_call>' }}
{%- endif %}
{{- '[e~[\n' }}
{%- elif message.role == 'tool' %}
{{- ']~b]tool\n' + message.content + '[e~[\n' }}
{%- else %}
{{- ']~b]' + message.role + '\n' + message.content + '[e~[\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- ']~b]ai\n' }}{%- endif %}
"#;
