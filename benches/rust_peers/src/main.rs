//! The Rust-level race: toolwire-core against the tool-call parsers of NVIDIA Dynamo
//! (`dynamo-parsers` v1, `dynamo-parsers-v2`) and the SGLang model gateway (`tool-parser`), in one
//! release binary, on the same model outputs.
//!
//! Every implementation's calls are checked against the calls the output was rendered from
//! before anything is timed; one that returns other calls is reported as `differs` with what it
//! returned, and not timed. Times are CPU time of this thread, min over interleaved rounds (each
//! round measures every implementation once per cell, so a noisy neighbour hurts all alike).
//!
//! `rust-peers-race [ROUNDS] [OUT.json]` (defaults: 21 rounds, stdout); `RACE_FORMATS=a,b` races
//! only those formats; `RACE_INPUTS=1` adds the tools and each cell's chunks to the report, so
//! that `benches/bench_binding.py` feeds the binding exactly what was timed here.

mod inputs;
mod peers;

use std::time::Duration;

use serde_json::{json, Value};
use toolwire_core::formats;
use toolwire_core::stream::ParserConfig;
use toolwire_core::tools::ToolSet;

use inputs::Call;
use peers::{Found, Imp, Tools};

/// toolwire format, then the name each peer knows it by (`None`: the peer has no such parser).
const FORMATS: &[(&str, Option<&str>, Option<&str>, Option<&str>)] = &[
    ("hermes", Some("hermes"), None, Some("qwen")),
    ("llama3_json", Some("llama3_json"), None, Some("llama")),
    ("mistral", Some("mistral"), None, Some("mistral")),
    (MISTRAL_ARRAY, Some("mistral"), None, Some("mistral")),
    ("phi4", Some("phi4"), None, None),
    ("jamba", Some("jamba"), None, None),
    ("nemotron_deci", Some("nemotron_deci"), None, None),
    ("default", Some("default"), None, Some("json")),
    ("pythonic", Some("pythonic"), None, Some("pythonic")),
    ("harmony", Some("harmony"), Some("harmony"), None),
    ("deepseek_v3", Some("deepseek_v3"), None, Some("deepseek")),
    (
        "deepseek_v3_1",
        Some("deepseek_v3_1"),
        None,
        Some("deepseek31"),
    ),
    (
        "deepseek_v3_2",
        Some("deepseek_v3_2"),
        None,
        Some("deepseek32"),
    ),
    (
        "deepseek_v4",
        Some("deepseek_v4"),
        Some("deepseek_v4"),
        Some("deepseek_v4"),
    ),
    ("deepseek_v4_1", None, None, Some("deepseek_v41")),
    (
        "qwen3_coder",
        Some("qwen3_coder"),
        Some("qwen3_coder"),
        Some("qwen_coder"),
    ),
    ("glm45", None, None, Some("glm45_moe")),
    ("glm47", Some("glm47"), Some("glm47"), Some("glm47_moe")),
    ("kimi_k2", Some("kimi_k2"), Some("kimi_k2"), Some("kimik2")),
    (
        "minimax_m2",
        Some("minimax_m2"),
        Some("minimax_m2"),
        Some("minimax_m2"),
    ),
    (
        "minimax_m3",
        Some("minimax_m3"),
        Some("minimax_m3"),
        Some("minimax_m3"),
    ),
    ("gemma4", Some("gemma4"), Some("gemma4"), Some("gemma4")),
    ("cohere_command", None, None, Some("cohere")),
    ("step3", None, None, Some("step3")),
    ("hy_v4", None, None, Some("hy_v4")),
];

/// Mistral's pre-v11 form, `[TOOL_CALLS][{...}, ...]` (toolwire renders the v11 form): raced as
/// its own row, parsed by toolwire's `mistral` format.
const MISTRAL_ARRAY: &str = "mistral_array";

/// Each timed sample repeats the operation until it has taken about this much CPU time.
const SAMPLE_NS: u64 = 300_000;

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(21, |r| r.parse().expect("ROUNDS"));
    let out = args.next();
    #[cfg(feature = "dynamo_v1")]
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    #[cfg(feature = "dynamo_v1")]
    let _entered = runtime.enter();
    let tools = Tools::new(inputs::tools_json());
    let mut cells = Vec::new();
    // RACE_FORMATS=hermes,gemma4 races only those (for profiling one format).
    let only = std::env::var("RACE_FORMATS").ok();
    let wanted = |format: &str| {
        only.as_ref()
            .is_none_or(|o| o.split(',').any(|f| f == format))
    };
    for &(format, v1, v2, smg) in FORMATS.iter().filter(|f| wanted(f.0)) {
        let parser_format = if format == MISTRAL_ARRAY {
            "mistral"
        } else {
            format
        };
        let spec = formats::lookup(parser_format)
            .unwrap_or_else(|| panic!("toolwire has no format {format}"));
        for n in inputs::SIZES {
            let expected = inputs::calls(n);
            let rendered = if format == MISTRAL_ARRAY {
                inputs::render_array(&expected, "[TOOL_CALLS]")
            } else {
                inputs::render(spec, &expected)
            };
            // Chunks borrow the text for the whole run; both live as long as the process.
            let text: &'static str = Box::leak(rendered.into_boxed_str());
            let plain = ParserConfig::new(parser_format, ToolSet::empty(), None).unwrap();
            let chunks = inputs::chunks(&text, &plain.special_marker_texts());
            let validated = plain.clone().with_tool_set(tools.toolwire.clone());
            let mut imps = vec![Imp::Toolwire(plain), Imp::ToolwireValidated(validated)];
            #[cfg(feature = "dynamo_v1")]
            imps.extend(v1.map(Imp::DynamoV1));
            #[cfg(feature = "dynamo_v2")]
            imps.extend(v2.map(Imp::DynamoV2));
            #[cfg(feature = "smg")]
            imps.extend(smg.and_then(|key| {
                Some(Imp::Smg(
                    key,
                    peers::smg_factory().registry().create_parser(key)?,
                ))
            }));
            let _ = (v1, v2, smg);
            cells.push(Cell::new(format, n, text, chunks, expected, imps, &tools));
        }
    }
    for round in 0..rounds {
        for cell in &mut cells {
            cell.time_round(&tools, round == 0);
        }
        eprintln!("round {}/{rounds}", round + 1);
    }
    let with_inputs = std::env::var("RACE_INPUTS").is_ok_and(|v| v == "1");
    let mut report = json!({
        "rounds": rounds,
        "chunking": "4 characters, special markers whole",
        "clock": "CLOCK_THREAD_CPUTIME_ID, min over interleaved rounds",
        "cells": cells.iter().map(|c| c.to_json(with_inputs)).collect::<Vec<_>>(),
    });
    if with_inputs {
        report["tools"] = inputs::tools_json();
    }
    let text = serde_json::to_string_pretty(&report).unwrap();
    match out {
        Some(path) => std::fs::write(path, text).expect("write report"),
        None => println!("{text}"),
    }
}

/// One (format, size): the input, and per implementation its verdict and best times.
struct Cell {
    format: &'static str,
    calls: usize,
    text: &'static str,
    chunks: Vec<&'static str>,
    entries: Vec<Entry>,
}

struct Entry {
    imp: Imp,
    one_shot: Verdict,
    stream: Verdict,
    reps: [u64; 4],
    /// Min ns of: one-shot parse, streamed request (setup included), setup alone, first argument.
    best: [f64; 4],
}

enum Verdict {
    Ok,
    NotRun(String),
    Differs(String),
}

impl Cell {
    fn new(
        format: &'static str,
        calls: usize,
        text: &'static str,
        chunks: Vec<&'static str>,
        expected: Vec<Call>,
        imps: Vec<Imp>,
        tools: &Tools,
    ) -> Self {
        let entries = imps
            .into_iter()
            .map(|imp| {
                let one_shot = verdict(imp.one_shot(text, tools), &expected);
                let stream = if imp.streams() {
                    verdict(imp.stream(&chunks, tools, false), &expected)
                } else {
                    Verdict::NotRun("whole calls only (the v1 jail); not driven".into())
                };
                Entry {
                    imp,
                    one_shot,
                    stream,
                    reps: [1; 4],
                    best: [f64::INFINITY; 4],
                }
            })
            .collect();
        Cell {
            format,
            calls,
            text,
            chunks,
            entries,
        }
    }

    fn time_round(&mut self, tools: &Tools, calibrate: bool) {
        let (text, chunks) = (self.text, self.chunks.as_slice());
        for entry in &mut self.entries {
            let imp = &entry.imp;
            let mut ops: Vec<(usize, Box<dyn FnMut() + '_>)> = Vec::new();
            if matches!(entry.one_shot, Verdict::Ok) {
                ops.push((
                    0,
                    Box::new(|| drop(std::hint::black_box(imp.one_shot(text, tools)))),
                ));
            }
            if matches!(entry.stream, Verdict::Ok) {
                ops.push((
                    1,
                    Box::new(|| drop(std::hint::black_box(imp.stream(chunks, tools, false)))),
                ));
                ops.push((2, Box::new(|| imp.setup(tools))));
                ops.push((
                    3,
                    Box::new(|| drop(std::hint::black_box(imp.stream(chunks, tools, true)))),
                ));
            }
            for (slot, mut op) in ops {
                if calibrate {
                    let once = cpu_ns(|| op(), 1).max(1.0);
                    entry.reps[slot] = (SAMPLE_NS as f64 / once).clamp(1.0, 100_000.0) as u64;
                }
                op(); // warm: the previous cell ran other code on other data
                let ns = cpu_ns(&mut op, entry.reps[slot]);
                entry.best[slot] = entry.best[slot].min(ns);
            }
        }
    }

    fn to_json(&self, with_inputs: bool) -> Value {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                let chunk_count = self.chunks.len() as f64;
                json!({
                    "implementation": e.imp.label(),
                    "one_shot": e.one_shot.to_json(),
                    "stream": e.stream.to_json(),
                    "one_shot_us": finite(e.best[0] / 1e3),
                    "stream_ns_per_chunk": finite(e.best[1] / chunk_count),
                    "stream_ns_per_chunk_after_setup": finite((e.best[1] - e.best[2]) / chunk_count),
                    "setup_ns": finite(e.best[2]),
                    "first_argument_us": finite(e.best[3] / 1e3),
                })
            })
            .collect();
        let mut cell = json!({"format": self.format, "calls": self.calls, "bytes": self.text.len(),
               "chunks": self.chunks.len(), "entries": entries});
        if with_inputs {
            cell["chunk_texts"] = json!(self.chunks);
        }
        cell
    }
}

impl Verdict {
    fn to_json(&self) -> Value {
        match self {
            Verdict::Ok => json!("ok"),
            Verdict::NotRun(why) => json!(format!("not run: {why}")),
            Verdict::Differs(what) => json!(format!("differs: {what}")),
        }
    }
}

fn verdict(found: Result<Found, String>, expected: &[Call]) -> Verdict {
    let found = match found {
        Ok(found) => found,
        Err(error) => return Verdict::NotRun(error),
    };
    let same = found.len() == expected.len()
        && found.iter().zip(expected).all(|((name, args), want)| {
            name == &want.name
                && serde_json::from_str::<Value>(args).is_ok_and(|v| v == want.arguments)
        });
    if same {
        return Verdict::Ok;
    }
    let first_bad = found.iter().zip(expected).position(|((name, args), want)| {
        name != &want.name
            || serde_json::from_str::<Value>(args).ok().as_ref() != Some(&want.arguments)
    });
    let detail = match first_bad {
        Some(i) => format!("call {i}: {} {}", found[i].0, clip(&found[i].1)),
        None => String::new(),
    };
    Verdict::Differs(format!(
        "{} calls (want {}) {detail}",
        found.len(),
        expected.len()
    ))
}

fn clip(text: &str) -> String {
    text.chars().take(80).collect()
}

fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!((x * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

/// CPU time of this thread per call of `op`, over `reps` calls.
fn cpu_ns(mut op: impl FnMut(), reps: u64) -> f64 {
    let start = thread_cpu();
    for _ in 0..reps {
        op();
    }
    (thread_cpu() - start).as_nanos() as f64 / reps as f64
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer to a timespec; the thread CPU clock always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
