//! DeepSeek V3.2 and V4: DSML, the DeepSeek markup for tool calls.
//!
//! ```text
//! <｜DSML｜function_calls>                      (V4: <｜DSML｜tool_calls>)
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="location" string="true">NYC</｜DSML｜parameter>
//! <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜function_calls>
//! ```
//!
//! Several invokes in one block are parallel calls. `string="true"`: the value is the raw string
//! (written without escaping, kept verbatim); `string="false"` or no attribute: a JSON value, and a
//! value that is not JSON is kept as a string. Only `｜DSML｜` is a special token (128825); every tag
//! is several tokens, so tags arrive split anywhere. Both block names are accepted by both formats
//! (models drift); V4 may write a parameterless call as `<｜DSML｜invoke name="N"/>`; an invoke body
//! may be one JSON object instead of parameters (SGLang accepts it); and a model that forgets the
//! block opener at long context (vllm#48931) still has its `<｜DSML｜invoke` blocks read as calls.
//!
//! String values are streamed as escaped JSON fragments while they arrive; a JSON value is held
//! until its closing tag, because a value that is not JSON becomes a string.

use std::io;

use serde::Serialize;
use serde_json::Value;

use crate::json::{self, ScanResult, ValueScanner};
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{FormatSpec, Marker, Trigger};
use crate::text;

const DSML: &str = "｜DSML｜";

const MARKERS: &[Marker] = &[
    Marker {
        role: "dsml_token",
        text: "｜DSML｜",
        special_token: true,
    },
    Marker {
        role: "section_start",
        text: "<｜DSML｜function_calls>",
        special_token: false,
    },
    Marker {
        role: "section_end",
        text: "</｜DSML｜function_calls>",
        special_token: false,
    },
    Marker {
        role: "section_start",
        text: "<｜DSML｜tool_calls>",
        special_token: false,
    },
    Marker {
        role: "section_end",
        text: "</｜DSML｜tool_calls>",
        special_token: false,
    },
    Marker {
        role: "call_start",
        text: "<｜DSML｜invoke",
        special_token: false,
    },
    Marker {
        role: "call_end",
        text: "</｜DSML｜invoke>",
        special_token: false,
    },
    Marker {
        role: "param_start",
        text: "<｜DSML｜parameter",
        special_token: false,
    },
    Marker {
        role: "param_end",
        text: "</｜DSML｜parameter>",
        special_token: false,
    },
    Marker {
        role: "reasoning_start",
        text: "<think>",
        special_token: true,
    },
    Marker {
        role: "reasoning_end",
        text: "</think>",
        special_token: true,
    },
];

pub static DEEPSEEK_V3_2: FormatSpec = FormatSpec {
    name: "deepseek_v3_2",
    aliases: &["deepseekv32", "deepseek_v32"],
    families: &["DeepSeek-V3.2", "DeepSeek-V3.2-Speciale"],
    description: "DSML: <｜DSML｜function_calls> with <｜DSML｜invoke name=...> calls and \
                  <｜DSML｜parameter name=... string=...> values",
    markers: MARKERS,
    triggers: &[
        Trigger::marker("<｜DSML｜function_calls>"),
        Trigger::marker("<｜DSML｜tool_calls>"),
        Trigger::marker("<｜DSML｜invoke"),
    ],
    name_encoding: "tag_attribute",
    argument_encoding: "dsml_parameters",
    call_separator: Some("\n"),
    reasoning: Some(("<think>", "</think>")),
    template: None,
    new_region,
    render: render_v32,
};

pub static DEEPSEEK_V4: FormatSpec = FormatSpec {
    name: "deepseek_v4",
    aliases: &["deepseekv4", "deepseek-v4"],
    families: &["DeepSeek-V4-Pro", "DeepSeek-V4-Flash"],
    description: "DSML: <｜DSML｜tool_calls> with <｜DSML｜invoke name=...> calls and \
                  <｜DSML｜parameter name=... string=...> values",
    markers: MARKERS,
    triggers: &[
        Trigger::marker("<｜DSML｜tool_calls>"),
        Trigger::marker("<｜DSML｜function_calls>"),
        Trigger::marker("<｜DSML｜invoke"),
    ],
    name_encoding: "tag_attribute",
    argument_encoding: "dsml_parameters",
    call_separator: Some("\n"),
    reasoning: Some(("<think>", "</think>")),
    template: None,
    new_region,
    render: render_v4,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let d = ctx.lit(DSML);
    let trigger = ctx.trigger_lit();
    let invoke_open = format!("<{d}invoke");
    Box::new(DsmlRegion {
        wrapped: trigger != invoke_open,
        trigger,
        closes: [format!("</{d}function_calls>"), format!("</{d}tool_calls>")],
        invoke_open,
        invoke_close: format!("</{d}invoke>"),
        param_open: format!("<{d}parameter"),
        param_close: format!("</{d}parameter>"),
        dsml_open: format!("<{d}"),
        state: State::Open,
        raw: String::new(),
        ws: String::new(),
        saw_anything: false,
        tag: TagReader::default(),
        params: 0,
        json_body: false,
        value: String::new(),
        scanner: ValueScanner::new(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the trigger.
    Open,
    /// Between invokes: the next invoke, the block's end, or something else.
    Between,
    /// Text inside the block that belongs to no call.
    Stray,
    /// Attributes of `<｜DSML｜invoke ...>`.
    InvokeTag,
    /// Inside an invoke, between parameters.
    Body,
    /// Attributes of `<｜DSML｜parameter ...>`.
    ParamTag,
    /// A `string="true"` value, streamed.
    StringValue,
    /// A JSON value, held until its closing tag.
    JsonValue,
    /// The invoke body is one JSON object.
    JsonBody,
    /// A broken invoke: skip to its end (or the block's end) and report it.
    Recover(IssueKind, &'static str),
}

struct DsmlRegion {
    /// Whether the region opened with a block tag (else with a bare `<｜DSML｜invoke`).
    wrapped: bool,
    trigger: String,
    closes: [String; 2],
    invoke_open: String,
    invoke_close: String,
    param_open: String,
    param_close: String,
    dsml_open: String,
    state: State,
    /// The model's text of the invoke (or stray text) being read, for issues.
    raw: String,
    /// Whitespace between invokes, given back as content when a bare invoke run ends.
    ws: String,
    saw_anything: bool,
    tag: TagReader,
    params: usize,
    json_body: bool,
    value: String,
    scanner: ValueScanner,
}

impl DsmlRegion {
    fn fail(&mut self, kind: IssueKind, why: &str, sink: &mut Sink) {
        let raw = std::mem::take(&mut self.raw);
        sink.fail_call(kind, why, &raw);
    }

    /// End of output inside a call: everything left is part of the broken call.
    fn truncated(&mut self, input: &str, i: usize, sink: &mut Sink) -> Progress {
        self.raw.push_str(&input[i..]);
        self.fail(
            IssueKind::Truncated,
            "output ended inside a DSML call",
            sink,
        );
        Progress::done(input.len())
    }

    fn block_close_at(&self, rest: &str) -> Option<usize> {
        self.closes
            .iter()
            .find(|c| rest.starts_with(c.as_str()))
            .map(String::len)
    }

    fn finish_invoke(&mut self, sink: &mut Sink) {
        if !self.json_body {
            sink.args(if self.params == 0 { "{}" } else { "}" });
        }
        let raw = std::mem::take(&mut self.raw);
        sink.end_call(&raw);
    }

    fn emit_string(sink: &mut Sink, fragment: &str) {
        if !fragment.is_empty() {
            let mut escaped = String::with_capacity(fragment.len());
            json::escape_into(&mut escaped, fragment);
            sink.args(&escaped);
        }
    }

    fn end_at_eof_between(&mut self, i: usize, sink: &mut Sink) -> Progress {
        if !self.wrapped {
            let ws = std::mem::take(&mut self.ws);
            sink.content(&ws);
        } else if !self.saw_anything {
            let ws = std::mem::take(&mut self.ws);
            self.raw.push_str(&ws);
            self.fail(
                IssueKind::Truncated,
                "output ended inside an empty DSML tool-call block",
                sink,
            );
        }
        Progress::done(i)
    }
}

impl RegionParser for DsmlRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let mut i = 0;
        loop {
            let rest = &input[i..];
            match self.state {
                State::Open => {
                    if self.wrapped {
                        let n = if rest.starts_with(self.trigger.as_str()) {
                            self.trigger.len()
                        } else {
                            0
                        };
                        self.raw.push_str(&rest[..n]);
                        i += n;
                    }
                    self.state = State::Between;
                }
                State::Between => {
                    let n = text::skip_ws(rest);
                    self.ws.push_str(&rest[..n]);
                    i += n;
                    let rest = &input[i..];
                    if rest.starts_with(self.invoke_open.as_str()) {
                        self.ws.clear();
                        self.raw.clear();
                        self.raw.push_str(&self.invoke_open);
                        i += self.invoke_open.len();
                        self.saw_anything = true;
                        self.tag = TagReader::default();
                        self.params = 0;
                        self.json_body = false;
                        self.state = State::InvokeTag;
                    } else if let Some(n) = self.block_close_at(rest) {
                        self.ws.clear();
                        return Progress::done(i + n);
                    } else if rest.is_empty() {
                        if eof {
                            return self.end_at_eof_between(i, sink);
                        }
                        return Progress::more(i);
                    } else if !eof
                        && [&self.invoke_open, &self.closes[0], &self.closes[1]]
                            .iter()
                            .any(|lit| text::is_proper_prefix(rest, lit))
                    {
                        return Progress::more(i);
                    } else if self.wrapped
                        && [&self.invoke_open, &self.closes[0], &self.closes[1]]
                            .iter()
                            .any(|lit| text::is_proper_prefix(rest, lit))
                    {
                        // The output ended inside a tag: the next invoke's opening tag (a
                        // truncated call) or the block's closing tag (the calls are whole).
                        if self.saw_anything && !text::is_proper_prefix(rest, &self.invoke_open) {
                            return Progress::done(input.len());
                        }
                        if self.saw_anything {
                            self.raw.clear();
                        } else {
                            let ws = std::mem::take(&mut self.ws);
                            self.raw.push_str(&ws);
                        }
                        return self.truncated(input, i, sink);
                    } else if self.wrapped {
                        self.ws.clear();
                        self.raw.clear();
                        self.saw_anything = true;
                        self.state = State::Stray;
                    } else {
                        let ws = std::mem::take(&mut self.ws);
                        sink.content(&ws);
                        return Progress::done(i);
                    }
                }
                State::Stray => {
                    if rest.is_empty() {
                        if eof {
                            self.fail(
                                IssueKind::UnexpectedText,
                                "text inside a DSML tool-call block that belongs to no call",
                                sink,
                            );
                            return Progress::done(i);
                        }
                        return Progress::more(i);
                    }
                    // The first character is stray for sure (it did not start a known tag).
                    let skip = if self.raw.is_empty() {
                        rest.chars().next().map_or(0, char::len_utf8)
                    } else {
                        0
                    };
                    let hay = &rest[skip..];
                    let (n, found) = match hay.find(self.dsml_open.as_str()) {
                        Some(p) => (skip + p, true),
                        None if eof => (rest.len(), true),
                        None => (
                            rest.len() - text::partial_suffix_len(hay, &[self.dsml_open.as_str()]),
                            false,
                        ),
                    };
                    self.raw.push_str(&rest[..n]);
                    i += n;
                    if !found {
                        return Progress::more(i);
                    }
                    self.fail(
                        IssueKind::UnexpectedText,
                        "text inside a DSML tool-call block that belongs to no call",
                        sink,
                    );
                    if eof && i == input.len() {
                        return Progress::done(i);
                    }
                    self.state = State::Between;
                }
                State::InvokeTag | State::ParamTag => {
                    let (n, closed) = self.tag.feed(rest);
                    self.raw.push_str(&rest[..n]);
                    i += n;
                    if !closed {
                        if eof {
                            return self.truncated(input, i, sink);
                        }
                        return Progress::more(i);
                    }
                    let attrs = parse_attrs(&self.tag.text);
                    self.tag = TagReader::default();
                    if self.state == State::InvokeTag {
                        self.open_invoke(attrs, sink);
                    } else {
                        self.open_param(attrs, sink);
                    }
                }
                State::Body => {
                    let n = text::skip_ws(rest);
                    self.raw.push_str(&rest[..n]);
                    i += n;
                    let rest = &input[i..];
                    if rest.starts_with(self.param_open.as_str()) && !self.json_body {
                        self.raw.push_str(&self.param_open);
                        i += self.param_open.len();
                        self.state = State::ParamTag;
                    } else if rest.starts_with(self.invoke_close.as_str()) {
                        self.raw.push_str(&self.invoke_close);
                        i += self.invoke_close.len();
                        self.finish_invoke(sink);
                        self.state = State::Between;
                    } else if self.block_close_at(rest).is_some() {
                        // `</｜DSML｜invoke>` is missing but the block ended: the call is complete.
                        self.finish_invoke(sink);
                        self.state = State::Between;
                    } else if rest.starts_with('{') && self.params == 0 && !self.json_body {
                        self.scanner = ValueScanner::new();
                        self.state = State::JsonBody;
                    } else if rest.is_empty()
                        || [
                            &self.param_open,
                            &self.invoke_close,
                            &self.closes[0],
                            &self.closes[1],
                        ]
                        .iter()
                        .any(|lit| text::is_proper_prefix(rest, lit))
                    {
                        if eof {
                            return self.truncated(input, i, sink);
                        }
                        return Progress::more(i);
                    } else {
                        self.state = State::Recover(
                            IssueKind::MalformedJson,
                            "unexpected text in an invoke",
                        );
                    }
                }
                State::StringValue | State::JsonValue => {
                    let streaming = self.state == State::StringValue;
                    let close = self.param_close.as_str();
                    let (upto, found) = match text::scan(rest, &[close]) {
                        text::Scan::Found { pos, .. } => (pos, true),
                        text::Scan::NotFound { .. } if eof => {
                            return self.truncated(input, i, sink)
                        }
                        text::Scan::NotFound { safe } => (safe, false),
                    };
                    if streaming {
                        Self::emit_string(sink, &rest[..upto]);
                    } else {
                        self.value.push_str(&rest[..upto]);
                    }
                    self.raw.push_str(&rest[..upto]);
                    i += upto;
                    if !found {
                        return Progress::more(i);
                    }
                    self.raw.push_str(close);
                    i += close.len();
                    if streaming {
                        sink.args("\"");
                    } else {
                        let value = std::mem::take(&mut self.value);
                        sink.args(&json_value_text(&value));
                    }
                    self.state = State::Body;
                }
                State::JsonBody => match self.scanner.scan(rest.as_bytes()) {
                    ScanResult::Complete(n) => {
                        sink.args(&rest[..n]);
                        self.raw.push_str(&rest[..n]);
                        i += n;
                        self.json_body = true;
                        self.state = State::Body;
                    }
                    ScanResult::Incomplete => {
                        sink.args(rest);
                        self.raw.push_str(rest);
                        i = input.len();
                        if eof {
                            return self.truncated(input, i, sink);
                        }
                        return Progress::more(i);
                    }
                    ScanResult::Invalid => {
                        self.state = State::Recover(
                            IssueKind::MalformedJson,
                            "invoke body is not valid JSON",
                        );
                    }
                },
                State::Recover(kind, why) => {
                    let stops = [
                        self.invoke_close.as_str(),
                        self.closes[0].as_str(),
                        self.closes[1].as_str(),
                    ];
                    match text::find_any(rest, &stops) {
                        Some((p, which)) => {
                            let n = if which == 0 { p + stops[0].len() } else { p };
                            self.raw.push_str(&rest[..n]);
                            i += n;
                            self.fail(kind, why, sink);
                            self.state = State::Between;
                        }
                        None if eof => {
                            self.raw.push_str(rest);
                            self.fail(kind, why, sink);
                            return Progress::done(input.len());
                        }
                        None => {
                            let n = rest.len() - text::partial_suffix_len(rest, &stops);
                            self.raw.push_str(&rest[..n]);
                            return Progress::more(i + n);
                        }
                    }
                }
            }
        }
    }
}

impl DsmlRegion {
    fn open_invoke(&mut self, attrs: Option<Attrs>, sink: &mut Sink) {
        let Some(attrs) = attrs else {
            self.state = State::Recover(IssueKind::MalformedJson, "malformed invoke tag");
            return;
        };
        match attrs.get("name").filter(|n| !n.is_empty()) {
            None if attrs.self_closing => {
                self.fail(IssueKind::MissingName, "invoke without a name", sink);
                self.state = State::Between;
            }
            None => self.state = State::Recover(IssueKind::MissingName, "invoke without a name"),
            Some(name) => {
                sink.start_call(name, None);
                if attrs.self_closing {
                    self.finish_invoke(sink);
                    self.state = State::Between;
                } else {
                    self.state = State::Body;
                }
            }
        }
    }

    fn open_param(&mut self, attrs: Option<Attrs>, sink: &mut Sink) {
        let Some(attrs) = attrs else {
            self.state = State::Recover(IssueKind::MalformedJson, "malformed parameter tag");
            return;
        };
        let Some(name) = attrs.get("name") else {
            self.state = State::Recover(IssueKind::MalformedJson, "parameter without a name");
            return;
        };
        let lead = if self.params == 0 { "{" } else { ", " };
        sink.args(&format!("{lead}{}: ", json::quote(name)));
        self.params += 1;
        let is_string = attrs
            .get("string")
            .is_some_and(|s| s.eq_ignore_ascii_case("true"));
        if attrs.self_closing {
            sink.args("\"\"");
            self.state = State::Body;
        } else if is_string {
            sink.args("\"");
            self.state = State::StringValue;
        } else {
            self.value.clear();
            self.state = State::JsonValue;
        }
    }
}

/// A `string="false"` value: JSON text kept as written (big integers stay exact), or the raw
/// text as a string when it is not JSON.
fn json_value_text(value: &str) -> String {
    let trimmed = value.trim();
    if !trimmed.is_empty() && json::is_valid(trimmed) {
        trimmed.to_owned()
    } else {
        json::quote(value)
    }
}

/// Reads a tag's attribute text up to its closing `>` (a `>` inside a quoted value does not
/// close it), resumable across chunks.
#[derive(Debug, Default)]
struct TagReader {
    text: String,
    quote: Option<char>,
    after_eq: bool,
}

impl TagReader {
    /// Returns the bytes consumed and whether the tag closed (the `>` is consumed, not kept).
    fn feed(&mut self, s: &str) -> (usize, bool) {
        for (i, c) in s.char_indices() {
            if let Some(q) = self.quote {
                if c == q {
                    self.quote = None;
                }
                continue;
            }
            match c {
                '>' => {
                    self.text.push_str(&s[..i]);
                    return (i + 1, true);
                }
                '"' | '\'' if self.after_eq => {
                    self.quote = Some(c);
                    self.after_eq = false;
                }
                '=' => self.after_eq = true,
                c if c.is_whitespace() => {}
                _ => self.after_eq = false,
            }
        }
        self.text.push_str(s);
        (s.len(), false)
    }
}

struct Attrs {
    pairs: Vec<(String, String)>,
    self_closing: bool,
}

impl Attrs {
    fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// `name="x" string="true"` (quotes `"` or `'`, or a bare value), optionally ending in `/`.
/// `None` when the text does not start with whitespace (`<｜DSML｜invokeX`) or a quote is open.
fn parse_attrs(text: &str) -> Option<Attrs> {
    let trimmed = text.trim_end();
    let (mut rest, self_closing) = match trimmed.strip_suffix('/') {
        Some(r) => (r, true),
        None => (trimmed, false),
    };
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut pairs = Vec::new();
    rest = rest.trim_start();
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        if end == 0 {
            return None;
        }
        let key = rest[..end].to_owned();
        rest = rest[end..].trim_start();
        let value = match rest.strip_prefix('=') {
            Some(after) => {
                let after = after.trim_start();
                match after.chars().next() {
                    Some(q @ ('"' | '\'')) => {
                        let body = &after[1..];
                        let close = body.find(q)?;
                        rest = &body[close + 1..];
                        body[..close].to_owned()
                    }
                    _ => {
                        let end = after.find(char::is_whitespace).unwrap_or(after.len());
                        rest = &after[end..];
                        after[..end].to_owned()
                    }
                }
            }
            None => String::new(),
        };
        pairs.push((key, value));
        rest = rest.trim_start();
    }
    Some(Attrs {
        pairs,
        self_closing,
    })
}

/// `json.dumps(value, ensure_ascii=False)`: what DeepSeek's encoder writes for non-string values.
struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

fn py_json(value: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    if value.serialize(&mut ser).is_err() {
        return value.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

/// What the DeepSeek encoder writes after the assistant's content: `\n\n`, the block, invokes
/// joined by `\n`, parameters joined by `\n`.
fn render_block(block: &str, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(&format!("\n\n<{DSML}{block}>\n"));
    for (k, call) in calls.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(&format!("<{DSML}invoke name=\"{}\">\n", call.name));
        match call.arguments.as_object() {
            Some(map) => {
                for (j, (key, value)) in map.iter().enumerate() {
                    if j > 0 {
                        out.push('\n');
                    }
                    let (string, text) = match value {
                        Value::String(s) => ("true", s.clone()),
                        other => ("false", py_json(other)),
                    };
                    out.push_str(&format!(
                        "<{DSML}parameter name=\"{key}\" string=\"{string}\">{text}</{DSML}parameter>"
                    ));
                }
            }
            None => out.push_str(&py_json(&call.arguments)),
        }
        out.push_str(&format!("\n</{DSML}invoke>"));
    }
    out.push_str(&format!("\n</{DSML}{block}>"));
    out
}

fn render_v32(calls: &[RenderCall], content: Option<&str>) -> String {
    render_block("function_calls", calls, content)
}

fn render_v4(calls: &[RenderCall], content: Option<&str>) -> String {
    render_block("tool_calls", calls, content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{ParserConfig, StreamParser};
    use crate::tools::ToolSet;

    #[test]
    fn attributes() {
        let a = parse_attrs(r#" name="a b" string='true' x=1 flag"#).unwrap();
        assert_eq!(a.get("name"), Some("a b"));
        assert_eq!(a.get("string"), Some("true"));
        assert_eq!(a.get("x"), Some("1"));
        assert_eq!(a.get("flag"), Some(""));
        assert!(!a.self_closing);
        assert!(parse_attrs(r#" name="M"/"#).unwrap().self_closing);
        assert!(parse_attrs(r#"X name="M""#).is_none());
        assert!(parse_attrs(r#" name="M"#).is_none());
        assert_eq!(parse_attrs("").unwrap().pairs.len(), 0);
    }

    #[test]
    fn tag_reader_ignores_quoted_gt() {
        let mut t = TagReader::default();
        assert_eq!(t.feed(r#" name="a>"#), (9, false));
        assert_eq!(t.feed(r#"b">rest"#), (3, true));
        assert_eq!(t.text, r#" name="a>b""#);
    }

    #[test]
    fn renders_like_the_encoder() {
        let calls = [RenderCall {
            name: "f".into(),
            arguments: serde_json::json!({"q": "a b", "n": [1, {"k": true}]}),
            id: None,
        }];
        assert_eq!(
            render_v32(&calls, Some("Hi")),
            "Hi\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n\
             <｜DSML｜parameter name=\"q\" string=\"true\">a b</｜DSML｜parameter>\n\
             <｜DSML｜parameter name=\"n\" string=\"false\">[1, {\"k\": true}]</｜DSML｜parameter>\n\
             </｜DSML｜invoke>\n</｜DSML｜function_calls>"
        );
    }

    fn token_mode(format: &str, reasoning: Option<&str>) -> StreamParser {
        let config = ParserConfig::new(format, ToolSet::empty(), reasoning).unwrap();
        let special = config.special_marker_texts();
        let mut stream = StreamParser::new(config);
        stream.use_special_markers(&special);
        stream
    }

    #[test]
    fn token_mode_matches_the_dsml_token_only() {
        let mut stream = token_mode("deepseek_v4", None);
        let d = stream.markers().sentinel_for(DSML).unwrap().to_owned();
        let text = format!(
            "typed <｜DSML｜tool_calls> stays text\n\n<{d}tool_calls>\n<{d}invoke name=\"f\">\n\
             <{d}parameter name=\"x\" string=\"true\">a</｜DSML｜parameter>b</{d}parameter>\n\
             </{d}invoke>\n</{d}tool_calls>"
        );
        for c in text.chars() {
            stream.feed(&c.to_string()).unwrap();
        }
        stream.finish(None).unwrap();
        let m = stream.message();
        assert_eq!(m.content, "typed <｜DSML｜tool_calls> stays text\n\n");
        assert_eq!(m.tool_calls.len(), 1, "{m:?}");
        assert_eq!(
            m.tool_calls[0].arguments,
            r#"{"x": "a</｜DSML｜parameter>b"}"#
        );
    }

    #[test]
    fn reasoning_holds_dsml_written_while_thinking() {
        let config = ParserConfig::new("deepseek_v3_2", ToolSet::empty(), Some("native")).unwrap();
        let text =
            "<think>maybe <｜DSML｜function_calls> here</think>Sure.\n\n<｜DSML｜function_calls>\n\
                    <｜DSML｜invoke name=\"f\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let m = crate::stream::parse(&config, text);
        assert_eq!(m.reasoning, "maybe <｜DSML｜function_calls> here");
        assert_eq!(m.content, "Sure.\n\n");
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.tool_calls[0].arguments, "{}");
    }

    #[test]
    fn hostile_inputs_do_not_panic_and_stay_linear() {
        let config = ParserConfig::new("deepseek_v3_2", ToolSet::empty(), None).unwrap();
        let deep = format!(
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">{}",
            "{".repeat(100_000)
        );
        let m = crate::stream::parse(&config, &deep);
        assert_eq!(m.issues[0].kind, IssueKind::Truncated);
        let spaces = format!("<｜DSML｜invoke name=\"f\"/>{}x", " ".repeat(200_000));
        let mut stream = StreamParser::new(config.clone());
        for chunk in spaces.as_bytes().chunks(7) {
            stream.feed(std::str::from_utf8(chunk).unwrap()).unwrap();
        }
        stream.finish(None).unwrap();
        assert_eq!(stream.message().tool_calls.len(), 1);
        for junk in [
            "<｜DSML｜invoke name=\"",
            "<｜DSML｜invoke name='a'>\u{10FF00}<｜DSML｜parameter name=>",
            "<｜DSML｜tool_calls><｜DSML｜<｜DSML｜",
        ] {
            let _ = crate::stream::parse(&config, junk);
        }
    }
}
