//! qwen3_coder (= nemotron_nano, Qwen3.5/3.6). Fixture cases are the model outputs of the
//! frontend-crates conformance batch (qwen3_coder and nemotron_nano share them).

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

/// The shared weather tools plus the conformance fixtures' typed tools.
pub fn xml_tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "book_flight", "parameters": {"type": "object", "properties": {
            "destination": {"type": "string"}, "passengers": {"type": "integer"}, "first_class": {"type": "boolean"}}}}},
        {"type": "function", "function": {"name": "set_limit", "parameters": {"type": "object", "properties": {
            "count": {"type": "number"}, "cap": {"type": ["integer", "null"]}, "note": {"type": "string", "nullable": true},
            "mode": {"anyOf": [{"type": "integer"}, {"type": "object"}]}}}}}
    ]);
    tools
        .as_array_mut()
        .unwrap()
        .extend(extra.as_array().unwrap().iter().cloned());
    tools
}

fn big(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "qwen3_coder",
        tools: xml_tools(),
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        one_call: sample(
            "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=timezone>\nEST\n</parameter>\n</function>\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check.\n\n<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_call>\nand\n<tool_call>\n<function=get_time>\n<parameter=timezone>\nEST\n</parameter>\n</function>\n</tool_call>\nDone.",
            Some("Let me check.\n\n\nand\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<tool_call>\n<function=search>\n<parameter=query>\nrust <b>tags</b> & \"quotes\" </param <parameter name=x>\n</parameter>\n<parameter=filters>\n{\"year\": {\"gte\": 2020}, \"langs\": [\"rust\", {\"x\": \"</parameter\"}]}\n</parameter>\n<parameter=tags>\n['a', \"b's\", None, True, (1, 2.5)]\n</parameter>\n</function>\n</tool_call>",
            None,
            vec![(
                "search",
                json!({"query": "rust <b>tags</b> & \"quotes\" </param <parameter name=x>",
                       "filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": "</parameter"}]},
                       "tags": ["a", "b's", null, true, [1, 2.5]]}),
            )],
        ),
        unicode_and_escapes: sample(
            "<tool_call>\n<function=get_weather>\n<parameter=location>\nTōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two &amp; </tool_call\n</parameter>\n</function>\n</tool_call>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two &amp; </tool_call"}))],
        ),
        empty_arguments: sample(
            "<tool_call>\n<function=ping>\n</function>\n</tool_call>\n<tool_call>\n<function=ping>\n\n</function>\n</tool_call>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.<tool_call>\n<function=get_weather>\n<parameter=location>\nNY",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<tool_call>\nnot a call\n</tool_call>After.<tool_call>\n<function=get_time>\n<parameter=timezone>\nEST\n</parameter>\n</function>\n</tool_call>",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            // Conformance fixtures (TOOLCALLING.batch*.yaml, qwen3_coder and nemotron_nano).
            ("fixture_9a_empty_text", sample("", None, vec![])),
            ("fixture_9b_blank_text", sample("   ", Some("   "), vec![])),
            (
                "fixture_10_duplicate_calls",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_weather>\n<parameter=location>\nLA\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
                ),
            ),
            (
                "fixture_13_unknown_tool_is_returned_and_flagged",
                broken(
                    "<tool_call>\n<function=unknown_tool>\n<parameter=location>NYC</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("unknown_tool", json!({"location": "NYC"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "fixture_7a_typed_parameters",
                sample(
                    "<tool_call>\n<function=book_flight>\n<parameter=destination>\nParis\n</parameter>\n<parameter=passengers>\n2\n</parameter>\n<parameter=first_class>\ntrue\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
                ),
            ),
            (
                "fixture_7b_unicode_value",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nTōkyō central\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "Tōkyō central"}))],
                ),
            ),
            (
                "fixture_7f_big_number_kept_exact",
                sample(
                    "<tool_call>\n<function=set_limit>\n<parameter=count>9007199254740993</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("set_limit", big("{\"count\": 9007199254740993}"))],
                ),
            ),
            // Typing by the schema.
            (
                "string_parameters_stay_verbatim",
                broken(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nnull\n</parameter>\n<parameter=unit>\n42\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "null", "unit": "42", "days": 3}))],
                    vec!["schema_violation"],
                ),
            ),
            (
                "unknown_parameter_stays_string_and_misfit_falls_back",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=extra>\n42\n</parameter>\n<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"extra": "42", "days": "three"}))],
                ),
            ),
            (
                "type_lists_nullable_any_of_and_python_literals",
                sample(
                    "<tool_call>\n<function=set_limit>\n<parameter=cap>\nnull\n</parameter>\n<parameter=note>\nNone\n</parameter>\n<parameter=mode>\n{'fast': True, 'n': 12345678901234567890}\n</parameter>\n<parameter=count>\n1e3\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("set_limit", big("{\"cap\": null, \"note\": \"None\", \"mode\": {\"fast\": true, \"n\": 12345678901234567890}, \"count\": 1e3}"))],
                ),
            ),
            (
                "only_one_newline_is_stripped_each_side",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\n\n  NYC  \n\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "\n  NYC  \n"}))],
                ),
            ),
            // Leniency real outputs need.
            (
                "missing_parameter_end_tags",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n<parameter=days>\n3\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC", "days": 3}))],
                ),
            ),
            (
                "missing_end_tags_at_eof_keep_complete_call",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "missing_tool_call_end_before_next_call",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n<tool_call>\n<function=get_time>\n<parameter=timezone>\nEST\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
                ),
            ),
            (
                "two_functions_in_one_block",
                sample(
                    "<tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n<function=get_time>\n<parameter=timezone>\nEST\n</parameter>\n</function>\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
                ),
            ),
            (
                "bare_function_without_tool_call",
                sample(
                    "Sure.\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n</function>\n<function=ping>\n</function>",
                    Some("Sure.\n\n"),
                    vec![("get_weather", json!({"location": "NYC"})), ("ping", json!({}))],
                ),
            ),
            (
                "bare_function_in_prose_is_content",
                sample(
                    "Write <function=name> then <function=a b> or <function=x>\nto call one.",
                    Some("Write <function=name> then <function=a b> or <function=x>\nto call one."),
                    vec![],
                ),
            ),
            (
                "hermes_json_body_in_tool_call",
                sample(
                    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\", \"days\": 3}}\n</tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC", "days": 3}))],
                ),
            ),
            (
                "stray_text_inside_function_is_content",
                sample(
                    "<tool_call>\n<function=get_weather>\nhmm\n<parameter=location>\nNYC\n</parameter>\n</function>\n</tool_call>",
                    Some("hmm"),
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            ("empty_block_has_no_name", broken("<tool_call></tool_call>ok", Some("ok"), vec![], vec!["missing_name"])),
            ("lone_open_marker_is_truncated", broken("Hi<tool_call>", Some("Hi"), vec![], vec!["truncated"])),
            (
                "truncated_before_any_parameter",
                broken("<tool_call>\n<function=get_weather>\n", None, vec![], vec!["truncated"]),
            ),
            (
                "newline_in_parameter_name_is_malformed",
                broken(
                    "<tool_call>\n<function=get_weather>\n<parameter=loc\nation>\nNYC\n</parameter>\n</function>\n</tool_call>tail",
                    Some("tail"),
                    vec![],
                    vec!["malformed_json"],
                ),
            ),
            (
                "angle_brackets_in_content",
                sample("a < b and <tool or <function or <b>bold</b>", Some("a < b and <tool or <function or <b>bold</b>"), vec![]),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- Qwen3-Coder layout: ChatML turns, XML calls <function=NAME> with <parameter=KEY> values. -#}
{%- if tools %}
{{- '<|im_start|>system\n# Tools\n\n<tools>' }}
{%- for tool in tools %}{{- '\n<function>\n<name>' + tool.function.name + '</name>\n</function>' }}{%- endfor %}
{{- '\n</tools><|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == "assistant" %}
{{- '<|im_start|>assistant\n' }}
{%- if message.reasoning_content %}{{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' }}{%- endif %}
{{- message.content or '' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '\n<tool_call>\n<function=' + tool_call.function.name + '>\n' }}
{%- for args_name, args_value in tool_call.function.arguments | items %}
{{- '<parameter=' + args_name + '>\n' }}
{{- args_value if args_value is string else args_value | tojson }}
{{- '\n</parameter>\n' }}
{%- endfor %}
{{- '</function>\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == "tool" %}
{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n<think>\n' }}{%- endif %}
"#;
