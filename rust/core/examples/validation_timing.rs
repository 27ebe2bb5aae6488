//! Per-stage timing of argument validation for the cases of `benches/bench_validation.py`:
//! scanning the text alone (schema `{}`), `is_valid_json`, `report_json` (what the Python
//! binding uses) and `validate_json`, next to serde_json's own parse and the `Value` entry points.
//!
//!     cargo run --release -p toolwire-core --example validation_timing
//!
//! Complements `benches/bench_validation.py`: that one times the Python entry point against the
//! `jsonschema` package; this one shows where the Rust side of that time goes.

use std::hint::black_box;

use serde_json::{json, Value};
use toolwire_core::schema::Validator;

#[repr(C)]
struct Timespec {
    seconds: i64,
    nanoseconds: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
}

/// CPU time of this thread (Linux `CLOCK_THREAD_CPUTIME_ID`): steadier than wall time on a
/// shared machine.
fn thread_time_ns() -> f64 {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut time = Timespec {
        seconds: 0,
        nanoseconds: 0,
    };
    // SAFETY: `time` is a valid, writable timespec for the duration of the call.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) };
    time.seconds as f64 * 1e9 + time.nanoseconds as f64
}

fn best_ns(mut work: impl FnMut(), inner: u32) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..25 {
        let start = thread_time_ns();
        for _ in 0..inner {
            work();
        }
        best = best.min((thread_time_ns() - start) / f64::from(inner));
    }
    best
}

fn main() {
    let weather = json!({
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 14}
        },
        "required": ["location"],
        "additionalProperties": false
    });
    let event = json!({
        "type": "object",
        "$defs": {"person": {"type": "object",
            "properties": {"name": {"type": "string", "minLength": 1}, "email": {"type": "string", "format": "email"}},
            "required": ["name", "email"]}},
        "properties": {
            "title": {"type": "string", "maxLength": 200},
            "start": {"type": "string", "format": "date-time"},
            "duration_minutes": {"type": "integer", "multipleOf": 15, "minimum": 15},
            "attendees": {"type": "array", "items": {"$ref": "#/$defs/person"}, "minItems": 1, "uniqueItems": true},
            "room": {"type": ["string", "null"], "pattern": "^[A-Z]-[0-9]{3}$"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10}
        },
        "required": ["title", "start", "attendees"]
    });
    let cases = [
        (
            "small valid",
            &weather,
            r#"{"location": "San Francisco, CA", "unit": "celsius", "days": 5}"#,
        ),
        (
            "nested valid",
            &event,
            r#"{"title": "Quarterly planning", "start": "2026-12-01T15:00:00Z", "duration_minutes": 60, "attendees": [{"name": "Ada", "email": "ada@example.com"}, {"name": "Lin", "email": "lin@example.com"}], "room": "B-204", "tags": ["planning", "q1"]}"#,
        ),
        (
            "small invalid",
            &weather,
            r#"{"location": "Oslo", "unit": "kelvin", "days": 30, "extra": true}"#,
        ),
    ];
    println!(
        "{:14} {:>8} {:>9} {:>9} {:>9} | {:>11} {:>9} {:>9}",
        "case", "scan", "is_valid", "report", "validate", "serde parse", "is_valid", "validate"
    );
    println!(
        "{:14} {:>38} | {:>31}",
        "", "(from JSON text)", "(on a serde_json::Value)"
    );
    for (label, schema, text) in cases {
        let validator = Validator::compile(schema).expect("schema compiles");
        let value: Value = serde_json::from_str(text).expect("JSON");
        let accept_all = Validator::compile(&json!({})).expect("schema compiles");
        let scan = best_ns(
            || {
                let _ = black_box(accept_all.is_valid_json(black_box(text)));
            },
            20_000,
        );
        let check_text = best_ns(
            || {
                let _ = black_box(validator.is_valid_json(black_box(text)));
            },
            20_000,
        );
        let report = best_ns(
            || drop(black_box(validator.report_json(black_box(text)))),
            20_000,
        );
        let all_text = best_ns(
            || drop(black_box(validator.validate_json(black_box(text)))),
            20_000,
        );
        let parse = best_ns(
            || {
                drop(black_box(
                    serde_json::from_str::<Value>(black_box(text)).unwrap(),
                ))
            },
            20_000,
        );
        let check = best_ns(
            || {
                black_box(validator.is_valid(black_box(&value)));
            },
            20_000,
        );
        let all = best_ns(
            || drop(black_box(validator.validate(black_box(&value)))),
            20_000,
        );
        println!(
            "{label:14} {scan:>6.0}ns {check_text:>7.0}ns {report:>7.0}ns {all_text:>7.0}ns | {parse:>9.0}ns {check:>7.0}ns {all:>7.0}ns"
        );
    }
}
