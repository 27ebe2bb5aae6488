//! Calls inside a section of markers, each call `CALL_BEGIN header ARGS_BEGIN {json} CALL_END`:
//! the shared body of DeepSeek V3, DeepSeek V3.1, Kimi K2 and PLaMo 3.
//!
//! A region opens at a section begin, at a bare call begin (the section begin was skipped), or at a
//! stray closing marker (reported, never content). Whitespace between calls is formatting; other
//! text between calls is content. A missing call end or section end after complete arguments does
//! not lose the call. Arguments stream as raw JSON while they arrive.

use std::ops::ControlFlow;

use super::call_text::{CallText, Step, StepReader};
use crate::json::{ScanResult, ValueScanner};
use crate::message::IssueKind;
use crate::region::{MarkerTable, Progress, RegionCtx, Sink};
use crate::render::{self, RenderCall};
use crate::text;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// DeepSeek: `TYPE<sep>NAME\n```json\n{...}\n```` (V3) or `NAME<sep>{...}` (V3.1). Both
    /// shapes are read by both formats: what follows the separator tells them apart.
    DeepSeek,
    /// Kimi: the header is the call id `functions.NAME:IDX`, kept as the call's id.
    KimiId,
    /// PLaMo 3: the header is the function name.
    Name,
}

#[derive(Debug, Clone, Copy)]
pub struct SectionSyntax {
    pub section_begins: &'static [&'static str],
    pub section_ends: &'static [&'static str],
    pub call_begin: &'static str,
    pub call_end: &'static str,
    pub args_begin: &'static str,
    /// Texts that may stand between `args_begin` and the JSON, each skipped where it appears
    /// (PLaMo 3's `<|plamo:constrain|>json<|plamo:msg|>`); empty for most formats.
    pub args_preamble: &'static [&'static str],
    pub header: Header,
}

impl SectionSyntax {
    /// The calls as the section's first begin and end enclose them, each `call_begin`, its header,
    /// `args_begin`, the preamble, the JSON arguments and `call_end`, back to back: the header is
    /// the name (PLaMo 3), or the call's own Kimi id for the same function, else
    /// `functions.NAME:INDEX` (Kimi). DeepSeek's headers are written by its own renderer.
    pub fn render(&self, calls: &[RenderCall], content: Option<&str>) -> String {
        let section = (self.section_begins[0], self.section_ends[0]);
        render::content_and_calls(calls, content, section, "", |out, i, call| {
            out.push_str(self.call_begin);
            match (self.header, call.id.as_deref()) {
                (Header::KimiId, Some(id)) if kimi_name(id) == Some(call.name.as_str()) => {
                    out.push_str(id)
                }
                (Header::KimiId, _) => out.push_str(&format!("functions.{}:{i}", call.name)),
                (Header::Name | Header::DeepSeek, _) => out.push_str(&call.name),
            }
            out.push_str(self.args_begin);
            out.push_str(&self.args_preamble.concat());
            out.push_str(&call.arguments_json());
            out.push_str(self.call_end);
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mk {
    SectionBegin,
    SectionEnd,
    CallBegin,
    CallEnd,
    ArgsBegin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    /// After a section begin (`first`: no call read yet, so a bare header may follow) or after a
    /// call.
    Open {
        first: bool,
    },
    Header,
    /// DeepSeek: after the separator, deciding whether the header was the name.
    AfterSep,
    /// DeepSeek V3: the name after the separator.
    Name,
    /// An optional Markdown fence before the arguments.
    Fence,
    FenceLang,
    ArgsStart,
    Args,
    AfterArgs {
        fence_closed: bool,
    },
    Recover(IssueKind, &'static str),
}

const FENCE: &str = "```";

pub struct SectionRegion {
    syntax: SectionSyntax,
    /// Every marker's search text with its kind, longest first so that prefixes do not shadow.
    marks: Vec<(String, Mk)>,
    trigger: Mk,
    trigger_len: usize,
    state: State,
    header: String,
    name: String,
    /// Text of the call being read, markers included, for issues.
    raw: String,
    /// Whitespace after a call, dropped if a marker follows and content otherwise.
    held_ws: String,
    /// Stray markers between calls, reported together.
    stray: String,
    scanner: ValueScanner,
    fenced: bool,
}

impl CallText for SectionRegion {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl SectionRegion {
    pub fn new(ctx: &RegionCtx<'_>, syntax: SectionSyntax) -> Self {
        let mut marks: Vec<(String, Mk)> = Vec::new();
        for m in syntax.section_begins {
            marks.push((ctx.lit(m), Mk::SectionBegin));
        }
        for m in syntax.section_ends {
            marks.push((ctx.lit(m), Mk::SectionEnd));
        }
        marks.push((ctx.lit(syntax.call_begin), Mk::CallBegin));
        marks.push((ctx.lit(syntax.call_end), Mk::CallEnd));
        marks.push((ctx.lit(syntax.args_begin), Mk::ArgsBegin));
        marks.sort_by_key(|(lit, _)| std::cmp::Reverse(lit.len()));
        let trigger_lit = ctx.trigger_lit();
        let trigger = marks
            .iter()
            .find(|(lit, _)| *lit == trigger_lit)
            .map_or(Mk::SectionBegin, |(_, mk)| *mk);
        Self {
            syntax,
            marks,
            trigger,
            trigger_len: trigger_lit.len(),
            state: State::Start,
            header: String::new(),
            name: String::new(),
            raw: String::new(),
            held_ws: String::new(),
            stray: String::new(),
            scanner: ValueScanner::new(),
            fenced: false,
        }
    }

    /// The marker `rest` starts with.
    fn marker_at(&self, rest: &str) -> Option<(Mk, usize)> {
        self.marks
            .iter()
            .find(|(lit, _)| rest.starts_with(lit.as_str()))
            .map(|(lit, mk)| (*mk, lit.len()))
    }

    /// Whether `rest` may still grow into a marker.
    fn partial_marker(&self, rest: &str) -> bool {
        self.marks
            .iter()
            .any(|(lit, _)| text::is_proper_prefix(rest, lit))
    }

    fn lits_of(&self, kinds: &[Mk]) -> Vec<(&str, Mk)> {
        self.marks
            .iter()
            .filter(|(_, mk)| kinds.contains(mk))
            .map(|(lit, mk)| (lit.as_str(), *mk))
            .collect()
    }

    /// The first of the `kinds` markers in `rest`, `Ok((position, length, kind))`; or
    /// `Err(safe)`: the first `safe` bytes of `rest` hold none of them, nor the start of one.
    fn scan_marks(&self, rest: &str, kinds: &[Mk]) -> Result<(usize, usize, Mk), usize> {
        let stops = self.lits_of(kinds);
        let lits: Vec<&str> = stops.iter().map(|(l, _)| *l).collect();
        match text::scan(rest, &lits) {
            text::Scan::Found { pos, which } => Ok((pos, lits[which].len(), stops[which].1)),
            text::Scan::NotFound { safe } => Err(safe),
        }
    }

    fn flush_stray(&mut self, sink: &mut Sink) {
        if !self.stray.is_empty() {
            let stray = std::mem::take(&mut self.stray);
            sink.fail_call(
                IssueKind::UnexpectedText,
                "tool-call markers outside any call",
                &stray,
            );
        }
    }

    /// The output ended inside a call: everything from the call's start is the issue's text.
    fn truncated(&mut self, input: &str, i: usize, sink: &mut Sink) -> Progress {
        self.raw.push_str(&input[i..]);
        self.fail(IssueKind::Truncated, "output ended inside a call", sink);
        self.flush_stray(sink);
        Progress::done(input.len())
    }

    /// Skip whitespace into `raw`; returns the new offset.
    fn skip_ws_raw(&mut self, input: &str, i: usize) -> usize {
        let ws = text::skip_ws(&input[i..]);
        self.raw.push_str(&input[i..i + ws]);
        i + ws
    }

    fn begin_call(&mut self, name: &str, id: Option<String>, sink: &mut Sink) {
        sink.start_call(name, id);
        self.scanner = ValueScanner::new();
        self.fenced = false;
    }
}

/// The tool name in a Kimi call id `functions.NAME:IDX` (prefix and index optional).
pub fn kimi_name(id: &str) -> Option<&str> {
    let body = id.strip_prefix("functions.").unwrap_or(id);
    let name = match body.rsplit_once(':') {
        Some((name, idx)) if !idx.is_empty() && idx.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => body,
    };
    (!name.is_empty() && !name.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

fn first_sentinel(s: &str) -> Option<usize> {
    if !s.as_bytes().contains(&0xF4) {
        return None;
    }
    s.char_indices()
        .find(|&(_, c)| MarkerTable::is_sentinel(c))
        .map(|(p, _)| p)
}

impl StepReader for SectionRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let rest = &input[i..];
        match self.state {
            State::Start => {
                let n = self.trigger_len.min(rest.len());
                match self.trigger {
                    Mk::SectionBegin => {
                        self.raw.push_str(&rest[..n]);
                        self.state = State::Open { first: true };
                    }
                    Mk::CallBegin => {
                        self.raw.push_str(&rest[..n]);
                        self.state = State::Header;
                    }
                    _ => {
                        self.stray.push_str(&rest[..n]);
                        self.state = State::Open { first: false };
                    }
                }
                i += n;
            }
            State::Open { first } => {
                let ws = text::skip_ws(rest);
                self.held_ws.push_str(&rest[..ws]);
                i += ws;
                let rest = &input[i..];
                if rest.is_empty() {
                    if !eof {
                        return ControlFlow::Break(Progress::more(i));
                    }
                    let held = std::mem::take(&mut self.held_ws);
                    // Stray markers came before the held whitespace: report them first.
                    self.flush_stray(sink);
                    if first {
                        // The section was opened and nothing followed.
                        self.raw.push_str(&held);
                        self.fail(
                            IssueKind::Truncated,
                            "output ended inside a call section",
                            sink,
                        );
                    } else {
                        sink.content(&held);
                    }
                    return ControlFlow::Break(Progress::done(i));
                }
                match self.marker_at(rest) {
                    Some((Mk::CallBegin, n)) => {
                        self.flush_stray(sink);
                        let held = std::mem::take(&mut self.held_ws);
                        self.raw.push_str(&held);
                        self.advance(input, &mut i, n);
                        self.state = State::Header;
                    }
                    Some((Mk::SectionEnd, n)) => {
                        self.held_ws.clear();
                        self.raw.clear();
                        self.flush_stray(sink);
                        return ControlFlow::Break(Progress::done(i + n));
                    }
                    Some((_, n)) => {
                        // A section opener still waiting for its first call joins the stray
                        // markers, so that issues keep the order of the text.
                        let opener = std::mem::take(&mut self.raw);
                        self.stray.push_str(&opener);
                        let held = std::mem::take(&mut self.held_ws);
                        self.stray.push_str(&held);
                        self.stray.push_str(&rest[..n]);
                        i += n;
                    }
                    None if !eof && self.partial_marker(rest) => {
                        return ControlFlow::Break(Progress::more(i))
                    }
                    None if first => {
                        // `<section begin>NAME<sep>...`: the call begin was skipped.
                        let held = std::mem::take(&mut self.held_ws);
                        self.raw.push_str(&held);
                        self.flush_stray(sink);
                        self.state = State::Header;
                    }
                    None => {
                        self.raw.clear();
                        self.flush_stray(sink);
                        let held = std::mem::take(&mut self.held_ws);
                        sink.content(&held);
                        return ControlFlow::Break(Progress::done(i));
                    }
                }
            }
            State::Header => {
                let kinds = [
                    Mk::ArgsBegin,
                    Mk::CallEnd,
                    Mk::CallBegin,
                    Mk::SectionEnd,
                    Mk::SectionBegin,
                ];
                match self.scan_marks(rest, &kinds) {
                    Ok((pos, lit_len, mk)) => {
                        self.header.push_str(&rest[..pos]);
                        self.advance(input, &mut i, pos);
                        match mk {
                            Mk::ArgsBegin => {
                                self.raw.push_str(&input[i..i + lit_len]);
                                i += lit_len;
                                self.state = self.after_separator(sink);
                            }
                            mk => {
                                // A call end is the broken call's; a begin is read next.
                                if mk == Mk::CallEnd {
                                    self.raw.push_str(&input[i..i + lit_len]);
                                    i += lit_len;
                                }
                                self.header.clear();
                                self.fail(
                                    IssueKind::MalformedJson,
                                    "the call has no separator between name and arguments",
                                    sink,
                                );
                                self.state = State::Open { first: false };
                            }
                        }
                    }
                    Err(safe) => {
                        if eof {
                            return ControlFlow::Break(self.truncated(input, i, sink));
                        }
                        self.header.push_str(&rest[..safe]);
                        self.raw.push_str(&rest[..safe]);
                        return ControlFlow::Break(Progress::more(i + safe));
                    }
                }
            }
            State::AfterSep => {
                i = self.skip_ws_raw(input, i);
                let rest = &input[i..];
                let Some(c) = rest.chars().next() else {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                };
                let at_marker = self.marker_at(rest).is_some();
                if !at_marker && !eof && self.partial_marker(rest) {
                    return ControlFlow::Break(Progress::more(i));
                }
                let args_next = matches!(c, '{' | '[' | '`') || at_marker;
                let header = std::mem::take(&mut self.header);
                let header = header.trim();
                // V3 writes the tool type `function` before the separator and the name after
                // it; V3.1 writes the name before it (a tool may really be called `function`).
                let v3_type =
                    header == "function" && !(args_next && sink.tools().get(header).is_some());
                if v3_type && !args_next {
                    self.name.clear();
                    self.state = State::Name;
                } else if v3_type || header.is_empty() {
                    self.state = State::Recover(IssueKind::MissingName, "the call has no name");
                } else {
                    self.begin_call(header, None, sink);
                    self.state = State::Fence;
                }
            }
            State::Name => {
                let end = rest.char_indices().find(|&(_, c)| {
                    c.is_whitespace()
                        || matches!(c, '`' | '{' | '[' | '<')
                        || MarkerTable::is_sentinel(c)
                });
                match end {
                    Some((p, _)) => {
                        self.name.push_str(&rest[..p]);
                        self.advance(input, &mut i, p);
                        let name = std::mem::take(&mut self.name);
                        if name.is_empty() {
                            self.state =
                                State::Recover(IssueKind::MissingName, "the call has no name");
                        } else {
                            self.begin_call(&name, None, sink);
                            self.state = State::Fence;
                        }
                    }
                    None => {
                        if eof {
                            return ControlFlow::Break(self.truncated(input, i, sink));
                        }
                        self.name.push_str(rest);
                        self.raw.push_str(rest);
                        return ControlFlow::Break(Progress::more(input.len()));
                    }
                }
            }
            State::Fence => {
                i = self.skip_ws_raw(input, i);
                let rest = &input[i..];
                if rest.starts_with(FENCE) {
                    self.raw.push_str(FENCE);
                    i += FENCE.len();
                    self.fenced = true;
                    self.state = State::FenceLang;
                } else if rest.is_empty() || text::is_proper_prefix(rest, FENCE) {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                } else {
                    self.state = State::ArgsStart;
                }
            }
            State::FenceLang => {
                let n = rest
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
                    .count();
                self.advance(input, &mut i, n);
                if i == input.len() {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                self.state = State::ArgsStart;
            }
            State::ArgsStart => {
                i = self.skip_ws_raw(input, i);
                let rest = &input[i..];
                let preamble = self.syntax.args_preamble;
                if let Some(k) = text::starts_with_any(rest, preamble) {
                    self.raw.push_str(preamble[k]);
                    i += preamble[k].len();
                    return ControlFlow::Continue(i);
                }
                if !eof && !rest.is_empty() && text::is_partial_of_any(rest, preamble) {
                    return ControlFlow::Break(Progress::more(i));
                }
                let Some(c) = rest.chars().next() else {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                };
                let no_args = match self.marker_at(rest) {
                    Some((mk, _)) => matches!(mk, Mk::CallEnd | Mk::CallBegin | Mk::SectionEnd),
                    None => self.fenced && c == '`',
                };
                if c == '{' {
                    self.state = State::Args;
                } else if no_args {
                    // `NAME<sep><call end>`: a call without arguments.
                    sink.args("{}");
                    self.end(sink);
                    self.state = State::AfterArgs {
                        fence_closed: false,
                    };
                } else if !eof && self.partial_marker(rest) {
                    return ControlFlow::Break(Progress::more(i));
                } else {
                    self.state = State::Recover(
                        IssueKind::MalformedJson,
                        "the arguments are not a JSON object",
                    );
                }
            }
            State::Args => {
                // A marker token (a sentinel) interrupts the arguments. Look for one only in
                // the text the scanner took, not in the whole input: the rest may hold many
                // more calls, and searching it for every call would be quadratic.
                let before = self.scanner.clone();
                let scanned = self.scanner.scan(rest.as_bytes());
                let extent = match scanned {
                    ScanResult::Complete(n) => n,
                    ScanResult::Incomplete => rest.len(),
                    ScanResult::Invalid => rest.chars().next().map_or(0, char::len_utf8),
                };
                let (limit, scanned) = match first_sentinel(&rest[..extent]) {
                    Some(p) => {
                        self.scanner = before;
                        (p, self.scanner.scan(&rest.as_bytes()[..p]))
                    }
                    None => (rest.len(), scanned),
                };
                let chunk = &rest[..limit];
                match scanned {
                    ScanResult::Complete(n) => {
                        self.stream_args(&chunk[..n], sink);
                        i += n;
                        self.end(sink);
                        self.state = State::AfterArgs {
                            fence_closed: false,
                        };
                    }
                    ScanResult::Incomplete => {
                        self.stream_args(chunk, sink);
                        i += limit;
                        if limit < rest.len() {
                            self.state = State::Recover(
                                IssueKind::MalformedJson,
                                "a tool-call marker interrupted the arguments",
                            );
                        } else if eof {
                            return ControlFlow::Break(self.truncated(input, i, sink));
                        } else {
                            return ControlFlow::Break(Progress::more(i));
                        }
                    }
                    ScanResult::Invalid => {
                        self.state = State::Recover(
                            IssueKind::MalformedJson,
                            "the arguments are not a JSON object",
                        );
                    }
                }
            }
            State::AfterArgs { fence_closed } => {
                i += text::skip_ws(rest);
                let rest = &input[i..];
                if self.fenced && !fence_closed {
                    if rest.starts_with(FENCE) {
                        i += FENCE.len();
                        self.state = State::AfterArgs { fence_closed: true };
                        return ControlFlow::Continue(i);
                    }
                    if !eof && (rest.is_empty() || text::is_proper_prefix(rest, FENCE)) {
                        return ControlFlow::Break(Progress::more(i));
                    }
                }
                if rest.is_empty() {
                    if eof {
                        self.flush_stray(sink);
                        return ControlFlow::Break(Progress::done(i));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                self.fenced = false;
                match self.marker_at(rest) {
                    Some((Mk::CallEnd, n)) => {
                        i += n;
                        self.state = State::Open { first: false };
                    }
                    Some(_) => self.state = State::Open { first: false },
                    None if !eof && self.partial_marker(rest) => {
                        return ControlFlow::Break(Progress::more(i))
                    }
                    None => {
                        self.state = State::Recover(
                            IssueKind::UnexpectedText,
                            "text after the arguments inside a call",
                        )
                    }
                }
            }
            State::Recover(kind, why) => {
                let kinds = [Mk::CallEnd, Mk::CallBegin, Mk::SectionEnd, Mk::SectionBegin];
                match self.scan_marks(rest, &kinds) {
                    Ok((pos, lit_len, mk)) => {
                        let n = if mk == Mk::CallEnd {
                            pos + lit_len
                        } else {
                            pos
                        };
                        self.advance(input, &mut i, n);
                        self.fail(kind, why, sink);
                        self.fenced = false;
                        self.state = State::Open { first: false };
                    }
                    Err(safe) => {
                        if eof {
                            self.raw.push_str(rest);
                            self.fail(kind, why, sink);
                            self.flush_stray(sink);
                            return ControlFlow::Break(Progress::done(input.len()));
                        }
                        self.raw.push_str(&rest[..safe]);
                        return ControlFlow::Break(Progress::more(i + safe));
                    }
                }
            }
        }
        ControlFlow::Continue(i)
    }
}

impl SectionRegion {
    /// What follows a separator: for Kimi the header is the call id; for DeepSeek it is decided
    /// by the next character.
    fn after_separator(&mut self, sink: &mut Sink) -> State {
        match self.syntax.header {
            Header::DeepSeek => State::AfterSep,
            Header::KimiId => {
                let id = std::mem::take(&mut self.header);
                let id = id.trim();
                match kimi_name(id) {
                    Some(name) => {
                        let name = name.to_owned();
                        self.begin_call(&name, Some(id.to_owned()), sink);
                        State::ArgsStart
                    }
                    None => State::Recover(IssueKind::MissingName, "the call id names no function"),
                }
            }
            Header::Name => {
                let header = std::mem::take(&mut self.header);
                match header.trim() {
                    "" => State::Recover(IssueKind::MissingName, "the call has no name"),
                    name => {
                        self.begin_call(name, None, sink);
                        State::ArgsStart
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::kimi_name;

    #[test]
    fn kimi_names_from_ids() {
        assert_eq!(kimi_name("functions.get_weather:0"), Some("get_weather"));
        assert_eq!(kimi_name("get_weather:12"), Some("get_weather"));
        assert_eq!(kimi_name("functions.mcp.search:3"), Some("mcp.search"));
        assert_eq!(kimi_name("functions.ns:tool:1"), Some("ns:tool"));
        assert_eq!(kimi_name("get_weather"), Some("get_weather"));
        assert_eq!(kimi_name("3"), None);
        assert_eq!(kimi_name("functions.:0"), None);
    }
}
