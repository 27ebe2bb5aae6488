//! Inkling (Thinking Machines): the output is a run of typed blocks, each opened by a content
//! token and closed by `<|end_message|>`, most after a `<|message_model|>` header that may name
//! the author (a tool's name before a call):
//!
//! ```text
//! <|content_thinking|>reasoning<|end_message|>
//! <|message_model|><|content_text|>I'll check.<|end_message|>
//! <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}<|end_message|>
//! <|content_model_end_sampling|>
//! ```
//!
//! A call is the JSON object `{"name", "args"}` after `<|content_invoke_tool_json|>`; the header's
//! name is metadata and dropped. A thinking block is reasoning whatever the stream's `reasoning`
//! setting (`closing_only` reads a block the prompt opened). `<|content_invoke_tool_text|>` is a
//! free-text invocation with no name or arguments: SGLang returns it as a call with an empty
//! name, the SGLang gateway drops it; here it is an issue (`unexpected_text`) with its text. All
//! markers are special tokens of the TML vocabulary (ids in SGLang's `inkling_tokenizer.py`).
//! Sources: SGLang `inkling_detector.py` (`inkling`), the SGLang gateway's `tool-parser` and
//! `reasoning-parser` `inkling.rs`; vLLM `inkling` wraps the same engine parser.

use super::json_calls::{CallKeys, JsonRegion, JsonRegionSpec, Payload};
use super::markup::{BlockText, DropMarker, TextBlock};
use super::Format;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, Implied, Marker, Role, Syntax, Tokens, Trigger};
use crate::text::{self, Scan};

const MESSAGE_MODEL: &str = "<|message_model|>";
const CONTENT_TEXT: &str = "<|content_text|>";
const CONTENT_THINKING: &str = "<|content_thinking|>";
const INVOKE_JSON: &str = "<|content_invoke_tool_json|>";
const INVOKE_TEXT: &str = "<|content_invoke_tool_text|>";
const END_MESSAGE: &str = "<|end_message|>";
const END_SAMPLING: &str = "<|content_model_end_sampling|>";

const KEYS: CallKeys = CallKeys {
    name: &["name"],
    arguments: &["args", "arguments"],
    name_is_key: false,
};

/// The longest header name read before the header is taken for text.
const MAX_HEADER: usize = 512;

/// The order of the triggers, which `new_region` reads.
const TRIGGERS: [&str; 7] = [
    INVOKE_JSON,
    MESSAGE_MODEL,
    CONTENT_THINKING,
    INVOKE_TEXT,
    CONTENT_TEXT,
    END_MESSAGE,
    END_SAMPLING,
];

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "inkling",
        aliases: &["thinking_machines", "tml"],
        families: &["Inkling"],
        description: "Typed TML blocks: <|message_model|>NAME<|content_invoke_tool_json|>\
                      {\"name\":...,\"args\":{...}}<|end_message|>; <|content_thinking|> is reasoning",
        extra_markers: &[
            Marker::special(Role::MessageStart, MESSAGE_MODEL),
            Marker::special(Role::ResponseStart, CONTENT_TEXT),
            Marker::special(Role::CallStart, INVOKE_JSON),
            Marker::special(Role::CallStart, INVOKE_TEXT),
            Marker::special(Role::CallEnd, END_MESSAGE),
            Marker::special(Role::ResponseEnd, END_MESSAGE),
            Marker::special(Role::EndOfSequence, END_SAMPLING),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Special),
        triggers: &Trigger::markers(TRIGGERS),
        reasoning: Some((CONTENT_THINKING, END_MESSAGE)),
        template: Some(CallTemplate::new(
            "<|message_model|>{name}<|content_invoke_tool_json|>{\"name\":\"{name}\",\"args\":",
            "}<|end_message|>",
            "",
        )),
        ..Syntax::EMPTY
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    match ctx.trigger {
        0 => Box::new(call_region(ctx)),
        1 => Box::new(Header::new(ctx)),
        2 => Box::new(TextBlock::new(
            ctx.trigger_lit(),
            BlockText::Reasoning,
            vec![ctx.lit(END_MESSAGE)],
            vec![],
        )),
        3 => Box::new(text_call_region(ctx)),
        _ => Box::new(DropMarker::new(ctx)),
    }
}

fn call_region(ctx: &RegionCtx<'_>) -> JsonRegion {
    let ctx = RegionCtx { trigger: 0, ..*ctx };
    JsonRegion::new(
        &ctx,
        JsonRegionSpec {
            consume_trigger: true,
            payload: Payload::ObjectOrArray,
            end: Some(END_MESSAGE),
            keys: KEYS,
        },
    )
}

/// A text-mode invocation, reported whole.
fn text_call_region(ctx: &RegionCtx<'_>) -> TextBlock {
    TextBlock::new(
        ctx.lit(INVOKE_TEXT),
        BlockText::Issue(
            IssueKind::UnexpectedText,
            "a text-mode tool invocation has no name or JSON arguments",
        ),
        vec![ctx.lit(END_MESSAGE)],
        vec![],
    )
}

/// What follows a message header.
enum Block {
    /// Still reading the header's name.
    Name,
    Call(Box<JsonRegion>),
    TextCall(TextBlock),
}

/// `<|message_model|>` and the author's name after it, up to the block's content token. Before a
/// call the header joins the call's raw text; before a text or thinking block a name is dropped
/// (it is metadata, see [`is_author_name`]); before anything else, text that is no name, or past
/// [`MAX_HEADER`] bytes, it is text; one the output ends inside is a cut-off call.
struct Header {
    skip: usize,
    header: String,
    controls: Vec<String>,
    block: Block,
    /// The readers for a call block, made with the region's context.
    call: Option<(JsonRegion, TextBlock)>,
}

impl Header {
    fn new(ctx: &RegionCtx<'_>) -> Self {
        let header = ctx.trigger_lit();
        Self {
            skip: header.len(),
            controls: TRIGGERS.iter().map(|t| ctx.lit(t)).collect(),
            block: Block::Name,
            call: Some((call_region(ctx), text_call_region(ctx))),
            header,
        }
    }

    fn name_len(&self) -> usize {
        self.header.len() - self.controls[1].len()
    }
}

impl RegionParser for Header {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        match &mut self.block {
            Block::Call(call) => return call.feed(input, eof, sink),
            Block::TextCall(call) => return call.feed(input, eof, sink),
            Block::Name => {}
        }
        let start = self.skip.min(input.len());
        self.skip -= start;
        let rest = &input[start..];
        let (upto, found) = match text::scan(rest, &self.controls) {
            Scan::Found { pos, which } => (pos, Some(which)),
            Scan::NotFound { .. } if eof => (rest.len(), None),
            Scan::NotFound { safe } => (safe, None),
        };
        self.header.push_str(&rest[..upto]);
        let consumed = start + upto;
        if self.name_len() > MAX_HEADER {
            let name = self.header.split_off(self.controls[1].len());
            return Progress {
                consumed,
                status: Status::Reject(name),
            };
        }
        let (call, text_call) = match found {
            Some(0 | 3) => self.call.take().expect("a header opens one block"),
            // A text or thinking block: an author's name is metadata.
            Some(2 | 4) if is_author_name(&self.header[self.controls[1].len()..]) => {
                return Progress::done(consumed)
            }
            // No block follows, or what the header holds is no name: it is text.
            Some(_) => {
                sink.content(&self.header[self.controls[1].len()..]);
                return Progress::done(consumed);
            }
            None if eof => {
                if self.header[self.controls[1].len()..].trim().is_empty() {
                    return Progress::done(input.len());
                }
                let raw = std::mem::take(&mut self.header);
                sink.fail_call(
                    IssueKind::Truncated,
                    "output ended in a message header",
                    &raw,
                );
                return Progress::done(input.len());
            }
            None => return Progress::more(consumed),
        };
        self.block = if found == Some(0) {
            let mut call = call;
            call.seed_raw(&self.header);
            Block::Call(Box::new(call))
        } else {
            let mut call = text_call;
            call.seed_raw(&self.header);
            Block::TextCall(call)
        };
        let progress = self.feed(&input[consumed..], eof, sink);
        Progress {
            consumed: progress.consumed + consumed,
            status: progress.status,
        }
    }
}

/// Whether a header's text is an author's name (dropped as metadata before a text or thinking
/// block): none, or one word of the characters tool names use. Anything else (prose, a marker
/// spelled out in plain text) is the model's text.
fn is_author_name(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@'))
}

/// As the TML renderer writes a turn: the text block, then one message per call.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(content) = content {
        out.push_str(&format!(
            "{MESSAGE_MODEL}{CONTENT_TEXT}{content}{END_MESSAGE}"
        ));
    }
    for call in calls {
        let name = crate::json::quote(&call.name);
        out.push_str(&format!(
            "{MESSAGE_MODEL}{}{INVOKE_JSON}{{\"name\":{name},\"args\":{}}}{END_MESSAGE}",
            call.name,
            call.arguments_json()
        ));
    }
    out
}
