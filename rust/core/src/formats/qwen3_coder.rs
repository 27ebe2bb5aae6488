//! Qwen3-Coder / Qwen3.5 / Qwen3.6 / Nemotron 3 Nano: XML parameters inside `<tool_call>`:
//!
//! ```text
//! <tool_call>
//! <function=NAME>
//! <parameter=KEY>
//! VALUE
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! Values are raw text (no escaping, no entity decoding); exactly one leading and one trailing
//! `\n` of a value are formatting. Values are typed by the tool's schema; string values stream as
//! they arrive. `<tool_call>`/`</tool_call>` are special tokens in the Qwen vocabularies
//! (151657/151658; 248058/248059 for Qwen3.5/3.6); `<function=`, `<parameter=` and their closing
//! tags are plain text.
//!
//! The same body is written by Step-3.5 / Step-3.7 (SGLang `step3p5`), Nanbeige, Xiaomi MiMo
//! (SGLang `mimo`, which also HTML-unescapes values; not done here: values are kept as written)
//! and read by vLLM's `qwen3_xml` parser; they are aliases of this format.
//!
//! Leniency that real outputs need: a missing `</parameter>` before the next `<parameter=`,
//! `</function>` or `</tool_call>`; a missing `</function>` or `</tool_call>`; several functions
//! in one `<tool_call>`; a bare `<function=NAME>` without `<tool_call>` (a soft trigger, confirmed
//! only when a parameter or `</function>` follows); and a `<tool_call>` holding a hermes-style
//! JSON object (Qwen3 models served with this parser do that).

use std::sync::Arc;

use super::json_calls::{JsonCallObject, ObjOutcome, STANDARD_KEYS};
use super::xml_params::{param_schema, read_tag_name, ParamWriter, TagName};
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, FormatSpec, Layout, Marker, Trigger};
use crate::text::{self, Scan};
use crate::tools::ToolSet;

const TEMPLATE: CallTemplate = CallTemplate {
    begin: "<tool_call>\n<function={name}>\n",
    style: "qwen_xml",
    end: "\n</function>\n</tool_call>",
    separator: "\n",
};

const CALL_START: &str = "<tool_call>";
const CALL_END: &str = "</tool_call>";
const FUNCTION_START: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAM_START: &str = "<parameter=";
const PARAM_END: &str = "</parameter>";

pub static SPEC: FormatSpec = FormatSpec {
    name: "qwen3_coder",
    aliases: &[
        "nemotron_nano",
        "qwen3_5",
        "qwen3.5",
        "qwen3_6",
        "qwen3.6",
        "qwen3_xml",
        "step3p5",
        "step3.5",
        "nanbeige",
        "mimo",
    ],
    families: &[
        "Qwen3-Coder",
        "Qwen3-Coder-Next",
        "Qwen3.5",
        "Qwen3.6",
        "Nemotron 3 Nano",
        "Step-3.5",
        "Nanbeige",
        "MiMo",
    ],
    description: "<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>, values typed by the tool schema",
    markers: &[
        Marker {
            role: "call_start",
            text: CALL_START,
            special_token: true,
        },
        Marker {
            role: "call_end",
            text: CALL_END,
            special_token: true,
        },
        Marker {
            role: "function_start",
            text: FUNCTION_START,
            special_token: false,
        },
        Marker {
            role: "function_end",
            text: FUNCTION_END,
            special_token: false,
        },
        Marker {
            role: "parameter_start",
            text: PARAM_START,
            special_token: false,
        },
        Marker {
            role: "parameter_end",
            text: PARAM_END,
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
    ],
    triggers: &[Trigger::marker(CALL_START), Trigger::soft(FUNCTION_START)],
    name_encoding: "tag_attribute",
    argument_encoding: "xml_parameters",
    call_separator: Some("\n"),
    reasoning: Some(("<think>", "</think>")),
    template: Some(TEMPLATE),
    layout: Layout::BARE,
    new_region,
    render,
};

struct Lits {
    call_start: String,
    call_end: String,
    function_start: String,
    function_end: String,
    param_start: String,
    param_end: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Trigger,
    /// After `<tool_call>`: a function, a JSON object, or nothing.
    Start,
    Json,
    AfterJson,
    Name,
    /// A bare `<function=NAME>`: a call only if a parameter or `</function>` follows.
    Confirm,
    Body,
    /// Text inside a call that is not a tag.
    Stray,
    Key,
    ValueStart,
    Value,
    AfterFunction,
    Recover {
        kind: IssueKind,
        why: &'static str,
        to_function: bool,
    },
}

struct QwenRegion {
    lits: Arc<Lits>,
    tools: Arc<ToolSet>,
    state: State,
    /// Opened by a bare `<function=` (no `<tool_call>`).
    bare: bool,
    /// The call's text so far, markers included (for issues and soft rejection).
    raw: String,
    name: String,
    key: String,
    writer: ParamWriter,
    object: JsonCallObject,
    /// Bytes consumed before the current feed, and whitespace held back at its start.
    offset: usize,
    held_ws: text::WsRun,
}

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    new_region_with(ctx, CALL_START, CALL_END)
}

/// The qwen3_coder body (`<function=NAME><parameter=K>V</parameter></function>`) inside the block
/// tags `call_start` / `call_end` (Qwen's `<tool_call>`, Seed-OSS's `<seed:tool_call>`). The
/// format's triggers must be `[Trigger::marker(call_start), Trigger::soft("<function=")]`, in
/// that order: the second is the bare-function form.
pub fn new_region_with(
    ctx: &RegionCtx<'_>,
    call_start: &'static str,
    call_end: &'static str,
) -> Box<dyn RegionParser> {
    Box::new(QwenRegion {
        lits: Arc::new(Lits {
            call_start: ctx.lit(call_start),
            call_end: ctx.lit(call_end),
            function_start: ctx.lit(FUNCTION_START),
            function_end: ctx.lit(FUNCTION_END),
            param_start: ctx.lit(PARAM_START),
            param_end: ctx.lit(PARAM_END),
        }),
        tools: ctx.tools.clone(),
        state: State::Trigger,
        bare: ctx.trigger == 1,
        raw: String::new(),
        name: String::new(),
        key: String::new(),
        writer: ParamWriter::new(),
        object: JsonCallObject::new(STANDARD_KEYS, false),
        offset: 0,
        held_ws: text::WsRun::default(),
    })
}

fn starts_with_any(rest: &str, lits: &[&str]) -> Option<usize> {
    lits.iter().position(|l| rest.starts_with(l))
}

fn prefix_of_any(rest: &str, lits: &[&str]) -> bool {
    lits.iter().any(|l| text::is_proper_prefix(rest, l))
}

impl QwenRegion {
    fn take(&mut self, input: &str, from: usize, to: usize) {
        self.raw.push_str(&input[from..to]);
    }

    fn fail(&mut self, kind: IssueKind, why: &str, sink: &mut Sink) {
        let raw = std::mem::take(&mut self.raw);
        sink.fail_call(kind, why, &raw);
    }

    fn start_call(&mut self, sink: &mut Sink) {
        sink.start_call(self.name.trim(), None);
        self.writer.open(sink);
    }

    fn finish_call(&mut self, sink: &mut Sink) {
        self.writer.close(sink);
        let raw = std::mem::take(&mut self.raw);
        sink.end_call(&raw);
    }

    fn reject(&mut self, consumed: usize) -> Progress {
        Progress {
            consumed,
            status: Status::Reject(std::mem::take(&mut self.raw)),
        }
    }

    fn recover(&mut self, kind: IssueKind, why: &'static str) {
        self.state = State::Recover {
            kind,
            why,
            to_function: self.state != State::Json && self.state != State::Start,
        };
    }
}

impl RegionParser for QwenRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let progress = self.feed_at(input, eof, sink);
        self.offset += progress.consumed;
        progress
    }
}

impl QwenRegion {
    fn feed_at(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let l = Arc::clone(&self.lits);
        let mut i = 0;
        loop {
            let rest = &input[i..];
            match self.state {
                State::Trigger => {
                    let lit = if self.bare {
                        &l.function_start
                    } else {
                        &l.call_start
                    };
                    let n = lit.len().min(rest.len());
                    self.take(input, i, i + n);
                    i += n;
                    self.state = if self.bare { State::Name } else { State::Start };
                }
                State::Start => {
                    let ws = text::skip_ws(rest);
                    let after = &rest[ws..];
                    if after.is_empty() {
                        self.take(input, i, i + ws);
                        i += ws;
                        if eof {
                            self.fail(IssueKind::Truncated, "output ended after <tool_call>", sink);
                            return Progress::done(i);
                        }
                        return Progress::more(i);
                    }
                    let lits = [l.function_start.as_str(), l.call_end.as_str()];
                    match starts_with_any(after, &lits) {
                        Some(0) => {
                            let n = ws + lits[0].len();
                            self.take(input, i, i + n);
                            i += n;
                            self.name.clear();
                            self.state = State::Name;
                        }
                        Some(_) => {
                            let n = ws + lits[1].len();
                            self.take(input, i, i + n);
                            self.fail(IssueKind::MissingName, "empty <tool_call> block", sink);
                            return Progress::done(i + n);
                        }
                        None if prefix_of_any(after, &lits) => {
                            if !eof {
                                self.take(input, i, i + ws);
                                return Progress::more(i + ws);
                            }
                            self.take(input, i, input.len());
                            self.fail(IssueKind::Truncated, "output ended after <tool_call>", sink);
                            return Progress::done(input.len());
                        }
                        None if after.starts_with('{') => {
                            self.take(input, i, i + ws);
                            i += ws;
                            self.object = JsonCallObject::new(STANDARD_KEYS, false);
                            self.state = State::Json;
                        }
                        None => {
                            self.take(input, i, i + ws);
                            i += ws;
                            self.recover(
                                IssueKind::MalformedJson,
                                "expected <function=NAME> or a JSON call after <tool_call>",
                            );
                        }
                    }
                }
                State::Json => {
                    let (n, outcome) = self.object.feed(rest, sink);
                    self.take(input, i, i + n);
                    i += n;
                    match outcome {
                        ObjOutcome::NeedMore if eof => {
                            if self.object.close_at_eof(sink) {
                                let raw = std::mem::take(&mut self.raw);
                                sink.end_call(&raw);
                            } else {
                                self.take(input, i, input.len());
                                self.fail(IssueKind::Truncated, "output ended inside a call", sink);
                            }
                            return Progress::done(input.len());
                        }
                        ObjOutcome::NeedMore => return Progress::more(i),
                        ObjOutcome::Done => {
                            let raw = std::mem::take(&mut self.raw);
                            sink.end_call(&raw);
                            self.state = State::AfterJson;
                        }
                        ObjOutcome::NotACall => {
                            self.recover(IssueKind::MissingName, "the call has no name")
                        }
                        ObjOutcome::Error(kind, why) => self.recover(kind, why),
                    }
                }
                State::AfterJson | State::AfterFunction => {
                    let ws = self.held_ws.skip(self.offset + i, rest);
                    let after = &rest[ws..];
                    if after.starts_with(l.call_end.as_str()) {
                        return Progress::done(i + ws + l.call_end.len());
                    }
                    let in_block = self.state == State::AfterFunction && !self.bare;
                    if in_block && after.starts_with(l.function_start.as_str()) {
                        // Several functions in one block.
                        let n = ws + l.function_start.len();
                        self.take(input, i + ws, i + n);
                        i += n;
                        self.name.clear();
                        self.state = State::Name;
                        continue;
                    }
                    let waiting = after.is_empty()
                        || text::is_proper_prefix(after, &l.call_end)
                        || (in_block && text::is_proper_prefix(after, &l.function_start));
                    if !eof && waiting {
                        return Progress::more(i);
                    }
                    return Progress::done(i);
                }
                State::Name => match read_tag_name(&mut self.name, rest, self.bare) {
                    TagName::Done(n) => {
                        self.take(input, i, i + n);
                        i += n;
                        let name = self.name.trim();
                        if name.is_empty() {
                            if self.bare {
                                return self.reject(i);
                            }
                            self.recover(IssueKind::MissingName, "the function has no name");
                            continue;
                        }
                        if self.bare {
                            self.state = State::Confirm;
                        } else {
                            self.start_call(sink);
                            self.state = State::Body;
                        }
                    }
                    TagName::More => {
                        self.take(input, i, input.len());
                        i = input.len();
                        if !eof {
                            return Progress::more(i);
                        }
                        if self.bare {
                            return self.reject(i);
                        }
                        self.fail(
                            IssueKind::Truncated,
                            "output ended inside a function name",
                            sink,
                        );
                        return Progress::done(i);
                    }
                    TagName::Invalid(n) => {
                        self.take(input, i, i + n);
                        i += n;
                        if self.bare {
                            return self.reject(i);
                        }
                        self.recover(IssueKind::MalformedJson, "bad character in a function name");
                    }
                },
                State::Confirm => {
                    let ws = self.held_ws.skip(self.offset + i, rest);
                    let after = &rest[ws..];
                    let lits = [l.param_start.as_str(), l.function_end.as_str()];
                    if starts_with_any(after, &lits).is_some() {
                        self.take(input, i, i + ws);
                        i += ws;
                        self.start_call(sink);
                        self.state = State::Body;
                        continue;
                    }
                    if !eof && (after.is_empty() || prefix_of_any(after, &lits)) {
                        return Progress::more(i);
                    }
                    return self.reject(i);
                }
                State::Body => {
                    let ws = text::skip_ws(rest);
                    self.take(input, i, i + ws);
                    i += ws;
                    let rest = &input[i..];
                    let lits = [
                        l.param_start.as_str(),
                        l.function_end.as_str(),
                        l.call_end.as_str(),
                        l.call_start.as_str(),
                        l.function_start.as_str(),
                    ];
                    if rest.is_empty() || prefix_of_any(rest, &lits) {
                        if !eof {
                            return Progress::more(i);
                        }
                        self.take(input, i, input.len());
                        i = input.len();
                        if self.writer.count() > 0 {
                            // Every parameter closed; only the end tags are missing.
                            self.finish_call(sink);
                        } else {
                            self.fail(IssueKind::Truncated, "output ended inside a call", sink);
                        }
                        return Progress::done(i);
                    }
                    match starts_with_any(rest, &lits) {
                        Some(0) => {
                            self.take(input, i, i + lits[0].len());
                            i += lits[0].len();
                            self.key.clear();
                            self.state = State::Key;
                        }
                        Some(1) => {
                            self.take(input, i, i + lits[1].len());
                            i += lits[1].len();
                            self.finish_call(sink);
                            self.state = State::AfterFunction;
                        }
                        Some(2) => {
                            // `</function>` is missing.
                            self.finish_call(sink);
                            return Progress::done(i + lits[2].len());
                        }
                        Some(_) => {
                            // The next call starts: this one lacked its end tags.
                            self.finish_call(sink);
                            self.state = State::AfterFunction;
                        }
                        None => self.state = State::Stray,
                    }
                }
                State::Stray => {
                    // Text between parameters that belongs to no tag stays content; whitespace
                    // right before the next tag is formatting.
                    let lits = [
                        l.param_start.as_str(),
                        l.function_end.as_str(),
                        l.call_end.as_str(),
                        l.call_start.as_str(),
                        l.function_start.as_str(),
                    ];
                    // Whitespace held back by the previous feed is not scanned again (no tag
                    // starts inside it), so a long run of it stays linear.
                    let ws = self.held_ws.skip(self.offset + i, rest);
                    let (end, found) = match text::scan(&rest[ws..], &lits) {
                        Scan::Found { pos, .. } => (ws + pos, true),
                        Scan::NotFound { .. } if eof => {
                            sink.content(rest);
                            i = input.len();
                            self.state = State::Body;
                            continue;
                        }
                        Scan::NotFound { safe } => (ws + safe, false),
                    };
                    // `rest[..end].trim_end()`, without walking back over the held whitespace.
                    let new = rest[ws..end].trim_end();
                    let text = if new.is_empty() {
                        ""
                    } else {
                        &rest[..ws + new.len()]
                    };
                    sink.content(text);
                    if !found {
                        return Progress::more(i + text.len());
                    }
                    self.take(input, i + text.len(), i + end);
                    i += end;
                    self.state = State::Body;
                }
                State::Key => match read_tag_name(&mut self.key, rest, false) {
                    TagName::Done(n) => {
                        self.take(input, i, i + n);
                        i += n;
                        let key = self.key.trim();
                        if key.is_empty() {
                            self.recover(IssueKind::MalformedJson, "a parameter has no name");
                            continue;
                        }
                        let schema = param_schema(&self.tools, self.name.trim(), key);
                        self.writer.begin(key, schema, sink);
                        self.state = State::ValueStart;
                    }
                    TagName::More => {
                        self.take(input, i, input.len());
                        i = input.len();
                        if !eof {
                            return Progress::more(i);
                        }
                        self.fail(
                            IssueKind::Truncated,
                            "output ended inside a parameter name",
                            sink,
                        );
                        return Progress::done(i);
                    }
                    TagName::Invalid(n) => {
                        self.take(input, i, i + n);
                        i += n;
                        self.recover(
                            IssueKind::MalformedJson,
                            "bad character in a parameter name",
                        );
                    }
                },
                State::ValueStart => {
                    if rest.is_empty() {
                        if !eof {
                            return Progress::more(i);
                        }
                        self.fail(
                            IssueKind::Truncated,
                            "output ended inside a parameter",
                            sink,
                        );
                        return Progress::done(i);
                    }
                    if rest.starts_with('\n') {
                        self.take(input, i, i + 1);
                        i += 1;
                    }
                    self.state = State::Value;
                }
                State::Value => {
                    let lits = [
                        l.param_end.as_str(),
                        l.param_start.as_str(),
                        l.function_end.as_str(),
                        l.call_end.as_str(),
                        l.call_start.as_str(),
                    ];
                    match text::scan(rest, &lits) {
                        Scan::Found { pos, which } => {
                            let value = &rest[..pos];
                            let value = value.strip_suffix('\n').unwrap_or(value);
                            self.writer.text(value, sink);
                            self.writer.end(sink);
                            let n = if which == 0 { pos + lits[0].len() } else { pos };
                            self.take(input, i, i + n);
                            i += n;
                            self.state = State::Body;
                        }
                        Scan::NotFound { .. } if eof => {
                            self.take(input, i, input.len());
                            self.fail(
                                IssueKind::Truncated,
                                "output ended inside a parameter",
                                sink,
                            );
                            return Progress::done(input.len());
                        }
                        Scan::NotFound { safe } => {
                            // Hold back a possible partial end tag and a `\n` that may precede it.
                            let mut upto = safe;
                            if rest[..upto].ends_with('\n') {
                                upto -= 1;
                            }
                            self.writer.text(&rest[..upto], sink);
                            self.take(input, i, i + upto);
                            return Progress::more(i + upto);
                        }
                    }
                }
                State::Recover {
                    kind,
                    why,
                    to_function,
                } => {
                    let mut lits = vec![l.call_end.as_str(), l.call_start.as_str()];
                    if to_function {
                        lits.push(l.function_end.as_str());
                    }
                    match text::scan(rest, &lits) {
                        Scan::Found { pos, which: 1 } => {
                            self.take(input, i, i + pos);
                            self.fail(kind, why, sink);
                            return Progress::done(i + pos);
                        }
                        Scan::Found { pos, which } => {
                            let n = pos + lits[which].len();
                            self.take(input, i, i + n);
                            i += n;
                            self.fail(kind, why, sink);
                            if which == 0 {
                                return Progress::done(i);
                            }
                            self.state = State::AfterFunction;
                        }
                        Scan::NotFound { .. } if eof => {
                            self.take(input, i, input.len());
                            self.fail(kind, why, sink);
                            return Progress::done(input.len());
                        }
                        Scan::NotFound { safe } => {
                            self.take(input, i, i + safe);
                            return Progress::more(i + safe);
                        }
                    }
                }
            }
        }
    }
}

fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => crate::xml_value::template_json(other),
    }
}

/// As the Qwen3-Coder / Qwen3.5 chat templates write calls: `\n\n` after content, `\n` between
/// calls, strings raw and other values as JSON.
fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for (k, call) in calls.iter().enumerate() {
        if k > 0 {
            out.push_str(TEMPLATE.separator);
        } else if !out.trim().is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&TEMPLATE.begin.replace("{name}", &call.name));
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                out.push_str(PARAM_START);
                out.push_str(key);
                out.push_str(">\n");
                out.push_str(&value_text(value));
                out.push('\n');
                out.push_str(PARAM_END);
                out.push('\n');
            }
        }
        out.push_str(FUNCTION_END);
        out.push('\n');
        out.push_str(CALL_END);
    }
    out
}
