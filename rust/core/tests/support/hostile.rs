//! Hostile inputs for every format, built from the format's own renderer: huge values, deep
//! nesting, many calls, markers inside strings. Shared by `tests/hostile.rs` and the scratch
//! timing example.

#![allow(dead_code)]

use serde_json::{json, Value};
use toolwire_core::formats::Format;
use toolwire_core::render::RenderCall;

pub const PLACEHOLDER: &str = "QQPLACEHOLDERQQ";

pub fn call(name: &str, arguments: Value) -> RenderCall {
    RenderCall {
        name: name.to_owned(),
        arguments,
        id: None,
    }
}

/// One call `get_weather(location=<placeholder>)` rendered in the format, with the placeholder
/// replaced by `value` where the format writes a JSON string (`"..."`), or by `bare` where it
/// writes the value as text (XML parameters).
pub fn one_call_with(spec: &Format, in_string: &str) -> String {
    let text = spec.render(
        &[call("get_weather", json!({ "location": PLACEHOLDER }))],
        None,
    );
    text.replacen(PLACEHOLDER, in_string, 1)
}

/// One call whose `location` value is replaced by `json_value` (JSON text, not a string).
pub fn one_call_with_value(spec: &Format, json_value: &str) -> String {
    let text = spec.render(
        &[call("get_weather", json!({ "location": PLACEHOLDER }))],
        None,
    );
    let quoted = format!("\"{PLACEHOLDER}\"");
    if text.contains(&quoted) {
        text.replacen(&quoted, json_value, 1)
    } else {
        text.replacen(PLACEHOLDER, json_value, 1)
    }
}

pub fn many_calls(spec: &Format, n: usize) -> String {
    let calls: Vec<RenderCall> = (0..n).map(|i| call("f", json!({ "i": i }))).collect();
    spec.render(&calls, None)
}
