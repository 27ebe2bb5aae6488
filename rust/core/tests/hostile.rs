//! Hostile inputs, for every format: a megabyte of `<`, 100,000 nested brackets, a 10 MB
//! argument streamed in 4-character chunks, 100,000 tiny calls, markers inside strings, invalid
//! UTF-8 split across tokens, and the `max_call_bytes` limit. The tests check results and memory
//! (a counting allocator), never time; `benches/bench_hostile.py` shows the times, at 1x/2x/4x
//! sizes. Also regression tests for the quadratic cases found while writing them.

#[path = "support/hostile.rs"]
mod hostile;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use serde_json::{json, Value};
use toolwire_core::formats::REGISTRY;
use toolwire_core::message::{IssueKind, Message};
use toolwire_core::spec::Role;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::vocab::Vocab;

/// Counts each thread's live heap bytes and their peak since the last reset (per thread, so
/// that tests running in parallel do not disturb each other's measurement).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        track(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Run `f` and return its result with the peak heap growth (bytes above the live total at the
/// start) on this thread while it ran.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, (PEAK.with(Cell::get) - base).max(0) as usize)
}

/// The full size in a release build; in a debug build (the `cargo test` of CI), the full size
/// for hermes and an eighth for the other formats, to keep the suite quick. `cargo test
/// --release --test hostile` runs every format at full size.
fn size_for(format: &str, full: usize) -> usize {
    if cfg!(debug_assertions) && format != "hermes" {
        full / 8
    } else {
        full
    }
}

fn config(format: &str) -> ParserConfig {
    ParserConfig::new(format, ToolSet::empty(), None).unwrap()
}

/// Stream `parts` (concatenated) in chunks of `chunk` bytes (rounded to characters) without
/// building the whole text: `repeat` copies of `middle` between `head` and `tail`.
fn stream_generated(
    config: &ParserConfig,
    head: &str,
    middle: &str,
    repeat: usize,
    tail: &str,
    chunk: usize,
) -> Message {
    let mut stream = StreamParser::new(config.clone());
    // Text not yet fed: `buf[at..]`.
    let mut buf = String::new();
    let mut at = 0;
    let push = |s: &str, stream: &mut StreamParser, buf: &mut String, at: &mut usize| {
        if *at > buf.len() / 2 {
            buf.drain(..*at);
            *at = 0;
        }
        buf.push_str(s);
        while buf.len() - *at >= chunk {
            let mut cut = *at + chunk;
            while !buf.is_char_boundary(cut) {
                cut += 1;
            }
            stream.feed(&buf[*at..cut]).unwrap();
            *at = cut;
        }
    };
    push(head, &mut stream, &mut buf, &mut at);
    for _ in 0..repeat {
        push(middle, &mut stream, &mut buf, &mut at);
    }
    push(tail, &mut stream, &mut buf, &mut at);
    stream.feed(&buf[at..]).unwrap();
    stream.finish(None).unwrap();
    stream.message()
}

fn stream_chunks(config: &ParserConfig, text: &str, chunk: usize) -> Message {
    stream_generated(config, text, "", 0, "", chunk)
}

type Shape = (String, Vec<(String, String)>, Vec<(&'static str, String)>);

/// The message without random ids.
fn shape(m: &Message) -> Shape {
    (
        m.content.clone(),
        m.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect(),
        m.issues
            .iter()
            .map(|i| (i.kind.as_str(), i.raw.clone()))
            .collect(),
    )
}

fn args(m: &Message, i: usize) -> Value {
    serde_json::from_str(&m.tool_calls[i].arguments).unwrap()
}

#[test]
fn a_megabyte_of_lt_is_content() {
    for spec in REGISTRY {
        let text = "<".repeat(size_for(spec.syntax.name, 1 << 20));
        let cfg = config(spec.syntax.name);
        for m in [parse(&cfg, &text), stream_chunks(&cfg, &text, 4)] {
            assert_eq!(m.content, text, "{}", spec.syntax.name);
            assert!(
                m.tool_calls.is_empty() && m.issues.is_empty(),
                "{}",
                spec.syntax.name
            );
        }
    }
}

/// 100,000 nested brackets inside a call's arguments (closed, unclosed, nested objects), and as
/// the whole output: no stack overflow, the same message however it is chunked, and the call is
/// either returned or reported.
#[test]
fn deep_nesting_does_not_overflow() {
    const DEPTH: usize = 100_000;
    let closed = format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    let unclosed = "[".repeat(DEPTH);
    let objects = "{\"a\":".repeat(DEPTH);
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name);
        let inside: Vec<String> = [&closed, &unclosed, &objects]
            .iter()
            .map(|v| hostile::one_call_with_value(spec, v))
            .collect();
        for text in inside.iter().chain([&closed, &unclosed, &objects]) {
            let whole = parse(&cfg, text);
            let streamed = stream_chunks(&cfg, text, 4093);
            assert_eq!(shape(&whole), shape(&streamed), "{}", spec.syntax.name);
        }
        for text in &inside {
            let m = parse(&cfg, text);
            assert!(
                m.tool_calls.len() + m.issues.len() >= 1,
                "{}: the call vanished",
                spec.syntax.name
            );
        }
    }
}

/// A 10 MB string argument streamed 4 characters at a time parses to the 10 MB value. Memory
/// stays linear: the peak is a small multiple of the value (the arguments are kept, plus the
/// call's raw text for a possible issue), never the quadratic growth of re-copied buffers.
#[test]
fn ten_megabyte_argument_in_four_character_chunks() {
    const SIZE: usize = 10 << 20;
    // 10 MB for one format per region parser family, 1 MB for the others; a debug build (the
    // `cargo test` of CI) runs 10 MB for hermes only, to keep the suite quick.
    let big: &[&str] = if cfg!(debug_assertions) {
        &["hermes"]
    } else {
        &[
            "hermes",
            "mistral",
            "harmony",
            "qwen3_coder",
            "glm47",
            "deepseek_v3_2",
            "minimax_m3",
            "kimi_k2",
            "gemma4",
            "pythonic",
        ]
    };
    for spec in REGISTRY {
        let size = if big.contains(&spec.syntax.name) {
            SIZE
        } else {
            SIZE / 10
        };
        let text = hostile::one_call_with(spec, hostile::PLACEHOLDER);
        let (head, tail) = text.split_once(hostile::PLACEHOLDER).unwrap();
        let cfg = config(spec.syntax.name);
        let (m, peak) = peak_growth(|| stream_generated(&cfg, head, "xxxx", size / 4, tail, 4));
        assert!(
            m.issues.is_empty(),
            "{}: {:?}",
            spec.syntax.name,
            m.issues[0].kind
        );
        assert_eq!(m.tool_calls.len(), 1, "{}", spec.syntax.name);
        let value = args(&m, 0);
        assert_eq!(
            value["location"].as_str().map(str::len),
            Some(size),
            "{}",
            spec.syntax.name
        );
        drop(value);
        assert!(
            peak < 8 * size,
            "{}: peak heap growth {peak} for a {size}-byte argument",
            spec.syntax.name
        );
    }
}

#[test]
fn a_hundred_thousand_tiny_calls() {
    const N: usize = 100_000;
    let tools = ToolSet::from_json(&json!([{"type": "function", "function": {"name": "f",
        "parameters": {"type": "object", "properties": {"i": {"type": "integer"}}}}}]))
    .unwrap();
    for spec in REGISTRY {
        let n = if spec.syntax.name == "kimi_k2" {
            N
        } else {
            size_for(spec.syntax.name, N)
        };
        let text = hostile::many_calls(spec, n);
        let cfg = ParserConfig::new(spec.syntax.name, tools.clone(), None).unwrap();
        let m = stream_chunks(&cfg, &text, 61);
        assert!(
            m.issues.is_empty(),
            "{}: {:?}",
            spec.syntax.name,
            m.issues.first()
        );
        assert_eq!(m.tool_calls.len(), n, "{}", spec.syntax.name);
        for i in [0, n / 2, n - 1] {
            assert_eq!(args(&m, i), json!({ "i": i }), "{}", spec.syntax.name);
        }
    }
}

/// Each format's own markers inside a string argument. Formats whose arguments are JSON or Python
/// literals carry them (the marker is inside an escaped string); formats that write values as raw
/// text (XML parameters, Gemma's delimited strings) cannot tell a marker in a value from the real
/// one, so a marker may fail to round-trip there only if the format's grammar keeps it out of
/// values (`Syntax::value_excludes`): the grammar never writes a value the parser cannot read.
#[test]
fn markers_inside_strings() {
    let tools = ToolSet::from_json(&json!([{"type": "function", "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}]))
    .unwrap();
    let mut mismatches = Vec::new();
    for spec in REGISTRY {
        let cfg = ParserConfig::new(spec.syntax.name, tools.clone(), None).unwrap();
        let mut markers: Vec<&str> = spec.syntax.markers().map(|m| m.text).collect();
        markers.extend(spec.syntax.triggers.iter().map(|t| t.text));
        markers.push("</think>");
        markers.sort_unstable();
        markers.dedup();
        let excluded = spec.syntax.value_excludes();
        let mut failing = Vec::new();
        for marker in markers {
            let value = format!("a{marker}b");
            let text = spec.render(
                &[hostile::call("get_weather", json!({ "location": value }))],
                None,
            );
            for m in [parse(&cfg, &text), stream_chunks(&cfg, &text, 3)] {
                let ok = m.tool_calls.len() == 1
                    && args(&m, 0) == json!({ "location": value })
                    && m.issues.is_empty();
                if !ok {
                    failing.push(marker);
                }
            }
        }
        failing.dedup();
        // xgrammar cannot exclude a text with outer whitespace, so such a marker must round-trip.
        failing.retain(|marker| !(excluded.contains(marker) && marker.trim() == *marker));
        if !failing.is_empty() {
            mismatches.push(format!(
                "{}: {failing:?} (kept out of values: {excluded:?})",
                spec.syntax.name
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "markers in strings that do not round-trip and that the grammar lets into values, by format:\n{}",
        mismatches.join("\n")
    );
}

/// A byte-level vocabulary (ids 0..=255 are bytes) plus the format's special markers.
fn byte_vocab(special: &[&'static str]) -> Arc<Vocab> {
    let mut pieces: Vec<(u32, Vec<u8>, bool)> =
        (0..=255u32).map(|b| (b, vec![b as u8], false)).collect();
    for (k, text) in special.iter().enumerate() {
        pieces.push((256 + k as u32, text.as_bytes().to_vec(), true));
    }
    Arc::new(Vocab::from_pieces(pieces).unwrap())
}

/// A call whose markers arrive as special tokens and whose argument arrives one byte per token,
/// with multi-byte characters split across tokens and invalid bytes mixed in: the argument is
/// the lossy decoding of the bytes (U+FFFD for each invalid sequence), however the ids are
/// grouped.
#[test]
fn invalid_utf8_split_across_tokens() {
    let mut value_bytes: Vec<u8> = Vec::new();
    value_bytes.extend("東京 é 😀 ".as_bytes());
    value_bytes.extend([0xFF, b'a', 0xE6, 0x9D, b'b', 0xC3]);
    value_bytes.extend("é end".as_bytes());
    let expected_value = String::from_utf8_lossy(&value_bytes).into_owned();
    assert_eq!(expected_value.matches('\u{FFFD}').count(), 3);
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name);
        let special = cfg.special_marker_texts();
        let vocab = byte_vocab(&special);
        let text = hostile::one_call_with(spec, hostile::PLACEHOLDER);
        let (head, tail) = text.split_once(hostile::PLACEHOLDER).unwrap();
        // Markers as their special tokens, everything else byte by byte.
        let encode = |s: &str, out: &mut Vec<u32>| {
            let mut i = 0;
            while i < s.len() {
                let m = special
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| s[i..].starts_with(**m))
                    .max_by_key(|(_, m)| m.len());
                match m {
                    Some((k, m)) => {
                        out.push(256 + k as u32);
                        i += m.len();
                    }
                    None => {
                        out.push(u32::from(s.as_bytes()[i]));
                        i += 1;
                    }
                }
            }
        };
        let mut ids = Vec::new();
        encode(head, &mut ids);
        ids.extend(value_bytes.iter().map(|&b| u32::from(b)));
        encode(tail, &mut ids);
        let mut runs = Vec::new();
        for group in [1usize, 2, 3, 7, ids.len()] {
            let mut stream = StreamParser::new(cfg.clone());
            for g in ids.chunks(group) {
                stream.feed_tokens(&vocab, g).unwrap();
            }
            stream.finish(None).unwrap();
            runs.push(stream.message());
        }
        for m in &runs {
            assert_eq!(shape(m), shape(&runs[0]), "{}", spec.syntax.name);
        }
        let m = &runs[0];
        assert!(m.issues.is_empty(), "{}: {:?}", spec.syntax.name, m.issues);
        assert_eq!(m.tool_calls.len(), 1, "{}", spec.syntax.name);
        assert_eq!(
            args(m, 0)["location"].as_str(),
            Some(expected_value.as_str()),
            "{}",
            spec.syntax.name
        );
    }
}

/// Leading whitespace held at the output start (it may come before a bare-JSON call), a
/// regression: it was rescanned on every feed.
#[test]
fn a_megabyte_of_leading_whitespace() {
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name);
        let n = size_for(spec.syntax.name, 1 << 20);
        for ws in [" ", "\n"] {
            let m = stream_generated(&cfg, "", ws, n, "done", 4);
            assert_eq!(m.content.len(), n + 4, "{}", spec.syntax.name);
        }
    }
}

/// Whitespace held inside a call region (after a call, between tags, after a name), a
/// regression: JSON regions, Mistral, GLM and Qwen3-Coder rescanned it on every feed.
#[test]
fn whitespace_floods_inside_regions() {
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name);
        let text = hostile::one_call_with(spec, "NYC");
        // Cut the call at every tenth character and flood whitespace there.
        let cuts: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .step_by(10)
            .chain([text.len()])
            .collect();
        let n = size_for(spec.syntax.name, 200_000);
        for &cut in &cuts {
            let (head, tail) = text.split_at(cut);
            let whole = format!("{head}{}{tail}", " ".repeat(n));
            let m = stream_generated(&cfg, head, "    ", n / 4, tail, 4);
            assert_eq!(
                shape(&m),
                shape(&parse(&cfg, &whole)),
                "{}",
                spec.syntax.name
            );
        }
    }
}

/// Bad headers and repeated section markers, regressions for searches that ran over the whole
/// rest of the input once per header, string or call.
#[test]
fn repeated_malformed_pieces() {
    let pieces = [
        ("mistral", "[TOOL_CALLS] x "),
        ("mistral", "[TOOL_CALLS]get_weather"),
        ("gemma4", "<|tool_call>call:get_weather{location:<|\"|>NYC<|\"|>}<tool_call|>"),
        ("kimi_k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"),
        ("deepseek_v3", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    ];
    for (format, piece) in pieces {
        let cfg = config(format);
        let text = piece.repeat(20_000);
        let whole = parse(&cfg, &text);
        assert_eq!(
            shape(&whole),
            shape(&stream_chunks(&cfg, &text, 7)),
            "{format}"
        );
    }
}

fn dropped(m: &Message) -> Vec<(Option<usize>, String, usize)> {
    m.issues
        .iter()
        .filter(|i| i.kind == IssueKind::TooLarge)
        .map(|i| {
            let n = i
                .detail
                .split("and the ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap();
            (i.index, i.raw.clone(), n)
        })
        .collect()
}

/// A call past `max_call_bytes` is cut and reported as `too_large`: its raw text plus the
/// dropped bytes are exactly the call region up to its end marker, the text after the region is
/// content again, and memory stays bounded by the limit, not the input.
#[test]
fn max_call_bytes_cuts_a_runaway_call() {
    const LIMIT: usize = 64 << 10;
    const SIZE: usize = 10 << 20;
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name).with_max_call_bytes(Some(LIMIT));
        let text = hostile::one_call_with(spec, hostile::PLACEHOLDER);
        let (head, tail) = text.split_once(hostile::PLACEHOLDER).unwrap();
        let (m, peak) = peak_growth(|| stream_generated(&cfg, head, "xxxx", SIZE / 4, tail, 4093));
        assert!(m.tool_calls.is_empty(), "{}", spec.syntax.name);
        let cuts = dropped(&m);
        assert_eq!(cuts.len(), 1, "{}: {:?}", spec.syntax.name, m.issues);
        let (_, raw, n) = &cuts[0];
        // Cut within max + max/8 bytes of where the call began (its region's opening marker
        // comes before it).
        assert!(
            raw.len() <= LIMIT + LIMIT / 8 + head.len(),
            "{}: raw {}",
            spec.syntax.name,
            raw.len()
        );
        // The raw text and the dropped bytes are the call region, up to an end marker.
        let region = head.len() + SIZE + tail.len();
        assert!(raw.len() + n <= region, "{}", spec.syntax.name);
        // The raw text and the dropped bytes cover the whole value (the region may start after
        // other text in `head`, e.g. an empty analysis message); only closing markup remains.
        assert!(
            raw.len() + n >= SIZE,
            "{}: {} {n}",
            spec.syntax.name,
            raw.len()
        );
        assert!(peak < 16 * LIMIT, "{}: peak {peak}", spec.syntax.name);
    }
}

#[test]
fn max_call_bytes_keeps_calls_under_the_limit_and_content() {
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name).with_max_call_bytes(Some(4096));
        let small = hostile::one_call_with(spec, &"x".repeat(1000));
        let m = parse(&cfg, &small);
        assert_eq!(
            m.tool_calls.len(),
            1,
            "{}: {:?}",
            spec.syntax.name,
            m.issues
        );
        assert!(m.issues.is_empty(), "{}", spec.syntax.name);
    }
    // Long content outside calls is never cut, Harmony's final channel included.
    let long = "word ".repeat(100_000);
    let harmony = format!("<|channel|>final<|message|>{long}<|end|>");
    let cfg = config("harmony").with_max_call_bytes(Some(1024));
    let m = stream_chunks(&cfg, &harmony, 17);
    assert_eq!(m.content, long);
    assert!(m.issues.is_empty());
    let cfg = config("hermes").with_max_call_bytes(Some(1024));
    assert_eq!(parse(&cfg, &long).content, long);
}

/// Where the cut falls does not depend on how the output is chunked, and the text after the
/// cut region is content again.
#[test]
fn max_call_bytes_is_chunking_independent() {
    let big = "y".repeat(50_000);
    for spec in REGISTRY {
        let cfg = config(spec.syntax.name).with_max_call_bytes(Some(2000));
        let text = format!("{}\n\nAfter.", hostile::one_call_with(spec, &big));
        let whole = parse(&cfg, &text);
        for chunk in [1, 3, 64, 1999, 2001] {
            assert_eq!(
                shape(&whole),
                shape(&stream_chunks(&cfg, &text, chunk)),
                "{} chunk {chunk}",
                spec.syntax.name
            );
        }
        let cuts = dropped(&whole);
        assert_eq!(cuts.len(), 1, "{}: {:?}", spec.syntax.name, whole.issues);
        let has_end = spec
            .syntax
            .markers()
            .filter(|m| matches!(m.role, Role::CallEnd | Role::SectionEnd | Role::MessageEnd))
            .any(|m| {
                text.rsplit_once(&big)
                    .is_some_and(|(_, tail)| tail.contains(m.text))
            });
        if has_end {
            assert!(
                whole.content.ends_with("After."),
                "{}: {:?}",
                spec.syntax.name,
                whole.content
            );
        } else {
            // No end marker to resume at: the rest of the output is dropped.
            let (_, raw, n) = &cuts[0];
            assert!(text.ends_with(&format!("{}After.", &text[text.len() - n..text.len() - 6])));
            assert!(raw.len() + n <= text.len(), "{}", spec.syntax.name);
            assert!(!whole.content.contains("After."), "{}", spec.syntax.name);
        }
    }
}
