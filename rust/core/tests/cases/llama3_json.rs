use serde_json::json;

use super::{broken, sample, weather_tools, Case, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "llama3_json",
        tools: weather_tools(),
        plain_content: sample("The weather is {mild} today.", Some("The weather is {mild} today."), vec![]),
        one_call: sample(
            "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"NYC\"}}",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"location\": \"NYC\"}}; {\"name\": \"get_time\", \"parameters\": {\"timezone\": \"EST\"}}",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Checking now. <|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"location\": \"NYC\"}};\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}} then done",
            Some("Checking now.  then done"),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "{\"name\": \"search\", \"parameters\": {\"query\": \"SELECT a; DROP b;\", \"filters\": {\"n\": [1, {\"m\": \"}\"}]}}}",
            None,
            vec![("search", json!({"query": "SELECT a; DROP b;", "filters": {"n": [1, {"m": "}"}]}}))],
        ),
        unicode_and_escapes: sample(
            "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Zürich \\\"HB\\\"\\n🚉\"}}",
            None,
            vec![("get_weather", json!({"location": "Zürich \"HB\"\n🚉"}))],
        ),
        empty_arguments: sample("{\"name\": \"ping\", \"parameters\": {}}", None, vec![("ping", json!({}))]),
        truncated: broken("<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"loc", None, vec![], vec!["truncated"]),
        malformed: broken(
            "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"location\": }}",
            None,
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("json_answer_that_is_not_a_call", sample("{\"answer\": 42}", Some("{\"answer\": 42}"), vec![])),
            ("semicolon_newline_separated", sample(
                "{\"name\": \"get_time\", \"parameters\": {\"timezone\": \"UTC\"}};\n{\"name\": \"ping\", \"parameters\": {}}",
                None,
                vec![("get_time", json!({"timezone": "UTC"})), ("ping", json!({}))],
            )),
            ("bare_call_cut_after_the_name_key", broken("{\"name\":", None, vec![], vec!["truncated"])),
            ("bare_json_cut_before_a_key_is_content", sample("{\"na", Some("{\"na"), vec![])),
            ("bare_json_after_text_is_content", Case::NotApplicable(
                "llama3 JSON calls start the output; a JSON object after prose is treated as content (covered by plain_content)",
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=none special_tokens=yes -#}
{#- Llama 3.1 layout: header tokens, JSON calls with "parameters", <|python_tag|> for built-in tools. -#}
{{- bos_token }}
{%- if tools %}
{{- '<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nRespond with a JSON for a function call: {"name": function name, "parameters": dictionary of argument name and its value}.\n' }}
{%- for t in tools %}{{- t | tojson(indent=4) + '\n\n' }}{%- endfor %}
{{- '<|eot_id|>' }}
{%- endif %}
{%- for message in messages %}
{%- if message.tool_calls %}
{%- set tool_call = message.tool_calls[0].function %}
{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- if builtin_tools is defined and tool_call.name in builtin_tools %}
{{- '<|python_tag|>' + tool_call.name + '.call(query="' + tool_call.arguments.query + '")' }}
{{- '<|eom_id|>' }}
{%- else %}
{{- '{"name": "' + tool_call.name + '", ' }}
{{- '"parameters": ' }}
{{- tool_call.arguments | tojson }}
{{- '}' }}
{{- '<|eot_id|>' }}
{%- endif %}
{%- elif message.role == "tool" or message.role == "ipython" %}
{{- '<|start_header_id|>ipython<|end_header_id|>\n\n' + message.content | tojson + '<|eot_id|>' }}
{%- else %}
{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\n\n' + message.content + '<|eot_id|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{%- endif %}
"#;
