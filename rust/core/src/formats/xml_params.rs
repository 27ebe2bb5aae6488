//! Reading calls whose arguments are one tag per parameter, shared by qwen3_coder and GLM (and,
//! for [`ParamWriter`] and the tag names, Beam; for [`stream_string`], the invoke formats).
//!
//! [`ParamWriter`] writes the parameters as a streamed JSON arguments object: `{`, then per
//! parameter `"KEY": ` (after `, ` from the second on) and the value, then `}`, so the fragments
//! concatenate to the final arguments in the model's parameter order. A string-typed value is
//! streamed as escaped JSON string text while it arrives; any other value is held until its end
//! and typed by the tool's schema ([`crate::xml_value`]).
//!
//! [`ParamCall`] holds one call as it is read and the steps that these readers take alike (text
//! between parameters, a value up to its end; with [`CallText`], truncation and skipping a broken
//! call). Each format keeps its own states and markers; it passes the markers that stop a step, in
//! its own order.

use std::ops::ControlFlow;

use serde_json::Value;

use super::call_text::{CallText, Feed, Step};
use crate::json::{escape_into, quote};
use crate::message::IssueKind;
use crate::region::{Progress, Sink};
use crate::text::{self, Scan};
use crate::tools::ToolSet;
use crate::xml_value::{typed_json_as, TypeSet};

#[derive(Debug, Default)]
pub struct ParamWriter {
    count: usize,
    types: TypeSet,
    streaming: bool,
    value: String,
}

impl ParamWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parameters begun so far in this call.
    pub fn count(&self) -> usize {
        self.count
    }

    pub fn open(&mut self, sink: &mut Sink) {
        self.count = 0;
        self.value.clear();
        sink.args("{");
    }

    /// Start a parameter's value; `schema` is the parameter's schema, if the tool declares it.
    pub fn begin(&mut self, key: &str, schema: Option<&Value>, sink: &mut Sink) {
        let mut fragment = String::with_capacity(key.len() + 6);
        if self.count > 0 {
            fragment.push_str(", ");
        }
        fragment.push_str(&quote(key));
        fragment.push_str(": ");
        self.types = TypeSet::of(schema);
        self.streaming = self.types.is_string_only();
        if self.streaming {
            fragment.push('"');
        }
        self.value.clear();
        self.count += 1;
        sink.args(&fragment);
    }

    /// More of the current value's raw text.
    pub fn text(&mut self, text: &str, sink: &mut Sink) {
        if text.is_empty() {
            return;
        }
        if self.streaming {
            stream_string(text, sink);
        } else {
            self.value.push_str(text);
        }
    }

    /// The current value is complete.
    pub fn end(&mut self, sink: &mut Sink) {
        if self.streaming {
            sink.args("\"");
        } else {
            let typed = typed_json_as(&self.value, self.types);
            self.value.clear();
            sink.args(&typed);
        }
    }

    pub fn close(&mut self, sink: &mut Sink) {
        sink.args("}");
    }
}

/// One call as it is read.
#[derive(Debug, Default)]
pub struct ParamCall {
    /// The call's text so far, markers included (for issues and soft rejection).
    pub raw: String,
    pub name: String,
    /// The key of the parameter being read.
    pub key: String,
    pub writer: ParamWriter,
    /// Bytes consumed before the current feed, and whitespace held back at its start.
    pub offset: usize,
    pub held_ws: text::WsRun,
    /// One `\n` right before a value's end is formatting (qwen3_coder), not part of the value.
    newline_before_end: bool,
}

impl CallText for ParamCall {
    fn raw_mut(&mut self) -> &mut String {
        &mut self.raw
    }
}

impl ParamCall {
    pub fn new(newline_before_end: bool) -> Self {
        Self {
            newline_before_end,
            ..Self::default()
        }
    }

    /// The name is read: the call starts, with an empty arguments object.
    pub fn start(&mut self, sink: &mut Sink) {
        sink.start_call(self.name.trim(), None);
        self.writer.open(sink);
    }

    /// The call is complete, its arguments closed.
    pub fn finish(&mut self, sink: &mut Sink) {
        self.writer.close(sink);
        self.end(sink);
    }

    /// The key is read: its value begins, typed by the tool's schema. False when the key is blank.
    pub fn begin_param(&mut self, tools: &ToolSet, sink: &mut Sink) -> bool {
        let key = self.key.trim();
        if key.is_empty() {
            return false;
        }
        let schema = param_schema(tools, self.name.trim(), key);
        self.writer.begin(key, schema, sink);
        true
    }

    /// Between parameters, the input so far may be the start of a tag: wait, or at the end of the
    /// output close the call (when every parameter it began was closed, only its end tags are
    /// missing) or report it truncated (when it has none).
    pub fn wait_between_params(&mut self, feed: Feed<'_>, i: usize, sink: &mut Sink) -> Progress {
        if !feed.eof {
            return Progress::more(i);
        }
        self.take(feed.input, i, feed.input.len());
        if self.writer.count() > 0 {
            self.finish(sink);
        } else {
            self.fail(IssueKind::Truncated, "output ended inside a call", sink);
        }
        Progress::done(feed.input.len())
    }

    /// Text between parameters that belongs to no tag stays content, up to the first of `tags`;
    /// whitespace right before the tag is formatting (part of the call). Goes on at the tag, or
    /// at the end of the input when the output ends.
    pub fn stray(
        &mut self,
        feed: Feed<'_>,
        at: &mut usize,
        tags: &[&str],
        sink: &mut Sink,
    ) -> Step {
        let i = *at;
        let rest = &feed.input[i..];
        // Whitespace held back by the previous feed is not scanned again (no tag starts inside
        // it), so a long run of it stays linear.
        let ws = self.held_ws.skip(self.offset + i, rest);
        let (end, found) = match text::scan(&rest[ws..], tags) {
            Scan::Found { pos, .. } => (ws + pos, true),
            Scan::NotFound { .. } if feed.eof => {
                sink.content(rest);
                *at = feed.input.len();
                return ControlFlow::Continue(());
            }
            Scan::NotFound { safe } => (ws + safe, false),
        };
        // `rest[..end].trim_end()`, without walking back over the held whitespace.
        let new = rest[ws..end].trim_end();
        let text = if new.is_empty() {
            ""
        } else {
            &rest[..ws + new.len()]
        };
        sink.content(text);
        if !found {
            return ControlFlow::Break(Progress::more(i + text.len()));
        }
        self.take(feed.input, i + text.len(), i + end);
        *at = i + end;
        ControlFlow::Continue(())
    }

    /// A value, up to the first of `ends`: `ends[0]` is its closing tag (consumed); any other
    /// ends it where it stands (the closing tag is missing). Goes on after the value; at the end of
    /// the output without an end, the call is reported truncated with `truncated`.
    pub fn value(
        &mut self,
        feed: Feed<'_>,
        at: &mut usize,
        ends: &[&str],
        truncated: &str,
        sink: &mut Sink,
    ) -> Step {
        let i = *at;
        let rest = &feed.input[i..];
        match text::scan(rest, ends) {
            Scan::Found { pos, which } => {
                let mut value = &rest[..pos];
                if self.newline_before_end {
                    value = value.strip_suffix('\n').unwrap_or(value);
                }
                self.writer.text(value, sink);
                self.writer.end(sink);
                let n = if which == 0 { pos + ends[0].len() } else { pos };
                self.take(feed.input, i, i + n);
                *at = i + n;
                ControlFlow::Continue(())
            }
            Scan::NotFound { .. } if feed.eof => {
                self.take(feed.input, i, feed.input.len());
                self.fail(IssueKind::Truncated, truncated, sink);
                ControlFlow::Break(Progress::done(feed.input.len()))
            }
            Scan::NotFound { safe } => {
                // Hold back a possible partial end tag (and a `\n` that may precede it).
                let mut upto = safe;
                if self.newline_before_end && rest[..upto].ends_with('\n') {
                    upto -= 1;
                }
                self.writer.text(&rest[..upto], sink);
                self.take(feed.input, i, i + upto);
                ControlFlow::Break(Progress::more(i + upto))
            }
        }
    }
}

/// More of a string value streaming into the arguments: `text` as escaped JSON string text.
pub fn stream_string(text: &str, sink: &mut Sink) {
    if !text.is_empty() {
        let mut fragment = String::with_capacity(text.len() + 8);
        escape_into(&mut fragment, text);
        sink.args(&fragment);
    }
}

/// The schema of `tool`'s parameter `param`, if both are declared.
pub fn param_schema<'a>(tools: &'a ToolSet, tool: &str, param: &str) -> Option<&'a Value> {
    tools.get(tool).and_then(|t| t.parameter_schema(param))
}

/// Reading a tag's name up to its closing `>` (`<function=NAME>`, `<parameter=KEY>`).
pub enum TagName {
    /// The name ended; this many bytes were read, the `>` included.
    Done(usize),
    /// All the input was read into the name; more is needed.
    More,
    /// A character that cannot be in the name, at this offset.
    Invalid(usize),
}

/// Longest tag name accepted (a hostile stream cannot grow it without bound).
pub const MAX_TAG_NAME: usize = 512;

/// Append `rest` to `name` up to `>`; a newline, `<`, or (when `strict`) any whitespace or quote
/// makes the name invalid.
pub fn read_tag_name(name: &mut String, rest: &str, strict: bool) -> TagName {
    for (pos, c) in rest.char_indices() {
        if c == '>' {
            name.push_str(&rest[..pos]);
            return TagName::Done(pos + 1);
        }
        let bad = c == '\n'
            || c == '<'
            || (strict && (c.is_whitespace() || c == '"' || c == '\''))
            || name.len() + pos >= MAX_TAG_NAME;
        if bad {
            name.push_str(&rest[..pos]);
            return TagName::Invalid(pos);
        }
    }
    name.push_str(rest);
    TagName::More
}
