//! Kimi K3 XTML. Samples follow the block layout of SGLang's `kimik3_detector.py` and vLLM's
//! `kimi_k3_tool_parser.py` (docstrings and structural tag: no whitespace between blocks, indices
//! from 1, `type="string"` raw and other types JSON, `&amp;`/`&quot;` in attributes) and Dynamo's
//! `xtml/kimi_k3_parser.rs` (the `<|close|>message<|sep|>` turn close).

use serde_json::json;

use super::deepseek_v3::conformance_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "kimi_k3",
        tools: conformance_tools(),
        plain_content: sample(
            "<|open|>response<|sep|>Hello, how can I help you today?<|close|>response<|sep|><|close|>message<|sep|>",
            Some("Hello, how can I help you today?"),
            vec![],
        ),
        one_call: sample(
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>NYC<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>NYC<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"get_time\" index=\"2\"<|sep|><|open|>argument key=\"timezone\" type=\"string\"<|sep|>EST<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            None,
            vec![("get_weather", json!({"location": "NYC", "days": 3})), ("get_time", json!({"timezone": "EST"}))],
        ),
        // The prompt opened the response block: the output starts with its text.
        text_before_between_after: sample(
            "Let me check.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>NYC<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|> and <|open|>tools<|sep|><|open|>call tool=\"get_time\" index=\"1\"<|sep|><|open|>argument key=\"timezone\" type=\"string\"<|sep|>EST<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>Done.",
            Some("Let me check. and Done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "<|open|>tools<|sep|><|open|>call tool=\"process_data\" index=\"1\"<|sep|><|open|>argument key=\"payload\" type=\"object\"<|sep|>{\"regions\": [{\"name\": \"west\", \"scores\": [1, 2, 3]}], \"flags\": {\"enabled\": true, \"retry\": null}, \"note\": \"<|close|>call<|sep|>\"}<|close|>argument<|sep|><|open|>argument key=\"items\" type=\"array\"<|sep|>[\"x\", [1, 2]]<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            None,
            vec![("process_data", json!({"payload": {"regions": [{"name": "west", "scores": [1, 2, 3]}], "flags": {"enabled": true, "retry": null}, "note": "<|close|>call<|sep|>"}, "items": ["x", [1, 2]]}))],
        ),
        unicode_and_escapes: sample(
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>Tōkyō \"central\" \\ é &amp;\n東京 🌧 <|close|>call<|sep|> <b>\t<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            None,
            vec![("get_weather", json!({"location": "Tōkyō \"central\" \\ é &amp;\n東京 🌧 <|close|>call<|sep|> <b>\t"}))],
        ),
        empty_arguments: sample(
            "<|open|>tools<|sep|><|open|>call tool=\"ping\" index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            "<|open|>response<|sep|>I'll look.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>NY",
            Some("I'll look."),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|>location: NYC<|close|>call<|sep|><|open|>call tool=\"get_time\" index=\"2\"<|sep|><|open|>argument key=\"timezone\" type=\"string\"<|sep|>EST<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            None,
            vec![("get_time", json!({"timezone": "EST"}))],
            vec!["malformed_json"],
        ),
        more: vec![
            ("typed_values", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"book_flight\" index=\"1\"<|sep|><|open|>argument key=\"destination\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key=\"passengers\" type=\"number\"<|sep|>2<|close|>argument<|sep|><|open|>argument key=\"first_class\" type=\"boolean\"<|sep|>true<|close|>argument<|sep|><|open|>argument key=\"seat\" type=\"null\"<|sep|>null<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("book_flight", json!({"destination": "Paris", "passengers": 2, "first_class": true, "seat": null}))],
            )),
            ("string_type_is_verbatim_even_if_json", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"run_query\" index=\"1\"<|sep|><|open|>argument key=\"sql\" type=\"string\"<|sep|> 42\n<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("run_query", json!({"sql": " 42\n"}))],
            )),
            ("missing_type_is_a_string", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"set_temperature\" index=\"1\"<|sep|><|open|>argument key=\"celsius\"<|sep|>21<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("set_temperature", json!({"celsius": "21"}))],
            )),
            ("non_json_typed_value_is_a_string", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>three<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("get_weather", json!({"days": "three"}))],
            )),
            ("escaped_attributes", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"search\" index=\"1\"<|sep|><|open|>argument key=\"query\" type=\"string\"<|sep|>a&amp;b<|close|>argument<|sep|><|open|>argument key=\"say &quot;x&quot; &amp; y\" type=\"string\"<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("search", json!({"query": "a&amp;b", "say \"x\" & y": "v"}))],
            )),
            ("end_of_message_token_is_not_content", sample(
                "<|open|>response<|sep|>Sure.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>",
                Some("Sure."),
                vec![],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                "<|open|>tools<|sep|><|open|>call tool=\"unknown_tool\" index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>NYC<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("unknown_tool", json!({"location": "NYC"}))],
                vec!["unknown_tool"],
            )),
            ("missing_tools_close_keeps_complete_calls", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"get_time\" index=\"1\"<|sep|><|open|>argument key=\"timezone\" type=\"string\"<|sep|>UTC<|close|>argument<|sep|><|close|>call<|sep|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("missing_call_close_before_tools_close", sample(
                "<|open|>tools<|sep|><|open|>call tool=\"get_time\" index=\"1\"<|sep|><|open|>argument key=\"timezone\" type=\"string\"<|sep|>UTC<|close|>argument<|sep|><|close|>tools<|sep|>",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("eof_inside_call_tag_is_truncated", broken(
                "<|open|>tools<|sep|><|open|>call tool=\"get_time\" index=\"1\"<|sep|><|open|>argument key=\"timezone\" type=\"string\"<|sep|>UTC<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"get_weath",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
                vec!["truncated"],
            )),
            ("missing_tool_name_is_reported", broken(
                "<|open|>tools<|sep|><|open|>call index=\"1\"<|sep|><|open|>argument key=\"location\" type=\"string\"<|sep|>NYC<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"ping\" index=\"2\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
                None,
                vec![("ping", json!({}))],
                vec!["missing_name"],
            )),
            ("lone_tools_open_is_truncated", broken("Hi<|open|>tools<|sep|>", Some("Hi"), vec![], vec!["truncated"])),
            ("xtml_like_text_in_content", sample(
                "a <|open|> b <|open|>call x<|sep|> <open>tools",
                Some("a <|open|> b <|open|>call x<|sep|> <open>tools"),
                vec![],
            )),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=closing_only special_tokens=yes -#}
{#- Kimi K3 XTML layout: every block is <|open|>NAME<|sep|> ... <|close|>NAME<|sep|>; calls sit in a tools block with typed arguments. -#}
{%- for message in messages %}
{{- '<|open|>message role="' + message.role + '"<|sep|>' }}
{%- if message.role == 'assistant' %}
{%- if message.reasoning_content %}{{- '<|open|>think<|sep|>' + message.reasoning_content + '<|close|>think<|sep|>' }}{%- endif %}
{%- if message.content %}{{- '<|open|>response<|sep|>' + message.content + '<|close|>response<|sep|>' }}{%- endif %}
{%- if message.tool_calls %}
{{- '<|open|>tools<|sep|>' }}
{%- for tool_call in message.tool_calls %}
{{- '<|open|>call tool="' + tool_call.function.name + '" index="' + loop.index | string + '"<|sep|>' }}
{%- for key, value in tool_call.function.arguments.items() %}
{%- if value is string %}{{- '<|open|>argument key="' + key + '" type="string"<|sep|>' + value }}
{%- else %}{{- '<|open|>argument key="' + key + '" type="object"<|sep|>' + value | tojson }}{%- endif %}
{{- '<|close|>argument<|sep|>' }}
{%- endfor %}
{{- '<|close|>call<|sep|>' }}
{%- endfor %}
{{- '<|close|>tools<|sep|>' }}
{%- endif %}
{%- else %}{{- message.content }}
{%- endif %}
{{- '<|close|>message<|sep|>' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|open|>message role="assistant"<|sep|><|open|>think<|sep|>' }}{%- endif %}
"#;
