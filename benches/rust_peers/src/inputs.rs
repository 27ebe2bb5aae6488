//! The race's inputs: realistic calls rendered by toolwire's own renderer at 1, 8 and 64 calls,
//! the tools they call, and the 4-character chunking with special markers kept whole.

use serde_json::{json, Value};
use toolwire_core::formats::Format;
use toolwire_core::render::RenderCall;

/// A call as every implementation must return it: the name and the arguments as a JSON value.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    pub arguments: Value,
}

pub const SIZES: [usize; 3] = [1, 8, 64];
pub const PREAMBLE: &str = "I'll look that up for you.\n";

const CITIES: [&str; 4] = [
    "Paris, France",
    "Tokyo, Japan",
    "São Paulo, Brazil",
    "Nairobi, Kenya",
];
const UNITS: [&str; 2] = ["celsius", "fahrenheit"];
const QUERIES: [&str; 3] = [
    "latest results of the 2026 regional elections",
    "how to rotate a PostgreSQL primary without downtime",
    "best hiking trails near Lake Tahoe in October",
];
const PATHS: [&str; 3] = [
    "src/server/handlers.rs",
    "docs/deploy/kubernetes.md",
    "tests/test_api.py",
];
const PEOPLE: [&str; 3] = ["ana@example.com", "li.wei@example.org", "sam.o@example.net"];
const SUBJECTS: [&str; 2] = ["Quarterly numbers", "Re: launch checklist"];
const BODIES: [&str; 2] = [
    "Hi, attached are the figures we discussed. Let me know if anything looks off.",
    "Thanks! I moved the \"go/no-go\" meeting to Thursday 10:00, see the new invite.",
];

/// n deterministic calls cycling through five tools, 60-120 bytes of JSON arguments each.
pub fn calls(n: usize) -> Vec<Call> {
    (0..n)
        .map(|i| {
            let j = i / 5;
            let (name, arguments) = match i % 5 {
                0 => (
                    "get_weather",
                    json!({"location": CITIES[j % 4], "unit": UNITS[j % 2], "days": 3 + j % 5}),
                ),
                1 => ("search_web", json!({"query": QUERIES[j % 3], "max_results": 5 + j % 6})),
                2 => (
                    "read_file",
                    json!({"path": PATHS[j % 3], "start_line": 10 + 7 * i, "end_line": 50 + 7 * i}),
                ),
                3 => (
                    "send_email",
                    json!({"to": PEOPLE[j % 3], "subject": SUBJECTS[j % 2], "body": BODIES[j % 2]}),
                ),
                _ => (
                    "create_event",
                    json!({"title": "Design review", "start": format!("2026-{:02}-{}T{:02}:30:00", 1 + j % 12, 10 + j % 18, 9 + j % 8),
                           "duration_minutes": 30 * (1 + j % 3), "attendees": [PEOPLE[j % 3]]}),
                ),
            };
            Call { name: name.to_owned(), arguments }
        })
        .collect()
}

/// The OpenAI `tools` array the calls are made against.
pub fn tools_json() -> Value {
    let tool = |name: &str, properties: Value, required: &[&str]| {
        json!({"type": "function", "function": {"name": name, "description": format!("The {name} tool."),
               "parameters": {"type": "object", "properties": properties, "required": required}}})
    };
    json!([
        tool(
            "get_weather",
            json!({"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"}}),
            &["location"]
        ),
        tool(
            "search_web",
            json!({"query": {"type": "string"}, "max_results": {"type": "integer"}}),
            &["query"]
        ),
        tool(
            "read_file",
            json!({"path": {"type": "string"}, "start_line": {"type": "integer"}, "end_line": {"type": "integer"}}),
            &["path"]
        ),
        tool(
            "send_email",
            json!({"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}}),
            &["to", "body"]
        ),
        tool(
            "create_event",
            json!({"title": {"type": "string"}, "start": {"type": "string"}, "duration_minutes": {"type": "integer"}, "attendees": {"type": "array", "items": {"type": "string"}}}),
            &["title", "start"]
        ),
    ])
}

/// The model output toolwire's renderer writes for these calls after a short sentence.
pub fn render(format: &Format, calls: &[Call]) -> String {
    (format.render)(&render_calls(calls), Some(PREAMBLE))
}

/// The calls as one JSON array after `open`, as toolwire's renderer writes JSON-array formats.
pub fn render_array(calls: &[Call], open: &str) -> String {
    (toolwire_core::render::content_and_array)(&render_calls(calls), Some(PREAMBLE), open, "")
}

fn render_calls(calls: &[Call]) -> Vec<RenderCall> {
    calls
        .iter()
        .map(|c| RenderCall {
            name: c.name.clone(),
            arguments: c.arguments.clone(),
            id: None,
        })
        .collect()
}

/// 4-character chunks, except that a special marker is always one chunk of its own.
pub fn chunks<'a>(text: &'a str, special: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let (mut start, mut chars, mut i) = (0, 0, 0);
    while i < text.len() {
        if let Some(marker) = special
            .iter()
            .filter(|m| text[i..].starts_with(**m))
            .max_by_key(|m| m.len())
        {
            if start < i {
                out.push(&text[start..i]);
            }
            out.push(&text[i..i + marker.len()]);
            i += marker.len();
            (start, chars) = (i, 0);
            continue;
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
        chars += 1;
        if chars == 4 {
            out.push(&text[start..i]);
            (start, chars) = (i, 0);
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}
