//! Salesforce xLAM-2 (Llama and Qwen based): a JSON array of `{"name": ..., "arguments": {...}}`
//! objects, written bare as the whole answer (the chat template's form), or inside a ```` ```json ````
//! code fence, or after `[TOOL_CALLS]`, or inside `<tool_call>...</tool_call>` (the shapes vLLM's
//! `xlam` parser accepts). A fence or bracket that holds no call object stays content.

use super::json_calls::{self, JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::Format;
use crate::region::{Progress, RegionParser, Sink, Status};
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "xlam",
        aliases: &["xlam_llama", "xlam_qwen", "xlam2"],
        families: &["xLAM-2 (Llama 3.1 based)", "xLAM-2 (Qwen 2.5 based)"],
        description: "bare JSON call array, or one inside a ```json fence, after [TOOL_CALLS], or in <tool_call>...</tool_call>",
        extra_markers: &[
            Marker::plain(Role::CallStart, "```"),
            Marker::plain(Role::CallStart, "[TOOL_CALLS]"),
            Marker::plain(Role::CallStart, "<tool_call>"),
            Marker::plain(Role::CallEnd, "</tool_call>"),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Plain),
        triggers: &[
            Trigger::at_start("["),
            Trigger::soft(FENCE).confirmed(r"```([jJ][sS][oO][nN])?\s*\["),
            Trigger::marker("[TOOL_CALLS]"),
            Trigger::marker("<tool_call>"),
        ],
        reasoning: Some(THINK),
        stops: &["<|eot_id|>", "<|im_end|>"],
        template: Some(CallTemplate::JSON_OBJECT),
        layout: Layout::section("[", "]"),
        ..Syntax::EMPTY
    },
    new_region: |ctx| match ctx.trigger { 0 => Box::new(JsonRegion::new(ctx, JsonRegionSpec { consume_trigger: false, payload: Payload::Array, end: None, keys: STANDARD_KEYS, })), 1 => Box::new(FenceRegion { phase: FencePhase::Fence, header: String::new(), tag_len: 0, inner: JsonRegion::new(ctx, JsonRegionSpec { consume_trigger: false, payload: Payload::Array, end: Some(FENCE), keys: STANDARD_KEYS, }), }), 2 => json_calls::after_marker(ctx, None), _ => json_calls::after_marker(ctx, Some("</tool_call>")), },
    write: render,
};

const FENCE: &str = "```";

/// The longest info string accepted after the opening fence (`json`, or none).
const MAX_TAG: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FencePhase {
    Fence,
    Tag,
    Space,
    Body,
}

/// ```` ``` ```` plus an optional `json` tag and whitespace, then the call array up to the closing
/// fence. Anything else after the fence (another language, prose, a non-call array) is content.
struct FenceRegion {
    phase: FencePhase,
    header: String,
    tag_len: usize,
    inner: JsonRegion,
}

impl FenceRegion {
    fn reject(&mut self, consumed: usize) -> Progress {
        Progress {
            consumed,
            status: Status::Reject(std::mem::take(&mut self.header)),
        }
    }
}

impl RegionParser for FenceRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let bytes = input.as_bytes();
        let mut i = 0;
        while self.phase != FencePhase::Body {
            let Some(&b) = bytes.get(i) else {
                if eof {
                    return self.reject(i);
                }
                return Progress::more(i);
            };
            match self.phase {
                FencePhase::Fence => {
                    let n = FENCE.len().min(input.len());
                    self.header.push_str(&input[..n]);
                    i = n;
                    self.phase = FencePhase::Tag;
                }
                FencePhase::Tag if b.is_ascii_alphabetic() => {
                    self.tag_len += 1;
                    if self.tag_len > MAX_TAG {
                        return self.reject(i);
                    }
                    self.header.push(b as char);
                    i += 1;
                }
                FencePhase::Tag => {
                    let tag = &self.header[FENCE.len()..];
                    if !(tag.is_empty() || tag.eq_ignore_ascii_case("json")) {
                        return self.reject(i);
                    }
                    self.phase = FencePhase::Space;
                }
                FencePhase::Space if b.is_ascii_whitespace() => {
                    self.header.push(b as char);
                    i += 1;
                }
                FencePhase::Space if b == b'[' => {
                    self.inner.seed_raw(&self.header);
                    self.phase = FencePhase::Body;
                }
                FencePhase::Space | FencePhase::Body => return self.reject(i),
            }
        }
        let progress = self.inner.feed(&input[i..], eof, sink);
        Progress {
            consumed: i + progress.consumed,
            status: progress.status,
        }
    }
}

fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let array = render::call_array(calls, "arguments");
    match content {
        // The template writes a tool-calling turn as the bare array alone.
        None | Some("") => {
            if calls.is_empty() {
                String::new()
            } else {
                array
            }
        }
        // With prose before it a bare array would not start the output: fence it.
        Some(text) if !calls.is_empty() => format!("{text}\n\n```json\n{array}\n```"),
        Some(text) => text.to_owned(),
    }
}
