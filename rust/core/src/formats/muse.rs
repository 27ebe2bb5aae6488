//! Meta Muse (Muse Glimmer, Muse Spark): harmony-like messages addressed by recipient, calls in
//! ATEM XML:
//!
//! ```text
//!  to=self<|message|>reasoning<|eom|>
//! <|start|>assistant to=get_weather<|message|><atem:function_calls>
//! <atem:invoke name="get_weather">
//! <atem:parameter name="city">Paris</atem:parameter>
//! </atem:invoke>
//! </atem:function_calls><|eom|>
//! <|start|>assistant to=user<|message|>answer<|eot|>
//! ```
//!
//! The prompt ends with `<|start|>assistant`, so the first message starts at its recipient. A
//! message to `self` is reasoning (whatever the stream's `reasoning` setting), one to `user` or
//! `commentary`, or with no recipient, is content; any other recipient opens a tool channel whose
//! body holds the `<atem:invoke>` calls (several are parallel calls). ATEM outside a tool channel
//! is text, never a call. A body ends at `<|eom|>` or `<|eot|>`, or where the next message starts;
//! a call whose parameters are complete is returned without its closing tags. Values are raw text
//! typed by the tool's JSON schema (vLLM `muse` keeps schema strings as strings; Glimmer's
//! parsers JSON-decode every value, which turns a string `"42"` into a number). Sources: vLLM
//! `muse_tool_parser.py` (`muse`, `musespark1x`, `muse_glimmer`), SGLang
//! `muse_glimmer_detector.py` (`muse`), Dynamo's `tool_calling/muse_glimmer.rs`, which cites the
//! `response_template` of the model's `tokenizer_config.json`.

use super::markup::{BlockText, DropMarker, TextBlock};
use super::xml_invoke::{write_params, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::region::{Progress, RegionCtx, RegionParser, Sink, Status};
use crate::render::RenderCall;
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax, Tokens, Trigger,
};
use crate::text;

const START: &str = "<|start|>";
const MESSAGE: &str = "<|message|>";
const EOM: &str = "<|eom|>";
const EOT: &str = "<|eot|>";
/// The first message's header, after the prompt's `<|start|>assistant`.
const FIRST_HEADER: &str = " to=";
const RECIPIENT: &str = "to=";
const CALLS_OPEN: &str = "<atem:function_calls>";
const CALLS_CLOSE: &str = "</atem:function_calls>";

/// Longest header accepted before the text is taken for prose that merely contains a marker.
const MAX_HEADER: usize = 512;

const PARAMS: ParamTags = ParamTags::new("<atem:parameter name=\"{key}\">", "</atem:parameter>");

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "muse",
        aliases: &[],
        families: &["Muse Glimmer", "Muse Spark"],
        description: "Messages to=RECIPIENT<|message|>...<|eom|>: to=self is reasoning, to=user \
                      content, to=TOOL an <atem:function_calls> block of <atem:invoke> calls",
        extra_markers: &[
            Marker::special(Role::MessageStart, START),
            Marker::special(Role::HeaderEnd, MESSAGE),
            Marker::special(Role::MessageEnd, EOM),
            Marker::special(Role::TurnEnd, EOT),
            Marker::plain(Role::SectionStart, CALLS_OPEN),
            Marker::plain(Role::SectionEnd, CALLS_CLOSE),
            Marker::plain(Role::CallStart, "<atem:invoke"),
            Marker::plain(Role::CallEnd, "</atem:invoke>"),
        ],
        implied: Implied::NONE.with_params(Tokens::Plain),
        triggers: &[
            Trigger::marker(START),
            Trigger::at_start(FIRST_HEADER),
            Trigger::at_start(RECIPIENT),
            Trigger::marker(MESSAGE),
            Trigger::marker(EOM),
            Trigger::marker(EOT),
        ],
        // The reasoning message as the pair, so `closing_only` (the prompt opened
        // `<|start|>assistant to=self<|message|>`) reads the model's text up to `<|eom|>`.
        reasoning: Some(("to=self<|message|>", EOM)),
        template: Some(CallTemplate::new(
            "to={name}<|message|><atem:function_calls>\n<atem:invoke name=\"{name}\">\n",
            "</atem:invoke>\n</atem:function_calls><|eom|>",
            "<|start|>assistant ",
        )),
        stops: &[],
        arguments: ArgSyntax::XmlParams(PARAMS),
        layout: Layout {
            section: None,
            content_block: Some(("to=user<|message|>", EOT)),
            reasoning_block: Some(("to=self<|message|>", "<|eom|><|start|>assistant ")),
            content_after_calls: false,
        },
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    if ctx.trigger > 3 {
        return Box::new(DropMarker::new(ctx));
    }
    Box::new(MuseMessage::new(ctx))
}

/// Where a message is being read.
enum Body {
    Header,
    Text(TextBlock),
    Calls(Box<InvokeRegion>),
}

/// One message: its header up to `<|message|>`, then its body as text or as a tool channel.
struct MuseMessage {
    body: Body,
    /// Bytes of the opening marker still to skip (`<|start|>`; none when the header starts at
    /// its recipient or is the bare `<|message|>`).
    skip: usize,
    header: String,
    soft: bool,
    message: String,
    start: String,
    ends: Vec<String>,
    /// The tool channel's reader, made with the region's context.
    calls: Option<Box<InvokeRegion>>,
}

impl MuseMessage {
    fn new(ctx: &RegionCtx<'_>) -> Self {
        let lit = |t| ctx.lit(t);
        let (start, message) = (lit(START), lit(MESSAGE));
        // The channel's reader starts after `<|message|>`, which never opens a body.
        let body_ctx = RegionCtx { trigger: 3, ..*ctx };
        let calls = InvokeRegion::new(
            &body_ctx,
            InvokeRegionSpec {
                block_closes: vec![lit(EOM), lit(EOT), start.clone()],
                separators: vec![lit(CALLS_OPEN), lit(CALLS_CLOSE)],
                ..InvokeRegionSpec::of(&body_ctx, "Muse")
            },
        );
        let skip = match ctx.trigger {
            0 => start.len(),
            _ => 0,
        };
        Self {
            body: Body::Header,
            skip,
            header: String::new(),
            soft: ctx.soft(),
            ends: vec![lit(EOM), lit(EOT)],
            message,
            start,
            calls: Some(Box::new(calls)),
        }
    }

    /// Opens the body the header's recipient asks for.
    fn open_body(&mut self) {
        let recipient = self
            .header
            .split_whitespace()
            .find_map(|word| word.strip_prefix(RECIPIENT));
        let text = match recipient {
            Some("self") => BlockText::Reasoning,
            None | Some("user" | "commentary" | "developer") => BlockText::Content,
            Some(_) => {
                let calls = self.calls.take().expect("a message has one body");
                self.body = Body::Calls(calls);
                return;
            }
        };
        let block = TextBlock::new(
            String::new(),
            text,
            self.ends.clone(),
            vec![self.start.clone()],
        );
        self.body = Body::Text(block);
    }

    /// Reads the header up to `<|message|>`: the offset after it, or the progress to return.
    /// The header ends at its first character that is not a header character; unless that is
    /// `<|message|>`, the text is not a message header but content (the opening marker is
    /// dropped).
    fn read_header(&mut self, input: &str, eof: bool) -> Result<usize, Progress> {
        let at = self.skip.min(input.len());
        self.skip -= at;
        let rest = &input[at..];
        let stop = rest
            .find(|c: char| !is_header_char(c))
            .unwrap_or(rest.len());
        self.header.push_str(&rest[..stop]);
        let tail = &rest[stop..];
        if self.header.len() <= MAX_HEADER {
            if tail.starts_with(self.message.as_str()) {
                return Ok(at + stop + self.message.len());
            }
            if !eof && (tail.is_empty() || text::is_proper_prefix(tail, &self.message)) {
                return Err(Progress::more(at + stop));
            }
        }
        let text = std::mem::take(&mut self.header);
        let status = if self.soft || !text.is_empty() {
            Status::Reject(text)
        } else {
            Status::Done
        };
        Err(Progress {
            consumed: at + stop,
            status,
        })
    }
}

/// Characters a header can hold besides its markers.
fn is_header_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            ' ' | '\t' | '_' | '-' | '.' | ':' | '=' | '/' | '@' | '*'
        )
}

impl RegionParser for MuseMessage {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let mut at = 0;
        if let Body::Header = self.body {
            match self.read_header(input, eof) {
                Ok(n) => at = n,
                Err(progress) => return progress,
            }
            self.open_body();
        }
        let rest = &input[at..];
        let progress = match &mut self.body {
            Body::Header => unreachable!("the header was read"),
            Body::Text(block) => block.feed(rest, eof, sink),
            Body::Calls(calls) => {
                let mut progress = calls.feed(rest, eof, sink);
                // The next message's start ends the channel; it is read next.
                if progress.status == Status::Done
                    && rest[..progress.consumed].ends_with(self.start.as_str())
                {
                    progress.consumed -= self.start.len();
                }
                progress
            }
        };
        Progress {
            consumed: at + progress.consumed,
            status: progress.status,
        }
    }
}

/// As the chat template writes a turn: the calls, one tool message each, then the answer.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::new();
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str("<|start|>assistant ");
        }
        out.push_str(&format!(
            "to={}<|message|>{CALLS_OPEN}\n<atem:invoke name=\"{}\">\n",
            call.name, call.name
        ));
        if let Some(map) = call.arguments.as_object() {
            write_params(&mut out, map, "atem:parameter");
        }
        out.push_str(&format!("</atem:invoke>\n{CALLS_CLOSE}{EOM}"));
    }
    if let Some(content) = content {
        if !calls.is_empty() {
            out.push_str("<|start|>assistant ");
        }
        out.push_str(&format!("to=user<|message|>{content}{EOT}"));
    }
    out
}
