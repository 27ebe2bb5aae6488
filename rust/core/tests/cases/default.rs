use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "default",
        tools: weather_tools(),
        plain_content: sample("Plain answer with [brackets] and {braces}.", Some("Plain answer with [brackets] and {braces}."), vec![]),
        one_call: sample(
            "{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}, {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}]</TOOLCALL>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Sure. <TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]</TOOLCALL> then <|python_tag|>{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"EST\"}}",
            Some("Sure.  then "),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "[{\"name\": \"search\", \"arguments\": {\"filters\": {\"a\": {\"b\": {\"c\": [1, 2, {\"d\": \"]\"}]}}}}}]",
            None,
            vec![("search", json!({"filters": {"a": {"b": {"c": [1, 2, {"d": "]"}]}}}}))],
        ),
        unicode_and_escapes: sample(
            "<TOOLCALL>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"\\u00c5re \\t ✓\"}}</TOOLCALL>",
            None,
            vec![("get_weather", json!({"location": "Åre \t ✓"}))],
        ),
        empty_arguments: sample("<TOOLCALL>[{\"name\": \"ping\", \"arguments\": {}}]</TOOLCALL>", None, vec![("ping", json!({}))]),
        truncated: broken("<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {", None, vec![], vec!["truncated"]),
        malformed: broken("<TOOLCALL>[{\"name\": get_weather}]</TOOLCALL>", None, vec![], vec!["missing_name"]),
        more: vec![
            // Models that were never taught markers write the call after a sentence.
            ("json_call_after_prose", sample(
                "I'll check the weather for you.\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}",
                Some("I'll check the weather for you.\n"),
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("json_array_after_prose", sample(
                "Two lookups: [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}, {\"name\": \"get_time\", \"arguments\": {}}]",
                Some("Two lookups: "),
                vec![("get_weather", json!({"location": "Paris"})), ("get_time", json!({}))],
            )),
            ("json_after_prose_that_is_no_call_is_content", sample(
                "The config is {\"debug\": true} and the list [1, 2] {not json}.",
                Some("The config is {\"debug\": true} and the list [1, 2] {not json}."),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- A Llama-based template that asks for either JSON layout the catch-all format reads:
    <TOOLCALL>[...]</TOOLCALL> in answers, <|python_tag|>{...} in replayed history. -#}
{{- bos_token }}
{%- if tools %}
{{- '<|start_header_id|>system<|end_header_id|>\n\nCall tools as <TOOLCALL>[{"name": ..., "arguments": ...}]</TOOLCALL>.\n' + tools | tojson + '<|eot_id|>' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' and message.tool_calls %}
{{- '<|start_header_id|>assistant<|end_header_id|>\n\n<TOOLCALL>[' }}
{%- for tool_call in message.tool_calls %}
{{- '{"name": "' + tool_call.function.name + '", "arguments": ' + tool_call.function.arguments | tojson + '}' }}
{%- if not loop.last %}{{- ', ' }}{%- endif %}
{%- endfor %}
{{- ']</TOOLCALL><|eot_id|>' }}
{%- elif message.role == 'assistant' and message.python_call %}
{{- '<|start_header_id|>assistant<|end_header_id|>\n\n<|python_tag|>' + message.python_call | tojson + '<|eot_id|>' }}
{%- else %}
{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\n\n' + message.content + '<|eot_id|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}
"#;
