//! Calls written as invoke tags with one tag per parameter, inside a block:
//!
//! ```text
//! BLOCK_OPEN
//! <invoke name="NAME">
//! <parameter name="K" ...>VALUE</parameter>
//! </invoke>
//! BLOCK_CLOSE
//! ```
//!
//! The shared body of DSML (DeepSeek V3.2/V4, tags prefixed with `｜DSML｜`) and MiniMax M2.
//! Several invokes in one block are parallel calls. A value is typed either by a `string="true"`
//! attribute (DSML) or by the tool's JSON schema (MiniMax); a value that is always a string is
//! streamed as escaped JSON while it arrives, any other value is held until its closing tag. Only
//! the parameter's own closing tag ends a value, so a value may hold any other tag text (the block's
//! closing tag included). Also accepted: a self-closing `<invoke name="N"/>` (no parameters), an
//! invoke body that is one JSON object, and the block's closing tag in place of a missing
//! `</invoke>`.
//!
//! Every byte is looked at a bounded number of times: tags are read incrementally, and only a
//! possible partial tag at the end of a chunk is held back.

use std::io;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use std::ops::ControlFlow;

use super::call_text::{CallText, Feed, Step, StepReader};
use super::xml_params::stream_string;
use crate::json::{self, ScanResult, ValueScanner};
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, Sink};
use crate::spec::{ParamTags, Role, Typing};
use crate::text;
use crate::xml_value::{self, TypeSet};

/// The search texts of one format's tags (from `RegionCtx::lit`, so special tokens match by id in
/// token mode).
pub struct InvokeRegionSpec {
    /// Whether the trigger opens a block (else it is a bare invoke opener, and the region ends at
    /// the first thing after an invoke that is not another invoke).
    pub wrapped: bool,
    pub block_closes: Vec<String>,
    pub invoke_open: String,
    pub invoke_close: String,
    pub param_open: String,
    pub param_close: String,
    /// Per-call wrapper tags between invokes, skipped like whitespace (Step3's
    /// `<｜tool_call_begin｜>function<｜tool_sep｜>` ... `<｜tool_call_end｜>`); empty for most formats.
    /// One met inside an invoke ends that invoke, as a missing closing tag.
    pub separators: Vec<String>,
    pub typing: Typing,
    /// Values may hold XML CDATA sections (`<![CDATA[...]]>`, MiniCPM5): their text is the
    /// value's, read up to `]]>` whatever tags it holds.
    pub cdata: bool,
    /// What ends an invoke or parameter tag: `>`, or Kimi K3's `<|sep|>`.
    pub tag_end: String,
    /// The attribute that holds the call's name (`name`, Kimi K3's `tool`) and the one that holds
    /// a parameter's name (`name`, Kimi K3's `key`).
    pub name_attr: &'static str,
    pub key_attr: &'static str,
    /// Attribute values escape `&` and `"` as `&amp;` and `&quot;` (Kimi K3); otherwise entities
    /// are kept as written.
    pub attr_entities: bool,
    /// The format's name in issue details.
    pub what: &'static str,
}

impl InvokeRegionSpec {
    /// The tags of the syntax: its `call_start` / `call_end` markers (`<invoke`, `</invoke>`), its
    /// [`ParamTags`] (the tag up to its attributes, the closing tag, the typing), inside a block
    /// that any `section_end` marker ends, unless the trigger opened a bare invoke; no separators.
    /// The attribute names and the tag's end are read from the call template (`name="{name}"`)
    /// and the parameter tags (`key="{key}"`, what follows the last attribute).
    pub fn of(ctx: &RegionCtx<'_>, what: &'static str) -> Self {
        let syntax = ctx.syntax;
        let params = syntax.arguments.params().copied().unwrap_or(DEFAULT_PARAMS);
        let begin = syntax.template.map_or("", |t| t.begin);
        let tag_end = params.open.rsplit_once('"').map_or(">", |(_, end)| end);
        let invoke_open = ctx.lit(syntax.marker_text(Role::CallStart));
        Self {
            wrapped: ctx.trigger_lit() != invoke_open,
            block_closes: syntax
                .markers()
                .filter(|m| m.role == Role::SectionEnd)
                .map(|m| ctx.lit(m.text))
                .collect(),
            invoke_open,
            invoke_close: ctx.lit(syntax.marker_text(Role::CallEnd)),
            param_open: ctx.lit(params.tag_head()),
            param_close: ctx.lit(params.close),
            separators: Vec::new(),
            typing: params.typing,
            cdata: false,
            tag_end: ctx.lit(tag_end),
            name_attr: attribute_of(begin, "{name}").unwrap_or("name"),
            key_attr: attribute_of(params.open, "{key}").unwrap_or("name"),
            attr_entities: false,
            what,
        }
    }
}

/// The steps both invoke readers take alike (this module's, and MiniMax M3's whose parameters are
/// tags named after them): open a call from its invoke tag, close it, and stop between
/// parameters where the output may end.
pub trait InvokeCall: CallText {
    /// The call's name among the invoke tag's attributes.
    fn call_name<'a>(&self, attrs: &'a Attrs) -> Option<&'a str>;
    /// Keeps the call's name, by which its values are typed.
    fn set_call_name(&mut self, name: &str);
    /// The parameters read so far in the call.
    fn params(&self) -> usize;
    /// What ends a broken invoke: its closing tag first (it belongs to the invoke), then what
    /// is read next (the block's closing tags, the next invoke).
    fn recover_stops(&self) -> Arc<[String]>;
    /// The call's body was one JSON object, its arguments already written.
    fn json_body(&self) -> bool {
        false
    }
    /// The output ended inside the call: it is reported cut, with its text from `input[i..]` on.
    fn truncated(&mut self, input: &str, i: usize, sink: &mut Sink) -> Progress;

    fn finish_invoke(&mut self, sink: &mut Sink) {
        if !self.json_body() {
            sink.args(if self.params() == 0 { "{}" } else { "}" });
        }
        self.end(sink);
    }

    /// Reads an invoke tag's attributes: `Ok(true)` when the body follows, `Ok(false)` when the
    /// call is over (a self-closing tag, or a nameless one reported), `Err` with the issue to
    /// skip the invoke with.
    fn open_invoke(
        &mut self,
        attrs: Option<Attrs>,
        sink: &mut Sink,
    ) -> Result<bool, (IssueKind, &'static str)> {
        let attrs = attrs.ok_or((IssueKind::MalformedJson, "malformed invoke tag"))?;
        match self.call_name(&attrs).filter(|n| !n.is_empty()) {
            None if attrs.self_closing => {
                self.fail(IssueKind::MissingName, "invoke without a name", sink);
                Ok(false)
            }
            None => Err((IssueKind::MissingName, "invoke without a name")),
            Some(name) => {
                self.set_call_name(name);
                sink.start_call(name, None);
                if attrs.self_closing {
                    self.finish_invoke(sink);
                }
                Ok(!attrs.self_closing)
            }
        }
    }

    /// A broken invoke: skipped up to its end (see `recover_stops`) and reported with `issue`.
    fn skip_invoke(
        &mut self,
        feed: Feed<'_>,
        at: &mut usize,
        issue: (IssueKind, &'static str),
        sink: &mut Sink,
    ) -> Step<usize> {
        let stops = self.recover_stops();
        self.skip_broken(feed, at, &stops, 1, issue, sink)
    }

    /// Between parameters, the rest of the input may be a tag still arriving: wait for it; at
    /// the end of the output a call with no parameter is cut, and any other is complete, only its
    /// closing markup (or the rest of it) missing.
    fn body_cut(&mut self, feed: Feed<'_>, i: usize, sink: &mut Sink) -> Progress {
        if !feed.eof {
            return Progress::more(i);
        }
        if self.params() == 0 {
            return self.truncated(feed.input, i, sink);
        }
        self.take(feed.input, i, feed.input.len());
        self.finish_invoke(sink);
        Progress::done(feed.input.len())
    }
}

/// Reads the value's text in `rest` up to the first of `stops` (or all that cannot be the start
/// of one): streamed as an escaped JSON fragment, or held in `value`. At the end of the output
/// without a stop, nothing is read (the call is cut).
fn value_text(
    raw: &mut String,
    value: &mut String,
    rest: &str,
    stops: &[&str],
    streaming: bool,
    sink: &mut Sink,
) -> text::Scan {
    let scan = text::scan(rest, stops);
    let upto = match scan {
        text::Scan::Found { pos, .. } => pos,
        text::Scan::NotFound { safe } => safe,
    };
    let text = &rest[..upto];
    if streaming {
        stream_string(text, sink);
    } else {
        value.push_str(text);
    }
    raw.push_str(text);
    scan
}

const CDATA_OPEN: &str = "<![CDATA[";
const CDATA_CLOSE: &str = "]]>";

/// The attribute whose value is `hole` in `tag` (`name` in `<invoke name="{name}">`).
fn attribute_of(tag: &'static str, hole: &str) -> Option<&'static str> {
    let (before, _) = tag.split_once(&format!("=\"{hole}\""))?;
    let start = before.rfind(|c: char| c.is_whitespace())? + 1;
    Some(&before[start..])
}

/// For a syntax whose arguments are not XML parameters (none of the invoke formats).
const DEFAULT_PARAMS: ParamTags = ParamTags::new("<parameter name=\"{key}\">", "</parameter>");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the trigger.
    Open,
    /// Between invokes: the next invoke, the block's end, or something else.
    Between,
    /// Text inside the block that belongs to no call.
    Stray,
    /// Attributes of the invoke tag.
    InvokeTag,
    /// Inside an invoke, between parameters.
    Body,
    /// Attributes of a parameter tag.
    ParamTag,
    /// A string value, streamed.
    StringValue,
    /// Any other value, held until its closing tag.
    HeldValue,
    /// A CDATA section inside a value: streamed (a string value) or held.
    Cdata { streaming: bool },
    /// The invoke body is one JSON object.
    JsonBody,
    /// A broken invoke: skip to its end (or the block's end) and report it.
    Recover(IssueKind, &'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    /// `string="false"` or no `string` attribute.
    Json,
    Typed(TypeSet),
}

pub struct InvokeRegion {
    spec: InvokeRegionSpec,
    trigger: String,
    /// The invoke opener and the block's closing tags.
    between_lits: Arc<[String]>,
    /// The parameter opener, the invoke's closing tag and the block's closing tags.
    body_lits: Vec<String>,
    /// The invoke's closing tag, the block's closing tags and the next invoke's opener.
    recover_lits: Arc<[String]>,
    state: State,
    /// The model's text of the invoke (or stray text) being read, for issues.
    raw: String,
    /// Whitespace between invokes, given back as content when a bare invoke run ends.
    ws: String,
    saw_anything: bool,
    tag: TagReader,
    name: String,
    params: usize,
    json_body: bool,
    held: Held,
    value: String,
    scanner: ValueScanner,
}

impl InvokeRegion {
    pub fn new(ctx: &RegionCtx<'_>, spec: InvokeRegionSpec) -> Self {
        let mut between_lits = vec![spec.invoke_open.clone()];
        between_lits.extend(spec.block_closes.iter().cloned());
        between_lits.extend(spec.separators.iter().cloned());
        let mut body_lits = vec![spec.param_open.clone(), spec.invoke_close.clone()];
        body_lits.extend(spec.block_closes.iter().cloned());
        body_lits.extend(spec.separators.iter().cloned());
        let mut recover_lits = vec![spec.invoke_close.clone()];
        recover_lits.extend(spec.block_closes.iter().cloned());
        recover_lits.extend(spec.separators.iter().cloned());
        // The next invoke ends a broken one whose closing tags never came.
        recover_lits.push(spec.invoke_open.clone());
        Self {
            trigger: ctx.trigger_lit(),
            spec,
            between_lits: between_lits.into(),
            body_lits,
            recover_lits: recover_lits.into(),
            state: State::Open,
            raw: String::new(),
            ws: String::new(),
            saw_anything: false,
            tag: TagReader::default(),
            name: String::new(),
            params: 0,
            json_body: false,
            held: Held::Json,
            value: String::new(),
            scanner: ValueScanner::new(),
        }
    }

    fn block_close_at(&self, rest: &str) -> Option<usize> {
        self.spec
            .block_closes
            .iter()
            .find(|c| rest.starts_with(c.as_str()))
            .map(String::len)
    }

    fn separator_at(&self, rest: &str) -> Option<usize> {
        self.spec
            .separators
            .iter()
            .find(|c| rest.starts_with(c.as_str()))
            .map(String::len)
    }

    fn end_at_eof_between(&mut self, i: usize, sink: &mut Sink) -> Progress {
        if !self.spec.wrapped {
            let ws = std::mem::take(&mut self.ws);
            sink.content(&ws);
        } else if !self.saw_anything {
            let ws = std::mem::take(&mut self.ws);
            self.raw.push_str(&ws);
            let why = format!(
                "output ended inside an empty {} tool-call block",
                self.spec.what
            );
            self.fail(IssueKind::Truncated, &why, sink);
        }
        Progress::done(i)
    }

    fn stray_why(&self) -> String {
        format!(
            "text inside a {} tool-call block that belongs to no call",
            self.spec.what
        )
    }
}

impl CallText for InvokeRegion {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl InvokeCall for InvokeRegion {
    fn call_name<'a>(&self, attrs: &'a Attrs) -> Option<&'a str> {
        attrs.get(self.spec.name_attr)
    }
    fn set_call_name(&mut self, name: &str) {
        self.name = name.to_owned();
    }
    fn params(&self) -> usize {
        self.params
    }
    fn recover_stops(&self) -> Arc<[String]> {
        Arc::clone(&self.recover_lits)
    }
    fn json_body(&self) -> bool {
        self.json_body
    }
    fn truncated(&mut self, input: &str, i: usize, sink: &mut Sink) -> Progress {
        self.raw.push_str(&input[i..]);
        let why = format!("output ended inside a {} call", self.spec.what);
        self.fail(IssueKind::Truncated, &why, sink);
        Progress::done(input.len())
    }
}

impl StepReader for InvokeRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let feed = Feed { input, eof };
        let rest = &input[i..];
        match self.state {
            State::Open => {
                if self.spec.wrapped {
                    let n = if rest.starts_with(self.trigger.as_str()) {
                        self.trigger.len()
                    } else {
                        0
                    };
                    self.advance(input, &mut i, n);
                }
                self.state = State::Between;
            }
            State::Between => {
                let n = text::skip_ws(rest);
                self.ws.push_str(&rest[..n]);
                i += n;
                let rest = &input[i..];
                if rest.starts_with(self.spec.invoke_open.as_str()) {
                    self.ws.clear();
                    self.raw.clear();
                    self.raw.push_str(&self.spec.invoke_open);
                    i += self.spec.invoke_open.len();
                    self.saw_anything = true;
                    self.tag = TagReader::default();
                    self.params = 0;
                    self.json_body = false;
                    self.state = State::InvokeTag;
                } else if let Some(n) = self.block_close_at(rest) {
                    self.ws.clear();
                    return ControlFlow::Break(Progress::done(i + n));
                } else if let Some(n) = self.separator_at(rest) {
                    // Formatting, like whitespace (kept for an issue's raw text).
                    self.ws.push_str(&rest[..n]);
                    i += n;
                } else if rest.is_empty() {
                    if eof {
                        return ControlFlow::Break(self.end_at_eof_between(i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                } else if text::is_partial_of_any(rest, &self.between_lits) {
                    if !eof {
                        return ControlFlow::Break(Progress::more(i));
                    }
                    if !self.spec.wrapped {
                        return ControlFlow::Break(self.end_at_eof_between(i, sink));
                    }
                    // The output ended inside a tag: the block's closing tag (the calls are
                    // whole) or the next invoke's opening tag (a truncated call).
                    if !text::is_proper_prefix(rest, &self.spec.invoke_open) {
                        if self.saw_anything {
                            return ControlFlow::Break(Progress::done(input.len()));
                        }
                    } else if self.saw_anything {
                        self.raw.clear();
                    }
                    if !self.saw_anything {
                        let ws = std::mem::take(&mut self.ws);
                        self.raw.push_str(&ws);
                    }
                    return ControlFlow::Break(self.truncated(input, i, sink));
                } else if self.spec.wrapped {
                    self.ws.clear();
                    self.raw.clear();
                    self.saw_anything = true;
                    self.state = State::Stray;
                } else {
                    let ws = std::mem::take(&mut self.ws);
                    sink.content(&ws);
                    return ControlFlow::Break(Progress::done(i));
                }
            }
            State::Stray => {
                let stops = Arc::clone(&self.between_lits);
                let why = self.stray_why();
                if let ControlFlow::Break(p) = self.stray_in_block(feed, &mut i, &stops, &why, sink)
                {
                    return ControlFlow::Break(p);
                }
                self.state = State::Between;
            }
            State::InvokeTag | State::ParamTag => {
                let (n, closed) = self.tag.feed_until(rest, &self.spec.tag_end);
                self.advance(input, &mut i, n);
                if !closed {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                let attrs = parse_attrs(&self.tag.text).map(|a| self.decoded(a));
                self.tag = TagReader::default();
                if self.state == State::InvokeTag {
                    self.state = match self.open_invoke(attrs, sink) {
                        Ok(true) => State::Body,
                        Ok(false) => State::Between,
                        Err((kind, why)) => State::Recover(kind, why),
                    };
                } else {
                    self.open_param(attrs, sink);
                }
            }
            State::Body => {
                let n = text::skip_ws(rest);
                self.advance(input, &mut i, n);
                let rest = &input[i..];
                if rest.starts_with(self.spec.param_open.as_str()) && !self.json_body {
                    self.raw.push_str(&self.spec.param_open);
                    i += self.spec.param_open.len();
                    self.state = State::ParamTag;
                } else if rest.starts_with(self.spec.invoke_close.as_str()) {
                    self.raw.push_str(&self.spec.invoke_close);
                    i += self.spec.invoke_close.len();
                    self.finish_invoke(sink);
                    self.state = State::Between;
                } else if self.block_close_at(rest).is_some() || self.separator_at(rest).is_some() {
                    // The invoke's closing tag is missing but the block (or the call's
                    // wrapper) ended: the call is complete.
                    self.finish_invoke(sink);
                    self.state = State::Between;
                } else if rest.starts_with('{') && self.params == 0 && !self.json_body {
                    self.scanner = ValueScanner::new();
                    self.state = State::JsonBody;
                } else if rest.is_empty() || text::is_partial_of_any(rest, &self.body_lits) {
                    return ControlFlow::Break(self.body_cut(feed, i, sink));
                } else {
                    self.state =
                        State::Recover(IssueKind::MalformedJson, "unexpected text in an invoke");
                }
            }
            State::StringValue | State::HeldValue => {
                let streaming = self.state == State::StringValue;
                let close = self.spec.param_close.as_str();
                let stops: &[&str] = if self.spec.cdata {
                    &[close, CDATA_OPEN]
                } else {
                    &[close]
                };
                let read = value_text(&mut self.raw, &mut self.value, rest, stops, streaming, sink);
                match read {
                    text::Scan::NotFound { safe } if eof => {
                        return ControlFlow::Break(self.truncated(input, i + safe, sink))
                    }
                    text::Scan::NotFound { safe } => {
                        return ControlFlow::Break(Progress::more(i + safe))
                    }
                    text::Scan::Found { pos, which: 1 } => {
                        self.raw.push_str(CDATA_OPEN);
                        i += pos + CDATA_OPEN.len();
                        self.state = State::Cdata { streaming };
                        return ControlFlow::Continue(i);
                    }
                    text::Scan::Found { pos, .. } => i += pos,
                }
                self.raw.push_str(close);
                i += close.len();
                if streaming {
                    sink.args("\"");
                } else {
                    let value = std::mem::take(&mut self.value);
                    let text = match self.held {
                        Held::Json => json_or_string(&value),
                        Held::Typed(types) => xml_value::typed_json_as(&value, types),
                    };
                    sink.args(&text);
                }
                self.state = State::Body;
            }
            State::Cdata { streaming } => {
                let stops = [CDATA_CLOSE];
                let read = value_text(
                    &mut self.raw,
                    &mut self.value,
                    rest,
                    &stops,
                    streaming,
                    sink,
                );
                match read {
                    text::Scan::NotFound { safe } if eof => {
                        return ControlFlow::Break(self.truncated(input, i + safe, sink))
                    }
                    text::Scan::NotFound { safe } => {
                        return ControlFlow::Break(Progress::more(i + safe))
                    }
                    text::Scan::Found { pos, .. } => i += pos + CDATA_CLOSE.len(),
                }
                self.raw.push_str(CDATA_CLOSE);
                self.state = if streaming {
                    State::StringValue
                } else {
                    State::HeldValue
                };
            }
            State::JsonBody => match self.scanner.scan(rest.as_bytes()) {
                ScanResult::Complete(n) => {
                    self.stream_args(&rest[..n], sink);
                    i += n;
                    self.json_body = true;
                    self.state = State::Body;
                }
                ScanResult::Incomplete => {
                    self.stream_args(rest, sink);
                    i = input.len();
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                ScanResult::Invalid => {
                    self.state =
                        State::Recover(IssueKind::MalformedJson, "invoke body is not valid JSON");
                }
            },
            State::Recover(kind, why) => {
                // The invoke's own closing tag belongs to it; a block's closing tag ends the
                // block next.
                if let ControlFlow::Break(p) = self.skip_invoke(feed, &mut i, (kind, why), sink) {
                    return ControlFlow::Break(p);
                }
                self.state = State::Between;
            }
        }
        ControlFlow::Continue(i)
    }
}

impl InvokeRegion {
    fn decoded(&self, mut attrs: Attrs) -> Attrs {
        if self.spec.attr_entities {
            for (_, value) in &mut attrs.pairs {
                if value.contains('&') {
                    *value = value.replace("&quot;", "\"").replace("&amp;", "&");
                }
            }
        }
        attrs
    }

    fn open_param(&mut self, attrs: Option<Attrs>, sink: &mut Sink) {
        let Some(attrs) = attrs else {
            self.state = State::Recover(IssueKind::MalformedJson, "malformed parameter tag");
            return;
        };
        let Some(name) = attrs.get(self.spec.key_attr) else {
            self.state = State::Recover(IssueKind::MalformedJson, "parameter without a name");
            return;
        };
        let lead = if self.params == 0 { "{" } else { ", " };
        sink.args(&format!("{lead}{}: ", json::quote(name)));
        self.params += 1;
        let held = match self.spec.typing {
            Typing::StringAttribute => {
                let string = attrs
                    .get("string")
                    .is_some_and(|s| s.eq_ignore_ascii_case("true"));
                (!string).then_some(Held::Json)
            }
            Typing::TypeAttribute => {
                let string = attrs.get("type").is_none_or(|t| t == "string");
                (!string).then_some(Held::Json)
            }
            Typing::Schema => {
                let schema = sink
                    .tools()
                    .get(&self.name)
                    .and_then(|tool| tool.parameter_schema(name));
                let types = TypeSet::of(schema);
                (!types.is_string_only()).then_some(Held::Typed(types))
            }
        };
        if attrs.self_closing {
            let text = match held {
                None | Some(Held::Json) => "\"\"".to_owned(),
                Some(Held::Typed(types)) => xml_value::typed_json_as("", types),
            };
            sink.args(&text);
            self.state = State::Body;
        } else if let Some(held) = held {
            self.held = held;
            self.value.clear();
            self.state = State::HeldValue;
        } else {
            sink.args("\"");
            self.state = State::StringValue;
        }
    }
}

/// A JSON value as written (big integers stay exact), or the raw text as a string when it is not
/// JSON.
fn json_or_string(value: &str) -> String {
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
pub struct TagReader {
    pub text: String,
    quote: Option<char>,
    after_eq: bool,
}

impl TagReader {
    /// Returns the bytes consumed and whether the tag closed (the `>` is consumed, not kept).
    pub fn feed(&mut self, s: &str) -> (usize, bool) {
        self.feed_until(s, ">")
    }

    /// [`TagReader::feed`] for a tag that `end` closes; a possible start of `end` at the end of
    /// `s` is left unconsumed.
    pub fn feed_until(&mut self, s: &str, end: &str) -> (usize, bool) {
        for (i, c) in s.char_indices() {
            if let Some(q) = self.quote {
                if c == q {
                    self.quote = None;
                }
                continue;
            }
            let rest = &s[i..];
            if rest.starts_with(end) {
                self.text.push_str(&s[..i]);
                return (i + end.len(), true);
            }
            if text::is_proper_prefix(rest, end) {
                self.text.push_str(&s[..i]);
                return (i, false);
            }
            match c {
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

pub struct Attrs {
    pub pairs: Vec<(String, String)>,
    pub self_closing: bool,
}

impl Attrs {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// `name="x" string="true"` (quotes `"` or `'`, or a bare value), optionally ending in `/`.
/// `None` when the text does not start with whitespace (`<invokeX`) or a quote is open.
pub fn parse_attrs(text: &str) -> Option<Attrs> {
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

/// `json.dumps(value, ensure_ascii=False)`: how chat templates write non-string values.
struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        comma_unless_first(w, first)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        comma_unless_first(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// Python's `", "` between items and members.
fn comma_unless_first<W: ?Sized + io::Write>(w: &mut W, first: bool) -> io::Result<()> {
    if first {
        Ok(())
    } else {
        w.write_all(b", ")
    }
}

/// One `<TAG name="KEY">VALUE</TAG>` line per argument, as the invoke formats' templates write
/// them: strings raw, other values as [`python_json`].
pub fn write_params(out: &mut String, args: &serde_json::Map<String, Value>, tag: &str) {
    for (key, value) in args {
        let text = match value {
            Value::String(s) => s.clone(),
            other => python_json(other),
        };
        out.push_str(&format!("<{tag} name=\"{key}\">{text}</{tag}>\n"));
    }
}

pub fn python_json(value: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    if value.serialize(&mut ser).is_err() {
        return value.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
