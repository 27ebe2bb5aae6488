//! Phi-4-mini `functools[...]`. Inputs marked "fixture" are the model texts of the ai-dynamo
//! conformance fixtures (fixtures-batch-v1/inputs/phi4/TOOLCALLING.batch.yaml).

use serde_json::json;

use super::{broken, conformance_tools, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "phi4",
        tools: conformance_tools(),
        // fixture batch.3
        plain_content: sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![]),
        // fixture batch.1
        one_call: sample(
            r#"functools[{"name": "get_weather", "arguments": {"location": "NYC"}}]"#,
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        // fixture batch.31.a
        parallel_calls: sample(
            r#"functools[{"name": "run_query", "arguments": {"sql": "SELECT a, SELECT b"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]"#,
            None,
            vec![("run_query", json!({"sql": "SELECT a, SELECT b"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            r#"Let me look. functools[{"name": "get_weather", "arguments": {"location": "NYC"}}] and also functools[{"name": "get_time", "arguments": {"timezone": "EST"}}] done."#,
            Some("Let me look.  and also  done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            r#"functools[{"name": "search", "arguments": {"query": "a]}b", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}}]"#,
            None,
            vec![("search", json!({"query": "a]}b", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}))],
        ),
        unicode_and_escapes: sample(
            r#"functools[{"name": "get_weather", "arguments": {"location": "Tōkyō \"central\" \u00e9 functools[ 東京 🌧"}}]"#,
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" é functools[ 東京 🌧"}))],
        ),
        empty_arguments: sample(
            r#"functools[{"name": "ping", "arguments": {}}, {"name": "ping"}]"#,
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            r#"Checking. functools[{"name": "get_weather", "arguments": {"location": "NY"#,
            Some("Checking. "),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            r#"functools[{"name": "get_weather", "arguments": {"location": }}]"#,
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // fixture batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // fixture batch.10
            ("same_tool_twice", sample(
                r#"functools[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_weather", "arguments": {"location": "LA"}}]"#,
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
            )),
            // fixture batch.30.a / 30.b / 30.c / 31.b (vLLM drops 30.b, 30.c and 31.b: its regex
            // stops at the first `]`, inside the string)
            ("separator_inside_string", sample(
                r#"functools[{"name": "run_query", "arguments": {"sql": "SELECT a, SELECT b"}}]"#,
                None,
                vec![("run_query", json!({"sql": "SELECT a, SELECT b"}))],
            )),
            ("delimiters_inside_string", sample(
                r#"functools[{"name": "run_query", "arguments": {"sql": "SELECT value WHERE note has brace } and bracket ]"}}]"#,
                None,
                vec![("run_query", json!({"sql": "SELECT value WHERE note has brace } and bracket ]"}))],
            )),
            ("marker_lookalike_inside_string", sample(
                r#"functools[{"name": "run_query", "arguments": {"sql": "literal func-tools marker[] stays text"}}]"#,
                None,
                vec![("run_query", json!({"sql": "literal func-tools marker[] stays text"}))],
            )),
            ("delimiters_inside_first_of_two", sample(
                r#"functools[{"name": "run_query", "arguments": {"sql": "SELECT value WHERE note has brace } and bracket ]"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]"#,
                None,
                vec![
                    ("run_query", json!({"sql": "SELECT value WHERE note has brace } and bracket ]"})),
                    ("get_time", json!({"timezone": "EST"})),
                ],
            )),
            // fixture batch.13.a / 13.c
            ("unknown_tool_is_returned_and_flagged", broken(
                r#"functools[{"name": "unknown_tool", "arguments": {"location": "NYC"}}]"#,
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("known_and_unknown", broken(
                r#"functools[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "unknown_tool", "arguments": {"location": "LA"}}]"#,
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("unknown_tool", json!({"location": "LA"}))],
                vec!["unknown_tool"],
            )),
            ("the_word_functools_in_prose_is_content", sample(
                "Use functools.lru_cache, or import functools\nand call functools [1, 2] or functools[\"a\"].",
                Some("Use functools.lru_cache, or import functools\nand call functools [1, 2] or functools[\"a\"]."),
                vec![],
            )),
            ("functools_at_the_very_end_is_content", sample("import functools", Some("import functools"), vec![])),
            ("parameters_key_and_big_integer", sample(
                r#"functools[{"name": "get_weather", "parameters": {"days": 9007199254740993}}]"#,
                None,
                vec![("get_weather", serde_json::from_str(r#"{"days": 9007199254740993}"#).unwrap())],
            )),
            ("missing_closing_bracket_keeps_complete_call", sample(
                r#"functools[{"name": "get_time", "arguments": {"timezone": "UTC"}}"#,
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=no -#}
{#- Phi-4-mini layout: tools in <|tool|>, calls as functools[{"name": ..., "arguments": ...}]. -#}
{%- for message in messages %}
{%- if message.role == 'system' and message.tools %}
{{- '<|system|>' + message.content + '<|tool|>' + message.tools + '<|/tool|><|end|>' }}
{%- elif message.role == 'assistant' and message.tool_calls %}
{{- '<|assistant|>functools[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']<|end|>' }}
{%- else %}
{{- '<|' + message.role + '|>' + message.content + '<|end|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|assistant|>' }}{%- else %}{{- eos_token }}{%- endif %}
"#;
