//! Mistral, both generations. Pre-v11 tokenizers: `[TOOL_CALLS] [{"name": ..., "arguments": ...}]`
//! (one JSON array). v11+: `[TOOL_CALLS]NAME[ARGS]{...}` per call, optionally with
//! `[CALL_ID]id` before `[ARGS]`; servers that skip special tokens show `[TOOL_CALLS]NAME{...}`.
//! When `[TOOL_CALLS]` itself was skipped, a bare call array at the output start is accepted.

use std::ops::ControlFlow;

use super::call_text::{CallText, Feed, Step, StepReader};
use super::json_calls::{JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::Format;
use crate::json::{ScanResult, ValueScanner};
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, Implied, Marker, Role, Syntax, Tokens, Trigger};
use crate::text;

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "mistral",
        aliases: &["mistral_v11", "magistral", "devstral"],
        families: &[
            "Mistral 7B v0.3",
            "Mixtral 8x22B",
            "Mistral NeMo",
            "Mistral Small 3.x",
            "Magistral",
            "Devstral",
            "Ministral 3",
        ],
        description:
            "[TOOL_CALLS] then a JSON call array (pre-v11) or NAME[ARGS]{...} per call (v11+)",
        extra_markers: &[
            Marker::special(Role::ArgsStart, "[ARGS]"),
            Marker::special(Role::CallId, "[CALL_ID]"),
            Marker::plain(Role::CallEnd, "[/TOOL_CALLS]"),
        ],
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker("[TOOL_CALLS]"), Trigger::at_start("[")],
        reasoning: Some(("[THINK]", "[/THINK]")),
        stops: &["</s>"],
        template: Some(CallTemplate::new("[TOOL_CALLS]{name}[ARGS]", "", "")),
        ..Syntax::EMPTY
    },
    new_region,
    write: render,
};

/// Pre-v11 calls carry the model's id: `{"name": ..., "arguments": ..., "id": "a1b2c3d4e"}`.
const ID_KEYS: &[&str] = &["id"];

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let array = JsonRegionSpec {
        consume_trigger: false,
        payload: Payload::Array,
        end: Some("[/TOOL_CALLS]"),
        keys: STANDARD_KEYS,
    };
    if ctx.trigger == 1 {
        return Box::new(JsonRegion::new(ctx, array).with_id_keys(ID_KEYS));
    }
    Box::new(MistralRegion {
        state: State::Trigger,
        trigger_lit: ctx.trigger_lit(),
        args_lit: ctx.lit("[ARGS]"),
        call_id_lit: ctx.lit("[CALL_ID]"),
        end_lit: ctx.lit("[/TOOL_CALLS]"),
        array: JsonRegion::new(ctx, array).with_id_keys(ID_KEYS),
        name: String::new(),
        call_id: String::new(),
        scanner: ValueScanner::new(),
        raw: String::new(),
        offset: 0,
        held_ws: text::WsRun::default(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Trigger,
    Decide,
    Array,
    Name,
    CallId,
    Args,
    AfterCall,
    Recover(IssueKind, &'static str),
}

struct MistralRegion {
    state: State,
    trigger_lit: String,
    args_lit: String,
    call_id_lit: String,
    end_lit: String,
    array: JsonRegion,
    name: String,
    call_id: String,
    scanner: ValueScanner,
    raw: String,
    /// Bytes consumed before the current feed, and whitespace held back while deciding.
    offset: usize,
    held_ws: text::WsRun,
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

impl CallText for MistralRegion {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl MistralRegion {
    /// Read name characters up to one of the stop literals; returns (bytes read, which stop
    /// follows, whether a character that is neither follows). Every stop begins with a character
    /// that cannot be in a name, so only the text right after the name is compared with them:
    /// searching the whole input for a stop would make a run of bad headers quadratic.
    fn read_until(
        &mut self,
        rest: &str,
        stops: &[&str],
        into_id: bool,
    ) -> (usize, Option<usize>, bool) {
        let take = rest
            .char_indices()
            .find(|&(_, c)| !is_name_char(c))
            .map_or(rest.len(), |(p, _)| p);
        let target = if into_id {
            &mut self.call_id
        } else {
            &mut self.name
        };
        target.push_str(&rest[..take]);
        self.raw.push_str(&rest[..take]);
        let after = &rest[take..];
        if after.is_empty() {
            return (take, None, false);
        }
        if let Some(which) = stops.iter().position(|s| after.starts_with(s)) {
            return (take, Some(which), false);
        }
        let partial = stops.iter().any(|s| text::is_proper_prefix(after, s));
        (take, None, !partial)
    }
}

impl StepReader for MistralRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let feed = Feed { input, eof };
        let rest = &input[i..];
        match self.state {
            State::Trigger => {
                let n = self.trigger_lit.len();
                self.advance(input, &mut i, n);
                self.state = State::Decide;
            }
            State::Decide => {
                let ws = self.held_ws.skip(self.offset + i, rest);
                match rest[ws..].chars().next() {
                    None => {
                        let why = "output ended after [TOOL_CALLS]";
                        return ControlFlow::Break(self.truncated_at_eof(eof, i, why, sink));
                    }
                    Some('[') => {
                        i += ws;
                        self.state = State::Array;
                    }
                    Some(_) => {
                        self.advance(input, &mut i, ws);
                        self.state = State::Name;
                    }
                }
            }
            State::Array => {
                let progress = self.array.feed(rest, eof, sink);
                return ControlFlow::Break(Progress {
                    consumed: i + progress.consumed,
                    status: progress.status,
                });
            }
            State::Name | State::CallId => {
                let into_id = self.state == State::CallId;
                let stops = [self.args_lit.as_str(), self.call_id_lit.as_str(), "{"];
                let stops = stops.map(str::to_owned);
                let stop_refs: Vec<&str> = stops.iter().map(String::as_str).collect();
                let (n, which, invalid) = self.read_until(rest, &stop_refs, into_id);
                i += n;
                if invalid {
                    self.state = State::Recover(
                        IssueKind::MalformedJson,
                        "unexpected text in a v11 tool call header",
                    );
                    return ControlFlow::Continue(i);
                }
                match which {
                    Some(0) => {
                        self.raw.push_str(&self.args_lit.clone());
                        i += self.args_lit.len();
                        self.state = State::Args;
                    }
                    Some(1) => {
                        self.raw.push_str(&self.call_id_lit.clone());
                        i += self.call_id_lit.len();
                        self.state = State::CallId;
                    }
                    Some(_) => self.state = State::Args,
                    None => {
                        let why = "output ended inside a tool call header";
                        return ControlFlow::Break(self.truncated_at_eof(eof, i, why, sink));
                    }
                }
                if self.state == State::Args {
                    if self.name.is_empty() {
                        return ControlFlow::Break(self.fail_done(
                            IssueKind::MissingName,
                            "the call has no name",
                            i,
                            sink,
                        ));
                    }
                    let id = (!self.call_id.is_empty()).then(|| self.call_id.clone());
                    sink.start_call(&self.name, id);
                }
            }
            State::Args => {
                if !self.scanner.started() {
                    let ws = text::skip_ws(rest);
                    self.advance(input, &mut i, ws);
                    if i == input.len() {
                        let why = "output ended before the arguments";
                        return ControlFlow::Break(self.wait_or_truncate(feed, i, why, sink));
                    }
                }
                let rest = &input[i..];
                match self.scanner.scan(rest.as_bytes()) {
                    ScanResult::Complete(n) => {
                        self.stream_args(&rest[..n], sink);
                        i += n;
                        self.end(sink);
                        self.state = State::AfterCall;
                    }
                    ScanResult::Incomplete => {
                        self.stream_args(rest, sink);
                        let why = "output ended inside the arguments";
                        return ControlFlow::Break(self.wait_or_truncate(
                            feed,
                            input.len(),
                            why,
                            sink,
                        ));
                    }
                    ScanResult::Invalid => {
                        self.state =
                            State::Recover(IssueKind::MalformedJson, "arguments are not JSON");
                    }
                }
            }
            State::Recover(kind, why) => {
                // The next `[TOOL_CALLS]` starts the next call.
                let stops = [self.trigger_lit.clone()];
                return ControlFlow::Break(
                    match self.skip_broken(feed, &mut i, &stops, 0, (kind, why), sink) {
                        ControlFlow::Continue(_) => Progress::done(i),
                        ControlFlow::Break(p) => p,
                    },
                );
            }
            State::AfterCall => {
                let ws = self.held_ws.skip(self.offset + i, rest);
                let after = &rest[ws..];
                if after.starts_with(self.end_lit.as_str()) {
                    return ControlFlow::Break(Progress::done(i + ws + self.end_lit.len()));
                }
                if !eof && (after.is_empty() || text::is_proper_prefix(after, &self.end_lit)) {
                    return ControlFlow::Break(Progress::more(i));
                }
                return ControlFlow::Break(Progress {
                    consumed: i,
                    status: Status::Done,
                });
            }
        }
        ControlFlow::Continue(i)
    }

    fn feed_offset(&mut self) -> Option<&mut usize> {
        Some(&mut self.offset)
    }
}

fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for call in calls {
        out.push_str("[TOOL_CALLS]");
        out.push_str(&call.name);
        out.push_str("[ARGS]");
        out.push_str(&call.arguments_json());
    }
    out
}
