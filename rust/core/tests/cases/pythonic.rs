//! Pythonic calls. Inputs marked "fixture" are the model texts of the ai-dynamo conformance
//! fixtures (fixtures-batch-v1/inputs/pythonic, TOOLCALLING.batch and batch.7); Dynamo 3.0.0,
//! vLLM 0.23.0 and SGLang 0.5.12 all return the calls expected here for them.

use serde_json::json;

use super::{broken, conformance_tools, sample, Matrix};

fn exact(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "pythonic",
        tools: conformance_tools(),
        // fixture batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // fixture batch.1
        one_call: sample(r#"[get_weather(location="NYC")]"#, None, vec![("get_weather", json!({"location": "NYC"}))]),
        // fixture batch.31.a
        parallel_calls: sample(
            r#"[run_query(sql="SELECT a, SELECT b"), get_time(timezone="EST")]"#,
            None,
            vec![("run_query", json!({"sql": "SELECT a, SELECT b"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            r#"Let me check. [get_weather(location="NYC")] and [get_time(timezone='EST')] done."#,
            Some("Let me check.  and  done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        // fixture batch.7.d
        nested_json: sample(
            r#"[process_data(items=[1, 2, 3], config={"nested": True})]"#,
            None,
            vec![("process_data", json!({"items": [1, 2, 3], "config": {"nested": true}}))],
        ),
        // fixture batch.7.b
        unicode_and_escapes: sample(
            r#"[get_weather(location="Tōkyō \"central\"")]"#,
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\""}))],
        ),
        empty_arguments: sample("[ping()]", None, vec![("ping", json!({}))]),
        truncated: broken(r#"I'll look.[get_weather(location="NY"#, Some("I'll look."), vec![], vec!["truncated"]),
        malformed: broken(
            r#"<|python_start|>[get_weather("NYC")]<|python_end|>After."#,
            Some("After."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // Python sets and tuples where the schema says array.
            ("set_and_tuple_values", sample(
                "[search(query='x', tags={'a', 'b'}), search(query='y', tags=('c', None, True))]",
                None,
                vec![
                    ("search", json!({"query": "x", "tags": ["a", "b"]})),
                    ("search", json!({"query": "y", "tags": ["c", null, true]})),
                ],
            )),
            // fixture batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // fixture batch.10
            ("same_tool_twice", sample(
                r#"[get_weather(location="NYC"), get_weather(location="LA")]"#,
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // fixture batch.30.a / 30.b / 30.c / 31.b
            ("separator_inside_string", sample(
                r#"[run_query(sql="SELECT a, SELECT b")]"#,
                None,
                vec![("run_query", json!({"sql": "SELECT a, SELECT b"}))],
            )),
            ("delimiters_inside_string", sample(
                r#"[run_query(sql="SELECT value WHERE note has brace } and bracket ]")]"#,
                None,
                vec![("run_query", json!({"sql": "SELECT value WHERE note has brace } and bracket ]"}))],
            )),
            ("call_lookalike_inside_string", sample(
                r#"[run_query(sql="literal [get_time marker] stays text")]"#,
                None,
                vec![("run_query", json!({"sql": "literal [get_time marker] stays text"}))],
            )),
            ("delimiters_inside_first_of_two", sample(
                r#"[run_query(sql="SELECT value WHERE note has brace } and bracket ]"), get_time(timezone="EST")]"#,
                None,
                vec![
                    ("run_query", json!({"sql": "SELECT value WHERE note has brace } and bracket ]"})),
                    ("get_time", json!({"timezone": "EST"})),
                ],
            )),
            // fixture batch.13.a / 13.c
            ("unknown_tool_is_returned_and_flagged", broken(
                r#"[unknown_tool(location="NYC")]"#,
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("known_and_unknown", broken(
                r#"[get_weather(location="NYC"), unknown_tool(location="LA")]"#,
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("unknown_tool", json!({"location": "LA"}))],
                vec!["unknown_tool"],
            )),
            // fixture batch.7.a / 7.c / 7.e
            ("scalar_types", sample(
                r#"[book_flight(destination="Paris", passengers=2, first_class=True)]"#,
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            ("string_where_schema_says_integer_stays_a_string", sample(
                r#"[set_temperature(celsius="20")]"#,
                None,
                vec![("set_temperature", json!({"celsius": "20"}))],
            )),
            ("deep_payload", sample(
                r#"[process_data(payload={"regions":[{"name":"west","scores":[1,2,3]},{"name":"east","scores":[4,5,6]}],"flags":{"enabled":True,"retry":None},"empty":{}})]"#,
                None,
                vec![("process_data", json!({"payload": {
                    "regions": [{"name": "west", "scores": [1, 2, 3]}, {"name": "east", "scores": [4, 5, 6]}],
                    "flags": {"enabled": true, "retry": null}, "empty": {}}}))],
            )),
            ("python_literals", sample(
                "[search(query='it\\'s a \"test\"\\n', tags=('a', 'b'), filters={'k': None, 2: False, 'one': (1,), 'p': (7)}, exact=False)]",
                None,
                vec![("search", json!({"query": "it's a \"test\"\n", "tags": ["a", "b"],
                    "filters": {"k": null, "2": false, "one": [1], "p": 7}, "exact": false}))],
            )),
            ("numbers_kept_exact", sample(
                "[get_weather(days=123456789012345678901234567890, offset=-3, scale=1.5e-3, ratio=.5, hex=0xFF, big=1_000_000)]",
                None,
                vec![("get_weather", exact(
                    r#"{"days": 123456789012345678901234567890, "offset": -3, "scale": 1.5e-3, "ratio": 0.5, "hex": 255, "big": 1000000}"#,
                ))],
            )),
            ("string_forms", sample(
                "[search(query=\"\"\"line one\nline \"two\\\"\"\"\", tags=['ab' \"cd\", r'\\d+', u'\\u00e9\\x41\\U0001F600'])]",
                None,
                vec![("search", json!({"query": "line one\nline \"two\"", "tags": ["abcd", "\\d+", "éA😀"]}))],
            )),
            ("multiline_list", sample(
                "[\n  get_weather(\n    location=\"NYC\",\n    unit=\"celsius\",\n  ),\n  get_time(timezone=\"EST\"),\n]",
                None,
                vec![("get_weather", json!({"location": "NYC", "unit": "celsius"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            ("llama4_markers_around_list", sample(
                "<|python_start|>[get_weather(location='Paris'), ping()]<|python_end|>",
                None,
                vec![("get_weather", json!({"location": "Paris"})), ("ping", json!({}))],
            )),
            ("llama4_bare_call_after_marker", sample(
                "<|python_start|>get_time(timezone=\"UTC\")<|python_end|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("llama4_marker_without_end", sample(
                "<|python_start|>[get_time(timezone=\"UTC\")]",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("olmo3_function_calls_block", sample(
                "<function_calls>\nget_weather(location='New York', unit='celsius')\nget_time(timezone=null)\nping()\n</function_calls>",
                None,
                vec![
                    ("get_weather", json!({"location": "New York", "unit": "celsius"})),
                    ("get_time", json!({"timezone": null})),
                    ("ping", json!({})),
                ],
            )),
            ("olmo3_broken_line_does_not_sink_the_others", broken(
                "<function_calls>\nget_weather('New York')\nget_time(timezone=true)\n</function_calls>",
                None,
                vec![("get_time", json!({"timezone": true}))],
                vec!["malformed_json"],
            )),
            ("dotted_and_hyphenated_names", broken(
                r#"[weather.get-current(location="Oslo")]"#,
                None,
                vec![("weather.get-current", json!({"location": "Oslo"}))],
                vec!["unknown_tool"],
            )),
            ("markdown_and_indexing_stay_content", sample(
                "See [the docs](https://x.y/a_(b)) and [1], x[len(a)], [Note(s) here], [f (x)] and [].",
                Some("See [the docs](https://x.y/a_(b)) and [1], x[len(a)], [Note(s) here], [f (x)] and []."),
                vec![],
            )),
            ("positional_argument_at_output_start_is_malformed", broken(
                r#"[get_weather("NYC")] Sorry."#,
                Some(" Sorry."),
                vec![],
                vec!["malformed_json"],
            )),
            ("positional_argument_after_text_is_content", sample(
                r#"Try x[get_weather("NYC")] or [f (x)]."#,
                Some(r#"Try x[get_weather("NYC")] or [f (x)]."#),
                vec![],
            )),
            ("footnote_at_output_start_is_content", sample(
                "[1] Smith et al. [2](#ref)",
                Some("[1] Smith et al. [2](#ref)"),
                vec![],
            )),
            ("lone_bracket_at_end_is_content", sample("Pick one [", Some("Pick one ["), vec![])),
            ("bare_call_without_marker_is_content", sample(
                r#"get_weather(location="NYC")"#,
                Some(r#"get_weather(location="NYC")"#),
                vec![],
            )),
            ("positional_after_keyword_is_malformed", broken(
                r#"[get_weather(location="NYC", 3)] ok"#,
                Some(" ok"),
                vec![],
                vec!["malformed_json"],
            )),
            ("repeated_keyword_is_malformed", broken(
                r#"[get_weather(location="NYC", location="LA")]"#,
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("non_literal_value_is_malformed", broken(
                "[get_weather(location=city), get_time(timezone='EST')]",
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("good_call_kept_when_a_later_one_breaks", broken(
                "[get_time(timezone='EST'), get_weather(location=f'{x}')]",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["malformed_json"],
            )),
            ("unclosed_list_keeps_complete_call", sample(
                "[get_time(timezone='EST')",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
            )),
            ("lone_marker_is_truncated", broken("Hi<|python_start|>", Some("Hi"), vec![], vec!["truncated"])),
            ("text_after_bare_call_is_content", sample(
                "<|python_start|>ping() then some words",
                Some(" then some words"),
                vec![("ping", json!({}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- Llama 4 layout: header tokens, Python call syntax in a list between <|python_start|> and <|python_end|>. -#}
{{- bos_token }}
{%- if tools %}
{{- '<|header_start|>system<|header_end|>\n\nCall functions as [func_name1(param=value), func_name2(...)].\n' + tools | tojson + '<|eot|>' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|header_start|>assistant<|header_end|>\n\n' + (message.content or '') }}
{%- if message.tool_calls %}
{{- '<|python_start|>[' }}
{%- for tool_call in message.tool_calls %}
{{- tool_call.function.name + '(' }}
{%- for key, value in tool_call.function.arguments.items() %}{{- key + '=' + value | tojson }}{%- if not loop.last %}{{- ', ' }}{%- endif %}{%- endfor %}
{{- ')' }}{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']<|python_end|>' }}
{%- endif %}
{{- '<|eot|>' }}
{%- elif message.role == 'tool' %}{{- '<|header_start|>ipython<|header_end|>\n\n' + message.content + '<|eot|>' }}
{%- else %}{{- '<|header_start|>' + message.role + '<|header_end|>\n\n' + message.content + '<|eot|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|header_start|>assistant<|header_end|>\n\n' }}{%- endif %}
"#;
