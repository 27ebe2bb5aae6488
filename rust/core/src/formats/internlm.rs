//! InternLM2 / InternLM2.5 / Intern-S1: `<|action_start|><|plugin|>\n{"name": ..., "parameters":
//! {...}}<|action_end|>`, one block per call. All three markers are special tokens; SGLang's
//! detector expects a space between the first two, as SentencePiece decoding leaves one, so any
//! whitespace is accepted there. `<|action_start|><|interpreter|>` opens a code-interpreter action,
//! which is not a function call: it stays content.

use super::json_calls::{JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::Format;
use crate::message::IssueKind;
use crate::region::{Progress, RegionParser, Sink};
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Marker, Role, Syntax, Trigger};
use crate::text;

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "internlm",
        aliases: &["internlm2", "internlm2_5", "intern_s1"],
        families: &["InternLM2", "InternLM2.5", "Intern-S1"],
        description:
            "<|action_start|><|plugin|> then a JSON object {name, parameters}, closed by <|action_end|>",
        extra_markers: &[
            Marker::special(Role::CallStart, ACTION_START),
            Marker::special(Role::CallKind, PLUGIN),
            Marker::special(Role::CallEnd, ACTION_END),
        ],
        triggers: &[Trigger::marker(ACTION_START)],
        template: Some(CallTemplate::new("<|action_start|><|plugin|>\n{\"name\": \"{name}\", \"parameters\": ", "}<|action_end|>", "")),
        stops: &["<|im_end|>"],
        ..Syntax::EMPTY
    },
    new_region: |ctx| Box::new(ActionRegion { start_lit: ctx.trigger_lit(), plugin_lit: ctx.lit(PLUGIN), end_lit: ctx.lit(ACTION_END), header: String::new(), in_body: false, passthrough: false, inner: JsonRegion::new(ctx, JsonRegionSpec { consume_trigger: false, payload: Payload::ObjectOrArray, end: Some(ACTION_END), keys: STANDARD_KEYS, }), }),
    write: render,
};

const ACTION_START: &str = "<|action_start|>";
const PLUGIN: &str = "<|plugin|>";
const ACTION_END: &str = "<|action_end|>";

struct ActionRegion {
    start_lit: String,
    plugin_lit: String,
    end_lit: String,
    header: String,
    in_body: bool,
    /// Another kind of action (the code interpreter): content through its `<|action_end|>`.
    passthrough: bool,
    inner: JsonRegion,
}

impl ActionRegion {
    fn pass_through(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        match text::scan(input, &[self.end_lit.as_str()]) {
            text::Scan::Found { pos, .. } => {
                let end = pos + self.end_lit.len();
                sink.content(&input[..end]);
                Progress::done(end)
            }
            text::Scan::NotFound { safe } => {
                let upto = if eof { input.len() } else { safe };
                sink.content(&input[..upto]);
                if eof {
                    Progress::done(upto)
                } else {
                    Progress::more(upto)
                }
            }
        }
    }
}

impl RegionParser for ActionRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        if self.passthrough {
            return self.pass_through(input, eof, sink);
        }
        let mut i = 0;
        if !self.in_body {
            if self.header.is_empty() {
                let n = self.start_lit.len().min(input.len());
                self.header.push_str(&input[..n]);
                i = n;
            }
            let ws = text::skip_ws(&input[i..]);
            self.header.push_str(&input[i..i + ws]);
            i += ws;
            let rest = &input[i..];
            if rest.starts_with(self.plugin_lit.as_str()) {
                self.header.push_str(&self.plugin_lit);
                i += self.plugin_lit.len();
                self.in_body = true;
                self.inner.seed_raw(&self.header);
            } else if rest.is_empty() || text::is_proper_prefix(rest, &self.plugin_lit) {
                if !eof {
                    return Progress::more(i);
                }
                let mut raw = std::mem::take(&mut self.header);
                raw.push_str(rest);
                sink.fail_call(
                    IssueKind::Truncated,
                    "output ended inside an action header",
                    &raw,
                );
                return Progress::done(input.len());
            } else {
                sink.content(&self.header);
                self.passthrough = true;
                let progress = self.pass_through(&input[i..], eof, sink);
                return Progress {
                    consumed: i + progress.consumed,
                    status: progress.status,
                };
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
    let mut out = String::from(content.unwrap_or(""));
    for call in calls {
        out.push_str(ACTION_START);
        out.push_str(PLUGIN);
        out.push('\n');
        out.push_str(&render::call_object(call, "parameters"));
        out.push_str(ACTION_END);
    }
    out
}
