//! Calls written as JSON objects `{"name": ..., "arguments": {...}}`, alone, in an array, or as a
//! `;`-separated sequence: the shared body of hermes, llama3_json, mistral (pre-v11), default and
//! the other JSON families.
//!
//! The name is emitted as soon as its string closes; the arguments value is streamed as raw JSON
//! text while it arrives (buffered only when it precedes the name, or when it is a JSON-encoded
//! string that must be decoded first).

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::call_text::{Step, StepReader};
use super::Format;
use crate::json::{ScanResult, StringReader, ValueScanner};
use crate::message::IssueKind;
use crate::region::{MarkerTable, Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render;
use crate::spec::{Syntax, Trigger};
use crate::text;
use crate::tools::ToolSet;

#[derive(Debug, Clone, Copy)]
pub struct CallKeys {
    pub name: &'static [&'static str],
    pub arguments: &'static [&'static str],
    /// The call object's only key is the tool name and its value the arguments (Apertus's
    /// `{"get_weather": {...}}`); `name` and `arguments` are then unused.
    pub name_is_key: bool,
}

pub const STANDARD_KEYS: CallKeys = CallKeys {
    name: &["name"],
    arguments: &["arguments", "parameters"],
    name_is_key: false,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// One object, or an array of objects.
    ObjectOrArray,
    /// An array of objects.
    Array,
    /// Objects one after another, separated by `;` and/or whitespace.
    Sequence,
}

#[derive(Debug, Clone, Copy)]
pub struct JsonRegionSpec {
    /// Whether the trigger is a marker before the payload (else it is the payload's first char).
    pub consume_trigger: bool,
    pub payload: Payload,
    /// Closing marker text after the payload, when the format has one.
    pub end: Option<&'static str>,
    pub keys: CallKeys,
}

impl JsonRegionSpec {
    /// The trigger is a marker before a call object or array of the standard keys, and `end`
    /// closes it when the format has such a marker.
    pub const fn after_marker(end: Option<&'static str>) -> Self {
        Self {
            consume_trigger: true,
            payload: Payload::ObjectOrArray,
            end,
            keys: STANDARD_KEYS,
        }
    }
}

/// The region for a JSON call (or a run of them) after the trigger marker, up to `end`: the
/// hermes-style blocks.
pub fn after_marker(ctx: &RegionCtx<'_>, end: Option<&'static str>) -> Box<dyn RegionParser> {
    Box::new(JsonRegion::new(ctx, JsonRegionSpec::after_marker(end)))
}

/// [`after_marker`], up to the tag the syntax writes after its JSON: the section's end past its
/// `]` (`]</tool_calls>`), or without a section the call template's end past its `}`
/// (`}\n</tool_call>`); none when nothing follows the JSON (`functools[...]`).
pub fn after_trigger(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    after_marker(ctx, closing_tag(ctx.syntax))
}

fn closing_tag(syntax: &Syntax) -> Option<&'static str> {
    let after = match (syntax.layout.section, syntax.template) {
        (Some((_, end)), _) => end.trim_start().strip_prefix(']').unwrap_or(end),
        // By bytes: this runs for every region, and a `char` search costs more than the tag.
        (None, Some(template)) => {
            let end = template.end;
            end.bytes()
                .rposition(|b| b == b'}')
                .map_or("", |at| &end[at + 1..])
        }
        (None, None) => "",
    };
    // ASCII trimming: a spec's tags end in ASCII whitespace if any (tested), and `str::trim`'s
    // Unicode look-up cost more than the rest of a region's set-up.
    Some(after.trim_ascii()).filter(|tag| !tag.is_empty())
}

/// The JSON family's binding: calls read after their trigger ([`after_trigger`]) and written as
/// the syntax's template and layout say ([`render::with_template`]), so a format of the family is
/// its syntax alone (Hermes's `<tool_call>` blocks, Jamba's `<tool_calls>[...]</tool_calls>`).
pub const fn format(syntax: Syntax) -> Format {
    Format {
        syntax,
        new_region: after_trigger,
        write: render::with_template,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ObjState {
    Open,
    Key,
    InKey,
    Colon,
    Value,
    InName,
    InId,
    InArgs,
    Skip,
    AfterValue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyRole {
    Name,
    Arguments,
    Id,
    Other,
}

pub enum ObjOutcome {
    NeedMore,
    Done,
    NotACall,
    Error(IssueKind, &'static str),
}

/// Incremental reader of one call object.
pub struct JsonCallObject {
    keys: CallKeys,
    /// Keys whose string value is the model's own call id (Mistral pre-v11's `"id"`). With any,
    /// the call starts only once the id is read or the object closes, so the id is the call's.
    id_keys: &'static [&'static str],
    id: Option<String>,
    /// The call name, read before the id it waits for; `started`: the sink was told.
    name: String,
    started: bool,
    state: ObjState,
    reader: StringReader,
    role: KeyRole,
    scanner: ValueScanner,
    keys_seen: usize,
    named: bool,
    saw_arguments: bool,
    /// Arguments text held until the name is known, or a non-container value held whole.
    held: String,
    buffering_value: bool,
    soft: bool,
}

impl JsonCallObject {
    pub fn new(keys: CallKeys, soft: bool) -> Self {
        Self::with_id_keys(keys, &[], soft)
    }

    pub fn with_id_keys(keys: CallKeys, id_keys: &'static [&'static str], soft: bool) -> Self {
        Self {
            keys,
            id_keys,
            id: None,
            name: String::new(),
            started: false,
            state: ObjState::Open,
            reader: StringReader::default(),
            role: KeyRole::Other,
            scanner: ValueScanner::new(),
            keys_seen: 0,
            named: false,
            saw_arguments: false,
            held: String::new(),
            buffering_value: false,
            soft,
        }
    }

    pub fn has_started_call(&self) -> bool {
        self.named
    }

    /// A key of the call object was read whole (a soft trigger's object only gets that far when
    /// its first key is the name or the arguments): cut there, it is a call cut, not content.
    pub fn has_call_key(&self) -> bool {
        self.keys_seen > 0
    }

    /// Tell the sink the call started (with the model's id when read), and pass on the
    /// arguments held until then.
    fn start(&mut self, name: &str, sink: &mut Sink) {
        self.started = true;
        sink.start_call(name, self.id.take());
        if !self.buffering_value && !self.held.is_empty() {
            let held = std::mem::take(&mut self.held);
            sink.args(&held);
        }
    }

    fn emit_args(&mut self, fragment: &str, sink: &mut Sink) {
        if self.started && !self.buffering_value {
            sink.args(fragment);
        } else {
            self.held.push_str(fragment);
        }
    }

    fn finish_buffered_value(&mut self, sink: &mut Sink) -> Result<(), (IssueKind, &'static str)> {
        if !self.buffering_value {
            return Ok(());
        }
        self.buffering_value = false;
        let value = std::mem::take(&mut self.held);
        let text = if value == "null" {
            "{}".to_owned()
        } else if value.starts_with('"') {
            match serde_json::from_str::<String>(&value) {
                Ok(inner) if crate::json::is_valid(&inner) => inner.trim().to_owned(),
                _ => {
                    return Err((
                        IssueKind::MalformedJson,
                        "arguments string does not hold JSON",
                    ))
                }
            }
        } else {
            value
        };
        self.held = text;
        if self.started {
            let held = std::mem::take(&mut self.held);
            sink.args(&held);
        }
        Ok(())
    }

    /// Consume a prefix of `input`; returns the bytes consumed and what happened.
    pub fn feed(&mut self, input: &str, sink: &mut Sink) -> (usize, ObjOutcome) {
        let bytes = input.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.state {
                ObjState::Open
                | ObjState::Key
                | ObjState::Colon
                | ObjState::Value
                | ObjState::AfterValue
                    if bytes[i].is_ascii_whitespace() =>
                {
                    i += 1;
                }
                ObjState::Open => {
                    if bytes[i] != b'{' {
                        return (
                            i,
                            self.reject_or(IssueKind::MalformedJson, "expected a JSON object"),
                        );
                    }
                    i += 1;
                    self.state = ObjState::Key;
                }
                ObjState::Key => match bytes[i] {
                    b'"' => {
                        i += 1;
                        self.reader = StringReader::default();
                        self.state = ObjState::InKey;
                    }
                    b'}' if self.keys_seen == 0 => {
                        return (
                            i,
                            self.reject_or(IssueKind::MissingName, "empty call object"),
                        );
                    }
                    _ => {
                        return (
                            i,
                            self.reject_or(IssueKind::MalformedJson, "expected a key"),
                        )
                    }
                },
                ObjState::InKey => match self.reader.feed(&input[i..]) {
                    Some(n) if self.keys.name_is_key => {
                        let reader = std::mem::take(&mut self.reader);
                        let raw = reader.contents(&input[i..], n);
                        i += n;
                        if self.keys_seen > 0 {
                            return (
                                i,
                                ObjOutcome::Error(
                                    IssueKind::MalformedJson,
                                    "a call object names more than one tool",
                                ),
                            );
                        }
                        let Some(name) = raw.decoded() else {
                            return (
                                i,
                                ObjOutcome::Error(
                                    IssueKind::MalformedJson,
                                    "bad escape in the call name",
                                ),
                            );
                        };
                        self.keys_seen += 1;
                        self.named = true;
                        self.start(&name, sink);
                        self.role = KeyRole::Arguments;
                        self.state = ObjState::Colon;
                    }
                    Some(n) => {
                        let raw = self.reader.contents(&input[i..], n);
                        i += n;
                        let decoded;
                        let key = match raw.plain() {
                            Some(plain) => plain,
                            None => {
                                decoded = raw.decoded().unwrap_or_default();
                                &*decoded
                            }
                        };
                        self.role = if self.keys.name.contains(&key) {
                            KeyRole::Name
                        } else if self.keys.arguments.contains(&key) {
                            KeyRole::Arguments
                        } else if self.id_keys.contains(&key) {
                            KeyRole::Id
                        } else {
                            KeyRole::Other
                        };
                        if self.keys_seen == 0 && self.role == KeyRole::Other && self.soft {
                            return (i, ObjOutcome::NotACall);
                        }
                        self.keys_seen += 1;
                        self.state = ObjState::Colon;
                    }
                    None => i = bytes.len(),
                },
                ObjState::Colon => {
                    if bytes[i] != b':' {
                        return (i, self.reject_or(IssueKind::MalformedJson, "expected ':'"));
                    }
                    i += 1;
                    self.state = ObjState::Value;
                }
                ObjState::Value => {
                    self.scanner = ValueScanner::new();
                    match (self.role, bytes[i]) {
                        (KeyRole::Name, b'"') if !self.named => {
                            i += 1;
                            self.reader = StringReader::default();
                            self.state = ObjState::InName;
                        }
                        (KeyRole::Name, _) => {
                            return (
                                i,
                                self.reject_or(
                                    IssueKind::MissingName,
                                    "the call name is not a string",
                                ),
                            )
                        }
                        (KeyRole::Id, b'"') if self.id.is_none() && !self.started => {
                            i += 1;
                            self.reader = StringReader::default();
                            self.state = ObjState::InId;
                        }
                        (KeyRole::Arguments, c) if !self.saw_arguments => {
                            self.saw_arguments = true;
                            self.buffering_value = !matches!(c, b'{' | b'[');
                            self.state = ObjState::InArgs;
                        }
                        _ => self.state = ObjState::Skip,
                    }
                }
                ObjState::InName => match self.reader.feed(&input[i..]) {
                    Some(n) => {
                        let reader = std::mem::take(&mut self.reader);
                        let raw = reader.contents(&input[i..], n);
                        i += n;
                        let Some(name) = raw.decoded() else {
                            return (
                                i,
                                ObjOutcome::Error(
                                    IssueKind::MalformedJson,
                                    "bad escape in the call name",
                                ),
                            );
                        };
                        self.named = true;
                        if self.id_keys.is_empty() || self.id.is_some() {
                            self.start(&name, sink);
                        } else {
                            self.name = name.into_owned();
                        }
                        self.state = ObjState::AfterValue;
                    }
                    None => i = bytes.len(),
                },
                ObjState::InId => match self.reader.feed(&input[i..]) {
                    Some(n) => {
                        let raw = self.reader.contents(&input[i..], n);
                        i += n;
                        self.id = raw.decoded().map(Cow::into_owned);
                        if self.named {
                            let name = std::mem::take(&mut self.name);
                            self.start(&name, sink);
                        }
                        self.state = ObjState::AfterValue;
                    }
                    None => i = bytes.len(),
                },
                ObjState::InArgs | ObjState::Skip => {
                    let streaming = self.state == ObjState::InArgs;
                    match self.scanner.scan(&bytes[i..]) {
                        ScanResult::Complete(n) => {
                            if streaming {
                                self.emit_args(&input[i..i + n], sink);
                                if let Err((kind, why)) = self.finish_buffered_value(sink) {
                                    return (i + n, ObjOutcome::Error(kind, why));
                                }
                            }
                            i += n;
                            self.state = ObjState::AfterValue;
                        }
                        ScanResult::Incomplete => {
                            if streaming {
                                self.emit_args(&input[i..], sink);
                            }
                            i = bytes.len();
                        }
                        ScanResult::Invalid => {
                            return (
                                i,
                                ObjOutcome::Error(IssueKind::MalformedJson, "invalid JSON value"),
                            )
                        }
                    }
                }
                ObjState::AfterValue => match bytes[i] {
                    b',' => {
                        i += 1;
                        self.state = ObjState::Key;
                    }
                    b'}' => {
                        i += 1;
                        return (i, self.complete(sink));
                    }
                    _ => {
                        return (
                            i,
                            ObjOutcome::Error(IssueKind::MalformedJson, "expected ',' or '}'"),
                        )
                    }
                },
            }
        }
        (i, ObjOutcome::NeedMore)
    }

    /// At end of input, accept an object whose name and arguments are complete and only the
    /// closing brace is missing: every value in it is provably whole.
    pub fn close_at_eof(&mut self, sink: &mut Sink) -> bool {
        self.state == ObjState::AfterValue
            && self.named
            && matches!(self.complete(sink), ObjOutcome::Done)
    }

    fn complete(&mut self, sink: &mut Sink) -> ObjOutcome {
        if !self.named {
            return self.reject_or(IssueKind::MissingName, "the call has no name");
        }
        if !self.started {
            let name = std::mem::take(&mut self.name);
            self.start(&name, sink);
        }
        if !self.saw_arguments {
            sink.args("{}");
        }
        ObjOutcome::Done
    }

    fn reject_or(&self, kind: IssueKind, why: &'static str) -> ObjOutcome {
        if self.soft && !self.named && self.keys_seen <= 1 {
            ObjOutcome::NotACall
        } else {
            ObjOutcome::Error(kind, why)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RegionState {
    Trigger,
    BeforePayload,
    BeforeElement { in_array: bool },
    InObject { in_array: bool },
    AfterElement { in_array: bool },
    AfterPayload,
    Recover(IssueKind, &'static str),
}

/// The bytes a region's call text is given room for from the start.
const RAW_CAPACITY: usize = 128;

/// A restarted region keeps its text buffers up to this size.
const KEPT_CAPACITY: usize = 4096;

/// A call region whose calls are JSON objects.
pub struct JsonRegion {
    spec: JsonRegionSpec,
    id_keys: &'static [&'static str],
    trigger_lit: Cow<'static, str>,
    end_lit: Option<Cow<'static, str>>,
    soft: bool,
    state: RegionState,
    object: JsonCallObject,
    /// Text of the call being read (for issues).
    raw: String,
    /// Everything consumed, for a soft trigger that turns out not to be a call.
    consumed_all: String,
    calls_done: usize,
    /// Bytes consumed before the current feed, and the whitespace held back after a call.
    offset: usize,
    held_ws: text::WsRun,
}

impl JsonRegion {
    pub fn new(ctx: &RegionCtx<'_>, spec: JsonRegionSpec) -> Self {
        Self {
            spec,
            id_keys: &[],
            trigger_lit: ctx.markers.lit_cow(ctx.syntax.triggers[ctx.trigger].text),
            end_lit: spec.end.map(|e| ctx.markers.lit_cow(e)),
            soft: ctx.soft(),
            state: RegionState::Trigger,
            object: JsonCallObject::new(spec.keys, ctx.soft()),
            // Room for a typical call's text at once, rather than growing it in steps.
            raw: String::with_capacity(RAW_CAPACITY),
            consumed_all: String::new(),
            calls_done: 0,
            offset: 0,
            held_ws: text::WsRun::default(),
        }
    }

    /// Read the string value of these keys as the model's own call id (see
    /// [`JsonCallObject::with_id_keys`]).
    pub fn with_id_keys(mut self, id_keys: &'static [&'static str]) -> Self {
        self.id_keys = id_keys;
        self.object = JsonCallObject::with_id_keys(self.spec.keys, id_keys, self.soft);
        self
    }

    /// Text a wrapping parser consumed between the trigger and the payload (a header such as
    /// `<|plugin|>` or a code-fence tag): it joins the first call's raw text for issues, and the
    /// rejected text when a soft trigger turns out not to open a call.
    pub fn seed_raw(&mut self, text: &str) {
        self.raw.push_str(text);
        if self.soft_reject_allowed() {
            self.consumed_all.push_str(text);
        }
    }

    fn soft_reject_allowed(&self) -> bool {
        self.soft && self.calls_done == 0 && !self.object.has_started_call()
    }

    fn take(&mut self, input: &str, from: usize, to: usize) {
        self.raw.push_str(&input[from..to]);
        if self.soft_reject_allowed() {
            self.consumed_all.push_str(&input[from..to]);
        }
    }
}

impl StepReader for JsonRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let rest = &input[i..];
        match self.state {
            RegionState::Trigger => {
                let n = if self.spec.consume_trigger {
                    self.trigger_lit.len().min(rest.len())
                } else {
                    0
                };
                self.take(input, i, i + n);
                i += n;
                self.state = RegionState::BeforePayload;
            }
            RegionState::BeforePayload | RegionState::BeforeElement { .. } => {
                let ws = text::skip_ws(rest);
                self.take(input, i, i + ws);
                i += ws;
                let Some(&c) = input.as_bytes().get(i) else {
                    if eof {
                        return ControlFlow::Break(self.end_at_eof(i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                };
                let in_array = matches!(self.state, RegionState::BeforeElement { in_array: true });
                match c {
                    b'{' if self.spec.payload != Payload::Array || in_array => {
                        self.object = JsonCallObject::with_id_keys(
                            self.spec.keys,
                            self.id_keys,
                            self.soft && self.calls_done == 0,
                        );
                        self.state = RegionState::InObject { in_array };
                    }
                    b'[' if self.state == RegionState::BeforePayload
                        && self.spec.payload != Payload::Sequence =>
                    {
                        self.take(input, i, i + 1);
                        i += 1;
                        self.state = RegionState::BeforeElement { in_array: true };
                    }
                    b']' if in_array && self.calls_done == 0 && !self.soft => {
                        self.take(input, i, i + 1);
                        i += 1;
                        self.state = RegionState::AfterPayload;
                    }
                    _ if self.soft_reject_allowed() => {
                        let text = std::mem::take(&mut self.consumed_all);
                        return ControlFlow::Break(Progress {
                            consumed: i,
                            status: Status::Reject(text),
                        });
                    }
                    _ => {
                        self.state = RegionState::Recover(
                            IssueKind::MalformedJson,
                            "expected a JSON call object",
                        )
                    }
                }
            }
            RegionState::InObject { in_array } => {
                let (n, outcome) = self.object.feed(rest, sink);
                match outcome {
                    ObjOutcome::NotACall if self.soft_reject_allowed() => {
                        self.take(input, i, i + n);
                        let text = std::mem::take(&mut self.consumed_all);
                        return ControlFlow::Break(Progress {
                            consumed: i + n,
                            status: Status::Reject(text),
                        });
                    }
                    ObjOutcome::NotACall => {
                        self.take(input, i, i + n);
                        i += n;
                        self.state =
                            RegionState::Recover(IssueKind::MissingName, "the call has no name");
                    }
                    ObjOutcome::NeedMore => {
                        self.take(input, i, i + n);
                        i += n;
                        if eof {
                            return ControlFlow::Break(self.end_at_eof(i, sink));
                        }
                        return ControlFlow::Break(Progress::more(i));
                    }
                    ObjOutcome::Done => {
                        self.take(input, i, i + n);
                        i += n;
                        sink.end_call(&self.raw);
                        self.raw.clear();
                        self.calls_done += 1;
                        self.state = RegionState::AfterElement { in_array };
                    }
                    ObjOutcome::Error(kind, why) => {
                        self.take(input, i, i + n);
                        i += n;
                        self.state = RegionState::Recover(kind, why);
                    }
                }
            }
            RegionState::AfterElement { in_array } => {
                let ws = self.held_ws.skip(self.offset + i, rest);
                let Some(&c) = rest.as_bytes().get(ws) else {
                    if eof {
                        self.take(input, i, i + ws);
                        return ControlFlow::Break(Progress::done(i + ws));
                    }
                    return ControlFlow::Break(Progress::more(i));
                };
                match (in_array, c, self.spec.payload) {
                    (true, b',', _) => {
                        self.take(input, i, i + ws + 1);
                        i += ws + 1;
                        self.state = RegionState::BeforeElement { in_array: true };
                    }
                    (true, b']', _) => {
                        self.take(input, i, i + ws + 1);
                        i += ws + 1;
                        self.state = RegionState::AfterPayload;
                    }
                    (false, b';', Payload::Sequence) => {
                        self.take(input, i, i + ws + 1);
                        i += ws + 1;
                        self.state = RegionState::BeforeElement { in_array: false };
                    }
                    (false, b'{', Payload::Sequence) => {
                        self.take(input, i, i + ws);
                        i += ws;
                        self.state = RegionState::BeforeElement { in_array: false };
                    }
                    (true, _, _) => {
                        self.state =
                            RegionState::Recover(IssueKind::MalformedJson, "expected ',' or ']'");
                    }
                    _ => self.state = RegionState::AfterPayload,
                }
            }
            RegionState::AfterPayload => {
                let Some(end) = self.end_lit.as_deref() else {
                    return ControlFlow::Break(Progress::done(i));
                };
                let ws = self.held_ws.skip(self.offset + i, rest);
                let after = &rest[ws..];
                if after.starts_with(end) {
                    return ControlFlow::Break(Progress::done(i + ws + end.len()));
                }
                if !eof && (after.is_empty() || text::is_proper_prefix(after, end)) {
                    return ControlFlow::Break(Progress::more(i));
                }
                return ControlFlow::Break(Progress::done(i));
            }
            RegionState::Recover(kind, why) => {
                // The broken call runs to the region's end marker (consumed), or to the next
                // call's opening marker (left for the next region), whichever comes first.
                let end = self
                    .end_lit
                    .as_deref()
                    .and_then(|end| rest.find(end).map(|p| (p, p + end.len())));
                let next = (self.spec.consume_trigger && !self.trigger_lit.is_empty())
                    .then(|| rest.find(self.trigger_lit.as_ref()).map(|p| (p, p)))
                    .flatten();
                let found = match (end, next) {
                    (Some(e), Some(n)) => Some(if n.0 < e.0 { n.1 } else { e.1 }),
                    (e, n) => e.or(n).map(|(_, upto)| upto),
                };
                match found {
                    Some(n) => {
                        self.take(input, i, i + n);
                        let raw = std::mem::take(&mut self.raw);
                        sink.fail_call(kind, why, &raw);
                        return ControlFlow::Break(Progress::done(i + n));
                    }
                    None if eof => {
                        self.take(input, i, input.len());
                        let raw = std::mem::take(&mut self.raw);
                        sink.fail_call(kind, why, &raw);
                        return ControlFlow::Break(Progress::done(input.len()));
                    }
                    None => {
                        let mut stops: Vec<&str> =
                            self.end_lit.iter().map(|e| e.as_ref()).collect();
                        if self.spec.consume_trigger {
                            stops.push(&self.trigger_lit);
                        }
                        let keep = text::partial_suffix_len(rest, &stops);
                        let n = rest.len() - keep;
                        self.take(input, i, i + n);
                        return ControlFlow::Break(Progress::more(i + n));
                    }
                }
            }
        }
        ControlFlow::Continue(i)
    }

    fn feed_offset(&mut self) -> Option<&mut usize> {
        Some(&mut self.offset)
    }

    /// Back to what [`JsonRegion::new`] (and [`JsonRegion::with_id_keys`]) left: every field
    /// named, so that a new one must be placed here too. The call text's buffer is kept unless
    /// a long call grew it.
    fn restart(&mut self) -> bool {
        let id_keys = self.id_keys;
        let Self {
            spec,
            id_keys: _,
            trigger_lit: _,
            end_lit: _,
            soft,
            state,
            object,
            raw,
            consumed_all,
            calls_done,
            offset,
            held_ws,
        } = self;
        *state = RegionState::Trigger;
        *object = JsonCallObject::with_id_keys(spec.keys, id_keys, *soft);
        for text in [raw, consumed_all] {
            text.clear();
            if text.capacity() > KEPT_CAPACITY {
                *text = String::new();
            }
        }
        *calls_done = 0;
        *offset = 0;
        *held_ws = text::WsRun::default();
        true
    }
}

impl JsonRegion {
    fn end_at_eof(&mut self, i: usize, sink: &mut Sink) -> Progress {
        let cut_in_call =
            matches!(self.state, RegionState::InObject { .. }) && self.object.has_call_key();
        if self.soft_reject_allowed() && !cut_in_call {
            let text = std::mem::take(&mut self.consumed_all);
            return Progress {
                consumed: i,
                status: Status::Reject(text),
            };
        }
        let raw = std::mem::take(&mut self.raw);
        if matches!(self.state, RegionState::InObject { .. }) && self.object.close_at_eof(sink) {
            sink.end_call(&raw);
        } else {
            sink.fail_call(IssueKind::Truncated, "output ended inside a call", &raw);
        }
        Progress::done(i)
    }
}

/// The syntax the reader of unwrapped calls runs under: a bare object or array at the output
/// start, soft (JSON that is not a call object is content).
static UNWRAPPED: Syntax = Syntax {
    name: "unwrapped_json",
    description: "JSON call objects whose special-token opener was stripped",
    triggers: &[Trigger::at_start("["), Trigger::at_start("{")],
    ..Syntax::EMPTY
};

/// The special-token marker a JSON format opens its calls with, when an engine that strips
/// special tokens would leave its calls as bare JSON that the format's own triggers miss: the
/// format writes `{"name": ..., "arguments": ...}` call objects (its call template), opens calls
/// with a special token (its first trigger), and has no trigger of its own at the output start.
pub fn stripped_opener(syntax: &Syntax) -> Option<&'static str> {
    let standard_object = syntax
        .template
        .is_some_and(|t| t.begin.contains("{\"name\": \"{name}\", \"arguments\": "));
    if !standard_object || syntax.triggers.iter().any(|t| t.at_output_start) {
        return None;
    }
    let first = syntax.triggers.first()?.text;
    syntax
        .markers()
        .any(|m| m.text == first && m.special_token)
        .then_some(first)
}

/// Calls written without `opener` (see [`stripped_opener`]): `{"name": ..., "arguments": ...}`
/// objects at the output start, in an array or one after another. Each call is returned and reported as
/// `missing_markers`.
pub fn unwrapped_region(
    tools: &Arc<ToolSet>,
    markers: &MarkerTable,
    opener: &'static str,
    first: char,
) -> Box<dyn RegionParser> {
    let ctx = RegionCtx {
        syntax: &UNWRAPPED,
        tools,
        markers,
        trigger: usize::from(first == '{'),
    };
    let spec = JsonRegionSpec {
        consume_trigger: false,
        payload: if first == '[' {
            Payload::Array
        } else {
            Payload::Sequence
        },
        end: None,
        keys: STANDARD_KEYS,
    };
    Box::new(Unwrapped {
        opener,
        inner: JsonRegion::new(&ctx, spec),
    })
}

struct Unwrapped {
    opener: &'static str,
    inner: JsonRegion,
}

impl RegionParser for Unwrapped {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        sink.set_missing_marker(Some(self.opener));
        let progress = self.inner.feed(input, eof, sink);
        sink.set_missing_marker(None);
        progress
    }
}

#[cfg(test)]
mod tests {
    use super::closing_tag;
    use crate::formats::REGISTRY;

    #[test]
    fn closing_tags_trim_as_unicode_trimming_would() {
        for format in REGISTRY {
            let syntax = &format.syntax;
            let unicode = match (syntax.layout.section, syntax.template) {
                (Some((_, end)), _) => end.trim_start().strip_prefix(']').unwrap_or(end),
                (None, Some(template)) => template.end.rsplit_once('}').map_or("", |(_, a)| a),
                (None, None) => "",
            }
            .trim();
            let expected = Some(unicode).filter(|tag| !tag.is_empty());
            assert_eq!(closing_tag(syntax), expected, "{}", syntax.name);
        }
    }
}
