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
