//! Rust-level benchmarks of the core, so a slowdown in `rust/core` shows without Python:
//! streaming parse (every format, 1/8/64 calls written by the format's own renderer, fed in
//! 4-character chunks), one-shot parse, schema validation, and mask-cache keys.
//!
//! `cargo bench -p toolwire-core -- --quick` runs all of it with short settings; a filter picks
//! groups (`-- --quick stream/hermes`).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};
use toolwire_core::bitmask::{KeyPlan, StateKeyer};
use toolwire_core::formats;
use toolwire_core::render::RenderCall;
use toolwire_core::schema::Validator;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

const CALL_COUNTS: [usize; 3] = [1, 8, 64];

fn calls(n: usize) -> Vec<RenderCall> {
    (0..n)
        .map(|i| RenderCall {
            name: "get_weather".into(),
            arguments: json!({"location": format!("São Paulo {i}"), "unit": "celsius", "days": i,
                "note": "line one\nline \"two\" 🌧"}),
            id: None,
        })
        .collect()
}

fn rendered(format: &str, n: usize) -> String {
    let format = formats::lookup(format).expect("a registered format");
    format.render(&calls(n), Some("Let me check."))
}

/// `text` in chunks of four characters, as a server streams deltas.
fn chunks(text: &str) -> Vec<&str> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .step_by(4)
        .chain([text.len()])
        .collect();
    bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

fn config(format: &str) -> ParserConfig {
    ParserConfig::new(format, ToolSet::empty(), None).expect("a registered format")
}

fn streaming(c: &mut Criterion) {
    for name in formats::names() {
        let mut group = c.benchmark_group(format!("stream/{name}"));
        for n in CALL_COUNTS {
            let text = rendered(name, n);
            let pieces = chunks(&text);
            let config = config(name);
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(BenchmarkId::from_parameter(n), &pieces, |b, pieces| {
                b.iter(|| {
                    let mut stream = StreamParser::new(config.clone());
                    for piece in pieces {
                        black_box(stream.feed(piece).expect("feed"));
                    }
                    stream.finish(None).expect("finish");
                    black_box(stream.message())
                })
            });
        }
        group.finish();
    }
}

fn one_shot(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for name in [
        "hermes",
        "qwen3_coder",
        "deepseek_v3_2",
        "pythonic",
        "harmony",
    ] {
        let text = rendered(name, 8);
        let config = config(name);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new(name, 8), &text, |b, text| {
            b.iter(|| black_box(parse(&config, text)))
        });
    }
    group.finish();
}

fn validation(c: &mut Criterion) {
    let schema = json!({"type": "object", "properties": {
        "location": {"type": "string", "minLength": 1},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 0, "maximum": 64},
        "note": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 8}},
        "required": ["location"], "additionalProperties": false});
    let validator = Validator::compile(&schema).expect("a valid schema");
    let valid = json!({"location": "Paris", "unit": "celsius", "days": 3, "note": "n",
        "tags": ["rain", "wind"]})
    .to_string();
    let invalid = json!({"unit": "kelvin", "days": -1, "tags": ["Rain"], "extra": 1}).to_string();
    let mut group = c.benchmark_group("validate");
    for (label, text) in [("valid", &valid), ("invalid", &invalid)] {
        group.bench_function(label, |b| {
            b.iter(|| black_box(validator.validate_json(text).expect("JSON")))
        });
    }
    group.bench_function("compile", |b| {
        b.iter(|| black_box(Validator::compile(&schema).expect("a valid schema")))
    });
    group.finish();
}

/// A hermes-style structural tag: free text, then JSON calls of two tools.
fn hermes_tag() -> Value {
    let tag = |name: &str, schema: Value| {
        json!({"type": "tag",
            "begin": format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": "),
            "content": {"type": "json_schema", "json_schema": schema, "style": "json"},
            "end": "}\n</tool_call>"})
    };
    json!({"type": "structural_tag", "format": {"type": "triggered_tags",
        "triggers": ["<tool_call>"], "excludes": ["<think>", "</think>"], "tags": [
            tag("get_weather", json!({"type": "object", "properties": {
                "location": {"type": "string"}, "unit": {"type": "string"},
                "days": {"type": "integer"}, "note": {"type": "string"}}})),
            tag("get_time", json!({"type": "object"}))]}})
}

fn mask_keys(c: &mut Criterion) {
    let plan = KeyPlan::from_tag([7; 16], &hermes_tag());
    let text = rendered("hermes", 8);
    // one "token" per four characters, keyed after each as a decode loop does
    let tokens: Vec<&[u8]> = chunks(&text).into_iter().map(str::as_bytes).collect();
    let mut group = c.benchmark_group("mask_keys");
    group.bench_function("plan", |b| {
        let tag = hermes_tag();
        b.iter(|| black_box(KeyPlan::from_tag([7; 16], &tag)))
    });
    group.throughput(Throughput::Elements(tokens.len() as u64));
    group.bench_function("hermes/8", |b| {
        b.iter(|| {
            let mut keyer = StateKeyer::new(&plan);
            for (id, token) in tokens.iter().enumerate() {
                keyer.accept(id as u32, token);
                black_box(keyer.key());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, streaming, one_shot, validation, mask_keys);
criterion_main!(benches);
