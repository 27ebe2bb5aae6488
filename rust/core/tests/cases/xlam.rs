//! xLAM-2 JSON call arrays: bare (the chat template's form), fenced, after `[TOOL_CALLS]` or in
//! `<tool_call>` (the shapes vLLM's `xlam` parser accepts). No conformance fixtures exist for
//! this family.

use serde_json::json;

use super::{broken, sample, weather_tools, Matrix};

pub fn matrix() -> Matrix {
    Matrix {
        format: "xlam",
        tools: weather_tools(),
        plain_content: sample(
            "Sure! Here is an example:\n```python\nprint([1, 2])\n```\nand a list [a, b].",
            Some("Sure! Here is an example:\n```python\nprint([1, 2])\n```\nand a list [a, b]."),
            vec![],
        ),
        one_call: sample(
            r#"[{"name": "get_weather", "arguments": {"location": "San Francisco, CA", "unit": "celsius"}}]"#,
            None,
            vec![("get_weather", json!({"location": "San Francisco, CA", "unit": "celsius"}))],
        ),
        parallel_calls: sample(
            r#"[{"name": "get_weather", "arguments": {"location": "NYC"}}, {"name": "get_time", "arguments": {"timezone": "EST"}}]"#,
            None,
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        text_before_between_after: sample(
            "I'll check.\n```json\n[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]\n```\nand <tool_call>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"EST\"}}</tool_call> done.",
            Some("I'll check.\n\nand  done."),
            vec![("get_weather", json!({"location": "NYC"})), ("get_time", json!({"timezone": "EST"}))],
        ),
        nested_json: sample(
            r#"[{"name": "search", "arguments": {"query": "```]", "filters": {"a": {"b": [1, {"c": "}"}]}}}}]"#,
            None,
            vec![("search", json!({"query": "```]", "filters": {"a": {"b": [1, {"c": "}"}]}}}))],
        ),
        unicode_and_escapes: sample(
            r#"[{"name": "get_weather", "arguments": {"location": "Montréal \"QC\" \u00e9 ✈"}}]"#,
            None,
            vec![("get_weather", json!({"location": "Montréal \"QC\" é ✈"}))],
        ),
        empty_arguments: sample(
            r#"[{"name": "ping", "arguments": {}}]"#,
            None,
            vec![("ping", json!({}))],
        ),
        truncated: broken(
            r#"[{"name": "get_weather", "arguments": {"location": "San"#,
            None,
            vec![],
            vec!["truncated"],
        ),
        malformed: broken(
            "```json\n[{\"name\": \"get_weather\", \"arguments\": {\"location\": }}]\n```\nAfter.",
            Some("\nAfter."),
            vec![],
            vec!["malformed_json"],
        ),
        more: vec![
            ("fence_without_language_tag", sample(
                "```\n[{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}]\n```",
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("after_tool_calls_marker", sample(
                r#"[TOOL_CALLS][{"name": "get_time", "arguments": {"timezone": "UTC"}}]"#,
                None,
                vec![("get_time", json!({"timezone": "UTC"}))],
            )),
            ("fenced_json_that_is_not_a_call_is_content", sample(
                "Result:\n```json\n[1, 2, {\"name\": \"x\"}]\n```\n```json\n{\"name\": \"Bob\"}\n```",
                Some("Result:\n```json\n[1, 2, {\"name\": \"x\"}]\n```\n```json\n{\"name\": \"Bob\"}\n```"),
                vec![],
            )),
            ("arguments_as_json_string", sample(
                r#"[{"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}]"#,
                None,
                vec![("get_weather", json!({"location": "Paris"}))],
            )),
            ("unknown_tool_is_returned_and_flagged", broken(
                r#"[{"name": "launch", "arguments": {}}]"#,
                None,
                vec![("launch", json!({}))],
                vec!["unknown_tool"],
            )),
            ("empty_array_is_content", sample("[]", Some("[]"), vec![])),
        ],
    }
}
