//! gpt-oss Harmony. Inputs from the conformance fixtures (`fixtures-batch-v1/inputs/harmony`:
//! batch.1, .3, .9.a, .9.b, .10, .13) and from the format's documentation and chat template
//! (`openai/harmony: docs/format.md`, the gpt-oss `chat_template.jinja`).

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "harmony",
        tools: weather_tools(),
        plain_content: sample(
            "<|channel|>analysis<|message|>User says hi. Respond politely.<|end|><|start|>assistant<|channel|>final<|message|>Hello! How can I help you today?<|return|>",
            Some("Hello! How can I help you today?"),
            vec![],
        ),
        // fixture TOOLCALLING.batch.1
        one_call: sample(
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}<|call|>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        // fixture TOOLCALLING.batch.10
        parallel_calls: sample(
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}<|call|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"LA\"}<|call|>",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_weather", json!({"location": "LA"}))],
        ),
        text_before_between_after: sample(
            "<|channel|>analysis<|message|>Need weather and time.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking both.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}<|call|><|start|>assistant<|channel|>commentary<|message|> Then the time.<|end|><|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{\"timezone\":\"EST\"}<|call|><|start|>assistant<|channel|>final<|message|> Done.<|return|>",
            Some("Checking both. Then the time. Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\":\"a}b] <|call|> <|end|>\",\"filters\":{\"year\":{\"gte\":2020},\"tags\":[\"x\",[1,2]]}}<|call|>",
            None,
            vec![("search", json!({"query": "a}b] <|call|> <|end|>", "filters": {"year": {"gte": 2020}, "tags": ["x", [1, 2]]}}))],
        ),
        unicode_and_escapes: sample(
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"Tōkyō \\\"central\\\" \\u00e9 東京 🌧\\n\"}<|call|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" é 東京 🌧\n"}))],
        ),
        empty_arguments: sample(
            "<|channel|>commentary to=functions.ping <|constrain|>json<|message|>{}<|call|><|start|>assistant<|channel|>commentary to=functions.ping<|message|><|call|>",
            None,
            vec![("ping", json!({})), ("ping", json!({}))],
        ),
        truncated: broken(
            "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"N",
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"NYC\"<|call|><|start|>assistant<|channel|>final<|message|>Sorry.<|return|>",
            Some("Sorry."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            // The prompt ended `<|start|>assistant`: the output goes on with the role's header.
            ("output_continues_the_role_header", sample(
                " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"location\": \"Paris\"}<|call|>",
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("output_continues_the_header_after_start", sample(
                "assistant<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"location\": \"Paris\"}<|call|>",
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("role_word_in_prose_is_content", sample(
                "assistant here: to=do list follows",
                Some("assistant here: to=do list follows"),
                vec![],
            )),
            // `<|call|>` ends the turn; text an engine lets through after it is content, not dropped.
            ("text_after_call_is_content", sample(
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Paris\"}<|call|>I will wait for the result.",
                Some("I will wait for the result."),
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            // fixture TOOLCALLING.batch.3: dynamo and vLLM drop bare text; it is content here.
            ("bare_text_is_content", sample("Hello, how can I help you today?", Some("Hello, how can I help you today?"), vec![])),
            // fixtures TOOLCALLING.batch.9.a / 9.b
            ("empty_output", sample("", None, vec![])),
            ("blank_output", sample("   ", Some("   "), vec![])),
            // fixture TOOLCALLING.batch.13: dynamo and vLLM return the call, SGLang drops it.
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|channel|>commentary to=functions.unknown_tool <|constrain|>json<|message|>{\"location\":\"NYC\"}<|call|>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            // Dynamo PR #10366: gpt-oss writes many calls on the analysis channel, often with `code`.
            ("call_on_analysis_channel", sample(
                "<|channel|>analysis<|message|>Need to search.<|end|><|start|>assistant<|channel|>analysis to=functions.search code<|message|>{\"query\":\"foo\"}<|call|>",
                None,
                vec![("search", json!({"query": "foo"}))],
            )),
            ("call_on_analysis_channel_constrained", sample(
                "<|channel|>analysis to=functions.get_time <|constrain|>json<|message|>{\"timezone\":\"UTC\"}<|call|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            // The chat template's layout: recipient after the role, bare content type.
            ("recipient_after_role", sample(
                "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{\"timezone\":\"UTC\"}<|call|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            // docs/format.md preamble example: no space before <|constrain|>.
            ("preamble_then_call", sample(
                "<|channel|>analysis<|message|>{long chain of thought}<|end|><|start|>assistant<|channel|>commentary<|message|>**Action plan**:\n1. Look up the weather\n---\nWill start now<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>{\"location\": \"San Francisco\"}<|call|>",
                Some("**Action plan**:\n1. Look up the weather\n---\nWill start now"),
                vec![("get_weather", json!({"location": "San Francisco"}))],
            )),
            ("stop_token_stripped_keeps_complete_call", sample(
                "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"} ",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("call_ended_by_end_marker", sample(
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}<|end|>",
                None,
                vec![("get_weather", json!({"location": "NYC"}))],
            )),
            ("final_without_return", sample(
                "<|channel|>analysis<|message|>Simple arithmetic.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.",
                Some("2 + 2 = 4."),
                vec![],
            )),
            ("message_without_end_before_next", sample(
                "<|channel|>analysis<|message|>Thinking<|start|>assistant<|channel|>final<|message|>Answer<|return|>",
                Some("Answer"),
                vec![],
            )),
            ("builtin_python_body_is_wrapped", broken(
                "<|channel|>analysis<|message|>Compute it.<|end|><|start|>assistant<|channel|>analysis to=python code<|message|>import math\nprint(\"x\", math.pi)<|call|>",
                None,
                vec![("python", json!({"input": "import math\nprint(\"x\", math.pi)"}))],
                vec!["unknown_tool"],
            )),
            ("builtin_browser_json_body", broken(
                "<|channel|>analysis to=browser.search code<|message|>{\"query\": \"weather NYC\", \"topn\": 3}<|call|>",
                None,
                vec![("browser.search", json!({"query": "weather NYC", "topn": 3}))],
                vec!["unknown_tool"],
            )),
            ("text_after_json_is_malformed", broken(
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"NYC\"}}<|call|><|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{\"timezone\":\"EST\"}<|call|>",
                None,
                vec![("get_time", json!({"timezone": "EST"}))],
                vec!["malformed_json"],
            )),
            ("function_body_not_json", broken(
                "<|channel|>commentary to=functions.get_weather<|message|>NYC please<|call|>",
                None,
                vec![],
                vec!["malformed_json"],
            )),
            ("recipient_without_function_name", broken(
                "<|channel|>commentary to=functions. <|constrain|>json<|message|>{}<|call|>",
                None,
                vec![],
                vec!["missing_name"],
            )),
            ("header_cut_off", broken(
                "<|channel|>analysis<|message|>Hmm.<|end|><|start|>assistant<|channel|>commentary to=functions.get_wea",
                None,
                vec![],
                vec!["truncated"],
            )),
            ("header_without_message_marker", broken(
                "<|start|>assistant<|end|><|start|>assistant<|channel|>final<|message|>Hi<|return|>",
                Some("Hi"),
                vec![],
                vec!["unexpected_text"],
            )),
            ("big_integer_kept_exact", sample(
                "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"days\": 9007199254740993}<|call|>",
                None,
                vec![("get_weather", serde_json::from_str("{\"days\": 9007199254740993}").unwrap())],
            )),
            ("stray_stop_marker_after_text", sample("The answer is 4.<|return|>", Some("The answer is 4."), vec![])),
            ("stray_call_marker_is_unexpected", broken(
                "Let me think.<|call|>",
                Some("Let me think."),
                vec![],
                vec!["unexpected_text"],
            )),
            ("marker_in_prose_is_content", sample(
                "Harmony messages open with <|start|> then a role, e.g. <|channel|>, see docs.",
                Some("Harmony messages open with <|start|> then a role, e.g. <|channel|>, see docs."),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- gpt-oss harmony layout: messages with channels; a call names its recipient in the role header. -#}
{{- '<|start|>system<|message|>Reasoning: medium\n# Valid channels: analysis, commentary, final.<|end|>' }}
{%- if tools %}
{{- '<|start|>developer<|message|># Tools\n\n## functions\n\nnamespace functions {\n' }}
{%- for t in tools %}{{- 'type ' + t.function.name + ' = (_: any) => any;\n' }}{%- endfor %}
{{- '} // namespace functions<|end|>' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{%- if message.thinking %}{{- '<|start|>assistant<|channel|>analysis<|message|>' + message.thinking + '<|end|>' }}{%- endif %}
{%- for tool_call in message.tool_calls or [] %}
{{- '<|start|>assistant to=' }}
{{- 'functions.' + tool_call.function.name + '<|channel|>commentary ' }}
{{- (tool_call.content_type if tool_call.content_type is defined else 'json') + '<|message|>' }}
{{- tool_call.function.arguments | tojson + '<|call|>' }}
{%- endfor %}
{%- if message.content %}{{- '<|start|>assistant<|channel|>final<|message|>' + message.content + '<|return|>' }}{%- endif %}
{%- elif message.role == 'tool' %}
{{- '<|start|>functions.' + message.name + ' to=assistant<|channel|>commentary<|message|>' + message.content + '<|end|>' }}
{%- else %}
{{- '<|start|>' + message.role + '<|message|>' + message.content + '<|end|>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start|>assistant' }}{%- endif %}
"#;
