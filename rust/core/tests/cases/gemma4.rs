use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "gemma4",
        tools: conformance_tools(),
        // TOOLCALLING.batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // TOOLCALLING.batch.1
        one_call: sample(
            "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|><|tool_call>call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me look.\n<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|> and <|tool_call>call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>\nDone.",
            Some("Let me look.\n and \nDone."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        // TOOLCALLING.batch.7.e
        nested_json: sample(
            "<|tool_call>call:process_data{payload:{regions:[{name:<|\"|>west<|\"|>,scores:[1,2,3]},{name:<|\"|>east<|\"|>,scores:[4,5,6]}],flags:{enabled:true,retry:null},empty:{}}}<tool_call|>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}, {"name": "east", "scores": [4, 5, 6]}], "flags": {"enabled": true, "retry": null}, "empty": {}}}))],
        ),
        // No escaping inside <|"|>: quotes, backslashes and newlines are literal.
        unicode_and_escapes: sample(
            "<|tool_call>call:run_query{sql:<|\"|>SELECT \"naïve\" FROM t WHERE p = 'C:\\temp\\n'\n-- 東京 🌧<|\"|>}<tool_call|>",
            None,
            vec![("run_query", json!({"sql": "SELECT \"naïve\" FROM t WHERE p = 'C:\\temp\\n'\n-- 東京 🌧"}))],
        ),
        empty_arguments: sample(
            "<|tool_call>call:ping{}<tool_call|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "Checking.<|tool_call>call:get_weather{location:<|\"|>New Yo",
            Some("Checking."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|tool_call>call:get_weather(location=\"NYC\")<tool_call|><|tool_call>call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>",
            None,
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            // Gemma 4 also writes values (and keys) as JSON string literals.
            ("json_string_literal_values", sample(
                "<|tool_call>call:get_weather{\"location\":\"Paris, \\\"FR\\\" \\u00e9\",days:3}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "Paris, \"FR\" é", "days": 3}))],
            )),
            ("json_string_literal_cut", broken(
                "<|tool_call>call:get_weather{location:\"Par",
                None,
                vec![],
                vec!["truncated"],
            )),
            // TOOLCALLING.batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // TOOLCALLING.batch.10
            ("same_tool_twice", sample(
                "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|><|tool_call>call:get_weather{location:<|\"|>LA<|\"|>}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // TOOLCALLING.batch.30.a
            ("delimiters_inside_string", sample(
                "<|tool_call>call:run_query{sql:<|\"|>SELECT a,b:and{brace}<|\"|>}<tool_call|>",
                None,
                vec![("run_query", json!({"sql": "SELECT a,b:and{brace}"}))],
            )),
            // TOOLCALLING.batch.30.b
            ("closers_inside_string", sample(
                "<|tool_call>call:run_query{sql:<|\"|>SELECT value WHERE note has brace } and bracket ]<|\"|>}<tool_call|>",
                None,
                vec![("run_query", json!({"sql": "SELECT value WHERE note has brace } and bracket ]"}))],
            )),
            // TOOLCALLING.batch.30.c
            ("marker_text_inside_string", sample(
                "<|tool_call>call:run_query{sql:<|\"|>literal <|tool_call marker> call:get_time{} stays text<|\"|>}<tool_call|>",
                None,
                vec![("run_query", json!({"sql": "literal <|tool_call marker> call:get_time{} stays text"}))],
            )),
            // TOOLCALLING.batch.31.a
            ("delimiters_inside_string_then_second_call", sample(
                "<|tool_call>call:run_query{sql:<|\"|>SELECT a,b:and{brace}<|\"|>}<tool_call|><|tool_call>call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>",
                None,
                vec![("run_query", json!({"sql": "SELECT a,b:and{brace}"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            // TOOLCALLING.batch.31.b
            ("closers_inside_string_then_second_call", sample(
                "<|tool_call>call:run_query{sql:<|\"|>SELECT value WHERE note has brace } and bracket ]<|\"|>}<tool_call|><|tool_call>call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>",
                None,
                vec![("run_query", json!({"sql": "SELECT value WHERE note has brace } and bracket ]"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            // TOOLCALLING.batch.13.a
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|tool_call>call:unknown_tool{location:<|\"|>NYC<|\"|>}<tool_call|>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            // TOOLCALLING.batch.13.c
            ("known_and_unknown_tools", broken(
                "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|><|tool_call>call:unknown_tool{location:<|\"|>LA<|\"|>}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("unknown_tool", json!({"location": "LA"}))],
                vec!["unknown_tool"],
            )),
            // TOOLCALLING.batch.7.a
            ("scalar_types", sample(
                "<|tool_call>call:book_flight{destination:<|\"|>Paris<|\"|>,passengers:2,first_class:true}<tool_call|>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true}))],
            )),
            // TOOLCALLING.batch.7.b
            ("unicode_value", sample(
                "<|tool_call>call:get_weather{location:<|\"|>Tōkyō central<|\"|>}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "Tōkyō central"}))],
            )),
            // TOOLCALLING.batch.7.c: a delimited string stays a string whatever the schema says.
            ("schema_mismatch_kept_as_written", sample(
                "<|tool_call>call:set_temperature{celsius:<|\"|>20<|\"|>}<tool_call|>",
                None,
                vec![("set_temperature", json!({"celsius": "20"}))],
            )),
            // TOOLCALLING.batch.7.d
            ("nested_object_and_array", sample(
                "<|tool_call>call:process_data{items:[1,2,3],config:{nested:true}}<tool_call|>",
                None,
                vec![("process_data", json!({"items": [1, 2, 3], "config": {"nested": true}}))],
            )),
            // TOOLCALLING.batch.7.f
            ("big_integer_kept_exact", sample(
                "<|tool_call>call:set_limit{count:9007199254740993}<tool_call|>",
                None,
                vec![("set_limit", serde_json::from_str("{\"count\": 9007199254740993}").unwrap())],
            )),
            // The chat template writes Python None as `None`; nil and none are seen too.
            ("null_spellings", sample(
                "<|tool_call>call:search{query:None,filters:{a:null,b:nil,c:none},tags:[None]}<tool_call|>",
                None,
                vec![("search", json!({"query": null, "filters": {"a": null, "b": null, "c": null}, "tags": [null]}))],
            )),
            ("mixed_array_and_floats", sample(
                "<|tool_call>call:search{tags:[1,<|\"|>x<|\"|>,-2.5e3,false,[],{}],filters:{price:108.,ratio:.5}}<tool_call|>",
                None,
                // Numbers keep their spelling (arbitrary precision); `108.` and `.5` are completed.
                vec![("search", serde_json::from_str(r#"{"tags": [1, "x", -2.5e3, false, [], {}], "filters": {"price": 108.0, "ratio": 0.5}}"#).unwrap())],
            )),
            ("two_calls_in_one_block", sample(
                "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}call:get_time{timezone:<|\"|>EST<|\"|>}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            ("missing_end_marker_keeps_complete_call", sample(
                "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("next_call_without_end_marker", sample(
                "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<|tool_call>call:ping{}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("ping", json!({}))],
            )),
            // vllm#53431: the opener without `call`.
            ("bare_colon_opener", sample(
                "<|tool_call>:get_time{timezone:<|\"|>UTC<|\"|>}<tool_call|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("quoted_keys_whitespace_and_trailing_commas", sample(
                "<|tool_call>call:search{ <|\"|>query<|\"|> : <|\"|>a b<|\"|> , tags : [ 1 , 2 , ] , }<tool_call|>",
                None,
                vec![("search", json!({"query": "a b", "tags": [1, 2]}))],
            )),
            ("bare_word_value_is_a_string", sample(
                "<|tool_call>call:get_weather{location:Paris,unit:celsius}<tool_call|>",
                None,
                vec![("get_weather", json!({"location": "Paris", "unit": "celsius"}))],
            )),
            ("unclosed_body_before_end_marker_is_malformed", broken(
                "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|><tool_call|>After.",
                Some("After."),
                vec![],
                vec!["malformed_json"],
            )),
            ("missing_name_is_reported", broken(
                "<|tool_call>call:{location:<|\"|>NYC<|\"|>}<tool_call|>",
                None,
                vec![],
                vec!["missing_name"],
            )),
            ("stray_end_marker_is_reported_not_content", broken(
                "Done.<tool_call|>",
                Some("Done."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("lone_open_marker_is_truncated", broken("Hi<|tool_call>", Some("Hi"), vec![], vec!["truncated"])),
            ("lookalike_text_is_content", sample(
                "a <|tool or <tool_call| and call:x{}",
                Some("a <|tool or <tool_call| and call:x{}"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Gemma 4 layout: <|turn> blocks, call:NAME{key:<|"|>value<|"|>} in <|tool_call>, thoughts in <|channel>. -#}
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|turn>model\n' }}
{%- if message.reasoning_content %}{{- '<|channel>thought\n' + message.reasoning_content + '<channel|>' }}{%- endif %}
{%- for tool_call in message.tool_calls or [] %}
{{- '<|tool_call>call:' + tool_call.function.name + '{' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- key + ':' }}{%- if value is string %}{{- '<|"|>' + value + '<|"|>' }}{%- else %}{{- value | tojson }}{%- endif %}
{%- if not loop.last %}{{- ',' }}{%- endif %}
{%- endfor %}
{{- '}<tool_call|>' }}
{%- endfor %}
{{- (message.content or '') + '<turn|>\n' }}
{%- elif message.role == 'tool' %}
{{- '<|tool_response>response:' + message.name + '{value:<|"|>' + message.content + '<|"|>}<tool_response|>' }}
{%- else %}
{{- '<|turn>' + message.role + '\n' + message.content + '<turn|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|turn>model\n' }}{%- endif %}
"#;
