//! solar_open2 (Upstage Solar Open 2). Samples in the layout of the engines' `solar_open2` tests
//! (the name on the call's first line, one argument per line), with the values their coercion
//! tests use (integers, booleans, JSON arrays and objects, raw strings).

use serde_json::json;

use super::qwen3_coder::xml_tools;
use super::{broken, sample, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "solar_open2",
        tools: xml_tools(),
        plain_content: sample("서울은 오늘 맑습니다.", Some("서울은 오늘 맑습니다."), vec![]),
        one_call: sample(
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>",
            None,
            vec![("get_weather", json!({"location": "Seoul"}))],
        ),
        parallel_calls: sample(
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_arg:start|>days<|tool_arg:value|>3<|tool_arg:end|>\n<|tool_call:end|>\n<|tool_call:start|>get_time\n<|tool_arg:start|>timezone<|tool_arg:value|>Asia/Seoul<|tool_arg:end|>\n<|tool_call:end|>",
            None,
            vec![("get_weather", json!({"location": "Seoul", "days": 3})), ("get_time", json!({"timezone": "Asia/Seoul"}))],
        ),
        text_before_between_after: sample(
            "확인해 볼게요.\n<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Busan<|tool_arg:end|>\n<|tool_call:end|>\nand\n<|tool_call:start|>get_time\n<|tool_arg:start|>timezone<|tool_arg:value|>KST<|tool_arg:end|>\n<|tool_call:end|>\nDone.",
            Some("확인해 볼게요.\n\nand\n\nDone."),
            vec![("get_weather", json!({"location": "Busan"})), ("get_time", json!({"timezone": "KST"}))],
        ),
        nested_json: sample(
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>{\"kept\": \"raw\"}<|tool_arg:end|>\n<|tool_arg:start|>filters<|tool_arg:value|>{\"year\": {\"gte\": 2020}, \"langs\": [\"ko\", null]}<|tool_arg:end|>\n<|tool_arg:start|>tags<|tool_arg:value|>[\"a\", 1, true]<|tool_arg:end|>\n<|tool_call:end|>",
            None,
            vec![("search", json!({"query": "{\"kept\": \"raw\"}", "filters": {"year": {"gte": 2020}, "langs": ["ko", null]}, "tags": ["a", 1, true]}))],
        ),
        unicode_and_escapes: sample(
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>\n    def f():\n        return \"서울\\n\" # 東京 🌧 <|tool_call:start <tool_call><|tool_arg:end|>\n<|tool_call:end|>",
            None,
            vec![("get_weather", json!({"location": "\n    def f():\n        return \"서울\\n\" # 東京 🌧 <|tool_call:start <tool_call>"}))],
        ),
        empty_arguments: sample("<|tool_call:start|>ping\n<|tool_call:end|>", None, vec![("ping", json!({}))]),
        truncated: broken(
            "찾아볼게요.\n<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Seo",
            Some("찾아볼게요.\n"),
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "<|tool_call:start|>get weather\n<|tool_arg:start|>location<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>\nAfter.",
            Some("\nAfter."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            (
                "typed_values",
                sample(
                    "<|tool_call:start|>book_flight\n<|tool_arg:start|>destination<|tool_arg:value|>Jeju<|tool_arg:end|>\n<|tool_arg:start|>passengers<|tool_arg:value|>2<|tool_arg:end|>\n<|tool_arg:start|>first_class<|tool_arg:value|>false<|tool_arg:end|>\n<|tool_call:end|>",
                    None,
                    vec![("book_flight", json!({"destination": "Jeju", "passengers": 2, "first_class": false}))],
                ),
            ),
            (
                "args_on_one_line",
                sample(
                    "<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Seoul<|tool_arg:end|><|tool_arg:start|>days<|tool_arg:value|>1<|tool_arg:end|><|tool_call:end|>",
                    None,
                    vec![("get_weather", json!({"location": "Seoul", "days": 1}))],
                ),
            ),
            (
                "unknown_tool_is_returned_and_flagged",
                broken(
                    "<|tool_call:start|>bash\n<|tool_arg:start|>command<|tool_arg:value|>ls<|tool_arg:end|>\n<|tool_call:end|>",
                    None,
                    vec![("bash", json!({"command": "ls"}))],
                    vec!["unknown_tool"],
                ),
            ),
            ("lone_open_marker_is_truncated", broken("Hi\n<|tool_call:start|>", Some("Hi\n"), vec![], vec!["truncated"])),
            (
                "missing_call_end_before_next_call",
                sample(
                    "<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:start|>ping\n<|tool_call:end|>",
                    None,
                    vec![("get_weather", json!({"location": "Seoul"})), ("ping", json!({}))],
                ),
            ),
        ],
    }
}

/// Detection's evidence: a short chat template written here (never derived from the syntax),
/// carrying the family's markers and layout as its real chat template writes them; its first
/// line says the reasoning mode and whether markers are special tokens.
pub const DETECT_TEMPLATE: &str = r#"{#- expect: reasoning=native special_tokens=yes -#}
{#- Written for toolwire's detection tests: Solar Open 2's call, argument and think markers (role headers simplified). -#}
{%- for message in messages %}
{%- if message.role == 'assistant' %}assistant: 
{%- if message.reasoning_content %}<|think:start|>{{ message.reasoning_content }}<|think:end|>{% endif %}{{ message.content }}
{%- for call in message.tool_calls or [] %}<|tool_call:start|>{{ call.function.name }}
{% for k, v in call.function.arguments.items() %}<|tool_arg:start|>{{ k }}<|tool_arg:value|>{{ v if v is string else v | tojson }}<|tool_arg:end|>
{% endfor %}<|tool_call:end|>
{%- endfor %}
{% else %}{{ message.role }}: {{ message.content }}

{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}assistant: {% endif %}
"#;
