//! GLM-4.5 / 4.6 (`glm45`) and GLM-4.7 / GLM-5 (`glm47`): the name after `<tool_call>`, then
//! key/value tag pairs:
//!
//! ```text
//! glm45: <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>
//! glm47: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>
//! ```
//!
//! The two differ only in the newlines, and both parsers accept either spacing (and the
//! two-character `\n` some GLM-4.5 servers show). Values are raw text, typed by the tool's schema;
//! string values are kept exactly (not trimmed, not JSON-parsed even when they look like JSON, no
//! entity decoding) and stream as they arrive. Every marker, `<think>`/`</think>` included, is an
//! added special token of the GLM tokenizers (from the families' tokenizer configs as vLLM/SGLang
//! use them; not verified offline). Calls to unknown tools are returned (and flagged). GLM-5.3
//! (and GLM-5.3-Flash, `glm53_flash`) keeps this format with an always-on reasoning header (vLLM
//! 0.33's `glm47_moe` parser); its prompt opens `<think>`.

use std::sync::Arc;

use std::ops::ControlFlow;

use super::call_text::{CallText, Feed, Step, StepReader};
use super::xml_params::ParamCall;
use super::Format;
use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::render::RenderCall;
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, ParamTags, Role, Syntax, Tokens, Trigger, THINK,
};
use crate::text::{self, is_partial_of_any, starts_with_any, Scan};
use crate::tools::ToolSet;
use crate::xml_value::template_text;

const CALL_START: &str = "<tool_call>";
const VALUE_END: &str = "</arg_value>";

/// `<arg_key>K</arg_key>` and `<arg_value>V</arg_value>`, whitespace allowed between them.
/// Hunyuan HY3 and IQuest write the same tags.
pub const PARAMS: ParamTags = ParamTags::new("<arg_key>{key}</arg_key>{ws}<arg_value>", VALUE_END);

pub static GLM45: Format = Format {
    syntax: Syntax {
        name: "glm45",
        aliases: &["glm4_moe", "glm4.5", "glm4.6"],
        families: &["GLM-4.5", "GLM-4.5-Air", "GLM-4.5V", "GLM-4.6", "Ling 3", "Spark 2.5"],
        description: "<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call>, values typed by the tool schema",
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker(CALL_START)],
        reasoning: Some(THINK),
        stops: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        // xgrammar's `glm_xml` allows whitespace around the pairs, so it covers this spacing too.
        template: Some(CallTemplate::new("<tool_call>{name}", "</tool_call>", "\n")),
        arguments: ArgSyntax::XmlParams(PARAMS),
        ..Syntax::EMPTY
    },
    new_region,
    write: render_glm45,
};

const GLM47_TEMPLATE: CallTemplate = CallTemplate::new("<tool_call>{name}", "</tool_call>", "");

pub static GLM47: Format = Format {
    syntax: Syntax {
        name: "glm47",
        aliases: &["glm5", "glm4.7", "glm53_flash", "glm5.3"],
        families: &["GLM-4.7", "GLM-4.7-Flash", "GLM-5", "GLM-5.1", "GLM-5.3", "GLM-5.3-Flash"],
        description: "<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>, values typed by the tool schema",
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker(CALL_START)],
        reasoning: Some(THINK),
        stops: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        template: Some(GLM47_TEMPLATE),
        arguments: ArgSyntax::XmlParams(PARAMS),
        ..Syntax::EMPTY
    },
    new_region,
    write: render_glm47,
};

/// The tags of a GLM-style call: `CALL_START NAME [NAME_SEP] (KEY_START K KEY_END VALUE_START V
/// VALUE_END)* CALL_END`, optionally with the calls inside a section (Hunyuan's `<tool_calls>`),
/// as a syntax's markers and [`ParamTags`] give them.
pub struct GlmTags {
    pub call_start: &'static str,
    pub call_end: &'static str,
    pub key_start: &'static str,
    pub key_end: &'static str,
    pub value_start: &'static str,
    pub value_end: &'static str,
    /// A marker that ends the name (Hunyuan's `<tool_sep>`); the name also ends at a key or the
    /// call's end without it.
    pub name_sep: Option<&'static str>,
    /// The section's opening and closing markers; the opener must be the format's first trigger.
    pub section: Option<(&'static str, &'static str)>,
}

impl GlmTags {
    /// A key followed straight by its value (`<|tool_arg:start|>K<|tool_arg:value|>V`, no `{ws}`
    /// in the tags) has the value's opening tag as the key's end, and no value tag.
    pub fn of(syntax: &Syntax) -> Self {
        let params = syntax.arguments.params().copied().unwrap_or(PARAMS);
        let (key_end, value_start) = match params.after_key() {
            ("", value_start) => (value_start, ""),
            pair => pair,
        };
        let section = syntax
            .marker(Role::SectionStart)
            .zip(syntax.marker(Role::SectionEnd))
            .map(|(open, close)| (open.text, close.text));
        Self {
            call_start: syntax.marker_text(Role::CallStart),
            call_end: syntax.marker_text(Role::CallEnd),
            key_start: params.key_open(),
            key_end,
            value_start,
            value_end: params.close,
            name_sep: syntax.marker(Role::NameEnd).map(|m| m.text),
            section,
        }
    }
}

struct Lits {
    call_start: String,
    call_end: String,
    key_start: String,
    key_end: String,
    value_start: String,
    value_end: String,
    name_sep: Option<String>,
    /// The section's closing marker; without a section, the call's closing marker again (a
    /// duplicate in a search list never wins over the earlier entry, so it changes nothing).
    section_end: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Trigger,
    /// Inside a section, between calls.
    Between,
    /// Text inside a section that belongs to no call.
    SectionStray,
    Name,
    AfterName,
    Body,
    /// Text inside a call that is not a tag.
    Stray,
    Key,
    AfterKey,
    Value,
    Recover(IssueKind, &'static str),
}

struct GlmRegion {
    lits: Arc<Lits>,
    tools: Arc<ToolSet>,
    state: State,
    /// Opened by the section marker: calls continue until the section's end.
    in_section: bool,
    saw_call: bool,
    trigger_len: usize,
    call: ParamCall,
}

/// The GLM call reader with the syntax's tags ([`GlmTags::of`]). Without a section the format's
/// trigger is `tags.call_start` and the region is one call; with one, the first trigger is the
/// section's opener (the region runs to the section's end) and any other is a bare call opener.
pub fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let tags = GlmTags::of(ctx.syntax);
    let call_end = ctx.lit(tags.call_end);
    Box::new(GlmRegion {
        lits: Arc::new(Lits {
            call_start: ctx.lit(tags.call_start),
            key_start: ctx.lit(tags.key_start),
            key_end: ctx.lit(tags.key_end),
            value_start: ctx.lit(tags.value_start),
            value_end: ctx.lit(tags.value_end),
            name_sep: tags.name_sep.map(|sep| ctx.lit(sep)),
            section_end: tags
                .section
                .map_or_else(|| call_end.clone(), |(_, end)| ctx.lit(end)),
            call_end,
        }),
        tools: ctx.tools.clone(),
        state: State::Trigger,
        in_section: tags.section.is_some() && ctx.trigger == 0,
        saw_call: false,
        trigger_len: ctx.trigger_lit().len(),
        call: ParamCall::new(false),
    })
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/')
}

/// Whitespace between GLM tags, including the two characters `\n` (backslash, n) that some
/// GLM-4.5 deployments show. Returns the length skipped and whether a lone trailing `\` may still
/// become such a pair.
fn skip_space(rest: &str) -> (usize, bool) {
    let bytes = rest.as_bytes();
    let mut i = 0;
    loop {
        i += text::skip_ws(&rest[i..]);
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'\\'), Some(b'n')) => i += 2,
            (Some(b'\\'), None) => return (i, true),
            _ => return (i, false),
        }
    }
}

impl Lits {
    /// The markers that can follow a call's name or a value.
    fn body_tags(&self) -> [&str; 4] {
        [
            self.key_start.as_str(),
            self.call_end.as_str(),
            self.call_start.as_str(),
            self.section_end.as_str(),
        ]
    }
}

impl GlmRegion {
    /// The whitespace that starts `rest` (at `i` in this feed; a run split across feeds counts
    /// once), and whether a lone `\` follows it (perhaps the start of a literal `\n`).
    fn space_at(&mut self, i: usize, rest: &str) -> (usize, bool) {
        let at = self.call.offset + i;
        let ws = self.call.held_ws.skip_by(at, rest, |r| skip_space(r).0);
        (ws, &rest[ws..] == "\\")
    }

    /// A call is over (`consumed` bytes in): the region ends, or inside a section the next call
    /// or the section's end follows.
    fn after_call(&mut self, consumed: usize) -> Option<Progress> {
        if self.in_section {
            self.state = State::Between;
            None
        } else {
            Some(Progress::done(consumed))
        }
    }
}

impl StepReader for GlmRegion {
    fn step(&mut self, input: &str, eof: bool, mut i: usize, sink: &mut Sink) -> Step<usize> {
        let feed = Feed { input, eof };
        let l = Arc::clone(&self.lits);
        let rest = &input[i..];
        match self.state {
            State::Trigger => {
                let n = if self.in_section {
                    self.trigger_len
                } else {
                    l.call_start.len()
                };
                let n = n.min(rest.len());
                self.call.advance(input, &mut i, n);
                self.state = if self.in_section {
                    State::Between
                } else {
                    State::Name
                };
            }
            State::Between => {
                let (ws, partial) = skip_space(rest);
                self.call.advance(input, &mut i, ws);
                let rest = &input[i..];
                let lits = [l.call_start.as_str(), l.section_end.as_str()];
                match starts_with_any(rest, &lits) {
                    Some(0) => {
                        self.call.raw.clear();
                        self.call.advance(input, &mut i, lits[0].len());
                        self.call.name.clear();
                        self.state = State::Name;
                    }
                    Some(_) => {
                        self.call.raw.clear();
                        return ControlFlow::Break(Progress::done(i + lits[1].len()));
                    }
                    None if rest.is_empty() || partial || is_partial_of_any(rest, &lits) => {
                        if !eof {
                            return ControlFlow::Break(Progress::more(i));
                        }
                        self.call.take(input, i, input.len());
                        if !self.saw_call {
                            self.call.fail(
                                IssueKind::Truncated,
                                "output ended inside an empty tool-call section",
                                sink,
                            );
                        }
                        return ControlFlow::Break(Progress::done(input.len()));
                    }
                    None => {
                        self.call.raw.clear();
                        self.state = State::SectionStray;
                    }
                }
            }
            State::SectionStray => {
                // Text inside the section that belongs to no call stays content; whitespace
                // right before the next tag is formatting.
                let lits = [l.call_start.as_str(), l.section_end.as_str()];
                match text::scan(rest, &lits) {
                    Scan::Found { pos, .. } => {
                        sink.content(rest[..pos].trim_end());
                        i += pos;
                        self.state = State::Between;
                    }
                    Scan::NotFound { .. } if eof => {
                        sink.content(rest);
                        return ControlFlow::Break(Progress::done(input.len()));
                    }
                    Scan::NotFound { safe } => {
                        let text = rest[..safe].trim_end();
                        sink.content(text);
                        return ControlFlow::Break(Progress::more(i + text.len()));
                    }
                }
            }
            State::Name => {
                let mut rest = rest;
                if self.call.name.is_empty() {
                    let ws = text::skip_ws(rest);
                    self.call.advance(input, &mut i, ws);
                    rest = &input[i..];
                }
                let end = rest
                    .char_indices()
                    .find(|&(_, c)| !is_name_char(c))
                    .map(|(p, _)| p);
                let n = end.unwrap_or(rest.len());
                self.call.name.push_str(&rest[..n]);
                self.call.advance(input, &mut i, n);
                let rest = &input[i..];
                if end.is_none() {
                    return ControlFlow::Break(self.call.wait_or_truncate(
                        feed,
                        i,
                        "output ended inside a tool call name",
                        sink,
                    ));
                }
                if !self.call.name.is_empty() {
                    self.state = State::AfterName;
                    return ControlFlow::Continue(i);
                }
                if rest.starts_with(l.call_end.as_str()) {
                    let n = l.call_end.len();
                    self.call.take(input, i, i + n);
                    self.call
                        .fail(IssueKind::MissingName, "empty <tool_call> block", sink);
                    i += n;
                    if let Some(p) = self.after_call(i) {
                        return ControlFlow::Break(p);
                    }
                    return ControlFlow::Continue(i);
                }
                if is_partial_of_any(rest, &[l.call_end.as_str()]) {
                    return ControlFlow::Break(self.call.wait_or_truncate(
                        feed,
                        i,
                        "output ended after <tool_call>",
                        sink,
                    ));
                }
                self.state = State::Recover(IssueKind::MissingName, "the call has no name");
            }
            State::AfterName => {
                // The name is complete only when a marker follows it.
                let (ws, partial) = self.space_at(i, rest);
                let after = &rest[ws..];
                let sep = l.name_sep.as_deref().unwrap_or_default();
                let lits = l.body_tags();
                let at_sep = !sep.is_empty() && after.starts_with(sep);
                if at_sep || starts_with_any(after, &lits).is_some() {
                    let n = if at_sep { ws + sep.len() } else { ws };
                    self.call.advance(input, &mut i, n);
                    self.saw_call = true;
                    self.call.start(sink);
                    self.state = State::Body;
                    return ControlFlow::Continue(i);
                }
                let partial_sep = !sep.is_empty() && text::is_proper_prefix(after, sep);
                if after.is_empty() || partial || partial_sep || is_partial_of_any(after, &lits) {
                    return ControlFlow::Break(self.call.wait_or_truncate(
                        feed,
                        i,
                        "output ended after a tool call name",
                        sink,
                    ));
                }
                self.state = State::Recover(
                    IssueKind::MalformedJson,
                    "unexpected text after a tool call name",
                );
            }
            State::Body => {
                let (ws, partial) = skip_space(rest);
                self.call.advance(input, &mut i, ws);
                let rest = &input[i..];
                let lits = l.body_tags();
                if rest.is_empty() || partial || is_partial_of_any(rest, &lits) {
                    return ControlFlow::Break(self.call.wait_between_params(feed, i, sink));
                }
                match starts_with_any(rest, &lits) {
                    Some(0) => {
                        self.call.advance(input, &mut i, lits[0].len());
                        self.call.key.clear();
                        self.state = State::Key;
                    }
                    Some(1) => {
                        self.call.take(input, i, i + lits[1].len());
                        self.call.finish(sink);
                        i += lits[1].len();
                        if let Some(p) = self.after_call(i) {
                            return ControlFlow::Break(p);
                        }
                    }
                    Some(_) => {
                        // The next call (or the section's end) follows: this call lacked
                        // `</tool_call>`.
                        self.call.finish(sink);
                        if let Some(p) = self.after_call(i) {
                            return ControlFlow::Break(p);
                        }
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
            State::Key => {
                let lits = [
                    l.key_end.as_str(),
                    l.value_start.as_str(),
                    l.key_start.as_str(),
                    l.call_end.as_str(),
                    l.call_start.as_str(),
                    l.section_end.as_str(),
                ];
                match text::scan(rest, &lits) {
                    Scan::Found { pos, which } => {
                        self.call.key.push_str(&rest[..pos]);
                        if which == 0 {
                            let n = pos + lits[0].len();
                            self.call.advance(input, &mut i, n);
                            self.state = State::AfterKey;
                        } else {
                            self.call.advance(input, &mut i, pos);
                            self.state = State::Recover(
                                IssueKind::MalformedJson,
                                "an <arg_key> is not closed",
                            );
                        }
                    }
                    Scan::NotFound { .. } if eof => {
                        self.call.take(input, i, input.len());
                        self.call
                            .fail(IssueKind::Truncated, "output ended inside a key", sink);
                        return ControlFlow::Break(Progress::done(input.len()));
                    }
                    Scan::NotFound { safe } => {
                        self.call.key.push_str(&rest[..safe]);
                        self.call.take(input, i, i + safe);
                        return ControlFlow::Break(Progress::more(i + safe));
                    }
                }
            }
            State::AfterKey if l.value_start.is_empty() => {
                // The key's closing tag opened the value: nothing is skipped.
                self.state = if self.call.begin_param(&self.tools, sink) {
                    State::Value
                } else {
                    State::Recover(IssueKind::MalformedJson, "an argument has no key")
                };
            }
            State::AfterKey => {
                let (ws, partial) = self.space_at(i, rest);
                let after = &rest[ws..];
                let value_start = l.value_start.as_str();
                if after.starts_with(value_start) {
                    let n = ws + value_start.len();
                    self.call.advance(input, &mut i, n);
                    if !self.call.begin_param(&self.tools, sink) {
                        self.state =
                            State::Recover(IssueKind::MalformedJson, "an argument has no key");
                        return ControlFlow::Continue(i);
                    }
                    self.state = State::Value;
                    return ControlFlow::Continue(i);
                }
                if after.is_empty() || partial || text::is_proper_prefix(after, value_start) {
                    return ControlFlow::Break(self.call.wait_or_truncate(
                        feed,
                        i,
                        "output ended after a key",
                        sink,
                    ));
                }
                self.call.advance(input, &mut i, ws);
                self.state =
                    State::Recover(IssueKind::MalformedJson, "expected <arg_value> after a key");
            }
            State::Value => {
                // A missing `</arg_value>` before the next marker is tolerated.
                let ends = [
                    l.value_end.as_str(),
                    l.key_start.as_str(),
                    l.call_end.as_str(),
                    l.call_start.as_str(),
                    l.section_end.as_str(),
                ];
                let why = "output ended inside a value";
                if let ControlFlow::Break(p) = self.call.value(feed, &mut i, &ends, why, sink) {
                    return ControlFlow::Break(p);
                }
                self.state = State::Body;
            }
            State::Recover(kind, why) => {
                // `</tool_call>` ends the broken call; the next call or the section's end
                // are read next.
                let stops = [
                    l.call_end.as_str(),
                    l.call_start.as_str(),
                    l.section_end.as_str(),
                ];
                let issue = (kind, why);
                if let ControlFlow::Break(p) =
                    self.call.skip_broken(feed, &mut i, &stops, 1, issue, sink)
                {
                    return ControlFlow::Break(p);
                }
                if let Some(p) = self.after_call(i) {
                    return ControlFlow::Break(p);
                }
            }
        }
        ControlFlow::Continue(i)
    }

    fn feed_offset(&mut self) -> Option<&mut usize> {
        Some(&mut self.call.offset)
    }
}

/// Calls in a GLM-style syntax's tags, strings raw and other values as JSON, `nl` after the name
/// and after each tag pair: with a section (Hunyuan), `open nl`, each call followed by `nl`, then
/// `close`; without one (GLM, IQuest), each call preceded by `nl`.
pub fn render_tags(
    syntax: &Syntax,
    calls: &[RenderCall],
    content: Option<&str>,
    nl: &str,
) -> String {
    let tags = GlmTags::of(syntax);
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    let (before, after) = match tags.section {
        Some((open, _)) => {
            out.push_str(open);
            out.push_str(nl);
            ("", nl)
        }
        None => (nl, ""),
    };
    for call in calls {
        out.push_str(before);
        out.push_str(tags.call_start);
        out.push_str(&call.name);
        out.push_str(tags.name_sep.unwrap_or(""));
        out.push_str(nl);
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                out.push_str(tags.key_start);
                out.push_str(key);
                out.push_str(tags.key_end);
                out.push_str(nl);
                out.push_str(tags.value_start);
                out.push_str(&template_text(value));
                out.push_str(tags.value_end);
                out.push_str(nl);
            }
        }
        out.push_str(tags.call_end);
        out.push_str(after);
    }
    if let Some((_, close)) = tags.section {
        out.push_str(close);
    }
    out
}

/// As the GLM-4.5 / 4.6 chat templates write calls: `\n<tool_call>NAME\n`, then
/// `<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n` per argument, then `</tool_call>`.
fn render_glm45(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_tags(&GLM45.syntax, calls, content, "\n")
}

/// As the GLM-4.7 chat template writes calls: the same tags with no newlines.
fn render_glm47(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_tags(&GLM47.syntax, calls, content, "")
}
