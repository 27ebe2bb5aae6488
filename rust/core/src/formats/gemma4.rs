//! Gemma 4: `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:2,flag:true,obj:{a:1},arr:[1,<|"|>x<|"|>]}<tool_call|>`,
//! one block per call, blocks concatenated for parallel calls (two `call:` in one block are read
//! too). Keys are bare (or `<|"|>`-quoted), strings run between `<|"|>` delimiters with no
//! escaping, numbers / booleans / `null` (`None`, `none`, `nil`) are bare, and `{}` / `[]` nest.
//! A value the model writes as a JSON string literal instead (`location:"Paris, FR"`) is that
//! string.
//! The body is converted to JSON while it streams: strings as they arrive, bare values when their
//! delimiter is seen, numbers kept as written. Nesting is an explicit stack.
//! Reasoning is `<|channel>thought\n...<channel|>`. Every marker is a Gemma 4 special token.

use std::ops::ControlFlow;

use super::call_text::{CallText, Step, StepReader};
use super::Format;
use crate::json::escape_into;
use crate::message::IssueKind;
use crate::region::{MarkerTable, Progress, RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger,
};
use crate::text;

const CALL_START: &str = "<|tool_call>";
const CALL_END: &str = "<tool_call|>";
const QUOTE: &str = "<|\"|>";
const CALL_PREFIX: &str = "call:";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "gemma4",
        aliases: &["gemma_4"],
        families: &["Gemma 4"],
        description: "<|tool_call>call:NAME{key:value,...}<tool_call|> with <|\"|>-delimited strings and bare keys, one block per call",
        extra_markers: &[
            Marker::special(Role::CallStart, CALL_START),
            Marker::special(Role::CallEnd, CALL_END),
            Marker::special(Role::StringDelimiter, QUOTE),
            Marker::plain(Role::ReasoningLabel, "thought\n"),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Special),
        triggers: &Trigger::markers([CALL_START, CALL_END, QUOTE]),
        reasoning: Some(("<|channel>", "<channel|>")),
        stops: &["<turn|>", "<eos>"],
        // The body is not JSON: style `gemma4` (bare keys, `<|"|>` strings) has its own grammar.
        template: Some(CallTemplate::new("<|tool_call>call:{name}", "<tool_call|>", "")),
        arguments: ArgSyntax::Gemma {
            string_delimiter: QUOTE,
    },
    layout: Layout {
        section: None,
        content_block: None,
        reasoning_block: Some(("<|channel>thought\n", "<channel|>")),
        content_after_calls: true,
    },
    },
    new_region: |ctx| new_region_with(ctx, &TAGS),
    write: render,
};

/// The tags around a Gemma-style `call:NAME{...}` body: the call block's opening and closing
/// markers and the string delimiter (Gemma 4: `<|tool_call>`, `<tool_call|>`, `<|"|>`;
/// FunctionGemma: `<start_function_call>`, `<end_function_call>`, `<escape>`).
pub struct GemmaTags {
    pub start: &'static str,
    pub end: &'static str,
    pub quote: &'static str,
}

const TAGS: GemmaTags = GemmaTags {
    start: CALL_START,
    end: CALL_END,
    quote: QUOTE,
};

/// The Gemma call reader with the given tags. The format's first trigger must be `tags.start`;
/// any other trigger is a call marker met outside a call (reported, then dropped).
pub fn new_region_with(ctx: &RegionCtx<'_>, tags: &GemmaTags) -> Box<dyn RegionParser> {
    let start = ctx.lit(tags.start);
    let end = ctx.lit(tags.end);
    let quote = ctx.lit(tags.quote);
    let trigger_len = ctx.trigger_lit().len();
    let stray = ctx.trigger != 0;
    Box::new(GemmaRegion {
        state: if stray { State::Stray } else { State::Start },
        start,
        end,
        quote,
        trigger_len,
        raw: String::new(),
        name: String::new(),
        buf: String::new(),
        stack: Vec::new(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    /// A call marker outside any call.
    Stray,
    /// Before `call:`.
    Prefix,
    Name,
    /// Before the body's opening `{`.
    Open,
    /// In an object: a key, `,`, or `}`.
    Key,
    BareKey,
    QuotedKey,
    Colon,
    /// A value (in an object after `:`, or an array element or `]`).
    Value,
    Str,
    /// A value written as a JSON string literal (`"Paris"`) instead of between `<|"|>`.
    JsonStr {
        escaped: bool,
    },
    Bare,
    AfterValue,
    AfterCall,
    Recover(IssueKind, &'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Object { members: usize },
    Array { items: usize },
}

struct GemmaRegion {
    state: State,
    start: String,
    end: String,
    quote: String,
    trigger_len: usize,
    /// Text of the call being read, markers included, for issues.
    raw: String,
    name: String,
    /// A bare key or value being read.
    buf: String,
    stack: Vec<Frame>,
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Whether `s` is a JSON number literal.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// JSON text for a bare Gemma value: booleans, null in its spellings, numbers as written (with
/// `108.`, `.5` and `+3` completed to JSON), anything else as a string.
fn bare_to_json(value: &str) -> String {
    let lower = value.to_ascii_lowercase();
    match lower.as_str() {
        "true" => return "true".into(),
        "false" => return "false".into(),
        "null" | "none" | "nil" => return "null".into(),
        _ => {}
    }
    if is_json_number(value) {
        return value.to_owned();
    }
    let (sign, digits) = match value.as_bytes().first() {
        Some(b'-') => ("-", &value[1..]),
        Some(b'+') => ("", &value[1..]),
        _ => ("", value),
    };
    let mut fixed = String::from(sign);
    if digits.starts_with('.') {
        fixed.push('0');
    }
    fixed.push_str(digits);
    if fixed.ends_with('.') {
        fixed.push('0');
    }
    if is_json_number(&fixed) {
        return fixed;
    }
    crate::json::quote(value)
}

impl CallText for GemmaRegion {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl GemmaRegion {
    fn truncated(&mut self, input: &str, i: usize, sink: &mut Sink) -> Progress {
        self.raw.push_str(&input[i..]);
        self.fail(IssueKind::Truncated, "output ended inside a call", sink);
        Progress::done(input.len())
    }

    /// Takes the character `c` at `*i` (a structural one the caller has matched) into the raw text.
    fn take(&mut self, c: char, i: &mut usize) {
        self.raw.push(c);
        *i += c.len_utf8();
    }

    /// Reads the whitespace at `*i` (and with `commas` the `,` between members) into the call's
    /// text and gives the next character, or the progress to return when none has come: the
    /// output ended inside the call, or more is to come.
    fn next_char(
        &mut self,
        (input, eof): (&str, bool),
        i: &mut usize,
        commas: bool,
        sink: &mut Sink,
    ) -> Result<char, Progress> {
        let rest = &input[*i..];
        let skip = if commas {
            rest.bytes()
                .take_while(|b| b.is_ascii_whitespace() || *b == b',')
                .count()
        } else {
            text::skip_ws(rest)
        };
        self.raw.push_str(&rest[..skip]);
        *i += skip;
        match input[*i..].chars().next() {
            Some(c) => Ok(c),
            None if eof => Err(self.truncated(input, *i, sink)),
            None => Err(Progress::more(*i)),
        }
    }

    fn malformed(&mut self, why: &'static str) {
        self.state = State::Recover(IssueKind::MalformedJson, why);
    }

    /// Emit a value's opening text, with the `,` an array element needs.
    fn begin_value(&mut self, text: &str, sink: &mut Sink) {
        if let Some(Frame::Array { items }) = self.stack.last_mut() {
            if *items > 0 {
                sink.args(",");
            }
            *items += 1;
        }
        sink.args(text);
    }

    /// Emit an object key (JSON text), with the `,` a later member needs.
    fn begin_key(&mut self, key: &str, sink: &mut Sink) {
        if let Some(Frame::Object { members }) = self.stack.last_mut() {
            if *members > 0 {
                sink.args(",");
            }
            *members += 1;
        }
        sink.args(key);
    }

    /// Takes `input[i..]` up to the first character `stop` accepts (or a marker sentinel) into
    /// `buf` and `raw`: `Ok((length, that character))`, or the progress to return when none has
    /// come yet.
    fn take_bare(
        &mut self,
        input: &str,
        i: usize,
        eof: bool,
        sink: &mut Sink,
        stop: fn(char) -> bool,
    ) -> Result<(usize, char), Progress> {
        let rest = &input[i..];
        let found = rest
            .char_indices()
            .find(|&(_, c)| stop(c) || MarkerTable::is_sentinel(c));
        let Some((p, c)) = found else {
            if eof {
                return Err(self.truncated(input, i, sink));
            }
            self.buf.push_str(rest);
            self.raw.push_str(rest);
            return Err(Progress::more(input.len()));
        };
        self.buf.push_str(&rest[..p]);
        self.raw.push_str(&rest[..p]);
        Ok((p, c))
    }

    /// Close the innermost container; returns whether the whole body is complete.
    fn close(&mut self, sink: &mut Sink) -> bool {
        match self.stack.pop() {
            Some(Frame::Object { .. }) => sink.args("}"),
            Some(Frame::Array { .. }) => sink.args("]"),
            None => {}
        }
        self.stack.is_empty()
    }

    fn complete(&mut self, sink: &mut Sink) {
        self.end(sink);
        self.state = State::AfterCall;
    }

    /// Whether `rest` starts a `<|"|>`: `Some(true)` yes, `None` undecided.
    fn quote_at(&self, rest: &str, eof: bool) -> Option<bool> {
        if rest.starts_with(self.quote.as_str()) {
            Some(true)
        } else if !eof && text::is_proper_prefix(rest, &self.quote) {
            None
        } else {
            Some(false)
        }
    }

    /// A key or a value that is not JSON, starting at `rest` (its first character `c`): the
    /// string delimiter, read into the call's text (`Some(true)`; the caller opens the quoted
    /// state), or a bare text in `bare` unless `c` is one of `not_bare` or a marker (malformed,
    /// `why`); `None` while a delimiter may still be arriving.
    fn open_text(
        &mut self,
        rest: &str,
        c: char,
        eof: bool,
        not_bare: [char; 5],
        bare: State,
        why: &'static str,
    ) -> Option<bool> {
        let quoted = self.quote_at(rest, eof)?;
        if quoted {
            self.raw.push_str(&self.quote);
        } else if not_bare.contains(&c) || MarkerTable::is_sentinel(c) {
            self.malformed(why);
        } else {
            self.buf.clear();
            self.state = bare;
        }
        Some(quoted)
    }
}

impl StepReader for GemmaRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let rest = &input[i..];
        match self.state {
            State::Start => {
                let n = self.trigger_len.min(rest.len());
                self.advance(input, &mut i, n);
                self.state = State::Prefix;
            }
            State::Stray => {
                let n = self.trigger_len.min(rest.len());
                sink.fail_call(
                    IssueKind::UnexpectedText,
                    "tool-call marker outside any call",
                    &rest[..n],
                );
                return ControlFlow::Break(Progress::done(i + n));
            }
            State::Prefix => {
                let ws = text::skip_ws(rest);
                self.advance(input, &mut i, ws);
                let rest = &input[i..];
                if rest.starts_with(CALL_PREFIX) || rest.starts_with(':') {
                    // `call:NAME`, or the bare `:NAME` some servers show.
                    let n = if rest.starts_with(':') {
                        1
                    } else {
                        CALL_PREFIX.len()
                    };
                    self.advance(input, &mut i, n);
                } else if rest.is_empty() || text::is_proper_prefix(rest, CALL_PREFIX) {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                self.name.clear();
                self.state = State::Name;
            }
            State::Name => {
                let end = rest.char_indices().find(|&(_, c)| !is_name_char(c));
                let Some((p, c)) = end else {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    self.name.push_str(rest);
                    self.raw.push_str(rest);
                    return ControlFlow::Break(Progress::more(input.len()));
                };
                self.name.push_str(&rest[..p]);
                self.advance(input, &mut i, p);
                if self.name.is_empty() {
                    self.state = State::Recover(IssueKind::MissingName, "the call has no name");
                } else if c == '{' || c.is_whitespace() {
                    let name = std::mem::take(&mut self.name);
                    sink.start_call(&name, None);
                    self.state = State::Open;
                } else {
                    self.malformed("unexpected text in the call name");
                }
            }
            State::Open => match self.next_char((input, eof), &mut i, false, sink) {
                Err(progress) => return ControlFlow::Break(progress),
                Ok('{') => {
                    self.take('{', &mut i);
                    self.stack.clear();
                    self.stack.push(Frame::Object { members: 0 });
                    sink.args("{");
                    self.state = State::Key;
                }
                Ok(_) => self.malformed("the call has no '{' after its name"),
            },
            State::Key => {
                let c = match self.next_char((input, eof), &mut i, true, sink) {
                    Ok(c) => c,
                    Err(progress) => return ControlFlow::Break(progress),
                };
                let rest = &input[i..];
                if c == '}' {
                    self.take('}', &mut i);
                    if self.close(sink) {
                        self.complete(sink);
                    } else {
                        self.state = State::AfterValue;
                    }
                    return ControlFlow::Continue(i);
                }
                let not_bare = ['{', '[', ']', ':', '<'];
                match self.open_text(rest, c, eof, not_bare, State::BareKey, "expected a key") {
                    None => return ControlFlow::Break(Progress::more(i)),
                    Some(true) => {
                        i += self.quote.len();
                        self.buf.clear();
                        self.state = State::QuotedKey;
                    }
                    Some(false) => {}
                }
            }
            State::BareKey => {
                let stop = |c| matches!(c, ':' | '{' | '}' | '[' | ']' | ',' | '<');
                let (p, c) = match self.take_bare(input, i, eof, sink, stop) {
                    Ok(found) => found,
                    Err(progress) => return ControlFlow::Break(progress),
                };
                i += p;
                let key = self.buf.trim();
                let key = key
                    .strip_prefix('"')
                    .and_then(|k| k.strip_suffix('"'))
                    .unwrap_or(key);
                if c != ':' || key.is_empty() {
                    self.malformed("expected 'key:'");
                    return ControlFlow::Continue(i);
                }
                let key = crate::json::quote(key);
                self.begin_key(&key, sink);
                sink.args(":");
                self.take(':', &mut i);
                self.state = State::Value;
            }
            State::QuotedKey => match text::scan(rest, &[self.quote.as_str()]) {
                text::Scan::Found { pos, .. } => {
                    self.buf.push_str(&rest[..pos]);
                    self.advance(input, &mut i, pos + self.quote.len());
                    let key = crate::json::quote(&self.buf);
                    self.begin_key(&key, sink);
                    self.state = State::Colon;
                }
                text::Scan::NotFound { safe } => {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    self.buf.push_str(&rest[..safe]);
                    self.raw.push_str(&rest[..safe]);
                    return ControlFlow::Break(Progress::more(i + safe));
                }
            },
            State::Colon => match self.next_char((input, eof), &mut i, false, sink) {
                Err(progress) => return ControlFlow::Break(progress),
                Ok(':') => {
                    self.take(':', &mut i);
                    sink.args(":");
                    self.state = State::Value;
                }
                Ok(_) => self.malformed("expected ':' after a key"),
            },
            State::Value => {
                let c = match self.next_char((input, eof), &mut i, false, sink) {
                    Ok(c) => c,
                    Err(progress) => return ControlFlow::Break(progress),
                };
                let rest = &input[i..];
                let in_array = matches!(self.stack.last(), Some(Frame::Array { .. }));
                match c {
                    ']' if in_array => {
                        // `[]`, or a trailing comma before `]`.
                        self.take(']', &mut i);
                        self.close(sink);
                        self.state = State::AfterValue;
                    }
                    '"' => {
                        self.take('"', &mut i);
                        self.buf.clear();
                        self.buf.push('"');
                        self.state = State::JsonStr { escaped: false };
                    }
                    '{' => {
                        self.take('{', &mut i);
                        self.begin_value("{", sink);
                        self.stack.push(Frame::Object { members: 0 });
                        self.state = State::Key;
                    }
                    '[' => {
                        self.take('[', &mut i);
                        self.begin_value("[", sink);
                        self.stack.push(Frame::Array { items: 0 });
                    }
                    _ => {
                        let not_bare = [',', '}', ']', ':', '<'];
                        let why = "expected a value";
                        match self.open_text(rest, c, eof, not_bare, State::Bare, why) {
                            None => return ControlFlow::Break(Progress::more(i)),
                            Some(true) => {
                                i += self.quote.len();
                                self.begin_value("\"", sink);
                                self.state = State::Str;
                            }
                            Some(false) => {}
                        }
                    }
                }
            }
            State::Str => {
                // Raw text up to the closing delimiter; any other special token means the
                // string was never closed.
                let stop = text::find_any(rest, &[self.quote.as_str()]).map(|(p, _)| p);
                // Only a special token before the closing delimiter matters; looking further
                // would read the rest of the output once per string (quadratic).
                let sentinel = rest[..stop.unwrap_or(rest.len())]
                    .char_indices()
                    .find(|&(_, c)| MarkerTable::is_sentinel(c))
                    .map(|(p, _)| p);
                let (upto, closed) = match (stop, sentinel) {
                    (Some(q), Some(s)) if s < q => (s, false),
                    (Some(q), _) => (q, true),
                    (None, Some(s)) => (s, false),
                    (None, None) => (
                        rest.len() - text::partial_suffix_len(rest, &[self.quote.as_str()]),
                        false,
                    ),
                };
                let mut escaped = String::with_capacity(upto);
                escape_into(&mut escaped, &rest[..upto]);
                sink.args(&escaped);
                self.advance(input, &mut i, upto);
                if closed {
                    self.raw.push_str(&rest[upto..upto + self.quote.len()]);
                    i += self.quote.len();
                    sink.args("\"");
                    self.state = State::AfterValue;
                } else if sentinel.is_some() {
                    self.malformed("a string was never closed");
                } else if eof {
                    return ControlFlow::Break(self.truncated(input, i, sink));
                } else {
                    return ControlFlow::Break(Progress::more(i));
                }
            }
            State::JsonStr { mut escaped } => {
                let mut end = None;
                for (p, c) in rest.char_indices() {
                    if MarkerTable::is_sentinel(c) {
                        end = Some((p, false));
                        break;
                    }
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        end = Some((p + 1, true));
                        break;
                    }
                }
                let upto = end.map_or(rest.len(), |(p, _)| p);
                self.buf.push_str(&rest[..upto]);
                self.advance(input, &mut i, upto);
                match end {
                    Some((_, true)) => match serde_json::from_str::<String>(&self.buf) {
                        Ok(value) => {
                            self.begin_value(&crate::json::quote(&value), sink);
                            self.state = State::AfterValue;
                        }
                        Err(_) => self.malformed("a JSON string value is not valid JSON"),
                    },
                    Some((_, false)) => self.malformed("a string was never closed"),
                    None if eof => return ControlFlow::Break(self.truncated(input, i, sink)),
                    None => {
                        self.state = State::JsonStr { escaped };
                        return ControlFlow::Break(Progress::more(i));
                    }
                }
            }
            State::Bare => {
                let stop = |c| matches!(c, ',' | '}' | ']' | '<' | '{' | '[' | ':');
                let p = match self.take_bare(input, i, eof, sink, stop) {
                    Ok((p, _)) => p,
                    Err(progress) => return ControlFlow::Break(progress),
                };
                i += p;
                let json = bare_to_json(self.buf.trim());
                self.begin_value(&json, sink);
                self.state = State::AfterValue;
            }
            State::AfterValue => {
                let ws = text::skip_ws(rest);
                self.advance(input, &mut i, ws);
                let top = self.stack.last().copied();
                match (input[i..].chars().next(), top) {
                    (None, _) if eof => return ControlFlow::Break(self.truncated(input, i, sink)),
                    (None, _) => return ControlFlow::Break(Progress::more(i)),
                    (Some(','), Some(Frame::Object { .. })) => {
                        self.take(',', &mut i);
                        self.state = State::Key;
                    }
                    (Some(','), Some(Frame::Array { .. })) => {
                        self.take(',', &mut i);
                        self.state = State::Value;
                    }
                    (Some('}'), Some(Frame::Object { .. }))
                    | (Some(']'), Some(Frame::Array { .. })) => {
                        self.raw.push_str(&input[i..i + 1]);
                        i += 1;
                        if self.close(sink) {
                            self.complete(sink);
                        }
                    }
                    _ => self.malformed("expected ',' or the end of a container"),
                }
            }
            State::AfterCall => {
                let ws = text::skip_ws(rest);
                i += ws;
                let rest = &input[i..];
                if rest.starts_with(self.end.as_str()) {
                    return ControlFlow::Break(Progress::done(i + self.end.len()));
                }
                if rest.starts_with(self.start.as_str()) {
                    return ControlFlow::Break(Progress::done(i));
                }
                if rest.starts_with(CALL_PREFIX) {
                    // A second call inside the same block.
                    self.raw.clear();
                    self.state = State::Prefix;
                    return ControlFlow::Continue(i);
                }
                let undecided = rest.is_empty()
                    || [self.end.as_str(), self.start.as_str(), CALL_PREFIX]
                        .iter()
                        .any(|m| text::is_proper_prefix(rest, m));
                if undecided {
                    if eof {
                        return ControlFlow::Break(Progress::done(i));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                self.state = State::Recover(
                    IssueKind::UnexpectedText,
                    "text after a call inside its block",
                );
            }
            State::Recover(kind, why) => {
                let ends = [self.end.as_str(), self.start.as_str()];
                match text::scan(rest, &ends) {
                    text::Scan::Found { pos, which } => {
                        let n = if which == 0 {
                            pos + self.end.len()
                        } else {
                            pos
                        };
                        self.raw.push_str(&rest[..n]);
                        self.fail(kind, why, sink);
                        return ControlFlow::Break(Progress::done(i + n));
                    }
                    text::Scan::NotFound { safe } => {
                        if eof {
                            self.raw.push_str(rest);
                            self.fail(kind, why, sink);
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

/// A JSON value in Gemma's notation, as the chat template writes it: keys bare and sorted,
/// strings between `quote` delimiters.
fn write_value(out: &mut String, value: &serde_json::Value, quote: &str) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            out.push_str(quote);
            out.push_str(s);
            out.push_str(quote);
        }
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_value(out, item, quote);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            write_members(out, map, quote);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn write_members(out: &mut String, map: &serde_json::Map<String, serde_json::Value>, quote: &str) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for (k, key) in keys.into_iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(key);
        out.push(':');
        write_value(out, &map[key], quote);
    }
}

/// As the Gemma 4 chat template writes an assistant turn: the calls, then the content.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = write_calls(calls, &TAGS);
    out.push_str(content.unwrap_or(""));
    out
}

/// One `START call:NAME{...} END` block per call, keys sorted, strings between `tags.quote`.
pub fn write_calls(calls: &[RenderCall], tags: &GemmaTags) -> String {
    let mut out = String::new();
    for call in calls {
        out.push_str(tags.start);
        out.push_str(CALL_PREFIX);
        out.push_str(&call.name);
        out.push('{');
        if let serde_json::Value::Object(map) = &call.arguments {
            write_members(&mut out, map, tags.quote);
        }
        out.push('}');
        out.push_str(tags.end);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{bare_to_json, is_json_number};

    #[test]
    fn bare_values() {
        assert_eq!(bare_to_json("true"), "true");
        assert_eq!(bare_to_json("None"), "null");
        assert_eq!(bare_to_json("nil"), "null");
        assert_eq!(bare_to_json("9007199254740993"), "9007199254740993");
        assert_eq!(bare_to_json("-1.5e3"), "-1.5e3");
        assert_eq!(bare_to_json("108."), "108.0");
        assert_eq!(bare_to_json(".5"), "0.5");
        assert_eq!(bare_to_json("+3"), "3");
        assert_eq!(bare_to_json("007"), "\"007\"");
        assert_eq!(bare_to_json("celsius"), "\"celsius\"");
        assert_eq!(bare_to_json("San Francisco"), "\"San Francisco\"");
        assert!(!is_json_number("1."));
        assert!(!is_json_number("-"));
        assert!(is_json_number("0"));
    }
}
