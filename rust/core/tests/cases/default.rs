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
        more: vec![],
    }
}
