//! MiniMax M3: the namespace token `]<]minimax[>[` (one special token, 200058) comes before every
//! tag, and a parameter is a tag named after it:
//!
//! ```text
//! ]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="create_order">
//! ]<]minimax[>[<user_id>42]<]minimax[>[</user_id>
//! ]<]minimax[>[<shipping>]<]minimax[>[<city>Oslo]<]minimax[>[</city>]<]minimax[>[</shipping>
//! ]<]minimax[>[<items>]<]minimax[>[<item>book]<]minimax[>[</item>]<]minimax[>[</items>
//! ]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! Nested tags are objects; `<item>` children are array elements (when the schema allows an array,
//! or gives no type); a tag repeated in one object collects its values into an array; text mixed
//! with child tags is kept under `$text`. Scalars are typed by the tool's schema
//! ([`crate::xml_value`]); a leaf the schema does not describe (inside an untyped object) keeps
//! only exact JSON spellings as numbers, booleans and null. A top-level string value is streamed
//! while it arrives; any other value is emitted when its closing tag arrives.
//!
//! The namespace token never reaches content or reasoning: it ends reasoning (a model that starts
//! a tool call without `</mm:think>`, frontend-crates#133), a bare invoke without the block is
//! still a call (the opener is sometimes dropped), and a token that starts no tool markup is
//! reported as an issue. Reasoning is `<mm:think>` ... `</mm:think>`.

use std::ops::ControlFlow;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::call_text::{CallText, Feed, Step, StepReader};
use super::xml_invoke::{parse_attrs, Attrs, InvokeCall, TagReader};
use super::xml_params::stream_string;
use super::Format;
use crate::json;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax, Tokens, Trigger,
};
use crate::text;
use crate::tools::ToolSet;
use crate::xml_value::{self, TypeSet};

const NS: &str = "]<]minimax[>[";

/// Nested parameter tags deeper than this make the call malformed (the value tree is bounded).
const MAX_DEPTH: usize = 64;

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "minimax_m3",
        aliases: &[],
        families: &["MiniMax-M3"],
        description:
            "]<]minimax[>[ before every tag: a <tool_call> block of <invoke name=...> calls \
                  whose parameters are tags named after them (nested tags are objects, <item> \
                  array elements), typed by the tool's schema",
        extra_markers: &[
            Marker::special(Role::Namespace, "]<]minimax[>["),
            Marker::plain(Role::ReasoningExit, "]<]minimax[>["),
        ],
        implied: Implied::all(Tokens::Plain)
            .with_params(Tokens::Unlisted)
            .with_reasoning(Tokens::Special),
        triggers: &[Trigger::marker("]<]minimax[>[")],
        reasoning: Some(("<mm:think>", "</mm:think>")),
        stops: &["[e~["],
        template: Some(CallTemplate::new(
            "]<]minimax[>[<invoke name=\"{name}\">\n",
            "]<]minimax[>[</invoke>",
            "\n",
        )),
        arguments: ArgSyntax::XmlParams(
            ParamTags::new("]<]minimax[>[<{key}>", "]<]minimax[>[</{key}>").nested(),
        ),
        layout: Layout::section("]<]minimax[>[<tool_call>\n", "\n]<]minimax[>[</tool_call>"),
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let ns = ctx.lit(NS);
    Box::new(M3Region {
        tools: ctx.tools.clone(),
        block_open: format!("{ns}<tool_call>"),
        block_close: format!("{ns}</tool_call>"),
        invoke_open: format!("{ns}<invoke"),
        invoke_close: format!("{ns}</invoke>"),
        tag_open: format!("{ns}<"),
        close_open: format!("{ns}</"),
        recover_stops: Arc::new([format!("{ns}</invoke>"), format!("{ns}</tool_call>")]),
        stray_stops: Arc::new([ns.clone()]),
        ns,
        wrapped: false,
        state: State::Open,
        raw: String::new(),
        ws: String::new(),
        saw_anything: false,
        tag: TagReader::default(),
        call: String::new(),
        params: 0,
        param: String::new(),
        param_close: String::new(),
        value: String::new(),
        frames: Vec::new(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At a namespace token in content: a block, a bare invoke, or a stray token.
    Open,
    /// Between invokes.
    Between,
    /// Text inside the block that belongs to no call.
    Stray,
    /// Attributes of `<invoke ...>`.
    InvokeTag,
    /// Inside an invoke, between parameters.
    Body,
    /// The name of a parameter tag.
    ParamTag,
    /// After a parameter's opening tag: a scalar, or nested tags.
    ValueStart,
    /// A string scalar, streamed.
    StringValue,
    /// Any other scalar, held until its closing tag.
    HeldValue,
    /// Text inside nested tags.
    Nested,
    /// A nested opening or closing tag.
    NestedTag,
    /// A broken invoke: skip to its end (or the block's end) and report it.
    Recover(IssueKind, &'static str),
}

enum Kind {
    /// No child tag yet: a leaf if none comes.
    Undecided,
    Object(Map<String, Value>),
    Array(Vec<Value>),
}

struct Frame {
    tag: String,
    kind: Kind,
    /// Text since the last tag.
    text: String,
    /// Non-whitespace text of an object, kept under `$text`.
    mixed: String,
}

impl Frame {
    fn new(tag: &str) -> Self {
        Self {
            tag: tag.to_owned(),
            kind: Kind::Undecided,
            text: String::new(),
            mixed: String::new(),
        }
    }
}

struct M3Region {
    tools: Arc<ToolSet>,
    ns: String,
    block_open: String,
    block_close: String,
    invoke_open: String,
    invoke_close: String,
    /// The namespace token and `<`: any tag.
    tag_open: String,
    /// The namespace token and `</`: any closing tag.
    close_open: String,
    /// The invoke's closing tag and the block's.
    recover_stops: Arc<[String]>,
    /// The namespace token.
    stray_stops: Arc<[String]>,
    wrapped: bool,
    state: State,
    raw: String,
    ws: String,
    saw_anything: bool,
    tag: TagReader,
    call: String,
    params: usize,
    param: String,
    param_close: String,
    value: String,
    /// The open tags of a nested parameter value; the first is the parameter itself.
    frames: Vec<Frame>,
}

fn infer_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(
        || serde_json::json!({"type": ["string", "integer", "number", "boolean", "null"]}),
    )
}

/// The schema when it says something about types, else `None` (types are then inferred).
fn typed(schema: Option<&Value>) -> Option<&Value> {
    schema.filter(|s| {
        ["type", "enum", "const", "anyOf", "oneOf", "allOf"]
            .iter()
            .any(|k| s.get(k).is_some())
    })
}

fn child_schema<'a>(schema: Option<&'a Value>, tag: &str) -> Option<&'a Value> {
    let schema = schema?;
    if tag == "item" {
        if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
            return Some(items);
        }
    }
    if let Some(property) = schema.get("properties").and_then(|p| p.get(tag)) {
        return Some(property);
    }
    schema.get("additionalProperties").filter(|a| a.is_object())
}

/// JSON text of a scalar typed by its schema ([`xml_value::typed_json`]); an empty value of an
/// array or object type is `[]` or `{}`. With `infer`, a value whose schema gives no type keeps
/// exact JSON spellings of numbers, booleans and null (nested leaves of an untyped object).
fn scalar_json(raw: &str, schema: Option<&Value>, infer: bool) -> String {
    if infer && typed(schema).is_none() {
        return xml_value::typed_json(raw, Some(infer_schema()));
    }
    let types = TypeSet::of(schema);
    if raw.trim().is_empty() && !types.has(TypeSet::STRING) {
        if types.has(TypeSet::ARRAY) {
            return "[]".to_owned();
        }
        if types.has(TypeSet::OBJECT) {
            return "{}".to_owned();
        }
    }
    xml_value::typed_json_as(raw, types)
}

/// A nested leaf's value.
fn leaf_value(raw: &str, schema: Option<&Value>) -> Value {
    serde_json::from_str(&scalar_json(raw, schema, true))
        .unwrap_or_else(|_| Value::String(raw.into()))
}

/// Add `key` to an object; a repeated key collects its values into an array.
fn insert(map: &mut Map<String, Value>, key: String, value: Value) {
    match map.get_mut(&key) {
        Some(Value::Array(values)) => values.push(value),
        Some(existing) => {
            let first = existing.take();
            *existing = Value::Array(vec![first, value]);
        }
        None => {
            map.insert(key, value);
        }
    }
}

impl CallText for M3Region {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl InvokeCall for M3Region {
    fn call_name<'a>(&self, attrs: &'a Attrs) -> Option<&'a str> {
        attrs.get("name").map(str::trim)
    }
    fn set_call_name(&mut self, name: &str) {
        self.call = name.to_owned();
    }
    fn params(&self) -> usize {
        self.params
    }
    fn recover_stops(&self) -> Arc<[String]> {
        Arc::clone(&self.recover_stops)
    }
    fn truncated(&mut self, input: &str, i: usize, sink: &mut Sink) -> Progress {
        self.raw.push_str(&input[i..]);
        self.fail(
            IssueKind::Truncated,
            "output ended inside a MiniMax M3 call",
            sink,
        );
        self.frames.clear();
        Progress::done(input.len())
    }
}

impl M3Region {
    /// The schema of the nested frame at `depth` (0 = the parameter).
    fn schema_at(&self, depth: usize) -> Option<&Value> {
        let mut schema = self
            .tools
            .get(&self.call)
            .and_then(|tool| tool.parameter_schema(&self.param));
        for frame in self.frames.iter().take(depth + 1).skip(1) {
            schema = child_schema(schema, &frame.tag);
        }
        schema
    }

    /// Move a frame's pending text into its value (objects keep it under `$text`, arrays as an
    /// element).
    fn flush_text(&mut self, depth: usize) {
        let item_schema = child_schema(self.schema_at(depth), "item");
        let item = {
            let frame = &self.frames[depth];
            (matches!(frame.kind, Kind::Array(_)) && !frame.text.trim().is_empty())
                .then(|| leaf_value(&frame.text, item_schema))
        };
        let frame = &mut self.frames[depth];
        let text = std::mem::take(&mut frame.text);
        match &mut frame.kind {
            Kind::Array(values) => values.extend(item),
            Kind::Object(_) if !text.trim().is_empty() => frame.mixed.push_str(&text),
            Kind::Object(_) => {}
            Kind::Undecided => frame.text = text,
        }
    }

    fn open_child(&mut self, tag: &str) -> Result<(), &'static str> {
        if tag.is_empty() || tag.contains(char::is_whitespace) {
            return Err("malformed parameter tag");
        }
        if self.frames.len() > MAX_DEPTH {
            return Err("parameter tags nested too deep");
        }
        let depth = self.frames.len() - 1;
        if matches!(self.frames[depth].kind, Kind::Undecided) {
            let schema = typed(self.schema_at(depth));
            let allows_array = schema.is_none_or(|s| TypeSet::of(Some(s)).has(TypeSet::ARRAY));
            self.frames[depth].kind = if tag == "item" && allows_array {
                Kind::Array(Vec::new())
            } else {
                Kind::Object(Map::new())
            };
        }
        self.flush_text(depth);
        self.frames.push(Frame::new(tag));
        Ok(())
    }

    /// Close the innermost frame and attach its value to its parent; returns the value when the
    /// frame was the parameter itself.
    fn close_frame(&mut self) -> Option<Value> {
        let depth = self.frames.len().checked_sub(1)?;
        self.flush_text(depth);
        let schema = self.schema_at(depth);
        let value = {
            let frame = self.frames.last()?;
            match &frame.kind {
                Kind::Undecided => leaf_value(&frame.text, schema),
                _ => Value::Null,
            }
        };
        let frame = self.frames.pop()?;
        let value = match frame.kind {
            Kind::Undecided => value,
            Kind::Array(values) => Value::Array(values),
            Kind::Object(mut map) => {
                if !frame.mixed.is_empty() {
                    let mut key = "$text".to_owned();
                    while map.contains_key(&key) {
                        key.insert(0, '$');
                    }
                    map.insert(key, Value::String(frame.mixed));
                }
                Value::Object(map)
            }
        };
        match self.frames.last_mut() {
            None => Some(value),
            Some(parent) => {
                match &mut parent.kind {
                    Kind::Array(values) => values.push(value),
                    Kind::Object(map) => insert(map, frame.tag, value),
                    Kind::Undecided => {
                        let mut map = Map::new();
                        map.insert(frame.tag, value);
                        parent.kind = Kind::Object(map);
                    }
                }
                None
            }
        }
    }

    /// A nested closing tag: closes up to the innermost open tag of that name; closing the
    /// parameter ends the value.
    fn close_child(&mut self, tag: &str, sink: &mut Sink) -> Result<bool, &'static str> {
        let Some(k) = self.frames.iter().rposition(|f| f.tag == tag) else {
            return Err("a closing tag that matches no open tag");
        };
        while self.frames.len() > k + 1 {
            self.close_frame();
        }
        if k > 0 {
            self.close_frame();
            return Ok(false);
        }
        if let Some(value) = self.close_frame() {
            sink.args(&value.to_string());
        }
        Ok(true)
    }

    fn open_param(&mut self, text: &str, sink: &mut Sink) {
        let text = text.trim();
        let (name, self_closing) = match text.strip_suffix('/') {
            Some(n) => (n.trim_end(), true),
            None => (text, false),
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            self.state = State::Recover(IssueKind::MalformedJson, "malformed parameter tag");
            return;
        }
        let lead = if self.params == 0 { "{" } else { ", " };
        sink.args(&format!("{lead}{}: ", json::quote(name)));
        self.params += 1;
        self.param = name.to_owned();
        self.param_close = format!("{}</{name}>", self.ns);
        self.value.clear();
        if self_closing {
            let json = scalar_json("", self.schema_at(0), false);
            sink.args(&json);
            self.state = State::Body;
        } else {
            self.state = State::ValueStart;
        }
    }

    /// Whether the parameter's value is always a string (it is then streamed).
    fn string_param(&self) -> bool {
        TypeSet::of(self.schema_at(0)).is_string_only()
    }
}

impl StepReader for M3Region {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let feed = Feed { input, eof };
        let rest = &input[i..];
        match self.state {
            State::Open => {
                if rest.starts_with(self.block_open.as_str()) {
                    self.raw.push_str(&self.block_open);
                    i += self.block_open.len();
                    self.wrapped = true;
                    self.state = State::Between;
                } else if rest.starts_with(self.invoke_open.as_str()) {
                    self.state = State::Between;
                } else if rest.starts_with(self.block_close.as_str()) {
                    self.raw.push_str(&self.block_close);
                    self.fail(
                        IssueKind::UnexpectedText,
                        "a closing tool_call tag with no open block",
                        sink,
                    );
                    return ControlFlow::Break(Progress::done(i + self.block_close.len()));
                } else if text::is_partial_of_any(
                    rest,
                    &[&self.block_open, &self.invoke_open, &self.block_close],
                ) {
                    if !eof {
                        return ControlFlow::Break(Progress::more(i));
                    }
                    return ControlFlow::Break(self.truncated(input, i, sink));
                } else {
                    let n = self.ns.len().min(rest.len());
                    self.raw.push_str(&rest[..n]);
                    self.fail(
                        IssueKind::UnexpectedText,
                        "a MiniMax namespace token that starts no tool markup",
                        sink,
                    );
                    return ControlFlow::Break(Progress::done(i + n));
                }
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
                    self.state = State::InvokeTag;
                } else if rest.starts_with(self.block_close.as_str()) {
                    self.ws.clear();
                    return ControlFlow::Break(Progress::done(i + self.block_close.len()));
                } else if !rest.is_empty()
                    && !text::is_partial_of_any(rest, &[&self.invoke_open, &self.block_close])
                {
                    if self.wrapped {
                        self.ws.clear();
                        self.raw.clear();
                        self.saw_anything = true;
                        self.state = State::Stray;
                    } else {
                        let ws = std::mem::take(&mut self.ws);
                        sink.content(&ws);
                        return ControlFlow::Break(Progress::done(i));
                    }
                } else if !eof {
                    return ControlFlow::Break(Progress::more(i));
                } else if rest.is_empty() && self.wrapped && !self.saw_anything {
                    let ws = std::mem::take(&mut self.ws);
                    self.raw.push_str(&ws);
                    return ControlFlow::Break(self.truncated(input, i, sink));
                } else if rest.is_empty() && self.wrapped {
                    return ControlFlow::Break(Progress::done(i));
                } else if !self.wrapped {
                    // The rest (a partial tag, or nothing) is content again.
                    let ws = std::mem::take(&mut self.ws);
                    sink.content(&ws);
                    return ControlFlow::Break(Progress::done(i));
                } else if self.saw_anything && !text::is_proper_prefix(rest, &self.invoke_open) {
                    // The output ended inside the block's closing tag: the calls are whole.
                    return ControlFlow::Break(Progress::done(input.len()));
                } else {
                    if self.saw_anything {
                        self.raw.clear();
                    } else {
                        let ws = std::mem::take(&mut self.ws);
                        self.raw.push_str(&ws);
                    }
                    return ControlFlow::Break(self.truncated(input, i, sink));
                }
            }
            State::Stray => {
                let stops = Arc::clone(&self.stray_stops);
                let why = "text inside a MiniMax M3 tool-call block that belongs to no call";
                if let ControlFlow::Break(p) = self.stray_in_block(feed, &mut i, &stops, why, sink)
                {
                    return ControlFlow::Break(p);
                }
                self.state = State::Between;
            }
            State::InvokeTag | State::ParamTag | State::NestedTag => {
                let (n, closed) = self.tag.feed(rest);
                self.advance(input, &mut i, n);
                if !closed {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                let text = std::mem::take(&mut self.tag.text);
                self.tag = TagReader::default();
                match self.state {
                    State::InvokeTag => {
                        self.state = match self.open_invoke(parse_attrs(&text), sink) {
                            Ok(true) => State::Body,
                            Ok(false) => State::Between,
                            Err((kind, why)) => State::Recover(kind, why),
                        }
                    }
                    State::ParamTag => self.open_param(&text, sink),
                    _ => self.nested_tag(&text, sink),
                }
            }
            State::Body => {
                let n = text::skip_ws(rest);
                self.advance(input, &mut i, n);
                let rest = &input[i..];
                if rest.starts_with(self.invoke_close.as_str()) {
                    self.raw.push_str(&self.invoke_close);
                    i += self.invoke_close.len();
                    self.finish_invoke(sink);
                    self.state = State::Between;
                } else if rest.starts_with(self.block_close.as_str()) {
                    // `</invoke>` is missing but the block ended: the call is complete.
                    self.finish_invoke(sink);
                    self.state = State::Between;
                } else if rest.starts_with(self.close_open.as_str())
                    && !text::is_partial_of_any(rest, &[&self.invoke_close, &self.block_close])
                {
                    self.state = State::Recover(
                        IssueKind::MalformedJson,
                        "unexpected closing tag in an invoke",
                    );
                } else if rest.starts_with(self.tag_open.as_str())
                    && rest.len() > self.tag_open.len()
                    && !rest.starts_with(self.close_open.as_str())
                {
                    self.raw.push_str(&self.tag_open);
                    i += self.tag_open.len();
                    self.state = State::ParamTag;
                } else if rest.is_empty()
                    || rest.starts_with(self.tag_open.as_str())
                    || text::is_partial_of_any(
                        rest,
                        &[&self.tag_open, &self.invoke_close, &self.block_close],
                    )
                {
                    return ControlFlow::Break(self.body_cut(feed, i, sink));
                } else {
                    self.state =
                        State::Recover(IssueKind::MalformedJson, "unexpected text in an invoke");
                }
            }
            State::ValueStart => {
                let n = text::skip_ws(rest);
                self.value.push_str(&rest[..n]);
                self.advance(input, &mut i, n);
                let rest = &input[i..];
                if rest.starts_with(self.param_close.as_str()) {
                    self.raw.push_str(&self.param_close);
                    i += self.param_close.len();
                    let value = std::mem::take(&mut self.value);
                    sink.args(&scalar_json(&value, self.schema_at(0), false));
                    self.state = State::Body;
                } else if rest.starts_with(self.close_open.as_str())
                    && !text::is_proper_prefix(rest, &self.param_close)
                {
                    self.state = State::Recover(
                        IssueKind::MalformedJson,
                        "a parameter without its closing tag",
                    );
                } else if rest.starts_with(self.tag_open.as_str())
                    && rest.len() > self.tag_open.len()
                    && !rest.starts_with(self.close_open.as_str())
                {
                    self.value.clear();
                    self.frames = vec![Frame::new(&self.param)];
                    self.state = State::Nested;
                } else if rest.is_empty()
                    || rest.starts_with(self.tag_open.as_str())
                    || text::is_partial_of_any(rest, &[&self.tag_open, &self.param_close])
                {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                } else if self.string_param() {
                    sink.args("\"");
                    let held = std::mem::take(&mut self.value);
                    stream_string(&held, sink);
                    self.state = State::StringValue;
                } else {
                    self.state = State::HeldValue;
                }
            }
            State::StringValue | State::HeldValue => {
                let streaming = self.state == State::StringValue;
                let ns = self.ns.as_str();
                let (upto, at_tag) = match rest.find(ns) {
                    Some(p) => (p, true),
                    None if eof => return ControlFlow::Break(self.truncated(input, i, sink)),
                    None => (rest.len() - text::partial_suffix_len(rest, &[ns]), false),
                };
                if streaming {
                    stream_string(&rest[..upto], sink);
                } else {
                    self.value.push_str(&rest[..upto]);
                }
                self.advance(input, &mut i, upto);
                if !at_tag {
                    return ControlFlow::Break(Progress::more(i));
                }
                let rest = &input[i..];
                if rest.starts_with(self.param_close.as_str()) {
                    self.raw.push_str(&self.param_close);
                    i += self.param_close.len();
                    if streaming {
                        sink.args("\"");
                    } else {
                        let value = std::mem::take(&mut self.value);
                        sink.args(&scalar_json(&value, self.schema_at(0), false));
                    }
                    self.state = State::Body;
                } else if text::is_proper_prefix(rest, &self.param_close)
                    || (!streaming && text::is_proper_prefix(rest, &self.tag_open))
                {
                    if eof {
                        return ControlFlow::Break(self.truncated(input, i, sink));
                    }
                    return ControlFlow::Break(Progress::more(i));
                } else if !streaming
                    && rest.starts_with(self.tag_open.as_str())
                    && !rest.starts_with(self.close_open.as_str())
                {
                    // Text, then child tags: an object with the text under `$text`.
                    let mut root = Frame::new(&self.param);
                    root.text = std::mem::take(&mut self.value);
                    self.frames = vec![root];
                    self.state = State::Nested;
                } else {
                    self.state =
                        State::Recover(IssueKind::MalformedJson, "a tag inside a string value");
                }
            }
            State::Nested => {
                let ns = self.ns.as_str();
                let (upto, at_tag) = match rest.find(ns) {
                    Some(p) => (p, true),
                    None if eof => return ControlFlow::Break(self.truncated(input, i, sink)),
                    None => (rest.len() - text::partial_suffix_len(rest, &[ns]), false),
                };
                if let Some(frame) = self.frames.last_mut() {
                    frame.text.push_str(&rest[..upto]);
                }
                self.advance(input, &mut i, upto);
                if !at_tag {
                    return ControlFlow::Break(Progress::more(i));
                }
                let rest = &input[i..];
                if rest.starts_with(self.invoke_close.as_str())
                    || rest.starts_with(self.block_close.as_str())
                {
                    self.frames.clear();
                    self.state = State::Recover(
                        IssueKind::MalformedJson,
                        "an invoke ended inside a parameter",
                    );
                } else if rest.starts_with(self.tag_open.as_str())
                    && rest.len() > self.tag_open.len()
                    && !text::is_partial_of_any(rest, &[&self.invoke_close, &self.block_close])
                {
                    self.raw.push_str(&self.tag_open);
                    i += self.tag_open.len();
                    self.state = State::NestedTag;
                } else if rest.starts_with(self.tag_open.as_str())
                    || text::is_partial_of_any(
                        rest,
                        &[&self.tag_open, &self.invoke_close, &self.block_close],
                    )
                {
                    return ControlFlow::Break(self.body_cut(feed, i, sink));
                } else {
                    self.frames.clear();
                    self.state = State::Recover(
                        IssueKind::MalformedJson,
                        "a namespace token that starts no tag",
                    );
                }
            }
            State::Recover(kind, why) => {
                // The invoke's own closing tag belongs to it; the block's is read next.
                if let ControlFlow::Break(p) = self.skip_invoke(feed, &mut i, (kind, why), sink) {
                    return ControlFlow::Break(p);
                }
                self.state = State::Between;
            }
        }
        ControlFlow::Continue(i)
    }
}

impl M3Region {
    fn nested_tag(&mut self, text: &str, sink: &mut Sink) {
        let text = text.trim();
        let result = match text.strip_prefix('/') {
            Some(name) => self.close_child(name.trim(), sink),
            None => match text.strip_suffix('/') {
                Some(name) => self
                    .open_child(name.trim_end())
                    .map(|()| self.close_frame())
                    .map(|_| false),
                None => self.open_child(text).map(|()| false),
            },
        };
        match result {
            Ok(true) => self.state = State::Body,
            Ok(false) => self.state = State::Nested,
            Err(why) => {
                self.frames.clear();
                self.state = State::Recover(IssueKind::MalformedJson, why);
            }
        }
    }
}

/// A parameter's value as M3 writes it: strings raw, other scalars as JSON, objects as child tags,
/// arrays as `<item>` tags. Iterative, so a deep value cannot overflow the stack.
fn write_value(out: &mut String, value: &Value) {
    enum Work<'a> {
        Value(&'a Value),
        Text(String),
    }
    let mut stack = vec![Work::Value(value)];
    while let Some(work) = stack.pop() {
        match work {
            Work::Text(text) => out.push_str(&text),
            Work::Value(Value::String(s)) => out.push_str(s),
            Work::Value(Value::Object(map)) => {
                for (key, child) in map.iter().rev() {
                    stack.push(Work::Text(format!("{NS}</{key}>")));
                    stack.push(Work::Value(child));
                    stack.push(Work::Text(format!("{NS}<{key}>")));
                }
            }
            Work::Value(Value::Array(items)) => {
                for child in items.iter().rev() {
                    stack.push(Work::Text(format!("{NS}</item>")));
                    stack.push(Work::Value(child));
                    stack.push(Work::Text(format!("{NS}<item>")));
                }
            }
            Work::Value(other) => out.push_str(&other.to_string()),
        }
    }
}

fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(&format!("{NS}<tool_call>\n"));
    for call in calls {
        out.push_str(&format!("{NS}<invoke name=\"{}\">\n", call.name));
        if let Some(map) = call.arguments.as_object() {
            for (key, value) in map {
                out.push_str(&format!("{NS}<{key}>"));
                write_value(&mut out, value);
                out.push_str(&format!("{NS}</{key}>\n"));
            }
        }
        out.push_str(&format!("{NS}</invoke>\n"));
    }
    out.push_str(&format!("{NS}</tool_call>"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{parse, ParserConfig, StreamParser};

    fn tools() -> ToolSet {
        ToolSet::from_json(&serde_json::json!([{"name": "create_order", "parameters": {"type": "object", "properties": {
            "user_id": {"type": "integer"},
            "shipping": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}}},
            "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}},
            "tags": {"type": "array", "items": {"type": "string"}}}}}]))
        .unwrap()
    }

    #[test]
    fn renders_nested_values() {
        let calls = [RenderCall {
            name: "f".into(),
            arguments: serde_json::json!({"a": {"b": [1, "x"]}, "c": true}),
            id: None,
        }];
        let n = NS;
        assert_eq!(
            SPEC.render(&calls, None),
            format!(
                "{n}<tool_call>\n{n}<invoke name=\"f\">\n{n}<a>{n}<b>{n}<item>1{n}</item>{n}<item>x{n}</item>{n}</b>{n}</a>\n\
                 {n}<c>true{n}</c>\n{n}</invoke>\n{n}</tool_call>"
            )
        );
    }

    #[test]
    fn reasoning_never_holds_the_namespace_token() {
        let config = ParserConfig::new("minimax_m3", tools(), Some("closing_only")).unwrap();
        let text = format!(
            "plan the order\n{NS}<tool_call>\n{NS}<invoke name=\"create_order\">\n{NS}<user_id>7{NS}</user_id>\n{NS}</invoke>\n{NS}</tool_call>"
        );
        let m = parse(&config, &text);
        assert_eq!(m.reasoning, "plan the order\n");
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.tool_calls[0].arguments, r#"{"user_id": 7}"#);
        let native = ParserConfig::new("minimax_m3", tools(), Some("native")).unwrap();
        let m = parse(&native, "<mm:think>hmm</mm:think>Hi");
        assert_eq!((m.reasoning.as_str(), m.content.as_str()), ("hmm", "Hi"));
    }

    #[test]
    fn token_mode_matches_the_namespace_token_only() {
        let config = ParserConfig::new("minimax_m3", tools(), None).unwrap();
        let special = config.special_marker_texts();
        let mut stream = StreamParser::new(config);
        stream.use_special_markers(&special);
        let s = stream.markers().sentinel_for(NS).unwrap().to_owned();
        let text = format!(
            "typed {NS}<tool_call> stays\n{s}<tool_call>\n{s}<invoke name=\"create_order\">\n{s}<tags>{s}<item>a{NS}b{s}</item>{s}</tags>\n{s}</invoke>\n{s}</tool_call>"
        );
        for c in text.chars() {
            stream.feed(&c.to_string()).unwrap();
        }
        stream.finish(None).unwrap();
        let m = stream.message();
        assert_eq!(m.content, format!("typed {NS}<tool_call> stays\n"));
        assert_eq!(m.tool_calls.len(), 1, "{m:?}");
        assert_eq!(
            m.tool_calls[0].arguments,
            format!("{{\"tags\": [\"a{NS}b\"]}}")
        );
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let config = ParserConfig::new("minimax_m3", tools(), None).unwrap();
        let deep = format!(
            "{NS}<tool_call>{NS}<invoke name=\"f\">{NS}<p>{}",
            format!("{NS}<a>").repeat(10_000)
        );
        let m = parse(&config, &deep);
        assert_eq!(m.issues.len(), 1);
        assert_eq!(m.issues[0].kind, IssueKind::MalformedJson);
    }
}
