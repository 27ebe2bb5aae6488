//! Fuzzing support shared by `tests/fuzz_props.rs` (a bounded run in `cargo test`) and the
//! cargo-fuzz targets in `fuzz/`: turn fuzzer bytes into model output for one format, then check
//! the properties every format must have.
//!
//! Inputs come in two kinds. *Raw*: the bytes as (lossy) UTF-8. *Structured*: a sequence of
//! pieces drawn from the format's own spec (every marker, trigger and reasoning delimiter, their
//! prefixes, calls rendered by the format's renderer with random names and JSON arguments, cut
//! short or whole), JSON fragments and plain text. Each input is also streamed in chunks cut at
//! pseudo-random points derived from the bytes, and (for token input) as token ids of a
//! byte-level vocabulary in which the format's special markers are tokens.
//!
//! Properties checked (see FUZZING.md):
//! 1. no panic;
//! 2. chunk-split: any split streams to the same message as one-shot parsing (ids come from a
//!    deterministic source, so the whole message is compared, model-written ids included);
//! 3. the streamed deltas add up to the message (content, reasoning, each returned call's name
//!    and arguments), and every returned call's arguments are valid JSON;
//! 4. accounting: every input byte ends up somewhere (see [`check_accounting`]);
//! 5. reset: a stream reset after a finished output and again partway through one (the batch
//!    scorer reuses one stream per thread) streams the same message and deltas as a fresh one.

#![allow(dead_code)]

use std::sync::Arc;

use serde_json::{json, Value};
use toolwire_core::formats::Format;
use toolwire_core::formats::REGISTRY;
use toolwire_core::ids::IdSource;
use toolwire_core::message::{Delta, Message};
use toolwire_core::render::RenderCall;
use toolwire_core::stream::{ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;
use toolwire_core::vocab::Vocab;

#[path = "fuzz_accounting.rs"]
mod accounting;
pub use accounting::{check_accounting, markup, Accounted};

/// Reads choices from fuzzer bytes; zeros once they run out.
pub struct Source<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Source<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let v = if n <= 256 {
            self.byte() as usize
        } else {
            (self.byte() as usize) << 8 | self.byte() as usize
        };
        v % n
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        self.pos = self.data.len();
        rest
    }
}

/// A deterministic pseudo-random stream (xorshift), seeded from the input bytes.
pub struct Rng(u64);

impl Rng {
    pub fn from_bytes(data: &[u8]) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in data {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Self(h | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Ids `call_0`, `call_1`, ... so that two runs can be compared whole.
pub struct SeqIds;

impl IdSource for SeqIds {
    fn next_id(&mut self, index: usize, _name: &str) -> String {
        format!("call_{index}")
    }
}

/// A tool that no generated input calls: with it declared, every call that completes is
/// reported as `unknown_tool` with its raw text, which makes calls visible to the accounting
/// check. With `Tools::Declared`, the generated names are declared with typed schemas instead.
pub const SENTINEL_TOOL: &str = "zz_fuzz_sentinel_tool";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tools {
    None,
    Unknown,
    Declared,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub format: &'static Format,
    pub reasoning: Option<&'static str>,
    pub max_call_bytes: Option<usize>,
    pub tools: Tools,
    pub text: String,
    /// Byte offsets (char boundaries, ascending) where the streamed run cuts the text.
    pub cuts: Vec<usize>,
}

const NAMES: &[&str] = &[
    "get_weather",
    "search",
    "f",
    "a.b-c:d",
    "東京",
    "function",
    "functions.x:1",
    "",
];

const KEYS: &[&str] = &[
    "location", "days", "query", "x", "a b", "", "\"", "é", "name", "input",
];

const TEXT: &[&str] = &[
    " ",
    "\n",
    "\t",
    "  \n",
    "x",
    "NYC",
    "é",
    "😀",
    "東京",
    "<",
    ">",
    "</",
    "/>",
    "=",
    "'",
    "\"",
    "(",
    ")",
    "`",
    "```",
    "```json\n",
    "|",
    "\\n",
    "\\",
    ";",
    ",",
    ":",
    "{",
    "}",
    "[",
    "]",
    "a=1",
    "\u{10FF00}",
    "\u{FFFD}",
    "\r\n",
    "\u{3000}",
];

const JSON: &[&str] = &[
    "\"name\"",
    "\"arguments\"",
    "\"parameters\"",
    "\"get_weather\"",
    "\"location\"",
    ": ",
    ", ",
    "1",
    "-2.5e3",
    "123456789012345678901234567890",
    "true",
    "null",
    "\\\"",
    "\\\\",
    "\\u00e9",
    "\\ud83d\\ude00",
    "\\ud800",
    "{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}",
    "[{\"name\": \"f\", \"arguments\": {}}]",
    "{\"a\": [1, {\"b\": null}]}",
    "{\"name\": \"f\", \"parameters\": \"{\\\"x\\\": 1}\"}",
];

/// Strings worth putting inside argument values: quotes, escapes, and the format's own markers.
fn string_value(spec: &Format, src: &mut Source) -> String {
    let k = src.below(12);
    match k {
        0 => "NYC".to_owned(),
        1 => String::new(),
        2 => "a \"quoted\" \\ back\nslash".to_owned(),
        3 => "東京 😀 é".to_owned(),
        4 => "</parameter> ]]> }} \" '".to_owned(),
        5 => "  padded  ".to_owned(),
        6 => "true".to_owned(),
        7 => "42".to_owned(),
        _ => {
            let markers: Vec<_> = spec.syntax.markers().collect();
            format!("x{}y", markers[src.below(markers.len())].text)
        }
    }
}

fn json_value(spec: &Format, src: &mut Source, depth: usize) -> Value {
    let k = src.below(if depth >= 3 { 6 } else { 9 });
    match k {
        0 | 1 => Value::String(string_value(spec, src)),
        2 => json!(src.below(1000) as i64 - 500),
        3 => json!(1.5),
        4 => json!(src.byte() % 2 == 0),
        5 => Value::Null,
        6 => Value::Array(
            (0..src.below(4))
                .map(|_| json_value(spec, src, depth + 1))
                .collect(),
        ),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..src.below(4) {
                let key = KEYS[src.below(KEYS.len())].to_owned();
                map.insert(key, json_value(spec, src, depth + 1));
            }
            Value::Object(map)
        }
    }
}

fn render_calls(spec: &Format, src: &mut Source) -> String {
    let n = 1 + src.below(3);
    let calls: Vec<RenderCall> = (0..n)
        .map(|_| {
            let arguments = if src.byte() % 4 == 0 {
                json_value(spec, src, 0)
            } else {
                let mut map = serde_json::Map::new();
                for _ in 0..src.below(4) {
                    let key = KEYS[src.below(KEYS.len())].to_owned();
                    map.insert(key, json_value(spec, src, 1));
                }
                Value::Object(map)
            };
            RenderCall {
                name: NAMES[src.below(NAMES.len())].to_owned(),
                arguments,
                id: None,
            }
        })
        .collect();
    let content = match src.below(4) {
        0 => Some("Let me check."),
        1 => Some("\n"),
        _ => None,
    };
    spec.render(&calls, content)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Every marker-like string the format's spec names.
pub fn spec_strings(spec: &Format) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in spec.syntax.markers() {
        out.push(m.text.to_owned());
    }
    for t in spec.syntax.triggers {
        out.push(t.text.to_owned());
    }
    if let Some((open, close)) = spec.syntax.reasoning {
        out.push(open.to_owned());
        out.push(close.to_owned());
    }
    out.push("<think>".to_owned());
    out.push("</think>".to_owned());
    if let Some(params) = spec.syntax.arguments.params() {
        out.push(params.key_open().to_owned());
        out.push(params.close.replace("{key}", "location"));
    }
    if let Some(t) = spec.syntax.template {
        out.push(t.begin.replace("{name}", "get_weather"));
        out.push(t.end.to_owned());
        out.push(t.separator.to_owned());
    }
    out.retain(|s| !s.is_empty());
    out.sort();
    out.dedup();
    out
}

fn piece(spec: &Format, strings: &[String], src: &mut Source) -> String {
    match src.below(16) {
        0..=3 => strings[src.below(strings.len())].clone(),
        4 => {
            let s = &strings[src.below(strings.len())];
            let cut = floor_boundary(s, 1 + src.below(s.len().max(1)));
            s[..cut].to_owned()
        }
        5..=7 => TEXT[src.below(TEXT.len())].to_owned(),
        8 | 9 => JSON[src.below(JSON.len())].to_owned(),
        10..=12 => render_calls(spec, src),
        13 | 14 => {
            let text = render_calls(spec, src);
            let cut = floor_boundary(&text, src.below(text.len() + 1));
            text[..cut].to_owned()
        }
        _ => {
            let n = src.below(8);
            String::from_utf8_lossy(&(0..n).map(|_| src.byte()).collect::<Vec<u8>>()).into_owned()
        }
    }
}

/// The format, options and chunking from the first bytes.
fn header(src: &mut Source) -> (&'static Format, Option<&'static str>, Option<usize>, Tools) {
    let format = REGISTRY[src.below(REGISTRY.len())];
    let flags = src.byte();
    let reasoning = match flags & 3 {
        1 if format.syntax.reasoning.is_some() => Some("native"),
        2 => Some("think"),
        3 => Some("closing_only"),
        _ => None,
    };
    let max_call_bytes = match (flags >> 2) & 7 {
        6 => Some(1 + src.below(64)),
        7 => Some(16 + src.below(1024)),
        _ => None,
    };
    let tools = match flags >> 5 {
        0 | 1 => Tools::None,
        2..=5 => Tools::Unknown,
        _ => Tools::Declared,
    };
    (format, reasoning, max_call_bytes, tools)
}

fn cuts_for(text: &str, rng: &mut Rng) -> Vec<usize> {
    let mut bounds: Vec<usize> = match rng.below(4) {
        // Character by character (short texts).
        0 if text.len() <= 512 => text.char_indices().map(|(i, _)| i).skip(1).collect(),
        // Small chunks of random size.
        1 => {
            let mut out = Vec::new();
            let mut at = 0;
            loop {
                at += 1 + rng.below(8);
                if at >= text.len() {
                    break;
                }
                out.push(at);
            }
            out
        }
        _ => (0..1 + rng.below(6))
            .map(|_| rng.below(text.len() + 1))
            .collect(),
    };
    for b in &mut bounds {
        *b = floor_boundary(text, *b);
    }
    bounds.sort_unstable();
    bounds.dedup();
    bounds.retain(|&b| b > 0 && b < text.len());
    bounds
}

/// A structured case from fuzzer bytes.
pub fn structured(data: &[u8]) -> Case {
    let mut src = Source::new(data);
    let (format, reasoning, max_call_bytes, tools) = header(&mut src);
    let strings = spec_strings(format);
    let mut text = String::new();
    let mut n = 0;
    while !src.is_empty() && n < 48 {
        text.push_str(&piece(format, &strings, &mut src));
        n += 1;
    }
    let cuts = cuts_for(&text, &mut Rng::from_bytes(data));
    Case {
        format,
        reasoning,
        max_call_bytes,
        tools,
        text,
        cuts,
    }
}

/// A case whose text is the bytes themselves (lossy UTF-8).
pub fn raw(data: &[u8]) -> Case {
    let mut src = Source::new(data);
    let (format, reasoning, max_call_bytes, tools) = header(&mut src);
    let text = String::from_utf8_lossy(src.rest()).into_owned();
    let cuts = cuts_for(&text, &mut Rng::from_bytes(data));
    Case {
        format,
        reasoning,
        max_call_bytes,
        tools,
        text,
        cuts,
    }
}

fn tool_set(tools: Tools) -> ToolSet {
    let value = match tools {
        Tools::None => return ToolSet::empty(),
        Tools::Unknown => json!([{"type": "function", "function": {"name": SENTINEL_TOOL,
            "parameters": {"type": "object", "properties": {}}}}]),
        Tools::Declared => json!([
            {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
                "properties": {"location": {"type": "string"}, "days": {"type": "integer"},
                    "x": {"type": "array"}}, "required": ["location"]}}},
            {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
                "properties": {"query": {"type": "string"}, "x": {"type": "object"},
                    "a b": {"type": "boolean"}}}}},
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
                "properties": {"x": {"type": "number"}, "name": {"type": ["string", "null"]}}}}},
            {"type": "custom", "custom": {"name": "function"}}
        ]),
    };
    ToolSet::from_json(&value).expect("fuzz tool set")
}

pub fn config(case: &Case) -> ParserConfig {
    ParserConfig::new(
        case.format.syntax.name,
        tool_set(case.tools),
        case.reasoning,
    )
    .expect("registered format")
    .with_max_call_bytes(case.max_call_bytes)
}

pub struct Run {
    pub message: Message,
    pub deltas: Vec<Delta>,
}

pub fn run_text(config: &ParserConfig, chunks: &[&str]) -> Run {
    let mut stream = StreamParser::with_ids(config.clone(), Box::new(SeqIds));
    let mut deltas = Vec::new();
    for chunk in chunks {
        deltas.extend(stream.feed(chunk).expect("feed"));
    }
    deltas.extend(stream.finish(None).expect("finish"));
    Run {
        message: stream.message(),
        deltas,
    }
}

/// [`run_text`] on a stream that parsed the same chunks to the end, was reset, read the first
/// half of them, and was reset again: property 5.
pub fn run_text_reused(config: &ParserConfig, chunks: &[&str]) -> Run {
    let mut stream = StreamParser::with_ids(config.clone(), Box::new(SeqIds));
    for chunk in chunks {
        stream.feed(chunk).expect("feed");
    }
    stream.finish(None).expect("finish");
    stream.reset();
    for chunk in &chunks[..chunks.len() / 2] {
        stream.feed(chunk).expect("feed");
    }
    stream.reset();
    let mut deltas = Vec::new();
    for chunk in chunks {
        deltas.extend(stream.feed(chunk).expect("feed"));
    }
    deltas.extend(stream.finish(None).expect("finish"));
    Run {
        message: stream.take_message(),
        deltas,
    }
}

fn chunks<'t>(text: &'t str, cuts: &[usize]) -> Vec<&'t str> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut at = 0;
    for &c in cuts {
        out.push(&text[at..c]);
        at = c;
    }
    out.push(&text[at..]);
    out
}

/// The streamed deltas add up to the message.
pub fn check_deltas(run: &Run) -> Result<(), String> {
    let m = &run.message;
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls: Vec<(Option<String>, String)> = Vec::new();
    for d in &run.deltas {
        content.push_str(d.content.as_deref().unwrap_or(""));
        reasoning.push_str(d.reasoning.as_deref().unwrap_or(""));
        for c in &d.tool_calls {
            if calls.len() <= c.index {
                calls.resize(c.index + 1, (None, String::new()));
            }
            if let Some(name) = &c.name {
                calls[c.index].0 = Some(name.clone());
            }
            calls[c.index].1.push_str(&c.arguments);
        }
    }
    if content != m.content {
        return Err(format!(
            "content deltas {content:?} != message content {:?}",
            m.content
        ));
    }
    if reasoning != m.reasoning {
        return Err(format!(
            "reasoning deltas {reasoning:?} != message reasoning {:?}",
            m.reasoning
        ));
    }
    for call in &m.tool_calls {
        let Some((name, args)) = calls.get(call.index) else {
            return Err(format!("call {} has no deltas", call.index));
        };
        if name.as_deref() != Some(call.name.as_str()) {
            return Err(format!("call {} name delta {name:?}", call.index));
        }
        if call.input.is_none() && *args != call.arguments {
            return Err(format!(
                "call {} argument deltas {args:?} != {:?}",
                call.index, call.arguments
            ));
        }
        if call.input.is_none()
            && serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).is_err()
        {
            return Err(format!(
                "call {} arguments are not JSON: {:?}",
                call.index, call.arguments
            ));
        }
    }
    Ok(())
}

/// Run every property on a text case.
pub fn check(case: &Case) -> Result<Accounted, String> {
    let config = config(case);
    let whole = run_text(&config, &[&case.text]);
    let split = run_text(&config, &chunks(&case.text, &case.cuts));
    if whole.message != split.message {
        return Err(format!(
            "chunk-split: one-shot and split ({:?}) differ\n  one-shot: {:?}\n  split:    {:?}",
            case.cuts, whole.message, split.message
        ));
    }
    let reused = run_text_reused(&config, &chunks(&case.text, &case.cuts));
    if (&reused.message, &reused.deltas) != (&split.message, &split.deltas) {
        return Err(format!(
            "reset: a reused stream and a fresh one differ\n  fresh:  {:?} {:?}\n  reused: {:?} {:?}",
            split.message, split.deltas, reused.message, reused.deltas
        ));
    }
    check_deltas(&whole).map_err(|e| format!("one-shot: {e}"))?;
    check_deltas(&split).map_err(|e| format!("split: {e}"))?;
    if case.tools == Tools::Unknown {
        return check_accounting(&case.text, &whole.message, &markup(case.format));
    }
    Ok(Accounted::Yes)
}

/// A byte-level vocabulary (ids 0..=255 are the bytes) plus the configuration's special markers
/// as tokens (ids from 256, in `special` order).
pub fn byte_vocab(special: &[&str]) -> Arc<Vocab> {
    let mut pieces: Vec<(u32, Vec<u8>, bool)> =
        (0..=255u32).map(|b| (b, vec![b as u8], false)).collect();
    for (k, text) in special.iter().enumerate() {
        pieces.push((256 + k as u32, text.as_bytes().to_vec(), true));
    }
    Arc::new(Vocab::from_pieces(pieces).expect("byte vocab"))
}

/// Token input: the case's text as token ids (a special marker becomes its token unless the
/// fuzzer chose to spell it out in bytes), with stray invalid UTF-8 bytes mixed in; checks that
/// any grouping of the ids streams to the same message, and the accounting property against the
/// text the ids decode to.
pub fn check_tokens(case: &Case, data: &[u8]) -> Result<Accounted, String> {
    let config = config(case);
    let special = config.special_marker_texts();
    let vocab = byte_vocab(&special);
    let mut rng = Rng::from_bytes(data);
    let mut ids: Vec<u32> = Vec::new();
    // What the ids decode to, as the engine sees it with the markers restored.
    let mut decoded = String::new();
    let mut run: Vec<u8> = Vec::new();
    let flush = |run: &mut Vec<u8>, decoded: &mut String| {
        let text = String::from_utf8_lossy(run);
        decoded.extend(text.chars().map(|c| {
            if (0x10FF00..0x110000).contains(&(c as u32)) {
                '\u{FFFD}'
            } else {
                c
            }
        }));
        run.clear();
    };
    let text = case.text.as_str();
    let mut i = 0;
    while i < text.len() {
        let here = text.get(i..).unwrap_or("");
        let marker = special
            .iter()
            .enumerate()
            .filter(|(_, m)| !here.is_empty() && here.starts_with(**m))
            .max_by_key(|(_, m)| m.len());
        if let Some((k, m)) = marker.filter(|_| rng.below(5) != 0) {
            flush(&mut run, &mut decoded);
            ids.push(256 + k as u32);
            decoded.push_str(m);
            i += m.len();
            continue;
        }
        if rng.below(97) == 0 {
            // A stray invalid byte (a lone continuation byte, or a lead byte cut short).
            let b = [0x80u8, 0xBF, 0xC3, 0xE6, 0xF0, 0xFF][rng.below(6)];
            ids.push(u32::from(b));
            run.push(b);
        }
        let b = text.as_bytes()[i];
        ids.push(u32::from(b));
        run.push(b);
        i += 1;
    }
    flush(&mut run, &mut decoded);

    let stream_ids = |groups: &[&[u32]]| -> Result<Message, String> {
        let mut stream = StreamParser::with_ids(config.clone(), Box::new(SeqIds));
        for g in groups {
            stream.feed_tokens(&vocab, g).map_err(|e| e.to_string())?;
        }
        stream.finish(None).map_err(|e| e.to_string())?;
        Ok(stream.message())
    };
    let whole = stream_ids(&[&ids])?;
    if std::env::var_os("TOOLWIRE_FUZZ_TRACE").is_some() {
        let mut stream = StreamParser::with_ids(config.clone(), Box::new(SeqIds));
        for id in &ids {
            let deltas = stream
                .feed_tokens(&vocab, &[*id])
                .map_err(|e| e.to_string())?;
            let text = vocab
                .token_bytes(*id)
                .map(|b| String::from_utf8_lossy(b).into_owned());
            eprintln!(
                "id {id} {text:?} -> {deltas:?} issues {}",
                stream.message().issues.len()
            );
        }
    }
    let mut groups: Vec<&[u32]> = Vec::new();
    let mut at = 0;
    while at < ids.len() {
        let span = if rng.below(2) == 0 { 2 } else { 9 };
        let len = 1 + rng.below(span);
        let end = (at + len).min(ids.len());
        groups.push(&ids[at..end]);
        at = end;
    }
    let split = stream_ids(&groups)?;
    if whole != split {
        return Err(format!(
            "token chunk-split: one-shot and split differ\n  one-shot: {whole:?}\n  split:    {split:?}"
        ));
    }
    let mut stream = StreamParser::with_ids(config.clone(), Box::new(SeqIds));
    for g in &groups {
        stream.feed_tokens(&vocab, g).map_err(|e| e.to_string())?;
    }
    stream.finish(None).map_err(|e| e.to_string())?;
    stream.reset();
    for g in &groups[..groups.len() / 2] {
        stream.feed_tokens(&vocab, g).map_err(|e| e.to_string())?;
    }
    stream.reset();
    for g in &groups {
        stream.feed_tokens(&vocab, g).map_err(|e| e.to_string())?;
    }
    stream.finish(None).map_err(|e| e.to_string())?;
    let reused = stream.take_message();
    if reused != split {
        return Err(format!(
            "token reset: a reused stream and a fresh one differ\n  fresh:  {split:?}\n  reused: {reused:?}"
        ));
    }
    if case.tools == Tools::Unknown {
        return check_accounting(&decoded, &whole, &markup(case.format));
    }
    Ok(Accounted::Yes)
}
