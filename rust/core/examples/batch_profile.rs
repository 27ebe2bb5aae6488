//! The per-completion work of batch scoring (`toolwire.rl.count_batch`) without Python: one
//! stream per thread, reset between completions, as `rust/python/src/batch.rs` runs it. For
//! profiling the fixed cost of a completion under `perf` or `valgrind --tool=callgrind`:
//!
//!     cargo build --release -p toolwire-core --example batch_profile
//!     valgrind --tool=callgrind target/release/examples/batch_profile batch.json 1
//!
//! `batch.json`: `{"tools": [...], "texts": [...]}`, the Hermes completions `bench_rl.py` scores
//! (`python benches/bench_rl.py --write-batch batch.json`). The second argument: how many passes
//! over the texts. Prints the calls and issues found, so a change that alters the parse shows.
//!
//! `batch_profile batch.json PASSES split`: the parse alone on one thread and split over two (best
//! of PASSES each, wall time a completion), to tell how much of `count_batch`'s two-thread
//! speed-up the machine allows at that moment apart from the Python side.

use std::hint::black_box;
use std::time::Instant;

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
        .expect("usage: batch_profile BATCH.json [PASSES [split]]");
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
    if args.next().as_deref() == Some("split") {
        return split(&config, &texts, passes);
    }
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

/// Best wall time a completion over `passes` runs: one thread over all texts, then two threads
/// over half each.
fn split(config: &ParserConfig, texts: &[&str], passes: usize) {
    let per = |seconds: f64| seconds / texts.len() as f64 * 1e6;
    let (mut one, mut two) = (f64::MAX, f64::MAX);
    for _ in 0..passes.max(1) {
        let start = Instant::now();
        score_all(config, texts);
        one = one.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let (first, second) = texts.split_at(texts.len() / 2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| score_all(config, first));
            score_all(config, second);
            other.join().expect("the other thread");
        });
        two = two.min(start.elapsed().as_secs_f64());
    }
    println!(
        "1 thread {:.3} us, 2 threads {:.3} us a completion: 2/1 {:.2}x",
        per(one),
        per(two),
        one / two
    );
}
