//! Harmony (gpt-oss): the output is a run of messages
//! `<|start|>ROLE<|channel|>CHANNEL[ to=RECIPIENT][ [<|constrain|>]TYPE]<|message|>BODY<|end|>`.
//! The completion starts after a prompt ending `<|start|>assistant`, so its first message has no
//! `<|start|>ROLE`; every message is one region, opened by `<|start|>` or `<|channel|>`.
//!
//! The header is short: it is buffered until `<|message|>`, then the body is streamed.
//! - A recipient (`to=...`, after the role or after the channel) makes the message a tool call, on
//!   any channel: gpt-oss writes about half of its calls on `analysis` (Dynamo PR #10366).
//!   `to=functions.NAME` is a call to `NAME` whose body is a JSON object, streamed as arguments;
//!   an empty body is `{}`. Other recipients (built-in tools: `python`, `browser.search`,
//!   `container.exec`) are calls to that name; a body starting with `{` is JSON arguments, any
//!   other body becomes `{"input": "<the body as a JSON string>"}` (leading whitespace dropped).
//! - Without a recipient, `analysis` is reasoning and every other channel (`final`, `commentary`
//!   preambles, none) is content, whatever the stream's `reasoning` setting.
//! - A body ends at `<|end|>`, `<|call|>` or `<|return|>` (consumed), or where the next message
//!   starts (`<|start|>`, `<|channel|>`), or at the end of the output. A call whose JSON is
//!   complete is returned even without its `<|call|>` (servers often strip that stop token).
//! - Text outside any message is content. A stray `<|end|>` or `<|return|>` there is dropped (it
//!   closes a message whose header was in the prompt); a stray `<|call|>` is `unexpected_text`.
//!
//! The message reader is shared with formats that use the same channel messages with other call
//! bodies (`channel_region` with a `Dialect`): Beam names tools without the `functions.`
//! namespace and writes XML parameters (`super::beam`).

use std::ops::ControlFlow;
use std::sync::Arc;

use super::call_text::{CallText, Feed, Step, StepReader};
use super::Format;
use crate::json;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, Layout, Marker, Role, Syntax, Trigger};
use crate::text;
use crate::tools::ToolSet;

pub const START: &str = "<|start|>";
pub const CHANNEL: &str = "<|channel|>";
pub const MESSAGE: &str = "<|message|>";
pub const CONSTRAIN: &str = "<|constrain|>";
pub const END: &str = "<|end|>";
pub const CALL: &str = "<|call|>";
pub const RETURN: &str = "<|return|>";

/// Longest header accepted before the text is taken for prose that merely contains a marker.
const MAX_HEADER: usize = 512;

/// Where a harmony message starts: any of its tokens, or a first message whose header continues
/// the prompt's (`<|start|>assistant` or `<|start|>`). Beam's messages start the same way.
pub const TRIGGERS: &[Trigger] = &[
    Trigger::marker(START),
    Trigger::marker(CHANNEL),
    Trigger::marker(END),
    Trigger::marker(CALL),
    Trigger::marker(RETURN),
    Trigger::at_start(RECIPIENT),
    Trigger::at_start(ROLE),
];

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "harmony",
        aliases: &["gpt_oss"],
        families: &["gpt-oss-20b", "gpt-oss-120b"],
        description:
            "Harmony messages: <|channel|>analysis is reasoning, final/commentary is content, \
                  a message with to=functions.NAME is a call with a JSON body ending <|call|>",
        extra_markers: &[
            Marker::special(Role::MessageStart, START),
            Marker::special(Role::Channel, CHANNEL),
            Marker::special(Role::HeaderEnd, MESSAGE),
            Marker::special(Role::Constrain, CONSTRAIN),
            Marker::special(Role::MessageEnd, END),
            Marker::special(Role::CallEnd, CALL),
            Marker::special(Role::Return, RETURN),
        ],
        triggers: TRIGGERS,
        // The analysis message as the reasoning pair, so `closing_only` (the prompt opened
        // `<|channel|>analysis<|message|>`) reads the model's text up to `<|end|>` as reasoning.
        reasoning: Some(("<|channel|>analysis<|message|>", END)),
        template: Some(CallTemplate::new(
            "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>",
            "<|call|>",
            "<|start|>assistant",
        )),
        layout: Layout {
            section: None,
            content_block: Some(("<|channel|>final<|message|>", "<|return|>")),
            reasoning_block: Some((
                "<|channel|>analysis<|message|>",
                "<|end|><|start|>assistant",
            )),
            content_after_calls: false,
        },
        ..Syntax::EMPTY
    },
    new_region: |ctx| {
        channel_region(
            ctx,
            Dialect {
                functions_namespace: true,
                body: None,
            },
        )
    },
    write: render,
};

/// Triggers that open a message header without its `<|start|>`, at the output start: at its
/// recipient (the prompt ended `<|start|>assistant` and the output goes on with
/// ` to=NAME<|channel|>...`) or at its role (the prompt ended `<|start|>`). A text that does not
/// go on as a header is content.
pub(crate) const RECIPIENT: &str = "to=";
pub(crate) const ROLE: &str = "assistant";

/// The stop markers of a message body, in the order [`channel_region`] uses: the first three end
/// the message and are consumed, the last two start the next message.
pub(crate) fn stop_lits(ctx: &RegionCtx<'_>) -> [String; 5] {
    let lit = |t| ctx.lit(t);
    [lit(END), lit(CALL), lit(RETURN), lit(START), lit(CHANNEL)]
}

/// What differs between the formats that read channel messages with this reader.
pub(crate) struct Dialect {
    /// Recipients are `functions.NAME` (harmony; other recipients are built-in tools). Otherwise a
    /// recipient is the tool's own name (a `functions.` prefix is dropped when the tool set does
    /// not know the full name).
    pub functions_namespace: bool,
    /// Reads call bodies that are not JSON objects. `None`: harmony's rule (a function's body must
    /// be JSON, a built-in tool's other body is wrapped as `{"input": ...}`).
    pub body: Option<Box<dyn CallBody>>,
}

/// A call body in a format's own encoding, read up to the stop marker that ends its message.
pub(crate) trait CallBody: Send + Sync {
    /// A call to `name` starts (its body may still turn out empty or a JSON object).
    fn start(&mut self, name: &str);
    /// Read body text from `rest`, writing the arguments from their opening on (the first call
    /// starts at a non-whitespace character).
    fn feed(&mut self, rest: &str, eof: bool, sink: &mut Sink) -> BodyStep;
    /// The body ended at a stop marker or at the end of the output: close the arguments.
    fn close(&mut self, sink: &mut Sink);
}

/// What a [`CallBody`] read.
pub(crate) enum BodyStep {
    /// This many bytes were read; more input is needed (never at `eof`).
    More(usize),
    /// The body ended after this many bytes: a stop marker (not consumed) or the end of the output
    /// follows.
    Ended(usize),
    /// The call is broken after this many bytes; the rest of its message is kept for the issue.
    Broken(usize, IssueKind, &'static str),
}

impl BodyStep {
    /// The input ran out after `read` bytes, `inside` something that must close: more is
    /// needed, or at the end of the output the call is cut there.
    pub(crate) fn out_of_input(read: usize, eof: bool, inside: &'static str) -> Self {
        if eof {
            Self::Broken(read, IssueKind::Truncated, inside)
        } else {
            Self::More(read)
        }
    }
}

/// The region reader for one channel message (or a stray end marker).
pub(crate) fn channel_region(ctx: &RegionCtx<'_>, dialect: Dialect) -> Box<dyn RegionParser> {
    let lit = |t| ctx.lit(t);
    let stops = stop_lits(ctx);
    let stop_firsts = stops.iter().filter_map(|s| s.bytes().next()).collect();
    let opener = ctx.syntax.triggers[ctx.trigger].text;
    let at_recipient = opener == RECIPIENT || opener == ROLE;
    Box::new(HarmonyRegion {
        state: State::Trigger,
        opened_by_start: opener == START || at_recipient,
        stray_end: [END, CALL, RETURN].contains(&opener),
        at_recipient,
        soft: ctx.soft(),
        trigger: ctx.trigger_lit(),
        channel: lit(CHANNEL),
        message: lit(MESSAGE),
        constrain: lit(CONSTRAIN),
        stops,
        stop_firsts,
        header: String::new(),
        raw: String::new(),
        is_function: false,
        json: JsonBody::default(),
        functions_namespace: dialect.functions_namespace,
        body: dialect.body,
        tools: ctx.tools.clone(),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Trigger,
    Header,
    /// A message that is not a call: reasoning or content.
    Text {
        reasoning: bool,
    },
    /// A call's body, before its first non-whitespace character.
    BodyStart,
    Json,
    AfterJson,
    /// A built-in tool's non-JSON body, streamed as `{"input": "..."}`.
    Wrapped,
    /// A body in the dialect's own encoding ([`CallBody`]).
    Own,
    /// A broken call: its text is collected up to the end of the message for the issue.
    Skip(IssueKind, &'static str),
}

/// Where a JSON object body ends; markers outside strings (and special-token markers anywhere)
/// end the message even when the object is not closed.
#[derive(Debug, Clone, Default)]
struct JsonBody {
    depth: u64,
    in_string: bool,
    escaped: bool,
}

enum JsonStep {
    /// The object closed after this many bytes.
    Complete(usize),
    /// A stop marker starts at this offset before the object closed.
    Stopped(usize),
    /// A possible partial marker starts at this offset: wait for more input.
    Hold(usize),
    /// Everything was read.
    Incomplete,
}

struct HarmonyRegion {
    state: State,
    opened_by_start: bool,
    stray_end: bool,
    /// Opened by [`RECIPIENT`] or [`ROLE`]: the trigger is the header's first text.
    at_recipient: bool,
    /// Opened by a soft trigger: text that is not a message header is content.
    soft: bool,
    trigger: String,
    channel: String,
    message: String,
    constrain: String,
    stops: [String; 5],
    /// First bytes of the stop markers.
    stop_firsts: Vec<u8>,
    header: String,
    raw: String,
    is_function: bool,
    json: JsonBody,
    functions_namespace: bool,
    body: Option<Box<dyn CallBody>>,
    tools: Arc<ToolSet>,
}

/// The fields of a message header.
#[derive(Debug, Default, PartialEq, Eq)]
struct Header {
    role: Option<String>,
    channel: Option<String>,
    recipient: Option<String>,
    content_type: Option<String>,
}

fn parse_header(header: &str, opened_by_start: bool, channel_lit: &str, constrain: &str) -> Header {
    let mut out = Header::default();
    let (role_part, channel_part) = if opened_by_start {
        match header.find(channel_lit) {
            Some(p) => (&header[..p], Some(&header[p + channel_lit.len()..])),
            None => (header, None),
        }
    } else {
        ("", Some(header))
    };
    for word in role_part.split_whitespace() {
        match word.strip_prefix("to=") {
            Some(r) => out.recipient = Some(r.to_owned()),
            None if out.role.is_none() => out.role = Some(word.to_owned()),
            None => {}
        }
    }
    if let Some(part) = channel_part {
        let part = part.replace(constrain, " ");
        for word in part.split_whitespace() {
            match word.strip_prefix("to=") {
                Some(r) => out.recipient = Some(r.to_owned()),
                None if out.channel.is_none() => out.channel = Some(word.to_owned()),
                None => out.content_type = Some(word.to_owned()),
            }
        }
    }
    out
}

/// Characters a header can hold besides its markers.
fn is_header_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, ' ' | '\t' | '_' | '-' | '.' | ':' | '=' | '/' | '@')
}

impl CallText for HarmonyRegion {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl HarmonyRegion {
    fn stop_refs(&self) -> [&str; 5] {
        self.stops.each_ref().map(String::as_str)
    }

    /// The first stop marker in `rest`: (offset, length to consume with it).
    fn find_stop(&self, rest: &str) -> Option<(usize, usize)> {
        text::find_any(rest, &self.stop_refs()).map(|(pos, which)| {
            let len = if which < 3 {
                self.stops[which].len()
            } else {
                0
            };
            (pos, len)
        })
    }

    /// When `rest` starts with a stop marker: the length to consume with it.
    fn stop_at_start(&self, rest: &str) -> Option<usize> {
        self.stops
            .iter()
            .position(|s| rest.starts_with(s.as_str()))
            .map(|which| {
                if which < 3 {
                    self.stops[which].len()
                } else {
                    0
                }
            })
    }

    fn partial_stop(&self, rest: &str) -> usize {
        text::partial_suffix_len(rest, &self.stop_refs())
    }

    fn end_call(&mut self, consumed: usize, sink: &mut Sink) -> Progress {
        self.end(sink);
        Progress::done(consumed)
    }

    /// Read header text; `Some` when the header is complete or given up on.
    fn read_header(
        &mut self,
        input: &str,
        i: &mut usize,
        eof: bool,
        sink: &mut Sink,
    ) -> Option<Progress> {
        let rest = &input[*i..];
        let message = self.message.clone();
        let markers = [
            message.as_str(),
            self.channel.as_str(),
            self.constrain.as_str(),
        ];
        let mut p = 0;
        let mut complete = None;
        let mut bad = false;
        let mut broken = false;
        while p < rest.len() {
            let here = &rest[p..];
            if let Some(m) = markers.iter().find(|m| here.starts_with(**m)) {
                if *m == message {
                    complete = Some(p);
                    break;
                }
                p += m.len();
                continue;
            }
            if self.stop_at_start(here).is_some() {
                broken = true;
                break;
            }
            if !eof
                && (markers.iter().any(|m| text::is_proper_prefix(here, m))
                    || self.partial_stop(here) == here.len())
            {
                break;
            }
            let Some(c) = here.chars().next() else { break };
            // A header starts right after its marker (a role or a channel name).
            let leading_space = self.header.is_empty() && p == 0 && c.is_whitespace();
            if !is_header_char(c) || leading_space || self.header.len() + p >= MAX_HEADER {
                bad = true;
                break;
            }
            p += c.len_utf8();
        }
        self.header.push_str(&rest[..p]);
        self.raw.push_str(&rest[..p]);
        *i += p;
        if let Some(at) = complete {
            debug_assert_eq!(at, p);
            self.raw.push_str(&message);
            *i += message.len();
            self.open_message(sink);
            return None;
        }
        if self.soft && (broken || bad || eof) {
            // `to=` at the output start that does not lead a message header: prose.
            return Some(Progress {
                consumed: *i,
                status: Status::Reject(std::mem::take(&mut self.raw)),
            });
        }
        if broken {
            // A marker that ends or starts a message: this header never got its `<|message|>`.
            return Some(self.fail_done(
                IssueKind::UnexpectedText,
                "a message header without <|message|>",
                *i,
                sink,
            ));
        }
        if bad {
            // Not a header: prose that contains a marker (text input). It is content.
            let raw = std::mem::take(&mut self.raw);
            sink.content(&raw);
            return Some(Progress::done(*i));
        }
        let why = "output ended inside a message header";
        Some(self.truncated_at_eof(eof, *i, why, sink))
    }

    /// The header is complete: decide what the body is.
    fn open_message(&mut self, sink: &mut Sink) {
        let header = parse_header(
            &self.header,
            self.opened_by_start,
            &self.channel,
            &self.constrain,
        );
        let recipient = header
            .recipient
            .filter(|r| !matches!(r.as_str(), "assistant" | "user" | "system" | "developer"));
        let Some(recipient) = recipient else {
            self.raw.clear();
            self.state = State::Text {
                reasoning: header.channel.as_deref() == Some("analysis"),
            };
            return;
        };
        let name = if self.functions_namespace {
            self.is_function = recipient.starts_with("functions.");
            recipient.strip_prefix("functions.").unwrap_or(&recipient)
        } else {
            self.is_function = true;
            match recipient.strip_prefix("functions.") {
                Some(short) if self.tools.get(&recipient).is_none() => short,
                _ => &recipient,
            }
        };
        if name.is_empty() {
            self.state = State::Skip(IssueKind::MissingName, "the recipient names no function");
            return;
        }
        sink.start_call(name, None);
        if let Some(body) = self.body.as_mut() {
            body.start(name);
        }
        self.state = State::BodyStart;
    }

    fn scan_json(&mut self, rest: &str, eof: bool) -> JsonStep {
        let bytes = rest.as_bytes();
        let mut p = 0;
        while p < bytes.len() {
            let b = bytes[p];
            // Special-token markers never occur inside JSON text; typed markers only outside strings.
            if self.stop_firsts.contains(&b) && (!self.json.in_string || b >= 0x80) {
                let here = &rest[p..];
                let candidates = self
                    .stops
                    .iter()
                    .filter(|s| !self.json.in_string || !s.is_ascii());
                let mut partial = false;
                for stop in candidates {
                    if here.starts_with(stop.as_str()) {
                        return JsonStep::Stopped(p);
                    }
                    partial |= !eof && text::is_proper_prefix(here, stop);
                }
                if partial {
                    return JsonStep::Hold(p);
                }
            }
            p += 1;
            let js = &mut self.json;
            if js.in_string {
                if js.escaped {
                    js.escaped = false;
                } else if b == b'\\' {
                    js.escaped = true;
                } else if b == b'"' {
                    js.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => js.in_string = true,
                b'{' | b'[' => js.depth += 1,
                b'}' | b']' => {
                    js.depth = js.depth.saturating_sub(1);
                    if js.depth == 0 {
                        return JsonStep::Complete(p);
                    }
                }
                _ => {}
            }
        }
        JsonStep::Incomplete
    }
}

impl StepReader for HarmonyRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let rest = &input[i..];
        match self.state {
            State::Trigger => {
                let n = self.trigger.len().min(rest.len());
                i += n;
                if self.stray_end {
                    // `<|end|>` / `<|return ControlFlow::Break(|>` close a message whose header was in the prompt);
                    // a `<|call|>` outside any message ends no call.
                    if self.trigger == self.stops[1] {
                        sink.fail_call(
                            IssueKind::UnexpectedText,
                            "<|call|> outside any message",
                            &rest[..n],
                        );
                    }
                    return ControlFlow::Break(Progress::done(i));
                }
                self.raw.push_str(&rest[..n]);
                if self.at_recipient {
                    self.header.push_str(&rest[..n]);
                }
                self.state = State::Header;
            }
            State::Header => {
                if let Some(progress) = self.read_header(input, &mut i, eof, sink) {
                    return ControlFlow::Break(progress);
                }
            }
            State::Text { reasoning } => {
                let emit = |sink: &mut Sink, t: &str| {
                    if reasoning {
                        sink.reasoning(t)
                    } else {
                        sink.content(t)
                    }
                };
                if let Some((pos, len)) = self.find_stop(rest) {
                    emit(sink, &rest[..pos]);
                    return ControlFlow::Break(Progress::done(i + pos + len));
                }
                let upto = if eof {
                    rest.len()
                } else {
                    rest.len() - self.partial_stop(rest)
                };
                emit(sink, &rest[..upto]);
                i += upto;
                return ControlFlow::Break(if eof {
                    Progress::done(i)
                } else {
                    Progress::more(i)
                });
            }
            State::BodyStart => {
                let ws = text::skip_ws(rest);
                self.advance(input, &mut i, ws);
                let rest = &input[i..];
                if let Some(len) = self.stop_at_start(rest) {
                    // An empty body: no arguments.
                    self.raw.push_str(&rest[..len]);
                    sink.args("{}");
                    return ControlFlow::Break(self.end_call(i + len, sink));
                }
                if rest.is_empty() || (!eof && self.partial_stop(rest) == rest.len()) {
                    let why = "output ended before the call's arguments";
                    return ControlFlow::Break(self.wait_or_truncate(
                        Feed { input, eof },
                        i,
                        why,
                        sink,
                    ));
                }
                if rest.starts_with('{') {
                    self.json = JsonBody::default();
                    self.state = State::Json;
                } else if self.body.is_some() {
                    self.state = State::Own;
                } else if self.is_function {
                    self.state = State::Skip(
                        IssueKind::MalformedJson,
                        "the arguments are not a JSON object",
                    );
                } else {
                    sink.args("{\"input\": \"");
                    self.state = State::Wrapped;
                }
            }
            State::Json => {
                let step = self.scan_json(rest, eof);
                let (n, next) = match step {
                    JsonStep::Complete(n) => (n, Some(State::AfterJson)),
                    JsonStep::Stopped(n) => (
                        n,
                        Some(State::Skip(
                            IssueKind::MalformedJson,
                            "the message ended before the JSON arguments closed",
                        )),
                    ),
                    JsonStep::Hold(n) => (n, None),
                    JsonStep::Incomplete => (rest.len(), None),
                };
                self.stream_args(&rest[..n], sink);
                i += n;
                match next {
                    Some(state) => self.state = state,
                    None => {
                        let why = "output ended inside the call's arguments";
                        return ControlFlow::Break(self.truncated_at_eof(eof, i, why, sink));
                    }
                }
            }
            State::AfterJson => {
                let ws = text::skip_ws(rest);
                let after = &rest[ws..];
                match self.stop_at_start(after) {
                    Some(len) => {
                        self.raw.push_str(&rest[..ws + len]);
                        return ControlFlow::Break(self.end_call(i + ws + len, sink));
                    }
                    _ if after.is_empty() => {
                        self.advance(input, &mut i, ws);
                        if eof {
                            return ControlFlow::Break(self.end_call(i, sink));
                        }
                        return ControlFlow::Break(Progress::more(i));
                    }
                    _ if !eof && self.partial_stop(after) == after.len() => {
                        self.raw.push_str(&rest[..ws]);
                        return ControlFlow::Break(Progress::more(i + ws));
                    }
                    _ => {
                        self.state = State::Skip(
                            IssueKind::MalformedJson,
                            "unexpected text after the JSON arguments",
                        );
                    }
                }
            }
            State::Wrapped => {
                let (upto, stop) = match self.find_stop(rest) {
                    Some((pos, len)) => (pos, Some(len)),
                    None if eof => (rest.len(), Some(0)),
                    None => (rest.len() - self.partial_stop(rest), None),
                };
                let mut fragment = String::new();
                json::escape_into(&mut fragment, &rest[..upto]);
                if !fragment.is_empty() {
                    sink.args(&fragment);
                }
                self.advance(input, &mut i, upto);
                let Some(len) = stop else {
                    return ControlFlow::Break(Progress::more(i));
                };
                sink.args("\"}");
                self.raw.push_str(&input[i..i + len]);
                return ControlFlow::Break(self.end_call(i + len, sink));
            }
            State::Own => {
                let Some(body) = self.body.as_mut() else {
                    return ControlFlow::Break(self.fail_done(
                        IssueKind::MalformedJson,
                        "no body reader",
                        i,
                        sink,
                    ));
                };
                match body.feed(rest, eof, sink) {
                    BodyStep::More(n) => {
                        self.raw.push_str(&rest[..n]);
                        return ControlFlow::Break(Progress::more(i + n));
                    }
                    BodyStep::Ended(n) => {
                        body.close(sink);
                        self.advance(input, &mut i, n);
                        let len = self.stop_at_start(&input[i..]).unwrap_or(0);
                        self.raw.push_str(&input[i..i + len]);
                        return ControlFlow::Break(self.end_call(i + len, sink));
                    }
                    BodyStep::Broken(n, kind, why) => {
                        self.advance(input, &mut i, n);
                        self.state = State::Skip(kind, why);
                    }
                }
            }
            State::Skip(kind, why) => {
                let (upto, len) = match self.find_stop(rest) {
                    Some((pos, len)) => (pos, len),
                    None if eof => (rest.len(), 0),
                    None => {
                        let upto = rest.len() - self.partial_stop(rest);
                        self.raw.push_str(&rest[..upto]);
                        return ControlFlow::Break(Progress::more(i + upto));
                    }
                };
                self.raw.push_str(&rest[..upto + len]);
                return ControlFlow::Break(self.fail_done(kind, why, i + upto + len, sink));
            }
        }
        ControlFlow::Continue(i)
    }
}

/// What gpt-oss writes: content that accompanies calls as a `commentary` preamble before them,
/// content alone as a `final` message; each call as
/// `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{args}<|call|>`, every
/// message after the first opened by `<|start|>assistant`.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::new();
    let open = |out: &mut String| {
        if !out.is_empty() {
            out.push_str("<|start|>assistant");
        }
    };
    if let Some(content) = content {
        if calls.is_empty() {
            out.push_str("<|channel|>final<|message|>");
            out.push_str(content);
            out.push_str(RETURN);
            return out;
        }
        out.push_str("<|channel|>commentary<|message|>");
        out.push_str(content);
        out.push_str(END);
    }
    for call in calls {
        open(&mut out);
        out.push_str("<|channel|>commentary to=functions.");
        out.push_str(&call.name);
        out.push_str(" <|constrain|>json<|message|>");
        out.push_str(&call.arguments_json());
        out.push_str(CALL);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(h: &str, start: bool) -> Header {
        parse_header(h, start, CHANNEL, CONSTRAIN)
    }

    #[test]
    fn reads_header_fields_in_either_place() {
        let h = header(
            "assistant<|channel|>commentary to=functions.f <|constrain|>json",
            true,
        );
        assert_eq!(h.role.as_deref(), Some("assistant"));
        assert_eq!(h.channel.as_deref(), Some("commentary"));
        assert_eq!(h.recipient.as_deref(), Some("functions.f"));
        assert_eq!(h.content_type.as_deref(), Some("json"));
        let h = header("assistant to=functions.g<|channel|>commentary json", true);
        assert_eq!(h.recipient.as_deref(), Some("functions.g"));
        assert_eq!(h.content_type.as_deref(), Some("json"));
        let h = header("analysis to=python code", false);
        assert_eq!(h.channel.as_deref(), Some("analysis"));
        assert_eq!(h.recipient.as_deref(), Some("python"));
        let h = header("commentary to=functions.f<|constrain|>json", false);
        assert_eq!(h.recipient.as_deref(), Some("functions.f"));
        assert_eq!(h.content_type.as_deref(), Some("json"));
        assert_eq!(header("final", false).recipient, None);
    }
}
