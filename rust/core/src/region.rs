//! The contract between the stream engine and a format's call-region parser, and the sink that
//! turns a region parser's findings into deltas and the final message.
//!
//! The engine scans content for a format's triggers. When one matches, the format's region parser
//! takes over and is fed the pending text (starting at the trigger) until it reports the region
//! done; the rest goes back to content scanning. A region parser consumes everything it can
//! decide and leaves only an undecidable tail (a partial marker), so every byte is looked at a
//! bounded number of times.

use std::collections::HashSet;
use std::sync::Arc;

use crate::ids::IdSource;
use crate::message::{DeltaBuffer, Issue, IssueKind, Message, ToolCall};
use crate::schema::{NotJson, Violation};
use crate::spec::Syntax;
use crate::tools::{ToolChoice, ToolKind, ToolSet};

pub struct RegionCtx<'a> {
    pub syntax: &'static Syntax,
    pub tools: &'a Arc<ToolSet>,
    pub markers: &'a MarkerTable,
    /// Index into `syntax.triggers` of the trigger that opened the region.
    pub trigger: usize,
}

impl RegionCtx<'_> {
    /// The text to search for a marker: its characters, or a sentinel for special-token input.
    pub fn lit(&self, marker_text: &'static str) -> String {
        self.markers.lit_text(marker_text)
    }

    pub fn trigger_lit(&self) -> String {
        self.lit(self.syntax.triggers[self.trigger].text)
    }

    pub fn soft(&self) -> bool {
        self.syntax.triggers[self.trigger].soft
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Waiting for more input.
    Continue,
    /// The region ended; the unconsumed input is content again.
    Done,
    /// The soft trigger was not a call: this text (everything the region consumed) is content.
    Reject(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub consumed: usize,
    pub status: Status,
}

impl Progress {
    pub fn more(consumed: usize) -> Self {
        Self {
            consumed,
            status: Status::Continue,
        }
    }
    pub fn done(consumed: usize) -> Self {
        Self {
            consumed,
            status: Status::Done,
        }
    }
}

pub trait RegionParser: Send + Sync {
    /// Consume a prefix of `input`. At `eof` the parser must not return `Continue`.
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress;

    /// Once done, become what the format's region constructor built for this region's trigger,
    /// keeping buffers: the stream reuses it for the next region of that trigger rather than
    /// building one. `false` (the default): not supported, the region is dropped.
    fn restart(&mut self) -> bool {
        false
    }
}

/// Characters from the top of Unicode's last private-use plane stand for markers that arrived as
/// special tokens; text can never produce them (decoded text is scrubbed of this range).
const SENTINEL_BASE: u32 = 0x10FF00;

#[derive(Debug, Clone, Default)]
pub struct MarkerTable {
    entries: Vec<(&'static str, String)>,
}

impl MarkerTable {
    /// Text mode: every marker is matched by its characters.
    pub fn text() -> Self {
        Self::default()
    }

    /// Token mode: the listed markers are special tokens and match only as sentinels.
    pub fn with_special(special: &[&'static str]) -> Self {
        let entries = special
            .iter()
            .enumerate()
            .filter_map(|(k, text)| {
                char::from_u32(SENTINEL_BASE + k as u32).map(|c| (*text, c.to_string()))
            })
            .collect();
        Self { entries }
    }

    pub fn lit<'a>(&'a self, marker_text: &'a str) -> &'a str {
        self.entries
            .iter()
            .find(|(t, _)| *t == marker_text)
            .map_or(marker_text, |(_, s)| s.as_str())
    }

    /// [`MarkerTable::lit_text`] without a copy in text mode, where every marker is its own text.
    pub fn lit_cow(&self, marker_text: &'static str) -> std::borrow::Cow<'static, str> {
        if self.entries.is_empty() {
            std::borrow::Cow::Borrowed(marker_text)
        } else {
            std::borrow::Cow::Owned(self.lit_text(marker_text))
        }
    }

    /// Like [`MarkerTable::lit`], for markers that are several tokens of which some are special: a
    /// tokenizer matches special tokens first, so in token mode `<｜DSML｜invoke` arrives as `<`, the
    /// `｜DSML｜` token and `invoke`, and its search text holds the sentinel for the middle part.
    pub fn lit_text(&self, marker_text: &str) -> String {
        if let Some(sentinel) = self.sentinel_for(marker_text) {
            return sentinel.to_owned();
        }
        let mut entries: Vec<&(&'static str, String)> = self
            .entries
            .iter()
            .filter(|(t, _)| !t.is_empty() && marker_text.contains(t))
            .collect();
        entries.sort_by_key(|(t, _)| std::cmp::Reverse(t.len()));
        let mut out = marker_text.to_owned();
        for (text, sentinel) in entries {
            out = out.replace(text, sentinel);
        }
        out
    }

    pub fn sentinel_for(&self, text: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(t, _)| *t == text)
            .map(|(_, s)| s.as_str())
    }

    /// Replace sentinels by the marker text they stand for. Inlined up to the check that there
    /// are none: it runs on every name, argument fragment and piece of content.
    #[inline]
    pub fn restore<'a>(&self, s: &'a str) -> std::borrow::Cow<'a, str> {
        if self.entries.is_empty() || !s.as_bytes().contains(&0xF4) {
            return std::borrow::Cow::Borrowed(s);
        }
        std::borrow::Cow::Owned(self.restore_sentinels(s))
    }

    #[inline(never)]
    fn restore_sentinels(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            let code = c as u32;
            match code
                .checked_sub(SENTINEL_BASE)
                .and_then(|k| self.entries.get(k as usize))
            {
                Some((text, _)) => out.push_str(text),
                None => out.push(c),
            }
        }
        out
    }

    pub fn is_sentinel(c: char) -> bool {
        (SENTINEL_BASE..SENTINEL_BASE + 256).contains(&(c as u32))
    }
}

#[derive(Debug, Clone)]
struct CallRecord {
    call: ToolCall,
    state: CallState,
    /// Whether the id was written by the model (and so may repeat).
    model_id: bool,
    /// A call to a custom tool: its input is sent whole when the call completes.
    custom: bool,
    /// The declared tool of that name (its index in the tool set), looked up once.
    tool: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallState {
    Open,
    Complete,
    Dropped,
}

/// Collects what region parsers find: streamed deltas and the message so far.
pub struct Sink {
    deltas: DeltaBuffer,
    message: Message,
    calls: Vec<CallRecord>,
    open: Option<usize>,
    ids: Box<dyn IdSource>,
    tools: Arc<ToolSet>,
    markers: Arc<MarkerTable>,
    tool_choice: ToolChoice,
    parallel_tool_calls: bool,
    /// Emptied calls of an earlier output, reused by [`Sink::start_call`].
    spare: Vec<ToolCall>,
    /// The emptied finish reason of an earlier output, reused by [`Sink::finish`].
    spare_reason: String,
    /// Ids of the completed calls once `ids_indexed` (see [`Sink::end_call`]), and how many
    /// calls completed.
    complete_ids: HashSet<String>,
    ids_indexed: bool,
    completed: usize,
    /// Everything but argument text the sink has been given (see [`Sink::events`]).
    events: u64,
    /// While a region cut by `max_call_bytes` is being closed: the limit, and the index of its
    /// `too_large` issue once recorded.
    cut: Option<(usize, Option<usize>)>,
    /// The `too_large` issue whose detail still needs the count of dropped bytes.
    cut_issue: Option<(usize, usize)>,
    /// While calls are read without the format's opening marker: the marker, for the
    /// `missing_markers` issue each completed call gets.
    missing_marker: Option<&'static str>,
}

impl Sink {
    pub fn new(ids: Box<dyn IdSource>, tools: Arc<ToolSet>, markers: Arc<MarkerTable>) -> Self {
        Self {
            deltas: DeltaBuffer::default(),
            message: Message::default(),
            calls: Vec::new(),
            spare: Vec::new(),
            spare_reason: String::new(),
            open: None,
            ids,
            tools,
            markers,
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
            complete_ids: HashSet::new(),
            ids_indexed: false,
            completed: 0,
            events: 0,
            cut: None,
            cut_issue: None,
            missing_marker: None,
        }
    }

    /// The calls completed from here on were written without `marker` (`None`: with it).
    pub fn set_missing_marker(&mut self, marker: Option<&'static str>) {
        self.missing_marker = marker;
    }

    /// How many times the sink was given content, reasoning, or a call start, end or failure:
    /// everything but argument text. The engine's `max_call_bytes` check reads it.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// A region is being cut by `max_call_bytes`: until [`Sink::end_cut`], the call that ends or
    /// fails (or, when none is open, the first truncation) is dropped as `too_large`.
    pub(crate) fn begin_cut(&mut self, limit: usize) {
        self.cut = Some((limit, None));
    }

    /// The cut region turned out not to be a call (a soft trigger): nothing was dropped.
    pub(crate) fn cancel_cut(&mut self) {
        self.cut = None;
    }

    pub(crate) fn end_cut(&mut self) {
        let Some((limit, issue)) = self.cut.take() else {
            return;
        };
        let issue = match issue {
            Some(issue) => issue,
            None => {
                let index = self.open.take();
                if let Some(i) = index {
                    self.calls[i].state = CallState::Dropped;
                }
                self.push_issue(index, IssueKind::TooLarge, String::new(), "");
                self.message.issues.len() - 1
            }
        };
        self.cut_issue = Some((issue, limit));
        self.set_cut_detail(0);
    }

    /// The rest of the cut region is gone: `dropped` bytes after the issue's raw text.
    pub(crate) fn finish_cut(&mut self, dropped: usize) {
        self.set_cut_detail(dropped);
        self.cut_issue = None;
    }

    fn set_cut_detail(&mut self, dropped: usize) {
        let Some((issue, limit)) = self.cut_issue else {
            return;
        };
        if let Some(issue) = self.message.issues.get_mut(issue) {
            issue.detail = format!(
                "the call ran past max_call_bytes ({limit}): it was cut, and the {dropped} bytes \
                 after this raw text, up to the end of its region, were dropped"
            );
        }
    }

    /// In a cut: record the `too_large` issue (once) instead of `kind`; true when recorded.
    fn cut_instead(&mut self, kind: IssueKind, raw: &str) -> bool {
        let Some((limit, None)) = self.cut else {
            return false;
        };
        let index = self.open.take();
        if index.is_none() && kind != IssueKind::Truncated {
            return false;
        }
        if let Some(i) = index {
            self.calls[i].state = CallState::Dropped;
        }
        self.push_issue(index, IssueKind::TooLarge, String::new(), raw);
        self.cut = Some((limit, Some(self.message.issues.len() - 1)));
        true
    }

    /// What the request allows; calls that break it are flagged `not_allowed_by_tool_choice`.
    pub(crate) fn set_policy(&mut self, tool_choice: ToolChoice, parallel_tool_calls: bool) {
        self.tool_choice = tool_choice;
        self.parallel_tool_calls = parallel_tool_calls;
    }

    pub(crate) fn set_markers(&mut self, markers: Arc<MarkerTable>) {
        self.markers = markers;
    }

    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    pub fn content(&mut self, text: &str) {
        self.events += u64::from(!text.is_empty());
        let text = self.markers.restore(text);
        self.deltas.content(&text);
        self.message.content.push_str(&text);
    }

    pub fn reasoning(&mut self, text: &str) {
        self.events += u64::from(!text.is_empty());
        let text = self.markers.restore(text);
        self.deltas.reasoning(&text);
        self.message.reasoning.push_str(&text);
    }

    pub fn has_open_call(&self) -> bool {
        self.open.is_some()
    }

    /// Start a call once its name is known. `model_id` is the format's own call id, if any.
    pub fn start_call(&mut self, name: &str, model_id: Option<String>) {
        self.events += 1;
        if self.open.is_some() {
            self.fail_call(
                IssueKind::MalformedJson,
                "a call started before the previous one ended",
                "",
            );
        }
        let name = self.markers.restore(name);
        let index = self.calls.len();
        let (id, model_id) = match model_id {
            Some(id) if !id.is_empty() => (self.markers.restore(&id).into_owned(), true),
            _ => (self.ids.next_id(index, &name), false),
        };
        let tool = self.tools.index_of(&name);
        let custom = tool.is_some_and(|t| self.tools.tools()[t].kind == ToolKind::Custom);
        if !custom {
            self.deltas.call_start(index, &id, &name);
        }
        // A call of an earlier output, emptied by `reset`: its strings keep their buffers.
        let mut call = self.spare.pop().unwrap_or_else(|| ToolCall {
            index,
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
            input: None,
        });
        call.index = index;
        call.id = id;
        call.name.push_str(&name);
        let record = CallRecord {
            call,
            state: CallState::Open,
            model_id,
            custom,
            tool,
        };
        self.calls.push(record);
        self.open = Some(index);
    }

    pub fn args(&mut self, fragment: &str) {
        let Some(index) = self.open else { return };
        let fragment = self.markers.restore(fragment);
        if !self.calls[index].custom {
            self.deltas.call_args(index, &fragment);
        }
        self.calls[index].call.arguments.push_str(&fragment);
    }

    /// The open call is complete. Its arguments are checked as JSON and against the tool's schema;
    /// `raw` is the call's text, kept for any issue.
    pub fn end_call(&mut self, raw: &str) {
        self.events += 1;
        if self.open.is_some() && self.cut_instead(IssueKind::Truncated, raw) {
            return;
        }
        let Some(index) = self.open.take() else {
            return;
        };
        // The schema check parses the arguments as serde_json would: the one parse serves as
        // the JSON check too. Text it refuses is read again by the plain check, which is more
        // lenient (lone surrogate escapes) and has the last word on what is malformed.
        let checked = self.validate(index);
        if self.calls[index].custom {
            let input = custom_input(&self.calls[index].call.arguments);
            let call = &mut self.calls[index].call;
            self.deltas.custom_call(index, &call.id, &call.name, &input);
            call.input = Some(input);
        } else if !matches!(checked, Some(Ok(_)))
            && !crate::json::is_valid(&self.calls[index].call.arguments)
        {
            self.open = Some(index);
            self.fail_call(
                IssueKind::MalformedJson,
                "arguments are not valid JSON",
                raw,
            );
            return;
        }
        self.calls[index].state = CallState::Complete;
        self.completed += 1;
        // Ids of completed calls are indexed from the first id the model wrote on (the earlier
        // ones added then), so that a repeated model id is found in constant time (a scan made
        // 100,000 calls quadratic) while outputs without model ids never hash an id.
        if self.calls[index].model_id && !self.ids_indexed {
            self.ids_indexed = true;
            let earlier = self.calls[..index]
                .iter()
                .filter(|c| c.state == CallState::Complete);
            self.complete_ids.extend(earlier.map(|c| c.call.id.clone()));
        }
        let record = &self.calls[index];
        let repeated = self.ids_indexed && !self.complete_ids.insert(record.call.id.clone());
        if record.model_id && repeated {
            let detail = format!("call id {:?} is used twice in one message", record.call.id);
            self.push_issue(Some(index), IssueKind::DuplicateCallId, detail, raw);
        }
        if let Some(marker) = self.missing_marker {
            let detail = format!(
                "the call was written without its opening marker {marker} (a special token: \
                 decode with skip_special_tokens=False)"
            );
            self.push_issue(Some(index), IssueKind::MissingMarkers, detail, raw);
        }
        self.check_against_tools(index, raw, checked);
        self.check_against_choice(index, raw);
    }

    /// The call's arguments checked against its tool's compiled schema, where it has one (a
    /// declared function tool); `Err` when they are not JSON as serde_json reads a `Value`.
    fn validate(&self, index: usize) -> Option<Result<Vec<Violation>, NotJson>> {
        let record = &self.calls[index];
        let tool = &self.tools.tools()[record.tool?];
        if tool.kind != ToolKind::Function {
            return None;
        }
        let validator = tool.validator.as_ref()?;
        Some(validator.validate_json(&record.call.arguments))
    }

    /// `checked`: what [`Sink::validate`] found for this call.
    fn check_against_tools(
        &mut self,
        index: usize,
        raw: &str,
        checked: Option<Result<Vec<Violation>, NotJson>>,
    ) {
        // Fields borrowed apart rather than the tool set's `Arc` cloned: threads parsing with
        // the same tools would all write its count, once per call.
        let Self {
            tools,
            calls,
            message,
            markers,
            ..
        } = self;
        let call = &calls[index].call;
        if tools.is_empty() {
            return;
        }
        let mut push = |kind, detail, violation: Option<(String, String)>| {
            let (pointer, keyword) = violation.unzip();
            message.issues.push(Issue {
                index: Some(index),
                kind,
                detail,
                raw: markers.restore(raw).into_owned(),
                pointer,
                keyword,
            });
        };
        let Some(tool) = calls[index].tool.map(|t| &tools.tools()[t]) else {
            let detail = format!("tool {:?} is not among the request's tools", call.name);
            push(IssueKind::UnknownTool, detail, None);
            return;
        };
        if tool.kind != ToolKind::Function {
            return;
        }
        if tool.validator.is_none() {
            if let Some(error) = &tool.schema_error {
                let detail = format!(
                    "arguments not checked: the schema of tool {:?} is invalid: {error}",
                    call.name
                );
                push(IssueKind::UncheckedArguments, detail, None);
            }
            return;
        }
        let Some(Ok(violations)) = checked else {
            return;
        };
        for violation in violations.into_iter().take(MAX_VIOLATIONS) {
            let detail = violation.to_string();
            let at = (violation.pointer, violation.keyword);
            push(IssueKind::SchemaViolation, detail, Some(at));
        }
    }

    fn check_against_choice(&mut self, index: usize, raw: &str) {
        let name = &self.calls[index].call.name;
        let why = self.tool_choice.refusal(name).or_else(|| {
            (!self.parallel_tool_calls && self.completed > 1)
                .then(|| "parallel_tool_calls is false: one call only".to_owned())
        });
        if let Some(why) = why {
            self.push_issue(Some(index), IssueKind::NotAllowedByToolChoice, why, raw);
        }
    }

    /// Record an issue; an open call is dropped from the message (its deltas were already sent).
    pub fn fail_call(&mut self, kind: IssueKind, detail: impl Into<String>, raw: &str) {
        self.events += 1;
        if self.cut_instead(kind, raw) {
            return;
        }
        let index = self.open.take();
        if let Some(i) = index {
            self.calls[i].state = CallState::Dropped;
        }
        self.push_issue(index, kind, detail.into(), raw);
    }

    fn push_issue(&mut self, index: Option<usize>, kind: IssueKind, detail: String, raw: &str) {
        let raw = self.markers.restore(raw).into_owned();
        self.message.issues.push(Issue {
            index,
            kind,
            detail,
            raw,
            pointer: None,
            keyword: None,
        });
    }

    pub(crate) fn finish(&mut self, finish_reason: Option<&str>) {
        let made_calls = self.calls.iter().any(|c| c.state == CallState::Complete);
        if !made_calls && self.tool_choice.requires_call() {
            self.push_issue(
                None,
                IssueKind::MissingToolCall,
                "tool_choice requires a tool call".to_owned(),
                "",
            );
        }
        let reason = match finish_reason {
            None | Some("stop") if made_calls => "tool_calls",
            None => "stop",
            Some(other) => other,
        };
        let mut kept = std::mem::take(&mut self.spare_reason);
        kept.push_str(reason);
        self.message.finish_reason = Some(kept);
        self.deltas.finish(reason);
    }

    pub fn take_deltas(&mut self) -> Vec<crate::message::Delta> {
        self.deltas.take()
    }

    pub fn message(&self) -> Message {
        let mut message = self.message.clone();
        message.tool_calls = self
            .calls
            .iter()
            .filter(|c| c.state == CallState::Complete)
            .map(|c| c.call.clone())
            .collect();
        message
    }

    /// The message, moved out without a copy: for one-shot parsing, when the sink is done.
    pub fn take_message(&mut self) -> Message {
        let mut message = std::mem::take(&mut self.message);
        message.tool_calls = self
            .calls
            .drain(..)
            .filter(|c| c.state == CallState::Complete)
            .map(|c| c.call)
            .collect();
        message
    }

    pub fn issues(&self) -> &[Issue] {
        &self.message.issues
    }

    /// How many calls the message holds.
    pub fn call_count(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| c.state == CallState::Complete)
            .count()
    }

    /// Empty, for a new output: the tools, markers, policy and id source stay.
    pub(crate) fn reset(&mut self) {
        self.deltas.clear();
        let Message {
            content,
            reasoning,
            tool_calls,
            issues,
            finish_reason,
        } = &mut self.message;
        content.clear();
        reasoning.clear();
        tool_calls.clear();
        issues.clear();
        if let Some(mut reason) = finish_reason.take() {
            reason.clear();
            self.spare_reason = reason;
        }
        // The records are kept, emptied, for the next output's calls (a few, of modest size:
        // what a batch of similar outputs reuses).
        for CallRecord { mut call, .. } in self.calls.drain(..) {
            if self.spare.len() < SPARE_CALLS
                && call.name.capacity() + call.arguments.capacity() <= SPARE_BYTES
            {
                call.name.clear();
                call.arguments.clear();
                call.input = None;
                self.spare.push(call);
            }
        }
        self.open = None;
        self.complete_ids.clear();
        self.ids_indexed = false;
        self.completed = 0;
        self.events = 0;
        self.cut = None;
        self.cut_issue = None;
        self.missing_marker = None;
    }

    /// Keep only the message: no deltas are built (one-shot parsing never reads them).
    pub(crate) fn discard_deltas(&mut self) {
        self.deltas = DeltaBuffer::discarding();
    }
}

/// [`Sink::reset`] keeps at most this many calls, of at most this many bytes of name
/// and arguments each, for the next output.
const SPARE_CALLS: usize = 16;
const SPARE_BYTES: usize = 4096;

/// At most this many schema violations are reported per call.
const MAX_VIOLATIONS: usize = 8;

/// A custom tool's input: a function-style `{"input": "..."}` wrapper or a JSON string is
/// unwrapped; anything else is the raw text the model wrote.
fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Object(map)) if map.len() == 1 => match map.get("input") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => arguments.to_owned(),
        },
        _ => arguments.to_owned(),
    }
}
