//! The accounting property of the fuzz harness (`fuzzing.rs`, FUZZING.md): every input byte ends
//! up, in order, in the content, the reasoning, an issue's raw text, or markup the format may drop
//! (its marker strings, whitespace, the spans of `fuzz_markup.json`). Kept apart from the input
//! generators because it is a search of its own, over offsets into all of those at once.

use std::collections::HashSet;

use serde_json::Value;
use toolwire_core::formats::Format;
use toolwire_core::message::{IssueKind, Message};

use super::spec_strings;

/// Text that may vanish from the output: the format's markers (every marker, trigger and
/// reasoning delimiter its spec names), plus whitespace (checked separately).
pub fn fillers(spec: &Format) -> Vec<String> {
    let mut out = spec_strings(spec);
    // A template's `begin` with the name filled in is not markup; keep the spec's own strings.
    if let Some(t) = spec.syntax.template {
        let begin = t.begin.replace("{name}", "get_weather");
        out.retain(|s| *s != begin);
    }
    out.extend(extra_fillers(spec.syntax.name));
    out.sort();
    out.dedup();
    out
}

/// The per-format markup table both fuzz harnesses read (`fuzz_markup.json`, see FUZZING.md).
fn markup_table() -> &'static Value {
    static TABLE: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str(include_str!("fuzz_markup.json")).unwrap())
}

/// The table's entries of `section` (`fillers` or `spans`) that name `format`.
fn markup_entries<'a>(section: &str, format: &'a str) -> impl Iterator<Item = &'static Value> + 'a {
    markup_table()[section]
        .as_array()
        .unwrap()
        .iter()
        .filter(move |entry| {
            entry["formats"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == format)
        })
}

fn texts(value: &Value) -> impl Iterator<Item = String> + '_ {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
}

/// Markup a format drops that its spec does not list as a marker.
pub fn extra_fillers(format: &str) -> Vec<String> {
    markup_entries("fillers", format)
        .flat_map(|entry| texts(&entry["texts"]))
        .collect()
}

/// One stretch of the input that an issue accounts for: its raw text, then `dropped` bytes
/// that a `too_large` cut removed.
#[derive(Debug)]
struct Segment {
    raw: String,
    dropped: usize,
}

fn dropped_bytes(detail: &str) -> usize {
    // "... and the N bytes after this raw text ..."
    detail
        .split("and the ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn segments(message: &Message) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut last_kept: Option<(usize, String)> = None;
    for issue in &message.issues {
        let dropped = if issue.kind == IssueKind::TooLarge {
            dropped_bytes(&issue.detail)
        } else {
            0
        };
        if issue.raw.is_empty() && dropped == 0 {
            continue;
        }
        if issue.kind.keeps_call() {
            // Several issues about one returned call share its raw text.
            if let Some(index) = issue.index {
                let key = (index, issue.raw.clone());
                if last_kept.as_ref() == Some(&key) {
                    continue;
                }
                last_kept = Some(key);
            }
        }
        out.push(Segment {
            raw: issue.raw.clone(),
            dropped,
        });
    }
    out
}

/// Where a `too_large` cut's dropped bytes may start, relative to `rest`: right here, or after
/// the start of a marker string (the parser was told the output ended at the cut, and drops a
/// marker cut short there as it would at the real end of the output).
fn cut_skips(rest: &[u8], dropped: usize, literals: &[String]) -> Vec<usize> {
    let mut out = vec![0];
    if dropped > 0 {
        for f in literals {
            let f = f.as_bytes();
            out.extend((1..f.len()).filter(|&p| rest.starts_with(&f[..p])));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Outcome of the accounting check when it did not fail.
#[derive(Debug, PartialEq, Eq)]
pub enum Accounted {
    Yes,
    /// The search gave up (too many ways to split a long, repetitive input).
    Undecided,
}

/// Markup a format may drop: literal strings, and spans from an opening string to the next
/// closing one (Harmony's message headers).
pub struct Markup {
    pub literals: Vec<String>,
    pub spans: Vec<(String, String)>,
}

pub fn markup(spec: &Format) -> Markup {
    let spans = markup_entries("spans", spec.syntax.name)
        .flat_map(|entry| {
            texts(&entry["opens"])
                .flat_map(|open| texts(&entry["closes"]).map(move |close| (open.clone(), close)))
        })
        .collect();
    Markup {
        literals: fillers(spec),
        spans,
    }
}

/// The accounting property. Every input byte must be assigned, in order, to exactly one of
///
/// * content: the content bytes, in order, are `message.content` exactly;
/// * reasoning: likewise `message.reasoning`;
/// * an issue's raw text: the issues with a raw text, in the order of `message.issues`, their
///   raw texts one after another (several issues about one returned call, such as
///   `unknown_tool` then `duplicate_call_id`, share one raw text); a `too_large` raw text is
///   followed by exactly the number of bytes its detail says were dropped (after, possibly, the
///   start of a marker string: the parser was told the output ended at the cut; and possibly
///   after content, since text a format finds between XML parameters is content). A raw text is
///   normally one stretch of the input, but content a format finds inside a call (text between
///   XML parameters) is not in the call's raw text, so the two may interleave;
/// * markup: whitespace (but not between two content bytes), one of the format's marker strings ([`fillers`]), a markup span
///   ([`markup`]), or, at the very end of the input, the start of a marker string (the output
///   stopped inside a closing tag).
///
/// With `Tools::Unknown`, every call that completes carries an `unknown_tool` issue with its raw
/// text, so "the byte is in a call" is covered by the third kind. The check searches over
/// (input offset, content offset, reasoning offset, issue index, offset in its raw text).
pub fn check_accounting(
    input: &str,
    message: &Message,
    markup: &Markup,
) -> Result<Accounted, String> {
    let inp = input.as_bytes();
    let content = message.content.as_bytes();
    let reasoning = message.reasoning.as_bytes();
    let segs = segments(message);
    let n = inp.len();
    // The last element says what came last: a content byte (`AFTER_CONTENT`), whitespace that
    // vanished right after one (`GAP`), or anything else (`OTHER`). Content may not follow a
    // `GAP`: whitespace may vanish around markup, calls and reasoning, never inside content.
    const OTHER: u8 = 0;
    const AFTER_CONTENT: u8 = 1;
    const GAP: u8 = 2;
    let mut seen: HashSet<(usize, usize, usize, usize, usize, u8)> = HashSet::new();
    let mut stack = vec![(0usize, 0usize, 0usize, 0usize, 0usize, OTHER)];
    let mut best = (0, content.len(), reasoning.len(), segs.len(), 0, OTHER);
    const LIMIT: usize = 1_500_000;
    while let Some(state) = stack.pop() {
        let (i, c, r, j, k, last) = state;
        if (i, c, r, j, k) == (n, content.len(), reasoning.len(), segs.len(), 0) {
            return Ok(Accounted::Yes);
        }
        if !seen.insert(state) {
            continue;
        }
        if seen.len() > LIMIT {
            return Ok(Accounted::Undecided);
        }
        if i >= best.0 {
            best = state;
        }
        let rest = &inp[i..];
        // Pushed in reverse order of preference: the last one pushed is tried first.
        let mut next: Vec<(usize, usize, usize, usize, usize, u8)> = Vec::new();
        if let Some(ch) = input.get(i..).and_then(|s| s.chars().next()) {
            if ch.is_whitespace() {
                let after = if last == OTHER { OTHER } else { GAP };
                next.push((i + ch.len_utf8(), c, r, j, k, after));
            }
        }
        for (open, close) in &markup.spans {
            if rest.starts_with(open.as_bytes()) {
                let after = &input[i + open.len()..];
                if let Some(p) = after.find(close.as_str()) {
                    next.push((i + open.len() + p + close.len(), c, r, j, k, OTHER));
                }
            }
        }
        for f in &markup.literals {
            if rest.starts_with(f.as_bytes()) {
                next.push((i + f.len(), c, r, j, k, OTHER));
            } else if !rest.is_empty() && f.as_bytes().starts_with(rest) {
                // The output stopped inside a marker (a closing tag cut short).
                next.push((n, c, r, j, k, OTHER));
            }
        }
        if r < reasoning.len() && i < n && inp[i] == reasoning[r] {
            next.push((i + 1, c, r + 1, j, k, OTHER));
        }
        if c < content.len() && i < n && inp[i] == content[c] && last != GAP {
            next.push((i + 1, c + 1, r, j, k, AFTER_CONTENT));
        }
        if let Some(seg) = segs.get(j).filter(|s| k == s.raw.len()) {
            // The raw text is complete (or empty): the issue is done, after its dropped bytes
            // (none but for too_large). A cut can come after content that followed the raw text
            // (text between XML parameters is content), so they may start later.
            for skip in cut_skips(rest, seg.dropped, &markup.literals) {
                if i + skip + seg.dropped <= n {
                    let after = if skip + seg.dropped == 0 { last } else { OTHER };
                    next.push((i + skip + seg.dropped, c, r, j + 1, 0, after));
                }
            }
        } else if let Some(seg) = segs.get(j) {
            let raw = seg.raw.as_bytes();
            if i < n && inp[i] == raw[k] {
                next.push((i + 1, c, r, j, k + 1, OTHER));
            }
            if rest.starts_with(&raw[k..]) {
                next.push((i + raw.len() - k, c, r, j, raw.len(), OTHER));
            }
        }
        stack.extend(next);
    }
    let (i, c, r, j, k, _) = best;
    let around = |s: &[u8], at: usize| {
        let from = at.saturating_sub(40);
        let to = (at + 40).min(s.len());
        format!(
            "{:?} ^ {:?}",
            String::from_utf8_lossy(&s[from..at.min(s.len())]),
            String::from_utf8_lossy(&s[at.min(s.len())..to])
        )
    };
    Err(format!(
        "accounting: input byte {i} of {n} cannot be placed ({})\n  content at {c}: {}\n  reasoning at {r}: {}\n  issue {j} raw at {k}: {}",
        around(inp, i),
        around(content, c),
        around(reasoning, r),
        segs.get(j).map_or("(none)".to_owned(), |s| format!("{} (+{} dropped)", around(s.raw.as_bytes(), k), s.dropped))
    ) + &format!(
        "\n  input: {input:?}\n  content: {:?}\n  reasoning: {:?}\n  issues: {:#?}",
        message.content,
        message.reasoning,
        message
            .issues
            .iter()
            .map(|i| (i.index, i.kind.as_str(), &i.raw, dropped_bytes(&i.detail)))
            .collect::<Vec<_>>()
    ))
}
