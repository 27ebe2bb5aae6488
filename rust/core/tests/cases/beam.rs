//! Beam: Harmony channel messages with `<rfl:parameter>` call bodies. No conformance fixtures
//! exist for it; the `gateway_*` inputs are the wire texts of the SGLang model gateway's
//! response-template tests (`tests/*response_template*`), the newline-wrapped values are what
//! llama.cpp's `harmony-xml` parser documents (`<rfl:parameter name="KEY">\nVALUE\n</rfl:parameter>`),
//! and the rest follow that wire.

use serde_json::{json, Value};

use super::{broken, sample, weather_tools, Matrix};

/// The weather tools plus the dotted tool names of the gateway's tests.
fn tools() -> Value {
    let mut tools = weather_tools();
    let extra = json!([
        {"type": "function", "function": {"name": "weather.lookup", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}, "units": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "calendar.lookup", "parameters": {"type": "object", "properties": {
            "day": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "run_query", "parameters": {"type": "object", "properties": {
            "sql": {"type": "string"}}}}}
    ]);
    if let (Some(list), Some(more)) = (tools.as_array_mut(), extra.as_array()) {
        list.extend(more.iter().cloned());
    }
    tools
}

pub fn matrix() -> Matrix {
    Matrix {
        format: "beam",
        tools: tools(),
        plain_content: sample(
            "<|channel|>analysis<|message|>User greets. Reply briefly.<|end|><|start|>assistant<|channel|>final<|message|>Hello! How can I help?<|return|>",
            Some("Hello! How can I help?"),
            vec![],
        ),
        one_call: sample(
            "<|channel|>analysis<|message|>Need the forecast.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Paris</rfl:parameter><rfl:parameter name=\"days\">2</rfl:parameter><|call|>",
            None,
            vec![("get_weather", json!({"location": "Paris", "days": 2}))],
        ),
        parallel_calls: sample(
            "<|channel|>analysis<|message|>Two cities.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC</rfl:parameter><|call|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">LA</rfl:parameter><rfl:parameter name=\"unit\">celsius</rfl:parameter><|call|>",
            None,
            vec![
                ("get_weather", json!({"location": "NYC"})),
                ("get_weather", json!({"location": "LA", "unit": "celsius"})),
            ],
        ),
        text_before_between_after: sample(
            "<|channel|>analysis<|message|>Weather, then time.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking both.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC</rfl:parameter><|call|><|start|>assistant<|channel|>commentary<|message|> Then the time.<|end|><|start|>assistant to=get_time<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"timezone\">EST</rfl:parameter><|call|><|start|>assistant<|channel|>final<|message|> Done.<|return|>",
            Some("Checking both. Then the time. Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<|channel|>analysis<|message|>Search with filters.<|end|><|start|>assistant to=search<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"query\">{\"not\": \"parsed\"} a}b]</rfl:parameter><rfl:parameter name=\"filters\">{\"year\": {\"gte\": 2020}, \"tags\": [\"x\", [1, 2]]}</rfl:parameter><rfl:parameter name=\"tags\">[\"a\", {\"b\": null}]</rfl:parameter><|call|>",
            None,
            vec![("search", json!({"query": "{\"not\": \"parsed\"} a}b]", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}, "tags": ["a", {"b": null}]}))],
        ),
        unicode_and_escapes: sample(
            "<|channel|>analysis<|message|>Tokyo.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Tōkyō \"central\" é 東京 🌧 C:\\dir &amp; <b>x</b>\ttab</rfl:parameter><|call|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" é 東京 🌧 C:\\dir &amp; <b>x</b>\ttab"}))],
        ),
        empty_arguments: sample(
            "<|channel|>analysis<|message|>Ping twice.<|end|><|start|>assistant to=ping<|channel|>analysis <|constrain|>xml<|message|><|call|><|start|>assistant to=ping<|channel|>analysis <|constrain|>xml<|message|>\n<|call|>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">New Yo",
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location>NYC</rfl:parameter><|call|><|start|>assistant<|channel|>final<|message|>Sorry.<|return|>",
            Some("Sorry."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // The gateway's deterministic-gateway test wire (its trailing junk after <|return|> left
            // off): calls on dotted names, the second ended by <|end|>, the final message after
            // <|end|> without <|start|>assistant.
            ("gateway_wire", sample(
                "<|channel|>analysis<|message|>careful reasoning<|end|><|start|>assistant to=weather.lookup<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"city\">Paris</rfl:parameter><rfl:parameter name=\"days\">2</rfl:parameter><|call|><|start|>assistant to=calendar.lookup<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"day\">tomorrow</rfl:parameter><|end|><|channel|>final<|message|>The result is ready.<|return|>",
                Some("The result is ready."),
                vec![
                    ("weather.lookup", json!({"city": "Paris", "days": 2})),
                    ("calendar.lookup", json!({"day": "tomorrow"})),
                ],
            )),
            // The gateway's behaviour-matrix wire: a string value keeps its spaces.
            ("gateway_complete_wire", sample(
                "<|channel|>analysis<|message|>thinking\u{200b} café<|end|><|start|>assistant to=weather.lookup<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"city\"> Montréal </rfl:parameter><rfl:parameter name=\"units\">metric</rfl:parameter><|call|><|start|>assistant to=calendar.lookup<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"day\">tomorrow</rfl:parameter><|end|><|channel|>final<|message|>done\u{301}<|return|>",
                Some("done\u{301}"),
                vec![
                    ("weather.lookup", json!({"city": " Montréal ", "units": "metric"})),
                    ("calendar.lookup", json!({"day": "tomorrow"})),
                ],
            )),
            // The gateway's header without <|start|>assistant and without <|constrain|>xml: the
            // completion opens with the call message.
            ("call_opens_the_output", sample(
                " to=get_time<|channel|>analysis<|message|><rfl:parameter name=\"timezone\">UTC</rfl:parameter><|call|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("recipient_prose_at_start_is_content", sample(
                "to=do list: buy milk",
                Some("to=do list: buy milk"),
                vec![],
            )),
            ("recipient_prose_with_punctuation_is_content", sample(
                "to=me, it is fine",
                Some("to=me, it is fine"),
                vec![],
            )),
            // llama.cpp's layout: one newline each side of a value.
            ("newline_wrapped_values", sample(
                "<|channel|>analysis<|message|>Forecast.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">\nSan Francisco\n</rfl:parameter>\n<rfl:parameter name=\"days\">\n3\n</rfl:parameter>\n<|call|>",
                None,
                vec![("get_weather", json!({"location": "San Francisco", "days": 3}))],
            )),
            ("multiline_string_keeps_inner_newlines", sample(
                "<|channel|>analysis<|message|>Query.<|end|><|start|>assistant to=run_query<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"sql\">\n\nSELECT *\nFROM t\n\n</rfl:parameter><|call|>",
                None,
                vec![("run_query", json!({"sql": "\nSELECT *\nFROM t\n"}))],
            )),
            ("schema_types_the_values", sample(
                "<|channel|>analysis<|message|>Typed.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">42</rfl:parameter><rfl:parameter name=\"days\"> 7 </rfl:parameter><rfl:parameter name=\"extra\">true</rfl:parameter><|call|>",
                None,
                vec![("get_weather", json!({"location": "42", "days": 7, "extra": "true"}))],
            )),
            ("big_integer_kept_exact", sample(
                "<|channel|>analysis<|message|>Big.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"days\">9007199254740993</rfl:parameter><|call|>",
                None,
                vec![("get_weather", serde_json::from_str("{\"days\": 9007199254740993}").unwrap())],
            )),
            ("functions_namespace_is_dropped", sample(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Oslo</rfl:parameter><|call|>",
                None,
                vec![("get_weather", json!({"location": "Oslo"}))],
            )),
            ("json_body_is_read", sample(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>json<|message|>{\"location\": \"NYC\", \"days\": 1}<|call|>",
                None,
                vec![("get_weather", json!({"location": "NYC", "days": 1}))],
            )),
            ("recipient_after_channel", sample(
                "<|channel|>analysis to=get_time <|constrain|>xml<|message|><rfl:parameter name=\"timezone\">CET</rfl:parameter><|call|>",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("missing_parameter_end_before_next", sample(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC<rfl:parameter name=\"days\">3</rfl:parameter><|call|>",
                None,
                vec![("get_weather", json!({"location": "NYC", "days": 3}))],
            )),
            ("missing_parameter_end_before_call_marker", sample(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC\n<|call|>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("stop_token_stripped_keeps_complete_call", sample(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC</rfl:parameter>\n",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("call_then_final_answer", sample(
                "<|channel|>analysis<|message|>Look up, then answer.<|end|><|start|>assistant to=get_time<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"timezone\">UTC</rfl:parameter><|call|><|start|>assistant<|channel|>final<|message|>It is noon.<|return|>",
                Some("It is noon."),
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("empty_analysis_block", sample(
                "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>",
                Some("Hi."),
                vec![],
            )),
            ("analysis_without_end_before_next_message", sample(
                "<|channel|>analysis<|message|>Thinking<|start|>assistant<|channel|>final<|message|>Answer<|return|>",
                Some("Answer"),
                vec![],
            )),
            ("final_without_return", sample(
                "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.",
                Some("2 + 2 = 4."),
                vec![],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant to=unknown_tool<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">NYC</rfl:parameter><|call|>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("prose_in_call_body_breaks_the_call", broken(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|>NYC please<|call|><|start|>assistant to=get_time<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"timezone\">EST</rfl:parameter><|call|>",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["unexpected_text"],
            )),
            ("parameter_without_name", broken(
                "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"\">NYC</rfl:parameter><|call|>",
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("recipient_without_name", broken(
                "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant to=<|channel|>analysis <|constrain|>xml<|message|><|call|>",
                None,
                vec![],
                vec!["missing_name"],
            )),
            ("header_cut_off", broken(
                "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant to=get_wea",
                None,
                vec![],
                vec!["truncated"],
            )),
            ("parameter_name_cut_off", broken(
                "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"loca",
                None,
                vec![],
                vec!["truncated"],
            )),
            ("stray_call_marker_is_unexpected", broken(
                "Let me think.<|call|>",
                Some("Let me think."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("marker_in_prose_is_content", sample(
                "Beam messages open with <|start|> then a role, e.g. <|channel|>, and <rfl:parameter name=\"x\"> tags.",
                Some("Beam messages open with <|start|> then a role, e.g. <|channel|>, and <rfl:parameter name=\"x\"> tags."),
                vec![],
            )),
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Beam layout: harmony messages; a call is a message to the tool's own name with XML parameters. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|start|>assistant<|channel|>analysis<|message|>' + (message.reasoning_content or '') + '<|end|>' }}
{%- for tool_call in message.tool_calls or [] %}
{{- '<|start|>assistant to=' + tool_call.function.name + '<|channel|>analysis <|constrain|>xml<|message|>' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<rfl:parameter name="' + key + '">' + value | string + '</rfl:parameter>' }}
{%- endfor %}
{{- '<|call|>' }}
{%- endfor %}
{%- if message.content %}{{- '<|start|>assistant<|channel|>final<|message|>' + message.content + '<|return|>' }}{%- endif %}
{%- elif message.role == 'tool' %}
{{- '<|start|>' + message.name + ' to=assistant<|channel|>analysis<|message|>' + message.content + '<|end|>' }}
{%- else %}
{{- '<|start|>' + message.role + '<|message|>' + message.content + '<|end|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start|>assistant' }}{%- endif %}
"#;
