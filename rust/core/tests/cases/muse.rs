//! Meta Muse (Glimmer, Spark). Samples follow the message layout in vLLM's `muse_tool_parser.py`
//! and Dynamo's `tool_calling/muse_glimmer.rs` (from the model's `response_template`): the first
//! message starts at its recipient, `to=self` reasoning, tool messages of ATEM XML ending
//! `<|eom|>`, the answer to `user` ending `<|eot|>`.

use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "muse",
        tools: conformance_tools(),
        plain_content: sample(
            " to=user<|message|>Hello, how can I help you today?<|eot|>",
            Some("Hello, how can I help you today?"),
            vec![],
        ),
        one_call: sample(
            " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"location\">NYC</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"location\">NYC</atem:parameter>\n<atem:parameter name=\"days\">3</atem:parameter>\n</atem:invoke>\n<atem:invoke name=\"get_time\">\n<atem:parameter name=\"timezone\">EST</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
            None,
            vec![("get_weather", json!({"location": "NYC", "days": 3})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            " to=commentary<|message|>Let me check.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"location\">NYC</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant to=commentary<|message|> Then the time.<|eom|><|start|>assistant to=get_time<|message|><atem:function_calls>\n<atem:invoke name=\"get_time\">\n<atem:parameter name=\"timezone\">EST</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant to=user<|message|> Done.<|eot|>",
            Some("Let me check. Then the time. Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            " to=process_data<|message|><atem:function_calls>\n<atem:invoke name=\"process_data\">\n<atem:parameter name=\"payload\">{\"regions\": [{\"name\": \"west\", \"scores\": [1, 2, 3]}], \"flags\": {\"enabled\": true, \"retry\": null}, \"note\": \"</atem:invoke><|eom|>\"}</atem:parameter>\n<atem:parameter name=\"items\">[\"x\", [1, 2]]</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}], "flags": {"enabled": true, "retry": null}, "note": "</atem:invoke><|eom|>"}, "items": ["x", [1, 2]]}))],
        ),
        unicode_and_escapes: sample(
            " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"location\">Tōkyō \"central\" \\ é\n東京 🌧 </atem:invoke> <b>\t</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é\n東京 🌧 </atem:invoke> <b>\t"}))],
        ),
        empty_arguments: sample(
            " to=ping<|message|><atem:function_calls>\n<atem:invoke name=\"ping\">\n</atem:invoke>\n</atem:function_calls><|eom|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            " to=commentary<|message|>I'll look.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"location\">NY",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\nlocation: NYC\n</atem:invoke>\n<atem:invoke name=\"get_time\">\n<atem:parameter name=\"timezone\">EST</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|><|start|>assistant to=user<|message|>After.<|eot|>",
            Some("After."),
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            ("reasoning_on_self_then_a_call", sample(
                " to=self<|message|>Need <atem:invoke name=\"get_time\"> the weather.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"location\">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("atem_in_the_answer_is_text", sample(
                " to=user<|message|>Write <atem:function_calls><atem:invoke name=\"ping\"></atem:invoke></atem:function_calls> to call.<|eot|>",
                Some("Write <atem:function_calls><atem:invoke name=\"ping\"></atem:invoke></atem:function_calls> to call."),
                vec![],
            )),
            // A stray end marker outside any call is reported, as in every format.
            ("unframed_atem_is_content", broken(
                "Plain text with <atem:invoke name=\"ping\"></atem:invoke>.",
                Some("Plain text with <atem:invoke name=\"ping\">."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("bare_message_header_is_content", sample(
                "<|message|>Hi there.<|eot|>",
                Some("Hi there."),
                vec![],
            )),
            ("dotted_tool_recipient", broken(
                " to=browser.search<|message|><atem:function_calls>\n<atem:invoke name=\"browser.search\">\n<atem:parameter name=\"query\">muse</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
                None,
                vec![("browser.search", json!({"query": "muse"}))],
                vec!["unknown_tool"],
            )),
            ("schema_string_stays_a_string", sample(
                " to=run_query<|message|><atem:function_calls>\n<atem:invoke name=\"run_query\">\n<atem:parameter name=\"sql\">42</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>",
                None,
                vec![("run_query", json!({"sql": "42"}))],
            )),
            ("missing_closing_tags_before_eom_keep_the_call", sample(
                " to=get_time<|message|><atem:function_calls>\n<atem:invoke name=\"get_time\">\n<atem:parameter name=\"timezone\">UTC</atem:parameter>\n<|eom|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("next_message_without_eom", sample(
                " to=get_time<|message|><atem:function_calls>\n<atem:invoke name=\"get_time\">\n<atem:parameter name=\"timezone\">UTC</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|start|>assistant to=user<|message|>Done.<|eot|>",
                Some("Done."),
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("stray_end_of_message_is_dropped", sample(
                "thinking left open by the prompt<|eom|><|start|>assistant to=user<|message|>Hi.<|eot|>",
                Some("thinking left open by the promptHi."),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Meta Muse layout: messages addressed to a recipient; reasoning to self, calls to the tool as ATEM XML. -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{%- if message.reasoning_content %}{{- '<|start|>assistant to=self<|message|>' + message.reasoning_content + '<|eom|>' }}{%- endif %}
{%- for tool_call in message.tool_calls or [] %}
{{- '<|start|>assistant to=' + tool_call.function.name + '<|message|><atem:function_calls>\n' }}
{{- '<atem:invoke name="' + tool_call.function.name + '">\n' }}
{%- for key, value in tool_call.function.arguments.items() %}
{{- '<atem:parameter name="' + key + '">' + (value if value is string else value | tojson) + '</atem:parameter>\n' }}
{%- endfor %}
{{- '</atem:invoke>\n</atem:function_calls><|eom|>' }}
{%- endfor %}
{%- if message.content %}{{- '<|start|>assistant to=user<|message|>' + message.content + '<|eot|>' }}{%- endif %}
{%- else %}
{{- '<|start|>' + message.role + '<|message|>' + message.content + '<|eot|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start|>assistant' }}{%- endif %}
"#;
