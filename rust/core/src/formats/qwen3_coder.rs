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
//! and read by vLLM's `qwen3_xml` parser; they are aliases of this format. So is `nemotron_v3`,
//! vLLM 0.33's reasoning-parser name for Nemotron 3 Super, whose `parser/nemotron_v3.py` reuses
//! the Qwen3 tool-call config.
//!
//! Leniency that real outputs need: a missing `</parameter>` before the next `<parameter=`,
//! `</function>` or `</tool_call>`; a missing `</function>` or `</tool_call>`; several functions
//! in one `<tool_call>`; a bare `<function=NAME>` without `<tool_call>` (a soft trigger, confirmed
//! only when a parameter or `</function>` follows); and a `<tool_call>` holding a hermes-style
//! JSON object (Qwen3 models served with this parser do that).

use std::sync::Arc;

use super::json_calls::{JsonCallObject, ObjOutcome, STANDARD_KEYS};
use std::ops::ControlFlow;

use super::call_text::{CallText, Feed, Step, StepReader};
use super::xml_params::{read_tag_name, ParamCall, TagName};
use super::Format;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Marker, ParamTags, Role, Syntax, Tokens, Trigger, THINK,
};
use crate::text::{self, is_partial_of_any, starts_with_any};
use crate::tools::ToolSet;
use crate::xml_value::template_text;

const TEMPLATE: CallTemplate = CallTemplate::new(
    "<tool_call>\n<function={name}>\n",
    "\n</function>\n</tool_call>",
    "\n",
);

const CALL_START: &str = "<tool_call>";
const CALL_END: &str = "</tool_call>";
const FUNCTION_START: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAM_END: &str = "</parameter>";

/// `<parameter=KEY>\nVALUE\n</parameter>`: one leading and one trailing `\n` of a value are
/// formatting. Seed-OSS writes the same tags.
pub const PARAMS: ParamTags = ParamTags::new("<parameter={key}>", PARAM_END).padded();

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "qwen3_coder",
        aliases: &["qwen3_5", "qwen3.5", "qwen3_6", "qwen3.6", "step3.5", "nemotron_v3"],
        families: &[
            "Qwen3-Coder",
            "Qwen3-Coder-Next",
            "Qwen3.5",
            "Qwen3.6",
            "Nemotron 3 Nano",
            "Nemotron 3 Super",
            "Step-3.5",
            "Nanbeige",
            "MiMo",
        ],
        description: "<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>, values typed by the tool schema",
        extra_markers: &[
            Marker::special(Role::CallStart, CALL_START),
            Marker::special(Role::CallEnd, CALL_END),
            Marker::plain(Role::FunctionStart, FUNCTION_START),
            Marker::plain(Role::FunctionEnd, FUNCTION_END),
        ],
        implied: Implied::NONE.with_params(Tokens::Plain).with_reasoning(Tokens::Special),
        triggers: &[Trigger::marker(CALL_START), Trigger::soft(FUNCTION_START)],
        reasoning: Some(THINK),
        stops: &["<|im_end|>", "<|endoftext|>"],
        template: Some(TEMPLATE),
        arguments: ArgSyntax::XmlParams(PARAMS),
        ..Syntax::EMPTY
    },
    new_region,
    write: render,
};

struct Lits {
    call_start: String,
    call_end: String,
    function_start: String,
    function_end: String,
    param_start: String,
    param_end: String,
}

impl Lits {
    /// The tags that can follow a parameter inside a call.
    fn body_tags(&self) -> [&str; 5] {
        [
            self.param_start.as_str(),
            self.function_end.as_str(),
            self.call_end.as_str(),
            self.call_start.as_str(),
            self.function_start.as_str(),
        ]
    }
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
    call: ParamCall,
    object: JsonCallObject,
}

/// The qwen3_coder body (`<function=NAME><parameter=K>V</parameter></function>`) inside the block
/// tags of the syntax's `call_start` / `call_end` markers (Qwen's `<tool_call>`, Seed-OSS's
/// `<seed:tool_call>`), the parameter tags from its [`ParamTags`]. The format's triggers must be
/// `[Trigger::marker(call_start), Trigger::soft(function_start)]`, in that order: the second is
/// the bare-function form.
pub fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let syntax = ctx.syntax;
    let params = syntax.arguments.params().copied().unwrap_or(PARAMS);
    Box::new(QwenRegion {
        lits: Arc::new(Lits {
            call_start: ctx.lit(syntax.marker_text(Role::CallStart)),
            call_end: ctx.lit(syntax.marker_text(Role::CallEnd)),
            function_start: ctx.lit(syntax.marker_text(Role::FunctionStart)),
            function_end: ctx.lit(syntax.marker_text(Role::FunctionEnd)),
            param_start: ctx.lit(params.key_open()),
            param_end: ctx.lit(params.close),
        }),
        tools: ctx.tools.clone(),
        state: State::Trigger,
        bare: ctx.trigger == 1,
        call: ParamCall::new(params.pad),
        object: JsonCallObject::new(STANDARD_KEYS, false),
    })
}

impl QwenRegion {
    fn recover(&mut self, kind: IssueKind, why: &'static str) {
        self.state = State::Recover {
            kind,
            why,
            to_function: self.state != State::Json && self.state != State::Start,
        };
    }
}

impl StepReader for QwenRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let feed = Feed { input, eof };
        let l = Arc::clone(&self.lits);
        let rest = &input[i..];
        match self.state {
            State::Trigger => {
                let lit = if self.bare {
                    &l.function_start
                } else {
                    &l.call_start
                };
                let n = lit.len().min(rest.len());
                self.call.advance(input, &mut i, n);
                self.state = if self.bare { State::Name } else { State::Start };
            }
            State::Start => {
                let ws = text::skip_ws(rest);
                let after = &rest[ws..];
                if after.is_empty() {
                    self.call.advance(input, &mut i, ws);
                    if eof {
                        self.call.fail(
                            IssueKind::Truncated,
                            "output ended after <tool_call>",
                            sink,
                        );
                        return ControlFlow::Break(Progress::done(i));
                    }
                    return ControlFlow::Break(Progress::more(i));
                }
                let lits = [l.function_start.as_str(), l.call_end.as_str()];
                match starts_with_any(after, &lits) {
                    Some(0) => {
                        let n = ws + lits[0].len();
                        self.call.advance(input, &mut i, n);
                        self.call.name.clear();
                        self.state = State::Name;
                    }
                    Some(_) => {
                        let n = ws + lits[1].len();
                        self.call.take(input, i, i + n);
                        self.call
                            .fail(IssueKind::MissingName, "empty <tool_call> block", sink);
                        return ControlFlow::Break(Progress::done(i + n));
                    }
                    None if is_partial_of_any(after, &lits) => {
                        self.call.take(input, i, i + ws);
                        let why = "output ended after <tool_call>";
                        return ControlFlow::Break(self.call.wait_or_truncate(
                            feed,
                            i + ws,
                            why,
                            sink,
                        ));
                    }
                    None if after.starts_with('{') => {
                        self.call.advance(input, &mut i, ws);
                        self.object = JsonCallObject::new(STANDARD_KEYS, false);
                        self.state = State::Json;
                    }
                    None => {
                        self.call.advance(input, &mut i, ws);
                        self.recover(
                            IssueKind::MalformedJson,
                            "expected <function=NAME> or a JSON call after <tool_call>",
                        );
                    }
                }
            }
            State::Json => {
                let (n, outcome) = self.object.feed(rest, sink);
                self.call.advance(input, &mut i, n);
                match outcome {
                    ObjOutcome::NeedMore if eof => {
                        if self.object.close_at_eof(sink) {
                            self.call.end(sink);
                        } else {
                            self.call.take(input, i, input.len());
                            self.call.fail(
                                IssueKind::Truncated,
                                "output ended inside a call",
                                sink,
                            );
                        }
                        return ControlFlow::Break(Progress::done(input.len()));
                    }
                    ObjOutcome::NeedMore => return ControlFlow::Break(Progress::more(i)),
                    ObjOutcome::Done => {
                        self.call.end(sink);
                        self.state = State::AfterJson;
                    }
                    ObjOutcome::NotACall => {
                        self.recover(IssueKind::MissingName, "the call has no name")
                    }
                    ObjOutcome::Error(kind, why) => self.recover(kind, why),
                }
            }
            State::AfterJson | State::AfterFunction => {
                let ws = self.call.held_ws.skip(self.call.offset + i, rest);
                let after = &rest[ws..];
                if after.starts_with(l.call_end.as_str()) {
                    return ControlFlow::Break(Progress::done(i + ws + l.call_end.len()));
                }
                let in_block = self.state == State::AfterFunction && !self.bare;
                if in_block && after.starts_with(l.function_start.as_str()) {
                    // Several functions in one block.
                    let n = ws + l.function_start.len();
                    self.call.take(input, i + ws, i + n);
                    i += n;
                    self.call.name.clear();
                    self.state = State::Name;
                    return ControlFlow::Continue(i);
                }
                let waiting = after.is_empty()
                    || text::is_proper_prefix(after, &l.call_end)
                    || (in_block && text::is_proper_prefix(after, &l.function_start));
                if !eof && waiting {
                    return ControlFlow::Break(Progress::more(i));
                }
                return ControlFlow::Break(Progress::done(i));
            }
            State::Name => match read_tag_name(&mut self.call.name, rest, self.bare) {
                TagName::Done(n) => {
                    self.call.advance(input, &mut i, n);
                    let name = self.call.name.trim();
                    if name.is_empty() {
                        if self.bare {
                            return ControlFlow::Break(self.call.reject(i));
                        }
                        self.recover(IssueKind::MissingName, "the function has no name");
                        return ControlFlow::Continue(i);
                    }
                    if self.bare {
                        self.state = State::Confirm;
                    } else {
                        self.call.start(sink);
                        self.state = State::Body;
                    }
                }
                TagName::More => {
                    self.call.take(input, i, input.len());
                    i = input.len();
                    if !eof {
                        return ControlFlow::Break(Progress::more(i));
                    }
                    if self.bare {
                        return ControlFlow::Break(self.call.reject(i));
                    }
                    self.call.fail(
                        IssueKind::Truncated,
                        "output ended inside a function name",
                        sink,
                    );
                    return ControlFlow::Break(Progress::done(i));
                }
                TagName::Invalid(n) => {
                    self.call.advance(input, &mut i, n);
                    if self.bare {
                        return ControlFlow::Break(self.call.reject(i));
                    }
                    self.recover(IssueKind::MalformedJson, "bad character in a function name");
                }
            },
            State::Confirm => {
                let ws = self.call.held_ws.skip(self.call.offset + i, rest);
                let after = &rest[ws..];
                let lits = [l.param_start.as_str(), l.function_end.as_str()];
                if starts_with_any(after, &lits).is_some() {
                    self.call.advance(input, &mut i, ws);
                    self.call.start(sink);
                    self.state = State::Body;
                    return ControlFlow::Continue(i);
                }
                if !eof && (after.is_empty() || is_partial_of_any(after, &lits)) {
                    return ControlFlow::Break(Progress::more(i));
                }
                return ControlFlow::Break(self.call.reject(i));
            }
            State::Body => {
                let ws = text::skip_ws(rest);
                self.call.advance(input, &mut i, ws);
                let rest = &input[i..];
                let lits = l.body_tags();
                if rest.is_empty() || is_partial_of_any(rest, &lits) {
                    return ControlFlow::Break(self.call.wait_between_params(feed, i, sink));
                }
                match starts_with_any(rest, &lits) {
                    Some(0) => {
                        self.call.advance(input, &mut i, lits[0].len());
                        self.call.key.clear();
                        self.state = State::Key;
                    }
                    Some(1) => {
                        self.call.advance(input, &mut i, lits[1].len());
                        self.call.finish(sink);
                        self.state = State::AfterFunction;
                    }
                    Some(2) => {
                        // `</function>` is missing.
                        self.call.finish(sink);
                        return ControlFlow::Break(Progress::done(i + lits[2].len()));
                    }
                    Some(_) => {
                        // The next call starts: this one lacked its end tags.
                        self.call.finish(sink);
                        self.state = State::AfterFunction;
                    }
                    None => self.state = State::Stray,
                }
            }
            State::Stray => {
                if let ControlFlow::Break(p) = self.call.stray(feed, &mut i, &l.body_tags(), sink) {
                    return ControlFlow::Break(p);
                }
                self.state = State::Body;
            }
            State::Key => match read_tag_name(&mut self.call.key, rest, false) {
                TagName::Done(n) => {
                    self.call.advance(input, &mut i, n);
                    if !self.call.begin_param(&self.tools, sink) {
                        self.recover(IssueKind::MalformedJson, "a parameter has no name");
                        return ControlFlow::Continue(i);
                    }
                    self.state = State::ValueStart;
                }
                TagName::More => {
                    self.call.take(input, i, input.len());
                    i = input.len();
                    return ControlFlow::Break(self.call.wait_or_truncate(
                        feed,
                        i,
                        "output ended inside a parameter name",
                        sink,
                    ));
                }
                TagName::Invalid(n) => {
                    self.call.advance(input, &mut i, n);
                    self.recover(
                        IssueKind::MalformedJson,
                        "bad character in a parameter name",
                    );
                }
            },
            State::ValueStart => {
                if rest.is_empty() {
                    return ControlFlow::Break(self.call.wait_or_truncate(
                        feed,
                        i,
                        "output ended inside a parameter",
                        sink,
                    ));
                }
                if rest.starts_with('\n') {
                    self.call.advance(input, &mut i, 1);
                }
                self.state = State::Value;
            }
            State::Value => {
                let ends = [
                    l.param_end.as_str(),
                    l.param_start.as_str(),
                    l.function_end.as_str(),
                    l.call_end.as_str(),
                    l.call_start.as_str(),
                ];
                let why = "output ended inside a parameter";
                if let ControlFlow::Break(p) = self.call.value(feed, &mut i, &ends, why, sink) {
                    return ControlFlow::Break(p);
                }
                self.state = State::Body;
            }
            State::Recover {
                kind,
                why,
                to_function,
            } => {
                // `</tool_call>` and `</function>` end the broken call; a `<tool_call>` is
                // the next one.
                let mut stops = vec![l.call_end.as_str()];
                if to_function {
                    stops.push(l.function_end.as_str());
                }
                let owned = stops.len();
                stops.push(l.call_start.as_str());
                let issue = (kind, why);
                match self
                    .call
                    .skip_broken(feed, &mut i, &stops, owned, issue, sink)
                {
                    ControlFlow::Continue(1) if to_function => {
                        self.state = State::AfterFunction;
                    }
                    ControlFlow::Continue(_) => return ControlFlow::Break(Progress::done(i)),
                    ControlFlow::Break(p) => return ControlFlow::Break(p),
                }
            }
        }
        ControlFlow::Continue(i)
    }

    fn feed_offset(&mut self) -> Option<&mut usize> {
        Some(&mut self.call.offset)
    }
}

/// As the Qwen3-Coder / Qwen3.5 chat templates write calls: `\n\n` after content, `\n` between
/// calls, strings raw and other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
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
                out.push_str(&PARAMS.open.replace("{key}", key));
                out.push('\n');
                out.push_str(&template_text(value));
                out.push('\n');
                out.push_str(PARAMS.close);
                out.push('\n');
            }
        }
        out.push_str(FUNCTION_END);
        out.push('\n');
        out.push_str(CALL_END);
    }
    out
}
