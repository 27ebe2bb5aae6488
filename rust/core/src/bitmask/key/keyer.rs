//! The keyer: follows one request's output through its [`Plan`] and names its grammar state.

use std::sync::Arc;

use super::hash::Hash128;
use super::json::{utf8_len, Event, JsonScan, ValueEnd};
use super::plan::{Content, Dispatch, KeyPlan, Plan, Prefix, Section, TagSpec};
use super::xml::{XmlPhase, XmlState};
use super::{is_ws, KEY_LEN, LOST_KEY_BYTES};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inside the elements before the dispatch (a reasoning block, a whitespace regex, ...).
    Prefix,
    /// Free text of a `triggered_tags` format.
    Free,
    /// Matching a tag's begin after a trigger.
    Begin,
    /// Between tags of a `tags_with_separator` format (separator and begin).
    Between,
    /// Inside a tag's content.
    Content,
    /// Matching a tag's end string.
    End,
    /// In a section tag between its calls: a separator and a call's begin, or the section's end.
    Section,
    /// After a plan's suffix: the output can only end.
    Done,
    /// No anchors any more (or never: no plan); keys cover the text since the last anchor.
    Lost,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Prefix => "prefix",
            Mode::Free => "free",
            Mode::Begin => "begin",
            Mode::Between => "between",
            Mode::Content => "content",
            Mode::End => "end",
            Mode::Section => "section",
            Mode::Done => "done",
            Mode::Lost => "lost",
        }
    }
}

/// Anchor kinds, the second part of a key.
pub mod family {
    /// The start of the output, keyed by text.
    pub const START_TEXT: u8 = b'S';
    /// The start of the output, keyed by token ids.
    pub const START_IDS: u8 = b'I';
    /// A canonical point in the free text of `triggered_tags`.
    pub const FREE: u8 = b'F';
    /// The start of a `tags_with_separator`, or the end of one of its tags.
    pub const AFTER: u8 = b'A';
    /// Inside an XML call: the start of a parameter's value or the end of a parameter, keyed
    /// by the tag and the parameter.
    pub const XML: u8 = b'X';
    /// Inside JSON content: after a member's value (keyed by the tag and the position in the
    /// containers, not by the values) or after the whole value.
    pub const JSON: u8 = b'J';
    /// In a section tag, at its start or after one of its calls, keyed by the section's tag and
    /// whether a call came before (which decides whether a separator is due).
    pub const SECTION: u8 = b'N';
}

/// Where the keyer is in a section tag.
#[derive(Debug, Clone)]
struct SectionState {
    /// The section's tag among the plan's tags.
    outer: usize,
    section: Arc<Section>,
    calls: u32,
    /// Inside one of the section's calls (`StateKeyer::tag` is then its index in the section).
    in_call: bool,
}

/// Follows one request's output and names its grammar state.
#[derive(Clone)]
pub struct StateKeyer {
    grammar_id: [u8; 16],
    plan: Option<Arc<Plan>>,
    text_level: bool,
    family: u8,
    count: u32,
    pub(super) hasher: Hash128,
    pub(super) quote_digest: Option<[u8; 16]>,
    /// The digest before a tracked number's first byte; with the number's state, its key.
    pub(super) number_digest: Option<[u8; 16]>,
    /// The digest at the start of a raw XML value, its key wherever the value's state is canonical.
    pub(super) value_digest: Option<[u8; 16]>,
    pub(super) xml: Option<XmlState>,
    section: Option<SectionState>,
    mode: Mode,
    // prefix phase
    prefix_i: usize,
    prefix_buf: Vec<u8>,
    prefix_in_body: bool,
    // dispatch phase
    pending: Vec<u8>,
    utf8: u8,
    buf: Vec<u8>,
    tag: usize,
    pub(super) scan: Option<JsonScan>,
    const_left: Vec<u8>,
    /// Reading the lead of a JSON content (see [`Content::Json`]).
    in_lead: bool,
    /// Bytes (4 per token when keyed by ids) read since the anchors were lost.
    lost_bytes: usize,
}

impl StateKeyer {
    pub fn new(plan: &KeyPlan) -> Self {
        let mut keyer = StateKeyer {
            grammar_id: plan.grammar_id,
            plan: plan.plan.clone(),
            text_level: plan.text_level,
            family: if plan.text_level {
                family::START_TEXT
            } else {
                family::START_IDS
            },
            count: 0,
            hasher: Hash128::new(),
            quote_digest: None,
            number_digest: None,
            value_digest: None,
            xml: None,
            section: None,
            mode: Mode::Lost,
            prefix_i: 0,
            prefix_buf: Vec::new(),
            prefix_in_body: false,
            pending: Vec::new(),
            utf8: 0,
            buf: Vec::new(),
            tag: 0,
            scan: None,
            const_left: Vec::new(),
            in_lead: false,
            lost_bytes: 0,
        };
        if keyer.plan.is_some() {
            keyer.mode = Mode::Prefix;
            keyer.settle_prefix();
        }
        keyer
    }

    /// The key of the current state: grammar id, anchor kind, calls (capped at 1), digest.
    pub fn key(&self) -> [u8; KEY_LEN] {
        let number = self.scan.as_ref().and_then(JsonScan::number_state);
        let digest = match (&self.scan, self.quote_digest, number, self.number_digest) {
            (Some(scan), Some(quote), _, _) if scan.clean_in_collapsible_string() => quote,
            (_, _, Some(state), Some(start)) => {
                let mut h = Hash128::new();
                h.write(&start);
                h.write(b"\x00number\x00");
                h.write(&[state]);
                h.digest()
            }
            _ => match (&self.xml, self.value_digest) {
                (
                    Some(XmlState {
                        phase:
                            XmlPhase::Value {
                                number: Some(at), ..
                            },
                        ..
                    }),
                    Some(start),
                ) => {
                    let mut h = Hash128::new();
                    h.write(&start);
                    h.write(b"\x00number value\x00");
                    h.write(&at.code());
                    h.digest()
                }
                (
                    Some(XmlState {
                        phase:
                            XmlPhase::Value {
                                pending,
                                utf8,
                                raw: true,
                                ..
                            },
                        ..
                    }),
                    Some(start),
                ) if *utf8 == 0 => {
                    if pending.is_empty() {
                        start
                    } else {
                        let mut h = Hash128::new();
                        h.write(&start);
                        h.write(b"\x00pending\x00");
                        h.write(pending);
                        h.digest()
                    }
                }
                _ => self.hasher.digest(),
            },
        };
        let mut key = [0u8; KEY_LEN];
        key[..16].copy_from_slice(&self.grammar_id);
        key[16] = self.family;
        key[17] = u8::from(self.count > 0 && !self.inside_tag());
        key[18..].copy_from_slice(&digest);
        key
    }

    /// From a trigger to the tag's end the rest of the output does not depend on how many calls
    /// came before: after this tag ends there is at least one either way, and a tag that stops
    /// after the first call has no second one. So the call count leaves the key there.
    fn inside_tag(&self) -> bool {
        matches!(
            self.mode,
            Mode::Begin | Mode::Content | Mode::End | Mode::Section
        )
    }

    /// Whether the current key is worth a cache lookup: false once more than
    /// [`LOST_KEY_BYTES`] have been read without anchors, where only a replay of the same output
    /// could share the key and storing its masks would crowd out ones that are reused.
    pub fn cacheable(&self) -> bool {
        self.mode != Mode::Lost || self.lost_bytes <= LOST_KEY_BYTES
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether keys follow the text (false: token ids, for token-level grammars).
    pub fn text_level(&self) -> bool {
        self.text_level
    }

    pub fn family(&self) -> u8 {
        self.family
    }

    /// Calls completed so far, as far as the keyer followed them.
    pub fn calls(&self) -> u32 {
        self.count
    }

    /// Feeds one accepted token: its id and its bytes (not for stop tokens).
    pub fn accept(&mut self, token: u32, bytes: &[u8]) {
        if !self.text_level {
            self.hasher.write(&token.to_le_bytes());
            self.lost_bytes += 4;
            return;
        }
        if self.mode == Mode::Lost {
            self.hasher.write(bytes);
            self.lost_bytes += bytes.len();
            return;
        }
        if self.mode == Mode::Free
            && self.pending.is_empty()
            && self.utf8 == 0
            && self.free_fast(bytes)
        {
            return; // plain free text: the state stays at the anchor
        }
        for (i, &b) in bytes.iter().enumerate() {
            if self.mode == Mode::Lost {
                self.hasher.write(&bytes[i..]);
                self.lost_bytes += bytes.len() - i;
                return;
            }
            self.hasher.write(&[b]);
            self.byte(b);
        }
    }

    /// Whether the plan's grammar takes object members in declared order (see [`KeyPlan`]).
    pub(super) fn plan_ordered_objects(&self) -> bool {
        self.plan.as_ref().is_some_and(|p| p.ordered_objects)
    }

    fn plan(&self) -> Arc<Plan> {
        self.plan
            .clone()
            .expect("modes other than Lost have a plan")
    }

    /// Whether [`StateKeyer::accept`] of `bytes` would leave the keyer at its free-text anchor
    /// (plain free text, no marker's first byte): then it is still in free text after them.
    pub fn stays_free(&self, bytes: &[u8]) -> bool {
        self.text_level
            && self.mode == Mode::Free
            && self.pending.is_empty()
            && self.utf8 == 0
            && self.free_fast(bytes)
    }

    fn free_fast(&self, bytes: &[u8]) -> bool {
        let plan = self.plan.as_ref().expect("free mode has a plan");
        !bytes.iter().any(|b| plan.firsts.contains(b)) && tail_need(bytes) == 0
    }

    pub(super) fn anchor(&mut self, family: u8) {
        self.family = family;
        self.hasher = Hash128::new();
        self.quote_digest = None;
        self.number_digest = None;
        self.value_digest = None;
    }

    pub(super) fn lose(&mut self) {
        self.mode = Mode::Lost;
        self.scan = None;
        self.xml = None;
        self.section = None;
    }

    /// The tags `self.tag` indexes: a section's calls while inside one, else the plan's tags.
    fn tags(&self) -> Arc<Vec<TagSpec>> {
        match &self.section {
            Some(s) if s.in_call => s.section.tags.clone(),
            _ => self.plan().tags.clone(),
        }
    }

    /// The current tag as written into keys: a section's call is told apart from the plan's tags.
    pub(super) fn tag_id(&self) -> u64 {
        match &self.section {
            Some(s) if s.in_call => ((s.outer as u64 + 1) << 32) | self.tag as u64,
            _ => self.tag as u64,
        }
    }

    fn byte(&mut self, b: u8) {
        match self.mode {
            Mode::Prefix => self.prefix_byte(b),
            Mode::Free => self.free_byte(b),
            Mode::Begin | Mode::Between => {
                self.buf.push(b);
                self.match_begin();
            }
            Mode::Content => self.content_byte(b),
            Mode::End => self.end_byte(b),
            Mode::Section => self.section_byte(b),
            Mode::Done => self.lose(),
            Mode::Lost => {}
        }
    }

    // -- prefix ---------------------------------------------------------------------------------

    fn prefix_byte(&mut self, b: u8) {
        let plan = self.plan();
        match &plan.prefix[self.prefix_i] {
            Prefix::Ws => {
                if is_ws(b) {
                    return;
                }
                self.prefix_i += 1;
                self.settle_prefix();
                if self.mode == Mode::Prefix {
                    // the next prefix element starts at this byte (it cannot start with
                    // whitespace: checked by the plan)
                    self.prefix_byte(b);
                    return;
                }
                // the dispatch started at this byte: anchor before it
                self.anchor(self.family);
                self.hasher.write(&[b]);
                self.buf.push(b);
                self.match_begin();
            }
            Prefix::Const(text) => {
                self.prefix_buf.push(b);
                if !text.starts_with(&self.prefix_buf) {
                    self.lose();
                } else if self.prefix_buf.len() == text.len() {
                    self.prefix_i += 1;
                    self.settle_prefix();
                }
            }
            Prefix::TextTag { begin, end } => {
                self.prefix_buf.push(b);
                if !self.prefix_in_body {
                    if !begin.starts_with(&self.prefix_buf) {
                        self.lose();
                    } else if self.prefix_buf.len() == begin.len() {
                        self.prefix_in_body = true;
                        self.prefix_buf.clear();
                    }
                } else if self.prefix_buf.ends_with(end) {
                    self.prefix_i += 1;
                    self.settle_prefix();
                } else if self.prefix_buf.len() > 2 * end.len() + 64 {
                    let keep = self.prefix_buf.len() - end.len();
                    self.prefix_buf.drain(..keep);
                }
            }
        }
    }

    fn settle_prefix(&mut self) {
        let plan = self.plan();
        self.prefix_buf.clear();
        self.prefix_in_body = false;
        while let Some(p) = plan.prefix.get(self.prefix_i) {
            match p {
                Prefix::Const(text) if text.is_empty() => self.prefix_i += 1,
                Prefix::TextTag { begin, .. } if begin.is_empty() => {
                    self.prefix_in_body = true;
                    return;
                }
                _ => return,
            }
        }
        self.enter_dispatch();
    }

    // -- dispatch -------------------------------------------------------------------------------

    fn enter_dispatch(&mut self) {
        let plan = self.plan();
        self.buf.clear();
        match plan.dispatch {
            Dispatch::Triggered { .. } => {
                self.mode = Mode::Free;
                self.anchor(family::FREE);
            }
            Dispatch::Separator { .. } => {
                self.mode = Mode::Between;
                self.anchor(family::AFTER);
            }
        }
    }

    fn free_byte(&mut self, b: u8) {
        let plan = self.plan();
        self.utf8 = if self.utf8 > 0 {
            self.utf8 - 1
        } else {
            utf8_len(b)
        };
        self.pending.push(b);
        while !self.pending.is_empty()
            && !plan.patterns.iter().any(|p| p.starts_with(&self.pending))
        {
            self.pending.remove(0);
        }
        let Dispatch::Triggered { triggers, excludes } = &plan.dispatch else {
            unreachable!("free text belongs to triggered_tags")
        };
        if triggers.contains(&self.pending) {
            self.mode = Mode::Begin;
            self.buf = std::mem::take(&mut self.pending);
            self.match_begin();
        } else if excludes.contains(&self.pending) {
            self.lose();
        } else if self.pending.is_empty() && self.utf8 == 0 {
            self.anchor(family::FREE);
        }
    }

    fn match_begin(&mut self) {
        let plan = self.plan();
        let lead: &[u8] = match &plan.dispatch {
            Dispatch::Separator { separator } if self.mode == Mode::Between && self.count > 0 => {
                separator
            }
            _ => b"",
        };
        let (mut candidates, complete) = begin_candidates(&self.buf, lead, &plan.tags);
        let mut suffix_done = false;
        if let (Some(suffix), Mode::Between) = (&plan.suffix, self.mode) {
            if suffix.starts_with(&self.buf) {
                candidates += 1;
                suffix_done = suffix.len() == self.buf.len();
            }
        }
        match (candidates, complete, suffix_done) {
            (0, _, _) => self.lose(),
            (1, Some(i), false) => self.enter_content(i),
            (1, None, true) => {
                // the section's end: nothing may follow, whatever the calls were
                self.mode = Mode::Done;
                self.buf.clear();
                self.anchor(family::AFTER);
                self.hasher.write(b"\x00suffix done\x00");
            }
            (_, Some(_), _) | (_, _, true) => self.lose(), // one string is a prefix of another
            _ => {}
        }
    }

    fn enter_content(&mut self, tag: usize) {
        let tags = self.tags();
        self.tag = tag;
        self.buf.clear();
        match &tags[tag].content {
            None => self.lose(),
            Some(Content::Section(section)) => {
                if self.section.is_some() {
                    return self.lose(); // sections inside sections are not followed
                }
                self.section = Some(SectionState {
                    outer: tag,
                    section: section.clone(),
                    calls: 0,
                    in_call: false,
                });
                self.section_anchor();
            }
            Some(Content::Json {
                schema,
                collapse,
                lead,
            }) => {
                self.mode = Mode::Content;
                self.in_lead = lead.is_some();
                let ordered = self.plan().ordered_objects;
                self.scan = Some(JsonScan::new(schema.clone(), *collapse, ordered));
            }
            Some(Content::Const(text)) => {
                self.mode = Mode::Content;
                self.const_left = text.clone();
                if self.const_left.is_empty() {
                    self.enter_end();
                }
            }
            Some(Content::AnyText) => self.mode = Mode::Content,
            Some(Content::Xml(_)) => {
                self.mode = Mode::Content;
                self.xml = Some(XmlState {
                    next: 0,
                    phase: XmlPhase::Gap { buf: Vec::new() },
                });
            }
        }
    }

    /// A JSON string's quotes (from a [`JsonScan`] event): the digest at the opening quote names
    /// the string's interior where it collapses, and after the closing quote the key is seeded
    /// by that digest alone, whatever the string held.
    pub(super) fn json_quote(&mut self, event: Event) {
        match event {
            Event::Open => self.quote_digest = Some(self.hasher.digest()),
            Event::Close => {
                let seed = self
                    .quote_digest
                    .take()
                    .expect("a closing quote follows an opening one");
                self.hasher = Hash128::new();
                self.hasher.write(b"\x00closed string\x00");
                self.hasher.write(&seed);
            }
            Event::NumberStart | Event::None => {}
        }
    }

    /// A JSON anchor: `label`, the tag and, when `at_position`, the scanner's position.
    fn json_anchor(&mut self, label: &[u8], at_position: bool) {
        let tag = self.tag_id();
        self.anchor(family::JSON);
        self.hasher.write(label);
        self.hasher.write(&tag.to_le_bytes());
        if let (true, Some(scan)) = (at_position, &self.scan) {
            scan.position(&mut self.hasher);
        }
    }

    fn content_byte(&mut self, b: u8) {
        let tags = self.tags();
        let tag = &tags[self.tag];
        match &tag.content {
            Some(Content::Json {
                lead: Some(lead), ..
            }) if self.in_lead => {
                self.buf.push(b);
                if self.buf.ends_with(lead) {
                    self.in_lead = false;
                    self.buf.clear();
                } else if self.buf.len() > lead.len() + 64 {
                    self.lose(); // longer than any id: not the shape the plan expects
                }
            }
            Some(Content::Json { .. }) => {
                let scan = self.scan.as_mut().expect("JSON content has a scanner");
                let event = scan.feed(b);
                let (failed, done, scan_end, key_end, in_named_key) = (
                    scan.failed,
                    scan.done,
                    scan.value_end,
                    scan.key_end,
                    scan.in_named_key(),
                );
                if failed {
                    self.lose();
                    return;
                }
                if event == Event::NumberStart {
                    // the value's start, keyed by its position; the number's own text is then
                    // named by its DFA state
                    self.json_anchor(b"\x00json value start\x00", true);
                    self.number_digest = Some(self.hasher.digest());
                    self.hasher.write(&[b]);
                } else {
                    self.json_quote(event);
                }
                if done {
                    // a complete root value: what follows is the tag's end, whatever it held
                    self.json_anchor(b"\x00json done\x00", false);
                    self.scan = None;
                    self.enter_end();
                } else if let Some(end) = scan_end {
                    // a member's value ended inside product containers: the rest depends on
                    // the tag and the position, not on the values written
                    self.json_anchor(b"\x00json value end\x00", true);
                    if end == ValueEnd::Before {
                        self.hasher.write(&[b]);
                    }
                } else if key_end {
                    // an object's key closed inside product containers: its member's value
                    // and what follows depend on the tag and the position (which now holds
                    // that key), not on the members before it
                    self.json_anchor(b"\x00json key end\x00", true);
                } else if in_named_key {
                    // inside a key that names declared members only: the members it may
                    // still name decide the rest, not the member before it
                    self.json_anchor(b"\x00json key prefix\x00", true);
                }
            }
            Some(Content::Const(_)) => {
                if self.const_left.first() != Some(&b) {
                    self.lose();
                    return;
                }
                self.const_left.remove(0);
                if self.const_left.is_empty() {
                    self.enter_end();
                }
            }
            Some(Content::AnyText) => {
                self.buf.push(b);
                let end = &tag.ends[0];
                if self.buf.ends_with(end) {
                    self.tag_done();
                } else if self.buf.len() > 2 * end.len() + 64 {
                    let keep = self.buf.len() - end.len();
                    self.buf.drain(..keep);
                }
            }
            Some(Content::Xml(call)) => self.xml_byte(call, b),
            Some(Content::Section(_)) | None => self.lose(),
        }
    }

    fn enter_end(&mut self) {
        let tags = self.tags();
        let ends = &tags[self.tag].ends;
        self.mode = Mode::End;
        self.buf.clear();
        if ends.iter().any(Vec::is_empty) {
            if ends.len() == 1 {
                self.tag_done();
            } else {
                self.lose(); // the tag may end here or go on with another end string
            }
        }
    }

    fn end_byte(&mut self, b: u8) {
        let tags = self.tags();
        let ends = &tags[self.tag].ends;
        self.buf.push(b);
        let candidates = ends.iter().filter(|e| e.starts_with(&self.buf)).count();
        if candidates == 0 {
            self.lose();
        } else if ends.contains(&self.buf) {
            if candidates > 1 {
                self.lose();
            } else {
                self.tag_done();
            }
        }
    }

    pub(super) fn tag_done(&mut self) {
        if let Some(state) = self.section.as_mut().filter(|s| s.in_call) {
            state.in_call = false;
            state.calls += 1;
            self.tag = state.outer;
            self.scan = None;
            self.xml = None;
            self.section_anchor();
            return;
        }
        self.section = None;
        let plan = self.plan();
        self.count += 1;
        self.buf.clear();
        self.scan = None;
        self.xml = None;
        match plan.dispatch {
            Dispatch::Triggered { .. } => {
                self.mode = Mode::Free;
                self.pending.clear();
                self.utf8 = 0;
                self.anchor(family::FREE);
            }
            Dispatch::Separator { .. } => {
                self.mode = Mode::Between;
                self.anchor(family::AFTER);
            }
        }
    }
}

impl StateKeyer {
    /// At a section's start or after one of its calls: what follows depends on the section's tag
    /// and on whether a call came before, nothing else.
    fn section_anchor(&mut self) {
        let Some(state) = &self.section else {
            return;
        };
        let (outer, called) = (state.outer as u64, state.calls > 0);
        self.mode = Mode::Section;
        self.buf.clear();
        self.anchor(family::SECTION);
        self.hasher.write(b"\x00section\x00");
        self.hasher.write(&outer.to_le_bytes());
        self.hasher.write(&[u8::from(called)]);
    }

    /// Between a section's calls: a separator (after a call) and a call's begin, or the
    /// section tag's own end; the match must be unique and complete, as for begins.
    fn section_byte(&mut self, b: u8) {
        let Some(state) = self.section.clone() else {
            return self.lose();
        };
        let plan = self.plan();
        self.buf.push(b);
        let lead: &[u8] = if state.calls > 0 {
            &state.section.separator
        } else {
            b""
        };
        let (mut candidates, begun) = begin_candidates(&self.buf, lead, &state.section.tags);
        let mut complete = begun.map(Some);
        for end in &plan.tags[state.outer].ends {
            if end.starts_with(&self.buf) {
                candidates += 1;
                if end.len() == self.buf.len() {
                    complete = Some(None);
                }
            }
        }
        match (candidates, complete) {
            (0, _) => self.lose(),
            (1, Some(Some(i))) => {
                if let Some(s) = self.section.as_mut() {
                    s.in_call = true;
                }
                self.enter_content(i);
            }
            (1, Some(None)) => {
                self.section = None;
                self.tag = state.outer;
                self.tag_done();
            }
            (_, Some(_)) => self.lose(),
            _ => {}
        }
    }
}

/// How many of `tags` `buf` may still be the start of (`lead`, then the tag's begin), and the
/// one it spells completely, if any.
fn begin_candidates(buf: &[u8], lead: &[u8], tags: &[TagSpec]) -> (usize, Option<usize>) {
    let mut candidates = 0;
    let mut complete = None;
    for (i, tag) in tags.iter().enumerate() {
        let fits = if buf.len() <= lead.len() {
            lead.starts_with(buf)
        } else {
            buf.starts_with(lead) && tag.begin.starts_with(&buf[lead.len()..])
        };
        if fits {
            candidates += 1;
            if lead.len() + tag.begin.len() == buf.len() {
                complete = Some(i);
            }
        }
    }
    (candidates, complete)
}

/// Continuation bytes still missing from the last UTF-8 character of `bytes`.
pub(super) fn tail_need(bytes: &[u8]) -> u8 {
    let mut i = bytes.len();
    while i > 0 && (0x80..0xC0).contains(&bytes[i - 1]) && bytes.len() - i < 3 {
        i -= 1;
    }
    if i == 0 {
        return 0;
    }
    let want = utf8_len(bytes[i - 1]);
    let have = (bytes.len() - i) as u8;
    want.saturating_sub(have)
}
