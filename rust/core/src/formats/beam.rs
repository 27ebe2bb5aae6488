//! Beam: Harmony channel messages (the same special tokens as gpt-oss) whose tool calls carry XML
//! parameters. A turn is an analysis message, then either one message per tool call or the final
//! answer:
//!
//! ```text
//! <|channel|>analysis<|message|>REASONING<|end|>
//! <|start|>assistant to=NAME<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="KEY">VALUE</rfl:parameter>...<|call|>
//! <|start|>assistant<|channel|>final<|message|>ANSWER<|return|>
//! ```
//!
//! (SGLang and vLLM serve it as `beam`; the wire is the one the SGLang model gateway's
//! response-template tests and llama.cpp's `harmony-xml` chat parser read.) The completion
//! starts after a prompt ending `<|start|>assistant`.
//!
//! Messages are read by the Harmony reader (`super::harmony::channel_region`): a recipient
//! (`to=NAME`, after the role or after the channel) makes a message a call on any channel;
//! without one, `analysis` is reasoning and every other channel is content. What differs:
//! - the recipient is the tool's own name (`to=weather.lookup`), with no `functions.` namespace
//!   (a `functions.` prefix is dropped when the tools do not declare the full name);
//! - the body is `<rfl:parameter name="KEY">VALUE</rfl:parameter>` elements (a JSON object body
//!   is read too). Values are raw text typed by the tool's schema ([`crate::xml_value`]); string
//!   values stream as they arrive. One leading and one trailing `\n` of a value are formatting
//!   (llama.cpp's parser writes `>\nVALUE\n<`, the gateway's tests `>VALUE<`: both read the same);
//! - the completion may open directly with a call message: ` to=NAME<|channel|>...` (a soft
//!   trigger at the output start).
//!
//! Leniency: a missing `</rfl:parameter>` before the next parameter or the end of the message; a
//! call message ended by `<|end|>` or by the next message instead of `<|call|>`, or by the end of
//! the output once every parameter closed; the final message after `<|end|>` without
//! `<|start|>assistant`. Text inside a call body that is not a parameter breaks the call
//! (`unexpected_text`).
//!
//! Reasoning: the analysis channel is reasoning whatever the stream's setting; `reasoning=True`
//! (`native`) and `closing_only` use the analysis message as the format's reasoning block, so a
//! prompt that already opened `<|channel|>analysis<|message|>` works too.
//!
//! For structural tags, one turn is [`ANALYSIS_OPEN`] reasoning `<|end|>` (the spec's `reasoning`
//! pair), then either calls as [`TEMPLATE`] (nothing between them) or the final message
//! [`FINAL_OPEN`] answer `<|return|>`, where a `response_format` JSON goes. As a layout: no
//! section, content block `(FINAL_OPEN, "<|return|>")`, reasoning block `(ANALYSIS_OPEN,
//! "<|end|>")`. The argument style `beam_xml` writes each argument as
//! `<rfl:parameter name="KEY">VALUE</rfl:parameter>`, with no whitespace between elements;
//! VALUE is a string's raw text (no escaping: it may not contain `</rfl:parameter>` or a stop
//! marker) or any other value as JSON, which the parser types back by the schema.
//!
//! Special tokens: `<|start|>`, `<|channel|>`, `<|message|>`, `<|constrain|>`, `<|end|>`, `<|call|>`,
//! `<|return|>` are single tokens (Harmony's o200k ids 200006, 200005, 200008, 200003, 200007,
//! 200012, 200002, if Beam's tokenizer shares them; no source gives Beam's own ids). The parameter
//! tags are plain text.

use std::sync::Arc;

use serde_json::Value;

use super::harmony::{
    self, BodyStep, CallBody, Dialect, CALL, CHANNEL, CONSTRAIN, END, MESSAGE, RETURN, START,
};
use super::xml_params::{param_schema, ParamWriter, MAX_TAG_NAME};
use super::Format;
use crate::message::IssueKind;
use crate::region::{RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax};
use crate::text::{self, Scan};
use crate::tools::ToolSet;

const PARAM_START: &str = "<rfl:parameter name=\"";
const PARAM_END: &str = "</rfl:parameter>";
/// Nothing between parameters; a newline around a value is formatting.
const PARAMS: ParamTags = ParamTags::new("<rfl:parameter name=\"{key}\">", PARAM_END)
    .padded()
    .tight();

/// The analysis message that opens every turn: Beam's reasoning block.
pub const ANALYSIS_OPEN: &str = "<|channel|>analysis<|message|>";
/// The final answer's message, after the analysis message.
pub const FINAL_OPEN: &str = "<|start|>assistant<|channel|>final<|message|>";

/// One call message. `style` `beam_xml`: each argument as
/// `<rfl:parameter name="KEY">VALUE</rfl:parameter>`, strings raw and other values as JSON.
pub const TEMPLATE: CallTemplate = CallTemplate::new(
    "<|start|>assistant to={name}<|channel|>analysis <|constrain|>xml<|message|>",
    "<|call|>",
    "",
);

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "beam",
        aliases: &["harmony_xml"],
        families: &["Beam"],
        description:
            "Harmony channel messages: <|channel|>analysis is reasoning, final is content, \
                  a message with to=NAME is a call whose body is \
                  <rfl:parameter name=\"KEY\">VALUE</rfl:parameter> elements ending <|call|>",
        // Duplicates sit next to their first entry so the special-token list stays free of repeats.
        extra_markers: &[
            Marker::special(Role::MessageStart, START),
            Marker::special(Role::ReasoningExit, START),
            Marker::special(Role::Channel, CHANNEL),
            Marker::special(Role::ReasoningExit, CHANNEL),
            Marker::special(Role::HeaderEnd, MESSAGE),
            Marker::special(Role::Constrain, CONSTRAIN),
            Marker::special(Role::MessageEnd, END),
            Marker::special(Role::CallEnd, CALL),
            Marker::special(Role::Return, RETURN),
            Marker::plain(Role::ParamStart, PARAM_START),
            Marker::plain(Role::ParamEnd, PARAM_END),
        ],
        implied: Implied::NONE,
        triggers: harmony::TRIGGERS,
        reasoning: Some((ANALYSIS_OPEN, END)),
        stops: &[],
        template: Some(TEMPLATE),
        arguments: ArgSyntax::XmlParams(PARAMS),
        layout: Layout {
            section: None,
            content_block: Some((FINAL_OPEN, "<|return|>")),
            reasoning_block: Some((ANALYSIS_OPEN, END)),
            content_after_calls: false,
        },
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let params = ctx.syntax.arguments.params().copied().unwrap_or(PARAMS);
    let body = RflBody {
        tools: ctx.tools.clone(),
        param_start: ctx.lit(params.key_open()),
        param_end: ctx.lit(params.close),
        stops: harmony::stop_lits(ctx),
        name: String::new(),
        key: String::new(),
        state: BodyState::Open,
        writer: ParamWriter::new(),
    };
    harmony::channel_region(
        ctx,
        Dialect {
            functions_namespace: false,
            body: Some(Box::new(body)),
        },
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyState {
    /// The call started; its arguments are not opened yet.
    Open,
    /// Between parameters (or before the first).
    Between,
    /// Inside `name="...`.
    Key,
    /// After the key's closing quote, before `>`.
    KeyClose,
    /// Right after `>`: a `\n` here is formatting.
    ValueStart,
    Value,
}

/// `<rfl:parameter name="KEY">VALUE</rfl:parameter>` elements, written as a JSON object.
struct RflBody {
    tools: Arc<ToolSet>,
    param_start: String,
    param_end: String,
    /// The message's stop markers (`harmony::stop_lits`).
    stops: [String; 5],
    name: String,
    key: String,
    state: BodyState,
    writer: ParamWriter,
}

impl RflBody {
    fn stop_refs(&self) -> [&str; 5] {
        self.stops.each_ref().map(String::as_str)
    }
}

impl CallBody for RflBody {
    fn start(&mut self, name: &str) {
        self.name.clear();
        self.name.push_str(name);
        self.state = BodyState::Open;
    }

    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> BodyStep {
        if self.state == BodyState::Open {
            self.writer.open(sink);
            self.state = BodyState::Between;
        }
        let mut i = 0;
        loop {
            let rest = &input[i..];
            match self.state {
                BodyState::Open | BodyState::Between => {
                    i += text::skip_ws(rest);
                    let rest = &input[i..];
                    if rest.is_empty() {
                        // At the end of the output every parameter has closed: the call stands.
                        return if eof {
                            BodyStep::Ended(i)
                        } else {
                            BodyStep::More(i)
                        };
                    }
                    let stops = self.stop_refs();
                    if stops.iter().any(|s| rest.starts_with(s)) {
                        return BodyStep::Ended(i);
                    }
                    if rest.starts_with(self.param_start.as_str()) {
                        i += self.param_start.len();
                        self.key.clear();
                        self.state = BodyState::Key;
                        continue;
                    }
                    let partial = text::is_proper_prefix(rest, &self.param_start)
                        || stops.iter().any(|s| text::is_proper_prefix(rest, s));
                    if !eof && partial {
                        return BodyStep::More(i);
                    }
                    return BodyStep::Broken(
                        i,
                        IssueKind::UnexpectedText,
                        "text that is not a parameter inside a call",
                    );
                }
                BodyState::Key => {
                    let mut end = None;
                    for (pos, c) in rest.char_indices() {
                        if c == '"' {
                            end = Some(pos);
                            break;
                        }
                        if matches!(c, '\n' | '<' | '>') || self.key.len() + pos >= MAX_TAG_NAME {
                            self.key.push_str(&rest[..pos]);
                            return BodyStep::Broken(
                                i + pos,
                                IssueKind::MalformedJson,
                                "bad character in a parameter name",
                            );
                        }
                    }
                    let Some(pos) = end else {
                        self.key.push_str(rest);
                        i = input.len();
                        return BodyStep::out_of_input(
                            i,
                            eof,
                            "output ended inside a parameter name",
                        );
                    };
                    self.key.push_str(&rest[..pos]);
                    i += pos + 1;
                    self.state = BodyState::KeyClose;
                }
                BodyState::KeyClose => {
                    if rest.is_empty() {
                        return BodyStep::out_of_input(
                            i,
                            eof,
                            "output ended inside a parameter tag",
                        );
                    }
                    if !rest.starts_with('>') {
                        return BodyStep::Broken(
                            i,
                            IssueKind::MalformedJson,
                            "expected > after the parameter name",
                        );
                    }
                    i += 1;
                    if self.key.is_empty() {
                        return BodyStep::Broken(
                            i,
                            IssueKind::MalformedJson,
                            "a parameter has no name",
                        );
                    }
                    let schema = param_schema(&self.tools, &self.name, &self.key);
                    self.writer.begin(&self.key, schema, sink);
                    self.state = BodyState::ValueStart;
                }
                BodyState::ValueStart => {
                    if rest.is_empty() {
                        return BodyStep::out_of_input(i, eof, "output ended inside a parameter");
                    }
                    if rest.starts_with('\n') {
                        i += 1;
                    }
                    self.state = BodyState::Value;
                }
                BodyState::Value => {
                    let found = {
                        let [s0, s1, s2, s3, s4] = self.stop_refs();
                        let lits = [
                            self.param_end.as_str(),
                            self.param_start.as_str(),
                            s0,
                            s1,
                            s2,
                            s3,
                            s4,
                        ];
                        text::scan(rest, &lits)
                    };
                    match found {
                        Scan::Found { pos, which } => {
                            let value = &rest[..pos];
                            self.writer
                                .text(value.strip_suffix('\n').unwrap_or(value), sink);
                            self.writer.end(sink);
                            self.state = BodyState::Between;
                            if which == 0 {
                                i += pos + self.param_end.len();
                            } else if which == 1 {
                                // `</rfl:parameter>` is missing before the next parameter.
                                i += pos;
                            } else {
                                // The message ends inside the value: its end tag is missing.
                                return BodyStep::Ended(i + pos);
                            }
                        }
                        Scan::NotFound { .. } if eof => {
                            return BodyStep::Broken(
                                input.len(),
                                IssueKind::Truncated,
                                "output ended inside a parameter",
                            );
                        }
                        Scan::NotFound { safe } => {
                            // Hold back a possible partial tag and a `\n` that may precede it.
                            let mut upto = safe;
                            if rest[..upto].ends_with('\n') {
                                upto -= 1;
                            }
                            self.writer.text(&rest[..upto], sink);
                            return BodyStep::More(i + upto);
                        }
                    }
                }
            }
        }
    }

    fn close(&mut self, sink: &mut Sink) {
        self.writer.close(sink);
    }
}

/// A value as the model writes it: strings raw, other values as JSON. A value that starts or ends
/// with `\n` gets one more there, since one leading and one trailing `\n` are formatting.
fn value_text(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => crate::xml_value::template_json(other),
    };
    let mut out = String::with_capacity(text.len() + 2);
    if text.starts_with('\n') {
        out.push('\n');
    }
    out.push_str(&text);
    if text.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A turn as Beam writes it: the analysis message (empty: a history turn without reasoning), each
/// call as its own message ending `<|call|>`, and content as the final message.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(ANALYSIS_OPEN);
    out.push_str(END);
    for call in calls {
        out.push_str(&TEMPLATE.begin.replace("{name}", &call.name));
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                out.push_str(&PARAMS.open.replace("{key}", key));
                out.push_str(&value_text(value));
                out.push_str(PARAMS.close);
            }
        }
        out.push_str(TEMPLATE.end);
    }
    if let Some(content) = content {
        out.push_str(FINAL_OPEN);
        out.push_str(content);
        out.push_str(RETURN);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn render_writes_the_turn() {
        let call = RenderCall {
            name: "get_weather".into(),
            arguments: json!({"location": "Paris", "days": 2}),
            id: None,
        };
        assert_eq!(
            SPEC.render(&[call], None),
            "<|channel|>analysis<|message|><|end|><|start|>assistant to=get_weather<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name=\"location\">Paris</rfl:parameter><rfl:parameter name=\"days\">2</rfl:parameter><|call|>"
        );
        assert_eq!(
            SPEC.render(&[], Some("Hi.")),
            "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>"
        );
    }

    #[test]
    fn values_keep_their_edge_newlines() {
        assert_eq!(value_text(&json!("\nx\n")), "\n\nx\n\n");
        assert_eq!(value_text(&json!("x")), "x");
        assert_eq!(value_text(&json!({"a": [1, 2]})), "{\"a\": [1, 2]}");
    }
}
