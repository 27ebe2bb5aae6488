//! seed_oss (ByteDance Seed-OSS). Real outputs from vLLM's `test_seed_oss_tool_parser.py`
//! (Seed-OSS-36B-Instruct generations) and the layout of the model's chat template
//! (llama.cpp `models/templates/ByteDance-Seed-OSS.jinja`: inline values, `| string` for
//! non-strings).

use serde_json::json;

use super::qwen3_coder::xml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "seed_oss",
        tools: xml_tools(),
        plain_content: sample(
            "This is a test response without any tool calls",
            Some("This is a test response without any tool calls"),
            vec![],
        ),
        one_call: sample(
            "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>",
            None,
            vec![("get_weather", json!({"location": "Barcelona, Spain"}))],
        ),
        parallel_calls: sample(
            "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n<parameter=unit>celsius</parameter>\n</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=get_time>\n<parameter=timezone>Europe/Madrid</parameter>\n</function>\n</seed:tool_call>",
            None,
            vec![
                ("get_weather", json!({"location": "Barcelona, Spain", "unit": "celsius"})),
                ("get_time", json!({"timezone": "Europe/Madrid"})),
            ],
        ),
        text_before_between_after: sample(
            "Let me check.\n\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>NYC</parameter>\n</function>\n</seed:tool_call>\nand\n<seed:tool_call>\n<function=get_time>\n<parameter=timezone>EST</parameter>\n</function>\n</seed:tool_call>\nDone.",
            Some("Let me check.\n\n\nand\n\nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<seed:tool_call>\n<function=search>\n<parameter=query>rust <b>tags</b> & \"quotes\" </param <parameter name=x></parameter>\n<parameter=filters>{'year': {'gte': 2020}, 'langs': ['rust', {'x': '</parameter'}], 'strict': True}</parameter>\n<parameter=tags>[\"a\", \"b's\", null, [1, 2.5]]</parameter>\n</function>\n</seed:tool_call>",
            None,
            vec![(
                "search",
                json!({"query": "rust <b>tags</b> & \"quotes\" </param <parameter name=x>",
                       "filters": {"year": {"gte": 2020}, "langs": ["rust", {"x": "</parameter"}], "strict": true},
                       "tags": ["a", "b's", null, [1, 2.5]]}),
            )],
        ),
        unicode_and_escapes: sample(
            "<seed:tool_call>\n<function=get_weather>\n<parameter=location>Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two &amp; </seed:tool_call</parameter>\n</function>\n</seed:tool_call>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" C:\\new\\t 東京 🌧\n\tline two &amp; </seed:tool_call"}))],
        ),
        empty_arguments: sample(
            "<seed:tool_call>\n<function=ping>\n</function>\n</seed:tool_call>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "I'll look.<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcel",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<seed:tool_call>\nnot a call\n</seed:tool_call>After.<seed:tool_call>\n<function=get_time>\n<parameter=timezone>UTC</parameter>\n</function>\n</seed:tool_call>",
            Some("After."),
            vec![("get_time", json!({"timezone": "UTC"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                // vLLM `tool_call_0_thinking_budget` (streaming variant): without a reasoning
                // parser the think block is content.
                "vllm_thinking_budget_0_without_reasoning_parser",
                sample(
                    "<seed:think>\n</seed:cot_budget_reflect>\n</seed:cot_budget_reflect>\nThe current thinking budget is 0, so I will directly start answering the question.\n</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>",
                    Some("<seed:think>\n</seed:cot_budget_reflect>\n</seed:cot_budget_reflect>\nThe current thinking budget is 0, so I will directly start answering the question.\n</seed:think>\n"),
                    vec![("get_weather", json!({"location": "Barcelona, Spain"}))],
                ),
            ),
            (
                "template_python_values_are_typed",
                sample(
                    "<seed:tool_call>\n<function=book_flight>\n<parameter=destination>Paris</parameter>\n<parameter=passengers>2</parameter>\n<parameter=first_class>True</parameter>\n</function>\n</seed:tool_call>",
                    None,
                    vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
                ),
            ),
            (
                // The multi-line value of the chat template's format instructions.
                "multi_line_value",
                sample(
                    "<seed:tool_call>\n<function=search>\n<parameter=query>This is the value for the second parameter\nthat can span\nmultiple lines</parameter>\n</function>\n</seed:tool_call>",
                    None,
                    vec![("search", json!({"query": "This is the value for the second parameter\nthat can span\nmultiple lines"}))],
                ),
            ),
            (
                "qwen_style_newlines_around_values",
                sample(
                    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>\nNYC\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</seed:tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC", "days": 3}))],
                ),
            ),
            (
                "string_parameter_null_stays_a_string",
                sample(
                    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>null</parameter>\n</function>\n</seed:tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "null"}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<seed:tool_call>\n<function=unknown_tool>\n<parameter=location>NYC</parameter>\n</function>\n</seed:tool_call>",
                    None,
                    vec![("unknown_tool", json!({"location": "NYC"}))],
                    vec!["unknown_tool"],
                ),
            ),
            (
                "missing_end_tags_at_eof_keep_complete_call",
                sample(
                    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>NYC</parameter>\n",
                    None,
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "two_functions_in_one_block",
                sample(
                    "<seed:tool_call>\n<function=get_weather>\n<parameter=location>NYC</parameter>\n</function>\n<function=get_time>\n<parameter=timezone>EST</parameter>\n</function>\n</seed:tool_call>",
                    None,
                    vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
                ),
            ),
            (
                // vLLM's back-off: a `<function=...>` block without the wrapper is still a call.
                "bare_function_without_wrapper",
                sample(
                    "Sure.\n<function=get_weather>\n<parameter=location>NYC</parameter>\n</function>",
                    Some("Sure.\n"),
                    vec![("get_weather", json!({"location": "NYC"}))],
                ),
            ),
            (
                "qwen_wrapper_is_not_a_seed_call_marker",
                sample(
                    "Write <tool_call> or <seed:tool or <function=name> to call one.",
                    Some("Write <tool_call> or <seed:tool or <function=name> to call one."),
                    vec![],
                ),
            ),
            ("empty_block_has_no_name", broken("<seed:tool_call></seed:tool_call>ok", Some("ok"), vec![], vec!["missing_name"])),
            ("lone_open_marker_is_truncated", broken("Hi<seed:tool_call>", Some("Hi"), vec![], vec!["truncated"])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Seed-OSS layout: <seed:bos> turns, <function=NAME> calls with <parameter=KEY> in <seed:tool_call>. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<seed:bos>assistant\n' }}
{%- if message.reasoning_content %}{{- '<seed:think>' + message.reasoning_content + '</seed:think>' }}{%- endif %}
{{- message.content or '' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<seed:tool_call>\n<function=' + tool_call.function.name + '>\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<parameter=' + key + '>' + (value if value is string else value | tojson) + '</parameter>\n' }}
{%- endfor %}
{{- '</function>\n</seed:tool_call>' }}
{%- endfor %}
{{- '<seed:eos>' }}
{%- elif message.role == 'tool' %}{{- '<seed:bos>tool\n' + message.content + '<seed:eos>' }}
{%- else %}{{- '<seed:bos>' + message.role + '\n' + message.content + '<seed:eos>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<seed:bos>assistant\n' }}{%- endif %}
"#;
