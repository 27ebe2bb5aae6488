//! The shared case matrix: every format answers every case, with a sample of real model output in
//! that format and what it means, or an explicit reason why the case does not apply. Each format's
//! answers are `cases/<format>.rs`, a `pub fn matrix() -> Matrix`, and the same file holds the
//! format's detection evidence, `pub const DETECT_TEMPLATE: &str`: a short chat template written
//! by hand (never derived from the syntax) whose first line is
//! `{#- expect: reasoning=R special_tokens=yes|no -#}`, which both the Rust detection test and the
//! Python tests (`tests/_detect_templates.py`) read. The build script (`rust/core/build.rs`) finds
//! the files, so there is nothing to register.

use serde_json::Value;

pub struct Expect {
    pub content: Option<&'static str>,
    pub calls: Vec<(&'static str, Value)>,
    pub issues: Vec<&'static str>,
}

pub enum Case {
    Sample { input: &'static str, expect: Expect },
    NotApplicable(&'static str),
}

pub fn sample(
    input: &'static str,
    content: Option<&'static str>,
    calls: Vec<(&'static str, Value)>,
) -> Case {
    Case::Sample {
        input,
        expect: Expect {
            content,
            calls,
            issues: vec![],
        },
    }
}

pub fn broken(
    input: &'static str,
    content: Option<&'static str>,
    calls: Vec<(&'static str, Value)>,
    issues: Vec<&'static str>,
) -> Case {
    Case::Sample {
        input,
        expect: Expect {
            content,
            calls,
            issues,
        },
    }
}

/// Every field must be answered; adding a format means filling all of them.
pub struct Matrix {
    pub format: &'static str,
    pub tools: Value,
    pub plain_content: Case,
    pub one_call: Case,
    pub parallel_calls: Case,
    pub text_before_between_after: Case,
    pub nested_json: Case,
    pub unicode_and_escapes: Case,
    pub empty_arguments: Case,
    pub truncated: Case,
    pub malformed: Case,
    pub more: Vec<(&'static str, Case)>,
}

impl Matrix {
    pub fn cases(&self) -> Vec<(&'static str, &Case)> {
        let mut all = vec![
            ("plain_content", &self.plain_content),
            ("one_call", &self.one_call),
            ("parallel_calls", &self.parallel_calls),
            ("text_before_between_after", &self.text_before_between_after),
            ("nested_json", &self.nested_json),
            ("unicode_and_escapes", &self.unicode_and_escapes),
            ("empty_arguments", &self.empty_arguments),
            ("truncated", &self.truncated),
            ("malformed", &self.malformed),
        ];
        all.extend(self.more.iter().map(|(name, case)| (*name, case)));
        all
    }
}

// `pub mod` for each case file and `all()`, written by the build script from this folder's files.
include!(concat!(env!("OUT_DIR"), "/case_files.rs"));

pub fn weather_tools() -> Value {
    serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
            "timezone": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "filters": {"type": "object"}, "tags": {"type": "array"}}}}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}
    ])
}

/// `weather_tools` plus `extra` (an array of tools).
pub fn weather_tools_and(extra: Value) -> Value {
    let mut tools = weather_tools();
    if let (Some(list), Some(more)) = (tools.as_array_mut(), extra.as_array()) {
        list.extend(more.iter().cloned());
    }
    tools
}

/// `weather_tools` plus the tools the conformance fixtures
/// (ai-dynamo toolcalling fixtures-batch-v1) call.
pub fn conformance_tools() -> Value {
    let mut tools = weather_tools();
    let extra = serde_json::json!([
        {"type": "function", "function": {"name": "run_query", "parameters": {"type": "object", "properties": {
            "sql": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "book_flight", "parameters": {"type": "object", "properties": {
            "destination": {"type": "string"}, "passengers": {"type": "integer"}, "first_class": {"type": "boolean"}}}}},
        {"type": "function", "function": {"name": "set_temperature", "parameters": {"type": "object", "properties": {
            "celsius": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "process_data", "parameters": {"type": "object", "properties": {
            "items": {"type": "array"}, "config": {"type": "object"}, "payload": {"type": "object"}}}}}
    ]);
    if let (Some(list), Some(more)) = (tools.as_array_mut(), extra.as_array()) {
        list.extend(more.iter().cloned());
    }
    tools
}
