use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "mistral",
        tools: weather_tools(),
        plain_content: sample("[1] See the docs.", Some("[1] See the docs."), vec![]),
        one_call: sample(
            "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]",
            None,
            vec![("get_weather", json!({"location": "NYC"}))],
        ),
        parallel_calls: sample(
            "[TOOL_CALLS]get_weather[ARGS]{\"location\": \"NYC\"}[TOOL_CALLS]get_time[ARGS]{\"timezone\": \"EST\"}",
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "Let me check. [TOOL_CALLS]get_weather{\"location\": \"NYC\"} and [TOOL_CALLS] [{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}][/TOOL_CALLS] ok",
            Some("Let me check.  and  ok"),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"]}\", \"filters\": {\"a\": [[1], {\"b\": null}]}}, \"id\": \"abc123XYZ\"}]",
            None,
            vec![("search", json!({"query": "]}", "filters": {"a": [[1], {"b": null}]}}))],
        ),
        unicode_and_escapes: sample(
            "[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{\"location\": \"São Paulo \\\\ \\\"SP\\\" ☀\"}",
            None,
            vec![("get_weather", json!({"location": "São Paulo \\ \"SP\" ☀"}))],
        ),
        empty_arguments: sample("[TOOL_CALLS]ping[ARGS]{}", None, vec![("ping", json!({}))]),
        truncated: broken("[TOOL_CALLS]get_weather[ARGS]{\"location\": \"N", None, vec![], vec!["truncated"]),
        malformed: broken("[TOOL_CALLS]get weather(NYC)", None, vec![], vec!["malformed_json"]),
        more: vec![
            ("pre_v11_call_with_its_id", sample(
                "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}, \"id\": \"a1B2c3D4e\"}, {\"id\": \"Z9y8X7w6v\", \"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}]",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
            ("bare_array_when_marker_was_skipped", sample(
                "[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"CET\"}}]",
                None,
                vec![("get_time", json!({"timezone": "CET"}))],
            )),
            ("array_with_two_calls", sample(
                "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}, {\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}]",
                None,
                vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
            )),
        ],
    }
}
