//! `parse(render(calls)) == calls` for every format: the renderer writes what the model writes,
//! and the parser reads it back.

use serde_json::{json, Value};
use toolwire_core::formats;
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{parse, ParserConfig};
use toolwire_core::tools::ToolSet;

fn call(name: &str, arguments: Value) -> RenderCall {
    RenderCall {
        name: name.to_owned(),
        arguments,
        id: None,
    }
}

fn call_sets() -> Vec<Vec<RenderCall>> {
    vec![
        vec![call(
            "get_weather",
            json!({"location": "NYC", "unit": "celsius"}),
        )],
        vec![
            call(
                "get_weather",
                json!({"location": "Tōkyō \"central\"", "days": 3}),
            ),
            call(
                "search",
                json!({"query": "a < b; c > d", "filters": {"year": 2024, "tags": ["x", "y"]}, "exact": true}),
            ),
            call("ping", json!({})),
        ],
    ]
}

fn tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "unit": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}, "exact": {"type": "boolean"}}}}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
    ])
}

#[test]
fn every_format_parses_what_it_renders() {
    let tools = ToolSet::from_json(&tools()).unwrap();
    for spec in formats::REGISTRY {
        let config = ParserConfig::new(spec.syntax.name, tools.clone(), None).unwrap();
        for calls in call_sets() {
            for content in [None, Some("Let me check that.")] {
                let text = spec.render(&calls, content);
                let message = parse(&config, &text);
                let got: Vec<(String, Value)> = message
                    .tool_calls
                    .iter()
                    .map(|c| (c.name.clone(), serde_json::from_str(&c.arguments).unwrap()))
                    .collect();
                let want: Vec<(String, Value)> = calls
                    .iter()
                    .map(|c| (c.name.clone(), c.arguments.clone()))
                    .collect();
                assert_eq!(got, want, "{}: {text:?}", spec.syntax.name);
                assert!(
                    message.issues.is_empty(),
                    "{}: {:?}",
                    spec.syntax.name,
                    message.issues
                );
                assert_eq!(
                    message.content_or_none().map(str::trim),
                    content,
                    "{}: content of {text:?}",
                    spec.syntax.name
                );
            }
        }
    }
}
