//! The per-completion work of batch scoring (`toolwire.rl.count_batch`) without Python: one
//! stream per thread, reset between completions, as `rust/python/src/batch.rs` runs it. For
//! profiling the fixed cost of a completion under `perf` or `valgrind --tool=callgrind`:
//!
//!     cargo build --release -p toolwire-core --example batch_profile
//!     valgrind --tool=callgrind target/release/examples/batch_profile batch.json 1
//!
//! `batch.json`: `{"tools": [...], "texts": [...]}` (Hermes completions; `benches/bench_rl.py`'s
//! `recorded_completions`). The second argument: how many passes over the texts. Prints the
//! calls and issues found, so a change that alters the parse shows.

use std::hint::black_box;

use serde_json::Value;
use toolwire_core::ids::IdSource;
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

struct NoIds;

impl IdSource for NoIds {
    fn next_id(&mut self, _index: usize, _name: &str) -> String {
        String::new()
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: batch_profile BATCH.json [PASSES]");
    let passes: usize = args.next().map_or(1, |p| p.parse().expect("PASSES"));
    let batch: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("read"))
        .expect("batch.json is JSON");
    let tools = ToolSet::from_json(&batch["tools"]).expect("tools");
    let texts: Vec<&str> = batch["texts"]
        .as_array()
        .expect("texts")
        .iter()
        .map(|t| t.as_str().expect("a text"))
        .collect();
    let config = ParserConfig::new("hermes", tools, None).expect("config");
    let (mut calls, mut issues) = (0, 0);
    for _ in 0..passes {
        let (c, i) = score_all(&config, &texts);
        calls += c;
        issues += i;
    }
    println!(
        "{} completions, {calls} calls, {issues} issues",
        texts.len() * passes
    );
}

/// The measured part (`--toggle-collect=*score_all*` under callgrind): one stream's set-up, then
/// each completion.
#[inline(never)]
fn score_all(config: &ParserConfig, texts: &[&str]) -> (usize, usize) {
    let mut stream = StreamParser::with_ids(config.clone(), Box::new(NoIds));
    stream.discard_deltas();
    let (mut calls, mut issues) = (0, 0);
    for text in texts {
        stream.reset();
        stream.feed(black_box(text)).expect("feed");
        stream.finish(None).expect("finish");
        calls += stream.call_count();
        issues += stream.issues().len();
    }
    (calls, issues)
}
