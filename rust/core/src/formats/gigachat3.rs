//! Sber GigaChat 3 / 3.1: the call is a separate `function call` role message after the
//! assistant's content, one JSON object `{"name": ..., "arguments": {...}}`:
//!
//! ```text
//! GigaChat 3:   CONTENT<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "N", "arguments": {...}}
//! GigaChat 3.1: CONTENT<|function_call|>{"name": "N", "arguments": {...}}
//! ```
//!
//! (vLLM / SGLang `gigachat3`; the layout of the GigaChat3-10B-A1.8B chat template, whose
//! `render_role_message` writes `ROLE<|role_sep|>\nCONTENT<|message_sep|>\n\n`.) The template
//! writes one call per assistant turn; further `<|message_sep|>`-separated call messages are read
//! as further calls. A `<|message_sep|>` not followed by a `function call` header ends the
//! assistant's message: it is dropped. A trailing `</s>` (end of sequence) after a call is
//! dropped. `<|message_sep|>`, `<|role_sep|>` and `<|function_call|>` are special tokens (vLLM's
//! test adds them to the tokenizer); `function call` is text.

use std::ops::ControlFlow;

use super::call_text::{Step, StepReader};
use super::json_calls::{JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::xml_invoke::python_json;
use super::Format;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, Layout, Marker, Role, Syntax, Trigger};
use crate::text;

const MESSAGE_SEP: &str = "<|message_sep|>";
const ROLE_SEP: &str = "<|role_sep|>";
const FUNCTION_CALL: &str = "<|function_call|>";
const HEADER: &str = "function call<|role_sep|>";
const EOS: &str = "</s>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "gigachat3",
        aliases: &["gigachat", "gigachat3_1", "gigachat3.1", "gigachat-3"],
        families: &["GigaChat3-10B-A1.8B", "GigaChat3-702B-A36B", "GigaChat 3.1"],
        description:
            "CONTENT<|message_sep|>function call<|role_sep|>{\"name\": ..., \"arguments\": {...}} \
                      (GigaChat 3.1: <|function_call|>{...})",
        extra_markers: &[
            Marker::special(Role::MessageEnd, MESSAGE_SEP),
            Marker::special(Role::RoleSeparator, ROLE_SEP),
            Marker::special(Role::CallStart, FUNCTION_CALL),
            Marker::special(Role::EndOfSequence, EOS),
        ],
        triggers: &[Trigger::marker(MESSAGE_SEP), Trigger::marker(FUNCTION_CALL)],
        template: Some(CallTemplate {
            begin:
                "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"{name}\", \"arguments\": ",
            end: "}",
            separator: "",
        }),
        layout: Layout::section("", "<|message_sep|>\n\n"),
        stops: &["</s>"],
        ..Syntax::EMPTY
    },
    new_region,
    write: render,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// After `<|message_sep|>`: a `function call` header, or the end of the message.
    Header,
    Body,
    /// After the call: an optional `</s>`.
    Tail,
}

struct GigaRegion {
    state: State,
    trigger_len: usize,
    header_lit: String,
    eos_lit: String,
    /// The marker and whitespace read before the header, for issues.
    header: String,
    inner: JsonRegion,
}

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let inline = ctx.trigger == 1;
    Box::new(GigaRegion {
        state: if inline { State::Body } else { State::Header },
        trigger_len: ctx.trigger_lit().len(),
        header_lit: ctx.lit(HEADER),
        eos_lit: ctx.lit(EOS),
        header: String::new(),
        inner: JsonRegion::new(
            ctx,
            JsonRegionSpec {
                // `<|function_call|>` is consumed by the JSON region; after `<|message_sep|>` the
                // wrapper reads the header first.
                consume_trigger: inline,
                payload: Payload::ObjectOrArray,
                end: None,
                keys: STANDARD_KEYS,
            },
        ),
    })
}

impl StepReader for GigaRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let rest = &input[i..];
        match self.state {
            State::Header => {
                if self.header.is_empty() {
                    let n = self.trigger_len.min(rest.len());
                    self.header.push_str(&rest[..n]);
                    i += n;
                }
                let rest = &input[i..];
                let ws = text::skip_ws(rest);
                let after = &rest[ws..];
                if after.starts_with(self.header_lit.as_str()) {
                    let n = ws + self.header_lit.len();
                    self.header.push_str(&rest[..n]);
                    i += n;
                    self.inner.seed_raw(&self.header);
                    self.state = State::Body;
                    return ControlFlow::Continue(i);
                }
                let undecided = after.is_empty() || text::is_proper_prefix(after, &self.header_lit);
                if undecided && !eof {
                    return ControlFlow::Break(Progress::more(i));
                }
                if !after.is_empty() && text::is_proper_prefix(after, &self.header_lit) {
                    let mut raw = std::mem::take(&mut self.header);
                    raw.push_str(rest);
                    sink.fail_call(
                        IssueKind::Truncated,
                        "output ended inside a function-call header",
                        &raw,
                    );
                    return ControlFlow::Break(Progress::done(input.len()));
                }
                // The assistant's message ended: the separator (and, at the end of the
                // output, the blank line after it) is markup.
                if after.is_empty() {
                    return ControlFlow::Break(Progress::done(input.len()));
                }
                sink.content(&rest[..ws]);
                return ControlFlow::Break(Progress::done(i + ws));
            }
            State::Body => {
                let progress = self.inner.feed(rest, eof, sink);
                match progress.status {
                    crate::region::Status::Done => {
                        i += progress.consumed;
                        self.state = State::Tail;
                    }
                    status => {
                        return ControlFlow::Break(Progress {
                            consumed: i + progress.consumed,
                            status,
                        })
                    }
                }
            }
            State::Tail => {
                let ws = text::skip_ws(rest);
                let after = &rest[ws..];
                if after.starts_with(self.eos_lit.as_str()) {
                    return ControlFlow::Break(Progress::done(i + ws + self.eos_lit.len()));
                }
                if !eof && (after.is_empty() || text::is_proper_prefix(after, &self.eos_lit)) {
                    return ControlFlow::Break(Progress::more(i));
                }
                return ControlFlow::Break(Progress::done(i));
            }
        }
        ControlFlow::Continue(i)
    }
}

/// As the GigaChat 3 chat template writes an assistant turn: the content message, then one
/// `function call` message per call.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for call in calls {
        out.push_str(MESSAGE_SEP);
        out.push_str("\n\n");
        out.push_str(HEADER);
        out.push('\n');
        // `'{"name": "' ~ name ~ '", "arguments": ' ~ arguments | tojson ~ '}'`
        out.push_str(&format!(
            "{{\"name\": \"{}\", \"arguments\": {}}}",
            call.name,
            python_json(&call.arguments)
        ));
    }
    if !calls.is_empty() {
        out.push_str(MESSAGE_SEP);
        out.push_str("\n\n");
    }
    out
}
