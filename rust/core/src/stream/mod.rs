//! The stream engine: one per request. It splits reasoning from content, finds call regions by the
//! format's triggers, hands them to the format's region parser, and releases content as soon as it
//! cannot be the start of a marker.
//!
//! `parse` is `feed` of the whole text followed by `finish`, so one-shot and streamed parsing agree
//! by construction; every decision waits until enough text has arrived, never on a chunk boundary.

mod config;
mod regions;

pub use config::{ParserConfig, Reasoning};

use std::borrow::Cow;
use std::sync::Arc;

use self::regions::Budget;
use crate::error::{Error, Result};
use crate::formats::json_calls::{stripped_opener, unwrapped_region};
use crate::ids::{IdSource, RandomIds};
use crate::message::{Delta, Issue, Message};
use crate::region::{MarkerTable, RegionParser, Sink};
use crate::spec::Role;
use crate::text::{self, Scan};
use crate::vocab::{Piece, TokenDecoder, Vocab};

/// Scan ids of what content scanning finds besides triggers.
const STRAY: usize = usize::MAX;
const REOPEN: usize = usize::MAX - 1;

enum State {
    /// Output start, when reasoning may open it.
    Start,
    Reasoning,
    Content,
    Region(Box<dyn RegionParser>),
    /// The rest of a call region cut by `max_call_bytes`, dropped up to the region's end marker.
    Discard {
        dropped: usize,
    },
}

/// Text waiting to be parsed. Consuming from the front moves a cursor instead of shifting the
/// bytes, so a long output with many calls parses in linear time.
#[derive(Default)]
struct Pending {
    text: String,
    start: usize,
    /// How many bytes from the start are known to be whitespace.
    leading_ws: usize,
}

impl Pending {
    fn push_str(&mut self, s: &str) {
        self.compact();
        self.text.push_str(s);
    }

    /// Drop the consumed bytes once they are half the buffer, before more text is appended.
    fn compact(&mut self) {
        if self.start > 0 && self.start >= self.text.len() / 2 {
            self.text.drain(..self.start);
            self.start = 0;
        }
    }

    fn clear(&mut self) {
        self.text.clear();
        self.start = 0;
        self.leading_ws = 0;
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.text.len());
        self.leading_ws = self.leading_ws.saturating_sub(n);
    }

    /// Length of the leading whitespace. Whitespace held at the output start (waiting for what
    /// follows it) is not scanned again on every feed, so a long run of it stays linear.
    fn skip_ws(&mut self) -> usize {
        let from = self.leading_ws.min(self.len());
        self.leading_ws = from + text::skip_ws(&self[from..]);
        self.leading_ws
    }
}

impl std::ops::Deref for Pending {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text[self.start..]
    }
}

enum Input {
    Unset,
    Text,
    Tokens(TokenDecoder),
}

pub struct StreamParser {
    config: ParserConfig,
    input: Input,
    markers: Arc<MarkerTable>,
    pending: Pending,
    state: State,
    at_output_start: bool,
    sink: Sink,
    finished: bool,
    trigger_lits: Vec<Cow<'static, str>>,
    /// A label the format writes right after its native reasoning opener (Gemma 4's
    /// `thought\n`), still to be stripped from the start of the reasoning.
    label_pending: Option<&'static str>,
    /// End markers with no open call: markup, not content (kept in an issue).
    stray_lits: Vec<Cow<'static, str>>,
    /// What content scanning looks for: triggers valid anywhere, stray end markers, and the
    /// reasoning opener, with the trigger index of each (`STRAY` and `REOPEN` for the others).
    scan_lits: Vec<Cow<'static, str>>,
    scan_ids: Vec<usize>,
    /// `max_call_bytes` bookkeeping for the open region.
    budget: Option<Budget>,
    /// The trigger the open region was built for (none: not built by the format's region
    /// constructor), and a finished region kept for the next of its trigger
    /// ([`RegionParser::restart`]).
    region_trigger: Option<usize>,
    spare_region: Option<(usize, Box<dyn RegionParser>)>,
    /// Where a cut region ends: its call-end, section-end or message-end markers.
    discard_lits: Vec<Cow<'static, str>>,
    /// The format's stop texts, and those at the end of the input so far, held back.
    stop_lits: Vec<Cow<'static, str>>,
    stop_tail: text::StopTail,
}

impl StreamParser {
    pub fn new(config: ParserConfig) -> Self {
        Self::with_ids(config, Box::new(RandomIds::new()))
    }

    pub fn with_ids(config: ParserConfig, ids: Box<dyn IdSource>) -> Self {
        let markers = Arc::new(MarkerTable::text());
        let state = initial_state(&config);
        let mut sink = Sink::new(ids, config.tools.clone(), markers.clone());
        sink.set_policy(config.tool_choice.clone(), config.parallel_tool_calls);
        let label_pending = initial_label(&config);
        let mut parser = Self {
            config,
            input: Input::Unset,
            markers,
            pending: Pending::default(),
            state,
            at_output_start: true,
            sink,
            finished: false,
            trigger_lits: Vec::new(),
            label_pending,
            stray_lits: Vec::new(),
            scan_lits: Vec::new(),
            scan_ids: Vec::new(),
            budget: None,
            region_trigger: None,
            spare_region: None,
            discard_lits: Vec::new(),
            stop_lits: Vec::new(),
            stop_tail: text::StopTail::default(),
        };
        parser.refresh_trigger_lits();
        parser
    }

    /// Start a new output, as a fresh stream with the same configuration and id source would,
    /// from any point of the last one (finished or not): what it read is dropped. What set-up
    /// built is kept (the marker table, the literals, the input mode: text, or token ids of the
    /// same vocabulary), so that one stream parses many outputs without a set-up for each.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.state = initial_state(&self.config);
        self.at_output_start = true;
        self.sink.reset();
        self.finished = false;
        self.label_pending = initial_label(&self.config);
        self.budget = None;
        self.stop_tail = text::StopTail::default();
        if let Input::Tokens(decoder) = &mut self.input {
            *decoder = TokenDecoder::new(decoder.vocab().clone());
        }
    }

    /// Switch to token-id input: the listed markers now match only when they arrive as special
    /// tokens. Must be called before any input.
    pub fn use_special_markers(&mut self, special: &[&'static str]) {
        self.spare_region = None; // its literals are the old markers'
        self.markers = Arc::new(MarkerTable::with_special(special));
        self.sink.set_markers(self.markers.clone());
        self.refresh_trigger_lits();
    }

    pub fn markers(&self) -> &MarkerTable {
        &self.markers
    }

    fn refresh_trigger_lits(&mut self) {
        let spec = &self.config.spec.syntax;
        self.trigger_lits = spec
            .triggers
            .iter()
            .map(|t| self.markers.lit_cow(t.text))
            .collect();
        self.stray_lits = spec
            .markers()
            .filter(|m| matches!(m.role, Role::CallEnd | Role::SectionEnd))
            .filter(|m| !spec.triggers.iter().any(|t| t.text == m.text))
            .map(|m| self.markers.lit_cow(m.text))
            .collect();
        let anywhere = spec
            .triggers
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.at_output_start);
        self.scan_ids = anywhere
            .clone()
            .map(|(i, _)| i)
            .chain(self.stray_lits.iter().map(|_| STRAY))
            .collect();
        self.scan_lits = anywhere
            .map(|(i, _)| self.trigger_lits[i].clone())
            .chain(self.stray_lits.iter().cloned())
            .collect();
        // A reasoning block may open again after content or calls (`<think>a</think>text
        // <think>b</think>`), unless the opener is markup the format's regions read (harmony's
        // `<|channel|>analysis<|message|>` opens a message).
        if let Some(open) = self.reopen_text() {
            self.scan_ids.push(REOPEN);
            self.scan_lits.push(self.markers.lit_cow(open));
        }
        // A cut region ends at the end of its section where the format has sections (the rest
        // of the section goes with the cut call), else at the end of the call or message.
        let has_sections = spec.markers().any(|m| m.role == Role::SectionEnd);
        self.stop_lits = spec.stops.iter().map(|s| self.markers.lit_cow(s)).collect();
        self.discard_lits = spec
            .markers()
            .filter(|m| match m.role {
                Role::SectionEnd => true,
                Role::CallEnd | Role::MessageEnd => !has_sections,
                _ => false,
            })
            .map(|m| self.markers.lit_cow(m.text))
            .collect();
    }

    /// The reasoning opener, where a reasoning block may open after the output start.
    fn reopen_text(&self) -> Option<&'static str> {
        let open = match self.config.reasoning {
            Reasoning::Paired { open, .. } | Reasoning::ClosingOnly { open, .. } => open,
            Reasoning::Off => return None,
        };
        let triggers = self.config.spec.syntax.triggers;
        let read_by_regions = triggers
            .iter()
            .any(|t| !t.at_output_start && open.starts_with(t.text));
        (!read_by_regions).then_some(open)
    }

    pub fn config(&self) -> &ParserConfig {
        &self.config
    }

    pub fn feed(&mut self, text: &str) -> Result<Vec<Delta>> {
        if self.finished {
            return Err(Error::StreamFinished);
        }
        match self.input {
            Input::Unset => self.input = Input::Text,
            Input::Text => {}
            Input::Tokens(_) => return Err(Error::MixedInput),
        }
        self.push_input(text);
        self.pump(false);
        Ok(self.sink.take_deltas())
    }

    /// Feed sampled token ids. Markers that are special tokens of `vocab` match only by id from
    /// here on, so the same characters inside ordinary tokens stay text.
    ///
    /// An id without a token in `vocab` is an error, raised before anything is fed: it means the
    /// engine's tokenizer and the parser's vocabulary disagree (or a padded logits row was
    /// sampled), which no later text can repair, and decoding it as U+FFFD would pass a garbled
    /// completion off as model output.
    pub fn feed_tokens(&mut self, vocab: &Arc<Vocab>, ids: &[u32]) -> Result<Vec<Delta>> {
        if self.finished {
            return Err(Error::StreamFinished);
        }
        if let Some(&id) = ids.iter().find(|&&id| vocab.token_bytes(id).is_none()) {
            return Err(Error::InvalidArgument(format!(
                "token id {id} is not in the vocabulary (highest id {}); nothing was fed",
                vocab
                    .max_id()
                    .map_or_else(|| "none".to_owned(), |max| max.to_string())
            )));
        }
        match self.input {
            Input::Unset => {
                let special: Vec<&'static str> = self
                    .config
                    .special_marker_texts()
                    .into_iter()
                    .filter(|text| vocab.special_id(text).is_some())
                    .collect();
                self.use_special_markers(&special);
                self.input = Input::Tokens(TokenDecoder::new(vocab.clone()));
            }
            Input::Tokens(_) => {}
            Input::Text => return Err(Error::MixedInput),
        }
        let pieces = match &mut self.input {
            Input::Tokens(decoder) => decoder.push(ids),
            _ => Vec::new(),
        };
        self.push_pieces(pieces);
        self.pump(false);
        Ok(self.sink.take_deltas())
    }

    /// The decoded pieces as one text (a special-token marker as its sentinel, sentinel
    /// characters in decoded text as U+FFFD), given to the stop-text check at once: it decides
    /// the same whatever the chunking, and one scan costs less than one per piece.
    fn push_pieces(&mut self, pieces: Vec<Piece>) {
        let mut joined = String::new();
        for piece in pieces {
            match piece {
                // Sentinels are 4-byte characters led by 0xF4: most text has no such byte.
                Piece::Text(text)
                    if text.as_bytes().contains(&0xF4)
                        && text.chars().any(MarkerTable::is_sentinel) =>
                {
                    joined.extend(text.chars().map(|c| {
                        if MarkerTable::is_sentinel(c) {
                            '\u{FFFD}'
                        } else {
                            c
                        }
                    }));
                }
                Piece::Text(text) if joined.is_empty() => joined = text,
                Piece::Text(text) => joined.push_str(&text),
                Piece::Special { text, .. } => match self.markers.sentinel_for(&text) {
                    Some(sentinel) => joined.push_str(sentinel),
                    None => joined.push_str(&text),
                },
            }
        }
        if !joined.is_empty() {
            self.push_input(&joined);
        }
    }

    /// New input, less any stop texts at its end (held until the output ends, then dropped, or
    /// until more text arrives and they turn out to be text: see [`Syntax::stops`]).
    fn push_input(&mut self, text: &str) {
        if self.stop_lits.is_empty() {
            self.pending.push_str(text);
        } else {
            self.pending.compact();
            self.stop_tail
                .push_into(text, &self.stop_lits, &mut self.pending.text);
        }
    }

    pub fn finish(&mut self, finish_reason: Option<&str>) -> Result<Vec<Delta>> {
        if self.finished {
            return Err(Error::StreamFinished);
        }
        if let Input::Tokens(decoder) = &mut self.input {
            let pieces = decoder.finish();
            self.push_pieces(pieces);
        }
        let unfinished_stop = self.stop_tail.finish();
        self.pending.push_str(&unfinished_stop);
        self.pump(true);
        self.finished = true;
        self.sink.finish(finish_reason);
        Ok(self.sink.take_deltas())
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn message(&self) -> Message {
        self.sink.message()
    }

    /// For one-shot parsing: build no deltas (`feed` and `finish` return none), only the
    /// message, which [`Self::into_message`] then hands over without a copy.
    pub fn discard_deltas(&mut self) {
        self.sink.discard_deltas();
    }

    /// The message, without copying it, once the stream is done.
    pub fn into_message(mut self) -> Message {
        self.take_message()
    }

    /// [`Self::into_message`] for a stream that parses on after a [`Self::reset`].
    pub fn take_message(&mut self) -> Message {
        self.sink.take_message()
    }

    /// The message's issues so far, without building the message.
    pub fn issues(&self) -> &[Issue] {
        self.sink.issues()
    }

    /// How many calls the message holds so far, without building it.
    pub fn call_count(&self) -> usize {
        self.sink.call_count()
    }

    fn pump(&mut self, eof: bool) {
        loop {
            let progressed = match std::mem::replace(&mut self.state, State::Content) {
                State::Start => self.step_start(eof),
                State::Reasoning => self.step_reasoning(eof),
                State::Content => self.step_content(eof),
                State::Region(parser) => self.step_region(parser, eof),
                State::Discard { dropped } => self.step_discard(dropped, eof),
            };
            if !progressed {
                return;
            }
        }
    }

    fn consume(&mut self, n: usize) {
        self.pending.consume(n);
    }

    fn step_start(&mut self, eof: bool) -> bool {
        let (open, without_opener) = match self.config.reasoning {
            Reasoning::Paired { open, .. } => (open, State::Content),
            Reasoning::ClosingOnly { open, .. } => (open, State::Reasoning),
            Reasoning::Off => {
                self.state = State::Content;
                return true;
            }
        };
        let open_lit = self.markers.lit_text(open);
        let ws = self.pending.skip_ws();
        let rest = &self.pending[ws..];
        if rest.starts_with(open_lit.as_str()) {
            self.consume(ws + open_lit.len());
            self.label_pending = reasoning_label(&self.config, Some(open));
            self.state = State::Reasoning;
            return true;
        }
        if !eof && (rest.is_empty() || text::is_proper_prefix(rest, &open_lit)) {
            self.state = State::Start;
            return false;
        }
        self.state = without_opener;
        true
    }

    fn step_reasoning(&mut self, eof: bool) -> bool {
        let close = match self.config.reasoning {
            Reasoning::Paired { close, .. } | Reasoning::ClosingOnly { close, .. } => close,
            Reasoning::Off => "</think>",
        };
        if let Some(label) = self.label_pending {
            if self.pending.starts_with(label) {
                self.consume(label.len());
                self.label_pending = None;
            } else if !eof
                && (self.pending.is_empty() || text::is_proper_prefix(&self.pending, label))
            {
                self.state = State::Reasoning;
                return false;
            } else {
                self.label_pending = None;
            }
        }
        let close_lit = self.markers.lit_text(close);
        // A marker with the role `reasoning_exit` also ends reasoning (the model went straight from
        // thinking into a tool call without closing it); it stays in the input for content.
        let mut lits = vec![close_lit.clone()];
        lits.extend(
            self.config
                .spec
                .syntax
                .markers()
                .filter(|m| m.role == Role::ReasoningExit)
                .map(|m| self.markers.lit_text(m.text)),
        );
        let lits: Vec<&str> = lits.iter().map(String::as_str).collect();
        match text::scan(&self.pending, &lits) {
            Scan::Found { pos, which } => {
                self.sink.reasoning(&self.pending[..pos]);
                let close_len = if which == 0 { close_lit.len() } else { 0 };
                self.consume(pos + close_len);
                self.state = State::Content;
                true
            }
            Scan::NotFound { safe } => {
                let upto = if eof { self.pending.len() } else { safe };
                self.sink.reasoning(&self.pending[..upto]);
                self.consume(upto);
                self.state = State::Reasoning;
                false
            }
        }
    }

    fn step_content(&mut self, eof: bool) -> bool {
        let spec = &self.config.spec.syntax;
        if self.at_output_start {
            let ws = self.pending.skip_ws();
            let rest = &self.pending[ws..];
            if rest.is_empty() && !eof {
                self.state = State::Content;
                return false;
            }
            let mut waiting = false;
            let mut best: Option<usize> = None;
            for (i, lit) in self.trigger_lits.iter().enumerate() {
                // A trigger that starts with whitespace (Muse's ` to=`) matches it exactly.
                let hay = if lit.starts_with(char::is_whitespace) {
                    &self.pending[..]
                } else {
                    rest
                };
                if hay.starts_with(lit.as_ref()) {
                    if best.is_none_or(|b| self.trigger_lits[b].len() < lit.len()) {
                        best = Some(i);
                    }
                } else {
                    waiting |= !eof && text::is_proper_prefix(hay, lit);
                }
            }
            if waiting {
                self.state = State::Content;
                return false;
            }
            if let Some(i) = best.filter(|&i| spec.triggers[i].at_output_start) {
                let ws = if self.trigger_lits[i].starts_with(char::is_whitespace) {
                    0
                } else {
                    ws
                };
                self.sink.content(&self.pending[..ws]);
                self.consume(ws);
                self.open_region(i);
                return true;
            }
            let bare = rest.chars().next().filter(|c| matches!(c, '[' | '{'));
            let opener = bare
                .filter(|_| best.is_none())
                .and_then(|_| stripped_opener(spec));
            if let (Some(first), Some(opener)) = (bare, opener) {
                self.sink.content(&self.pending[..ws]);
                self.consume(ws);
                let region = unwrapped_region(&self.config.tools, &self.markers, opener, first);
                self.state = State::Region(region);
                self.region_trigger = None;
                self.budget = self.new_budget(1);
                return true;
            }
            if !rest.is_empty() {
                self.at_output_start = false;
            }
        }
        let lits = &self.scan_lits;
        let found = match text::scan(&self.pending, lits) {
            // A longer literal that starts with the one found may still complete there (MiniMax
            // M3's trigger is the namespace token that begins every one of its end markers).
            Scan::Found { pos, .. }
                if !eof
                    && lits
                        .iter()
                        .any(|l| text::is_proper_prefix(&self.pending[pos..], l)) =>
            {
                Scan::NotFound { safe: pos }
            }
            Scan::Found { pos, which } => Scan::Found {
                pos,
                which: self.scan_ids[which],
            },
            not_found => not_found,
        };
        match found {
            Scan::Found { pos, which } => {
                let before = &self.pending[..pos];
                if text::skip_ws(before) < before.len() {
                    self.at_output_start = false;
                }
                self.sink.content(before);
                self.consume(pos);
                if which == REOPEN {
                    let open = self.reopen_text().unwrap_or_default();
                    self.consume(self.markers.lit(open).len());
                    self.label_pending = reasoning_label(&self.config, Some(open));
                    self.state = State::Reasoning;
                } else if which == STRAY {
                    let stray = self
                        .stray_lits
                        .iter()
                        .find(|l| self.pending.starts_with(l.as_ref()))
                        .cloned();
                    let stray = stray.unwrap_or_default();
                    self.consume(stray.len());
                    self.sink.fail_call(
                        crate::message::IssueKind::UnexpectedText,
                        "an end marker outside any call",
                        &stray,
                    );
                    self.state = State::Content;
                } else {
                    self.open_region(which);
                }
                true
            }
            Scan::NotFound { safe } => {
                let upto = if eof { self.pending.len() } else { safe };
                let released = &self.pending[..upto];
                if text::skip_ws(released) < released.len() {
                    self.at_output_start = false;
                }
                self.sink.content(released);
                self.consume(upto);
                self.state = State::Content;
                false
            }
        }
    }
}

/// Where a new output starts: at its reasoning opener when the output may open with one.
fn initial_state(config: &ParserConfig) -> State {
    match config.reasoning {
        Reasoning::Off => State::Content,
        Reasoning::Paired { .. } | Reasoning::ClosingOnly { .. } => State::Start,
    }
}

/// The label still to strip at the output start: reasoning the prompt opened starts with it.
fn initial_label(config: &ParserConfig) -> Option<&'static str> {
    match config.reasoning {
        Reasoning::ClosingOnly { .. } => reasoning_label(config, None),
        _ => None,
    }
}

/// The label a format writes after its native reasoning opener (a `reasoning_label` marker),
/// when reasoning was opened by that native opener (`None`: opened by the prompt).
fn reasoning_label(config: &ParserConfig, opened_by: Option<&str>) -> Option<&'static str> {
    let (native_open, _) = config.spec.syntax.reasoning?;
    if opened_by.is_some_and(|open| open != native_open) {
        return None;
    }
    config
        .spec
        .syntax
        .marker(Role::ReasoningLabel)
        .map(|m| m.text)
}

/// One-shot parse: the same engine, fed everything at once. No deltas are built, and the message
/// is moved out rather than copied.
pub fn parse(config: &ParserConfig, text: &str) -> Message {
    let mut stream = StreamParser::new(config.clone());
    stream.discard_deltas();
    let _ = stream.feed(text);
    let _ = stream.finish(None);
    stream.into_message()
}
