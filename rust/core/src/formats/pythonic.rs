//! Pythonic tool calls: a Python list of calls, `[get_weather(location="NYC", days=3), ping()]`,
//! with Python literals as keyword-argument values (Llama 3.2 and Llama 4 pythonic templates,
//! ToolACE, Gemma 3's pythonic template). Llama 4 may wrap the list, or a single bare call, in its
//! special tokens `<|python_start|>` ... `<|python_end|>`. Olmo 3 writes one call per line inside
//! `<function_calls>` ... `</function_calls>` and may spell constants as `true`/`false`/`null`.
//!
//! Without a marker, a `[` may open a call list, so that trigger is soft: the text stays content
//! unless it reads `[name(`. After other text the bar is higher, `[name(` followed by a keyword
//! argument `kw=` or by `)`, so markdown links, footnotes like `[1]` and indexing like
//! `x[len(a)]` are never taken for calls; at the output start `[name(` commits, and a positional
//! argument there is reported as a malformed call.
//! The name is streamed when the call is certain, and each keyword argument's JSON as soon as its
//! value is complete (`{"k": <json>`, then `, "k2": ...`, and `}` at the closing parenthesis).
//! Values are read by [`super::pylit::PyLiteral`], which never recurses.

use std::collections::HashSet;

use serde_json::Value;

use super::pylit::{PyLiteral, Step};
use super::Format;
use crate::json;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};
use crate::text;

const PY_START: &str = "<|python_start|>";
const PY_END: &str = "<|python_end|>";
const FN_START: &str = "<function_calls>";
const FN_END: &str = "</function_calls>";
/// What a `[` must open to be read as calls: `[name(` (whitespace allowed around the name).
const CALL_OPENS: &str = r"\[\s*[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_.\-\u0080-\U0010ffff]*\s*\(";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "pythonic",
        aliases: &["llama4"],
        families: &[
            "Llama 3.2 (pythonic template)",
            "Llama 4",
            "Olmo 3",
            "ToolACE",
            "Gemma 3 (pythonic template)",
        ],
        description: "a Python list of calls [f(a=1, b='x'), g()], optionally inside <|python_start|>...<|python_end|>; Olmo 3: one call per line inside <function_calls>...</function_calls>",
        extra_markers: &[
            Marker::special(Role::CallStart, PY_START),
            Marker::special(Role::CallEnd, PY_END),
            Marker::plain(Role::SectionStart, FN_START),
            Marker::plain(Role::SectionEnd, FN_END),
        ],
        // The soft `[` comes before the markers: the engine's marker search stops at the earliest
        // match of the literals listed before, so the frequent `[` keeps the search short.
        triggers: &[
            Trigger::at_start("[").confirmed(CALL_OPENS),
            Trigger::soft("[").confirmed(CALL_OPENS),
            Trigger::marker(PY_START),
            Trigger::marker(FN_START),
        ],
        template: Some(CallTemplate::new("{name}(", ")", ", ")),
        arguments: ArgSyntax::PythonKwargs,
        layout: Layout::section("[", "]"),
        stops: &["<|eot|>", "<|eot_id|>", "<|eom|>"],
        ..Syntax::EMPTY
    },
    new_region,
    write: |_, calls, content| render::content_and_calls(calls, content, ("[", "]"), ", ", |out, _, call| { write_call(out, call, python_literal) }),
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let end_lit = match ctx.trigger {
        0 | 1 => None,
        2 => Some(ctx.lit(PY_END)),
        _ => Some(ctx.lit(FN_END)),
    };
    build(ctx, end_lit)
}

/// The pythonic reader for a format whose call list sits between a start marker (the trigger)
/// and `end` (LFM2's `<|tool_call_start|>` ... `<|tool_call_end|>`).
pub fn new_wrapped_region(ctx: &RegionCtx<'_>, end: &'static str) -> Box<dyn RegionParser> {
    build(ctx, Some(ctx.lit(end)))
}

fn build(ctx: &RegionCtx<'_>, end_lit: Option<String>) -> Box<dyn RegionParser> {
    Box::new(PythonicRegion {
        st: St::Trigger,
        soft: ctx.soft(),
        mid_text: ctx.trigger == 1,
        trigger_lit: ctx.trigger_lit(),
        end_lit,
        in_list: false,
        raw: String::new(),
        held: String::new(),
        name: String::new(),
        kw: String::new(),
        seen: HashSet::new(),
        started: false,
        args_written: false,
        calls_done: 0,
        bare_next: false,
        lit: PyLiteral::new(),
        rec_depth: 0,
        rec_quote: None,
        rec_escaped: false,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Trigger,
    /// After an explicit marker: a list, a bare call, or the end marker.
    Body,
    /// After `[` or a `,` in the list: a call name or `]`.
    ListItem,
    Name,
    BeforeParen,
    /// After `(` or a `,` between arguments.
    ArgStart,
    KwName,
    BeforeEq,
    Value,
    AfterValue,
    AfterCall,
    AfterList,
    Recover(IssueKind, &'static str),
}

struct PythonicRegion {
    st: St,
    /// Opened by a bare `[`: until the first call's `(` the text may still be content.
    soft: bool,
    /// A bare `[` after other text: the first call stays tentative until `kw=` or `()`, so that
    /// `x[len(a)]` or `[Note(s)]` in prose is not taken for a call. At the output start `[name(`
    /// is enough, and a positional argument there is a malformed call.
    mid_text: bool,
    trigger_lit: String,
    end_lit: Option<String>,
    in_list: bool,
    /// The text of the call being read (markers included), for issues and rejection.
    raw: String,
    /// Whitespace and separators after a call, kept until it is known whether another call follows.
    held: String,
    name: String,
    kw: String,
    seen: HashSet<String>,
    started: bool,
    args_written: bool,
    calls_done: usize,
    /// Reading a possible further bare call (after `<|python_start|>f(...)` or inside
    /// `<function_calls>`): it is content unless `(` follows its name.
    bare_next: bool,
    lit: PyLiteral,
    rec_depth: i64,
    rec_quote: Option<u8>,
    rec_escaped: bool,
}

fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn is_kw_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-')
}

/// Length of the leading run of `rest` whose chars satisfy `keep`.
fn run_len(rest: &str, keep: fn(char) -> bool) -> usize {
    rest.char_indices()
        .find(|&(_, c)| !keep(c))
        .map_or(rest.len(), |(p, _)| p)
}

impl PythonicRegion {
    fn tentative(&self) -> bool {
        !self.started && ((self.soft && self.calls_done == 0) || self.bare_next)
    }

    fn take(&mut self, input: &str, from: usize, to: usize) {
        self.raw.push_str(&input[from..to]);
    }

    /// Not a call after all: everything read so far is content.
    fn give_up(&mut self, consumed: usize, sink: &mut Sink) -> Progress {
        let text = std::mem::take(&mut self.raw);
        if self.soft && self.calls_done == 0 {
            return Progress {
                consumed,
                status: Status::Reject(text),
            };
        }
        sink.content(&text);
        Progress::done(consumed)
    }

    fn fail(
        &mut self,
        kind: IssueKind,
        why: &'static str,
        consumed: usize,
        sink: &mut Sink,
    ) -> Progress {
        let raw = std::mem::take(&mut self.raw);
        sink.fail_call(kind, why, &raw);
        self.started = false;
        Progress::done(consumed)
    }

    fn at_eof(&mut self, consumed: usize, sink: &mut Sink) -> Progress {
        if self.tentative() {
            return self.give_up(consumed, sink);
        }
        self.fail(
            IssueKind::Truncated,
            "output ended inside a call",
            consumed,
            sink,
        )
    }

    /// The call cannot be read: skip to where the list, the line or the block ends, and report
    /// the text as one issue.
    fn broken(&mut self, why: &'static str) {
        let in_call = matches!(
            self.st,
            St::ArgStart | St::KwName | St::BeforeEq | St::Value | St::AfterValue
        );
        let in_value = self.st == St::Value;
        self.rec_depth = i64::from(self.in_list)
            + i64::from(in_call)
            + if in_value { self.lit.depth() as i64 } else { 0 };
        self.rec_quote = if in_value { self.lit.in_string() } else { None };
        self.rec_escaped = false;
        self.st = St::Recover(IssueKind::MalformedJson, why);
    }

    fn commit(&mut self, sink: &mut Sink) {
        sink.start_call(&self.name, None);
        self.started = true;
        self.bare_next = false;
    }

    fn close_call(&mut self, sink: &mut Sink) {
        sink.args(if self.args_written { "}" } else { "{}" });
        let raw = std::mem::take(&mut self.raw);
        sink.end_call(&raw);
        self.calls_done += 1;
        self.started = false;
        self.st = St::AfterCall;
    }

    /// The region ends here; held whitespace goes back out as content.
    fn finish(&mut self, consumed: usize, sink: &mut Sink) -> Progress {
        let held = std::mem::take(&mut self.held);
        sink.content(&held);
        Progress::done(consumed)
    }

    /// The input ended at `consumed`: wait for more, or the output ended inside the call.
    fn wait(&mut self, consumed: usize, eof: bool, sink: &mut Sink) -> Progress {
        if eof {
            self.at_eof(consumed, sink)
        } else {
            Progress::more(consumed)
        }
    }

    /// Read `n` bytes at `*i` into `raw`.
    fn advance(&mut self, input: &str, i: &mut usize, n: usize) {
        self.take(input, *i, *i + n);
        *i += n;
    }

    /// Skip whitespace into `raw`; the next char, if any.
    fn skip_ws(&mut self, input: &str, i: &mut usize) -> Option<char> {
        let ws = text::skip_ws(&input[*i..]);
        self.take(input, *i, *i + ws);
        *i += ws;
        input[*i..].chars().next()
    }
}

impl RegionParser for PythonicRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let mut i = 0;
        loop {
            match self.st {
                St::Trigger => {
                    let n = self.trigger_lit.len().min(input.len());
                    self.take(input, 0, n);
                    i = n;
                    if self.soft {
                        self.in_list = true;
                        self.st = St::ListItem;
                    } else {
                        self.st = St::Body;
                    }
                }
                St::Body => {
                    let next = self.skip_ws(input, &mut i);
                    let rest = &input[i..];
                    let end = self.end_lit.clone().unwrap_or_default();
                    match next {
                        None if eof => {
                            return self.fail(
                                IssueKind::Truncated,
                                "output ended after the call marker",
                                i,
                                sink,
                            )
                        }
                        None => return Progress::more(i),
                        Some(_) if !end.is_empty() && rest.starts_with(&end) => {
                            self.take(input, i, i + end.len());
                            return self.fail(
                                IssueKind::MalformedJson,
                                "an empty call block",
                                i + end.len(),
                                sink,
                            );
                        }
                        Some(_) if !eof && text::is_proper_prefix(rest, &end) => {
                            return Progress::more(i)
                        }
                        Some('[') => {
                            self.advance(input, &mut i, 1);
                            self.in_list = true;
                            self.st = St::ListItem;
                        }
                        Some(c) if is_name_start(c) => {
                            self.name.clear();
                            self.st = St::Name;
                        }
                        Some(_) => self.broken("expected a call after the marker"),
                    }
                }
                St::ListItem => match self.skip_ws(input, &mut i) {
                    None if eof && self.calls_done > 0 => return self.finish(i, sink),
                    None => return self.wait(i, eof, sink),
                    Some(']') if self.soft && self.calls_done == 0 => return self.give_up(i, sink),
                    Some(']') => {
                        self.advance(input, &mut i, 1);
                        self.st = St::AfterList;
                    }
                    Some(c) if is_name_start(c) => {
                        self.name.clear();
                        self.st = St::Name;
                    }
                    Some(_) if self.tentative() => return self.give_up(i, sink),
                    Some(_) => self.broken("expected a call in the list"),
                },
                St::Name => {
                    let n = run_len(&input[i..], is_name_char);
                    self.name.push_str(&input[i..i + n]);
                    self.advance(input, &mut i, n);
                    if i == input.len() {
                        return self.wait(i, eof, sink);
                    }
                    let valid = !self.name.ends_with(['.', '-']) && !self.name.contains("..");
                    if valid {
                        self.st = St::BeforeParen;
                    } else if self.tentative() {
                        return self.give_up(i, sink);
                    } else {
                        self.broken("invalid call name");
                    }
                }
                St::BeforeParen => match self.skip_ws(input, &mut i) {
                    None => return self.wait(i, eof, sink),
                    Some('(') => {
                        self.advance(input, &mut i, 1);
                        self.seen.clear();
                        self.args_written = false;
                        if !(self.mid_text && self.calls_done == 0) {
                            self.commit(sink);
                        }
                        self.st = St::ArgStart;
                    }
                    Some(_) if self.tentative() => return self.give_up(i, sink),
                    Some(_) => self.broken("expected '(' after the call name"),
                },
                St::ArgStart => match self.skip_ws(input, &mut i) {
                    None => return self.wait(i, eof, sink),
                    Some(')') => {
                        self.advance(input, &mut i, 1);
                        if !self.started {
                            self.commit(sink);
                        }
                        self.close_call(sink);
                    }
                    Some(c) if is_name_start(c) => {
                        self.kw.clear();
                        self.st = St::KwName;
                    }
                    Some(_) if self.tentative() => return self.give_up(i, sink),
                    Some(_) => self.broken(
                        "expected a keyword argument (positional arguments are not supported)",
                    ),
                },
                St::KwName => {
                    let n = run_len(&input[i..], is_kw_char);
                    self.kw.push_str(&input[i..i + n]);
                    self.advance(input, &mut i, n);
                    if i == input.len() {
                        return self.wait(i, eof, sink);
                    }
                    self.st = St::BeforeEq;
                }
                St::BeforeEq => match self.skip_ws(input, &mut i) {
                    None => return self.wait(i, eof, sink),
                    Some('=') => {
                        self.advance(input, &mut i, 1);
                        if !self.started {
                            self.commit(sink);
                        }
                        if self.seen.insert(self.kw.clone()) {
                            self.lit = PyLiteral::new();
                            self.st = St::Value;
                        } else {
                            self.broken("a keyword argument is repeated");
                        }
                    }
                    Some(_) if self.tentative() => return self.give_up(i, sink),
                    Some(_) => self.broken("expected '=' (positional arguments are not supported)"),
                },
                St::Value => match self.lit.feed(&input[i..]) {
                    Step::NeedMore => {
                        self.take(input, i, input.len());
                        return self.wait(input.len(), eof, sink);
                    }
                    Step::Done(n) => {
                        self.advance(input, &mut i, n);
                        let value = self.lit.take_json();
                        let lead = if self.args_written { ", " } else { "{" };
                        sink.args(&format!("{lead}{}: {value}", json::quote(&self.kw)));
                        self.args_written = true;
                        self.st = St::AfterValue;
                    }
                    Step::Error(n, why) => {
                        self.advance(input, &mut i, n);
                        self.broken(why);
                    }
                },
                St::AfterValue => match self.skip_ws(input, &mut i) {
                    None => return self.wait(i, eof, sink),
                    Some(',') => {
                        self.advance(input, &mut i, 1);
                        self.st = St::ArgStart;
                    }
                    Some(')') => {
                        self.advance(input, &mut i, 1);
                        self.close_call(sink);
                    }
                    Some(_) => self.broken("expected ',' or ')' after an argument"),
                },
                St::AfterCall => {
                    let rest = &input[i..];
                    let skip = if self.in_list {
                        text::skip_ws(rest)
                    } else {
                        rest.len()
                            - rest
                                .trim_start_matches(|c: char| {
                                    c.is_whitespace() || c == ',' || c == ';'
                                })
                                .len()
                    };
                    self.held.push_str(&rest[..skip]);
                    i += skip;
                    let after = &input[i..];
                    let end = self.end_lit.clone().unwrap_or_default();
                    let next = after.chars().next();
                    if self.in_list {
                        match next {
                            Some(c @ (',' | ']')) => {
                                self.held.clear();
                                self.advance(input, &mut i, 1);
                                self.st = if c == ',' {
                                    St::ListItem
                                } else {
                                    St::AfterList
                                };
                            }
                            None if !eof => return Progress::more(i),
                            _ => return self.finish(i, sink),
                        }
                        continue;
                    }
                    if !end.is_empty() && after.starts_with(&end) {
                        self.held.clear();
                        return Progress::done(i + end.len());
                    }
                    match next {
                        None if eof => return self.finish(i, sink),
                        None => return Progress::more(i),
                        Some(_) if !eof && text::is_proper_prefix(after, &end) => {
                            return Progress::more(i)
                        }
                        Some(c) if is_name_start(c) => {
                            let held = std::mem::take(&mut self.held);
                            self.raw.push_str(&held);
                            self.name.clear();
                            self.bare_next = true;
                            self.st = St::Name;
                        }
                        Some(_) => return self.finish(i, sink),
                    }
                }
                St::AfterList => {
                    let Some(end) = self.end_lit.clone() else {
                        return Progress::done(i);
                    };
                    let ws = text::skip_ws(&input[i..]);
                    self.held.push_str(&input[i..i + ws]);
                    i += ws;
                    let after = &input[i..];
                    if after.starts_with(&end) {
                        self.held.clear();
                        return Progress::done(i + end.len());
                    }
                    if !eof && (after.is_empty() || text::is_proper_prefix(after, &end)) {
                        return Progress::more(i);
                    }
                    return self.finish(i, sink);
                }
                St::Recover(kind, why) => {
                    let rest = &input[i..];
                    let end = self.end_lit.clone();
                    let limit = if eof {
                        rest.len()
                    } else {
                        rest.len()
                            - end
                                .as_deref()
                                .map_or(0, |e| text::partial_suffix_len(rest, &[e]))
                    };
                    let bytes = rest.as_bytes();
                    let mut j = 0;
                    // (bytes to consume, whether the block ended with them)
                    let mut stop: Option<(usize, bool)> = None;
                    while j < limit {
                        let b = bytes[j];
                        if let Some(e) = end.as_deref() {
                            if e.as_bytes().first() == Some(&b) && rest[j..].starts_with(e) {
                                stop = Some((j + e.len(), true));
                                break;
                            }
                        }
                        if let Some(q) = self.rec_quote {
                            if self.rec_escaped {
                                self.rec_escaped = false;
                            } else if b == b'\\' {
                                self.rec_escaped = true;
                            } else if b == q || b == b'\n' {
                                self.rec_quote = None;
                            }
                        } else {
                            match b {
                                b'"' | b'\'' => self.rec_quote = Some(b),
                                b'[' | b'(' | b'{' => self.rec_depth += 1,
                                b']' | b')' | b'}' => {
                                    self.rec_depth -= 1;
                                    if self.in_list && b == b']' && self.rec_depth <= 0 {
                                        stop = Some((j + 1, false));
                                        break;
                                    }
                                }
                                b'\n' if !self.in_list && self.rec_depth <= 0 => {
                                    stop = Some((j, false));
                                    break;
                                }
                                _ => {}
                            }
                        }
                        j += 1;
                    }
                    match stop {
                        Some((n, block_end)) => {
                            self.advance(input, &mut i, n);
                            let raw = std::mem::take(&mut self.raw);
                            sink.fail_call(kind, why, &raw);
                            self.started = false;
                            self.bare_next = false;
                            if block_end {
                                return Progress::done(i);
                            }
                            // The list closed, or (one call per line) the line ended: go on.
                            self.st = if self.in_list {
                                St::AfterList
                            } else {
                                St::AfterCall
                            };
                        }
                        None if eof => {
                            self.take(input, i, input.len());
                            return self.fail(kind, why, input.len(), sink);
                        }
                        None => {
                            self.take(input, i, i + limit);
                            return Progress::more(i + limit);
                        }
                    }
                }
            }
        }
    }
}

/// `f(a=1, b='x')`, each argument's value as `write_value` writes it.
pub fn write_call(out: &mut String, call: &RenderCall, write_value: impl Fn(&Value, &mut String)) {
    out.push_str(&call.name);
    out.push('(');
    if let Value::Object(map) = &call.arguments {
        for (j, (key, value)) in map.iter().enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            out.push_str(key);
            out.push('=');
            write_value(value, out);
        }
    }
    out.push(')');
}

/// A JSON value as the Python literal a model writes for it (the caller's data, not model
/// output, so recursion is bounded by what the caller built).
fn python_literal(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => out.push_str(&json::quote(s)),
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                python_literal(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, (key, item)) in map.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push_str(&json::quote(key));
                out.push_str(": ");
                python_literal(item, out);
            }
            out.push('}');
        }
    }
}
