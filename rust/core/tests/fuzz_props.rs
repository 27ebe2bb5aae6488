//! The fuzz properties (see FUZZING.md and `support/fuzzing.rs`) as a time-bounded proptest run,
//! so that `cargo test` on stable exercises them for every format on every run. Each test stops
//! generating new inputs after `TOOLWIRE_FUZZ_SECS` seconds (default 6); set it higher for a long
//! run, e.g. `TOOLWIRE_FUZZ_SECS=600 cargo test --release --test fuzz_props`.

#[path = "support/fuzzing.rs"]
mod fuzzing;

use std::time::{Duration, Instant};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// CPU time this process has used (user + system), from `/proc/self/stat`; None off Linux.
fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on every Linux platform this runs on.
    Some(Duration::from_millis(ticks * 10))
}

fn budget() -> Duration {
    let secs = std::env::var("TOOLWIRE_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(6.0);
    Duration::from_secs_f64(secs)
}

/// Run `check` on random inputs of up to `max_len` bytes until the time budget is spent, in
/// batches of proptest runs (a failure is shrunk and reported with its bytes).
fn fuzz(name: &str, max_len: usize, check: impl Fn(&[u8]) -> Result<(), String>) {
    let start = Instant::now();
    let strategy = vec(any::<u8>(), 0..max_len);
    let mut inputs = 0u64;
    while start.elapsed() < budget() {
        // A fresh runner per batch (a runner stops after `cases` successes), seeded from the
        // system unless PROPTEST_RNG_SEED fixes the seed.
        let mut config = Config {
            cases: 64,
            max_shrink_iters: 4096,
            failure_persistence: None,
            ..Config::default()
        };
        if let proptest::test_runner::RngSeed::Fixed(seed) = config.rng_seed {
            config.rng_seed = proptest::test_runner::RngSeed::Fixed(seed.wrapping_add(inputs));
        }
        let mut runner = TestRunner::new(config);
        let result = runner.run(&strategy, |data| check(&data).map_err(TestCaseError::fail));
        if let Err(e) = result {
            panic!("{name}: {e}\n(re-run: TOOLWIRE_FUZZ_MODE=... TOOLWIRE_FUZZ_REPRO=<the bytes> cargo test --test fuzz_props repro -- --ignored --nocapture)");
        }
        inputs += 64;
    }
    eprintln!("{name}: {inputs} inputs in {:.1?}", start.elapsed());
}

fn checked(result: Result<fuzzing::Accounted, String>, text: &str) -> Result<(), String> {
    result
        .map(|_| ())
        .map_err(|e| format!("{e}\n  text: {text:?}"))
}

/// Text built from each format's markers, rendered calls and JSON fragments.
#[test]
fn structured_inputs() {
    fuzz("structured_inputs", 600, |data| {
        let case = fuzzing::structured(data);
        checked(fuzzing::check(&case), &case.text)
    });
}

/// Arbitrary bytes as text.
#[test]
fn raw_inputs() {
    fuzz("raw_inputs", 300, |data| {
        let case = fuzzing::raw(data);
        checked(fuzzing::check(&case), &case.text)
    });
}

/// Structured text as token ids of a byte-level vocabulary whose special tokens are the
/// format's markers, with invalid UTF-8 mixed in and ids grouped at random.
#[test]
fn token_inputs() {
    fuzz("token_inputs", 600, |data| {
        let case = fuzzing::structured(data);
        checked(fuzzing::check_tokens(&case, data), &case.text)
    });
}

/// The accounting check itself: it accepts the parser's real message for a call between two
/// pieces of text, and rejects messages that lose, add, reorder or collapse a byte.
#[test]
fn accounting_check_rejects_lost_text() {
    use toolwire_core::message::{Issue, IssueKind, Message};
    let format = toolwire_core::formats::lookup("hermes").expect("hermes");
    let markup = fuzzing::markup(format);
    let call = r#"<tool_call>{"name": "f", "arguments": {}}</tool_call>"#;
    let input = format!("a  b\n{call}\nc d");
    let message = |content: &str, raw: &str| Message {
        content: content.to_owned(),
        issues: vec![Issue {
            index: Some(0),
            kind: IssueKind::UnknownTool,
            detail: String::new(),
            raw: raw.to_owned(),
            pointer: None,
            keyword: None,
        }],
        ..Message::default()
    };
    let parsed = fuzzing::run_text(
        &fuzzing::config(&fuzzing::Case {
            format,
            reasoning: None,
            max_call_bytes: None,
            tools: fuzzing::Tools::Unknown,
            text: input.clone(),
            cuts: Vec::new(),
        }),
        &[&input],
    )
    .message;
    assert_eq!(
        fuzzing::check_accounting(&input, &parsed, &markup),
        Ok(fuzzing::Accounted::Yes),
        "{parsed:?}"
    );
    // Whitespace around the call is formatting and may vanish; inside content it may not.
    assert!(fuzzing::check_accounting(&input, &message("a  bc d", call), &markup).is_ok());
    for (content, raw) in [
        ("a  b\nc", call),              // the last byte lost
        ("a b\nc d", call),             // two spaces collapsed into one
        ("ab\nc d", call),              // inner whitespace dropped
        ("a  b\nc d!", call),           // a byte that is not in the input
        ("c d a  b", call),             // reordered
        ("a  b\nc d", &call[1..]),      // the call's first byte lost
        ("a  b\nc d", "<tool_call>{}"), // most of the call lost
    ] {
        assert!(
            fuzzing::check_accounting(&input, &message(content, raw), &markup).is_err(),
            "accepted content {content:?} raw {raw:?}"
        );
    }
}

/// Re-run one input: `TOOLWIRE_FUZZ_REPRO="154,56,0,..." TOOLWIRE_FUZZ_MODE=structured|raw|tokens
/// cargo test --test fuzz_props repro -- --ignored --nocapture` (a crash file from `cargo fuzz`
/// works too: `TOOLWIRE_FUZZ_REPRO_FILE=fuzz/artifacts/...`).
#[test]
#[ignore]
fn repro() {
    let data: Vec<u8> = match std::env::var("TOOLWIRE_FUZZ_REPRO_FILE") {
        Ok(path) => std::fs::read(path).expect("repro file"),
        Err(_) => std::env::var("TOOLWIRE_FUZZ_REPRO")
            .expect("TOOLWIRE_FUZZ_REPRO")
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse::<u8>().expect("a byte"))
            .collect(),
    };
    let mode = std::env::var("TOOLWIRE_FUZZ_MODE").unwrap_or_else(|_| "structured".into());
    let case = match mode.as_str() {
        "raw" => fuzzing::raw(&data),
        _ => fuzzing::structured(&data),
    };
    eprintln!(
        "format {} reasoning {:?} max_call_bytes {:?} tools {:?}\ntext {:?}\ncuts {:?}",
        case.format.syntax.name,
        case.reasoning,
        case.max_call_bytes,
        case.tools,
        case.text,
        case.cuts
    );
    let run = fuzzing::run_text(&fuzzing::config(&case), &[&case.text]);
    eprintln!(
        "content {:?}\nreasoning {:?}",
        run.message.content, run.message.reasoning
    );
    for c in &run.message.tool_calls {
        eprintln!("call {} {} {:?} {}", c.index, c.id, c.name, c.arguments);
    }
    for i in &run.message.issues {
        eprintln!(
            "issue {:?} {} {:?} raw {:?}",
            i.index,
            i.kind.as_str(),
            i.detail,
            i.raw
        );
    }
    let result = match mode.as_str() {
        "tokens" => fuzzing::check_tokens(&case, &data),
        _ => fuzzing::check(&case),
    };
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Like `repro`, then shrink the failing text (delta debugging over its characters, same
/// format and options) and print the smallest text that still fails.
#[test]
#[ignore]
fn minimize() {
    let data: Vec<u8> = std::env::var("TOOLWIRE_FUZZ_REPRO")
        .expect("TOOLWIRE_FUZZ_REPRO")
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<u8>().expect("a byte"))
        .collect();
    let mode = std::env::var("TOOLWIRE_FUZZ_MODE").unwrap_or_else(|_| "structured".into());
    let mut case = match mode.as_str() {
        "raw" => fuzzing::raw(&data),
        _ => fuzzing::structured(&data),
    };
    let fails = |case: &fuzzing::Case| match mode.as_str() {
        "tokens" => fuzzing::check_tokens(case, &data).is_err(),
        _ => fuzzing::check(case).is_err(),
    };
    assert!(fails(&case), "the input does not fail");
    let mut chars: Vec<char> = case.text.chars().collect();
    let mut size = chars.len() / 2;
    while size >= 1 {
        let mut at = 0;
        while at < chars.len() {
            let mut trial = chars.clone();
            trial.drain(at..(at + size).min(chars.len()));
            let mut t = case.clone();
            t.text = trial.iter().collect();
            t.cuts
                .retain(|&c| c < t.text.len() && t.text.is_char_boundary(c));
            if fails(&t) {
                chars = trial;
                case = t;
            } else {
                at += size;
            }
        }
        size /= 2;
    }
    eprintln!(
        "format {} reasoning {:?} max_call_bytes {:?} tools {:?}\ntext {:?}\ncuts {:?}",
        case.format.syntax.name,
        case.reasoning,
        case.max_call_bytes,
        case.tools,
        case.text,
        case.cuts
    );
    let result = match mode.as_str() {
        "tokens" => fuzzing::check_tokens(&case, &data),
        _ => fuzzing::check(&case),
    };
    eprintln!("{}", result.err().unwrap_or_default());
}

/// Triage: run random inputs for `TOOLWIRE_FUZZ_SECS` without stopping at a failure, and print
/// per format and property how many failed, with the shortest failing text of each (shrunk).
/// `TOOLWIRE_FUZZ_SECS=60 cargo test --release --test fuzz_props survey -- --ignored --nocapture`
/// (or `TOOLWIRE_FUZZ_CPU_SECS=1500` for a budget of CPU time).
#[test]
#[ignore]
fn survey() {
    use std::collections::BTreeMap;
    let start = Instant::now();
    let seed: u64 = std::env::var("TOOLWIRE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
        });
    eprintln!("survey: seed {seed} (TOOLWIRE_FUZZ_SEED)");
    let mut rng = fuzzing::Rng::from_bytes(&seed.to_le_bytes());
    let mut failures: BTreeMap<(String, String), (usize, fuzzing::Case, String, bool)> =
        BTreeMap::new();
    // Per format: inputs, inputs whose accounting was checked, inputs where the accounting
    // search gave up, failing inputs.
    let mut per_format: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut inputs = 0u64;
    // TOOLWIRE_FUZZ_CPU_SECS: stop after this much CPU time (a long run on a shared machine at
    // low priority), or after TOOLWIRE_FUZZ_SECS of wall time if that is also set and comes first.
    let cpu_budget = std::env::var("TOOLWIRE_FUZZ_CPU_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map(Duration::from_secs_f64);
    let cpu_at_start = process_cpu_time().unwrap_or_default();
    let wall_budget = std::env::var_os("TOOLWIRE_FUZZ_SECS")
        .is_some()
        .then(budget);
    let spent = || match (cpu_budget, wall_budget) {
        (Some(cpu), wall) => {
            process_cpu_time().unwrap_or_default() - cpu_at_start >= cpu
                || wall.is_some_and(|wall| start.elapsed() >= wall)
        }
        (None, _) => start.elapsed() >= budget(),
    };
    while !spent() {
        let len = rng.below(600);
        let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let tokens = rng.below(3) == 0;
        let case = if rng.below(4) == 0 {
            fuzzing::raw(&data)
        } else {
            fuzzing::structured(&data)
        };
        inputs += 1;
        let tally = per_format.entry(case.format.syntax.name).or_default();
        tally[0] += 1;
        let result = std::panic::catch_unwind(|| {
            if tokens {
                fuzzing::check_tokens(&case, &data)
            } else {
                fuzzing::check(&case)
            }
        });
        let error = match result {
            Ok(Ok(fuzzing::Accounted::Yes)) => {
                tally[1] += usize::from(case.tools == fuzzing::Tools::Unknown);
                continue;
            }
            Ok(Ok(fuzzing::Accounted::Undecided)) => {
                tally[2] += 1;
                continue;
            }
            Ok(Err(e)) => e,
            Err(p) => format!(
                "panic: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            ),
        };
        tally[3] += 1;
        let property = error.split(':').next().unwrap_or("").to_owned();
        let key = (case.format.syntax.name.to_owned(), property);
        let entry = failures
            .entry(key)
            .or_insert_with(|| (0, case.clone(), error.clone(), tokens));
        entry.0 += 1;
        if case.text.len() < entry.1.text.len() {
            *entry = (entry.0, case, error, tokens);
        }
    }
    eprintln!(
        "survey: {inputs} inputs in {:.1?} ({:.1?} CPU)",
        start.elapsed(),
        process_cpu_time().unwrap_or_default() - cpu_at_start
    );
    eprintln!("| format | inputs | accounting checked | accounting undecided | failing |");
    eprintln!("|---|---:|---:|---:|---:|");
    for (format, [n, checked, undecided, failing]) in &per_format {
        eprintln!("| {format} | {n} | {checked} | {undecided} | {failing} |");
    }
    for ((format, property), (count, case, error, tokens)) in &failures {
        eprintln!(
            "\n== {format} / {property}: {count} failing inputs{} (reasoning {:?}, max_call_bytes {:?}, tools {:?})\ntext {:?}\n{}",
            if *tokens { " (token input)" } else { "" },
            case.reasoning,
            case.max_call_bytes,
            case.tools,
            case.text,
            error.lines().take(6).collect::<Vec<_>>().join("\n")
        );
    }
}
