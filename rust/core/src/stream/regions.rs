//! Feeding a call region to the format's region parser: unbounded, or in windows that stop at
//! `max_call_bytes` check points (fixed region offsets, so where a runaway call is cut does not
//! depend on how the output was chunked), and dropping the rest of a region once it was cut.
//!
//! A region that finished is kept, restarted, for the next region of the same trigger where its
//! parser can restart ([`RegionParser::restart`]): outputs with a block per call (Hermes's
//! `<tool_call>`), and a stream reset between outputs, would otherwise build and drop a parser,
//! with its buffers, per call.

use super::{State, StreamParser};
use crate::region::{RegionCtx, RegionParser, Status};
use crate::text::{self, Scan};

/// Where a region stands against `max_call_bytes`: the parser is fed up to fixed check points
/// (region offsets), so where a call is cut does not depend on how the output was chunked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    limit: usize,
    step: usize,
    /// Region bytes consumed by the parser.
    consumed: usize,
    /// The next check point (a region offset).
    next_check: usize,
    /// The last check point at which the region had produced something, and the sink's count
    /// of such events then.
    quiet_since: usize,
    events: u64,
}

impl StreamParser {
    pub(super) fn open_region(&mut self, trigger: usize) {
        let region = match self.spare_region.take() {
            Some((built_for, region)) if built_for == trigger => region,
            _ => {
                let ctx = RegionCtx {
                    syntax: &self.config.spec.syntax,
                    tools: &self.config.tools,
                    markers: &self.markers,
                    trigger,
                };
                (self.config.spec.new_region)(&ctx)
            }
        };
        self.state = State::Region(region);
        self.region_trigger = Some(trigger);
        // The first window holds the whole trigger: a region parser starts by reading it.
        self.budget = self.new_budget(self.trigger_lits[trigger].len());
    }

    pub(super) fn new_budget(&self, trigger_len: usize) -> Option<Budget> {
        self.config.max_call_bytes.map(|limit| {
            let step = (limit / 16).max(1);
            Budget {
                limit,
                step,
                consumed: 0,
                next_check: trigger_len + step,
                quiet_since: 0,
                events: self.sink.events(),
            }
        })
    }

    pub(super) fn step_region(&mut self, mut parser: Box<dyn RegionParser>, eof: bool) -> bool {
        let Some(mut budget) = self.budget else {
            return self.step_region_unbounded(parser, eof);
        };
        // Feed the parser no further than the next check point (rounded up to a character).
        let want = budget.next_check - budget.consumed;
        let mut window = want.min(self.pending.len());
        while !self.pending.is_char_boundary(window) {
            window += 1;
        }
        let at_check = window >= want;
        let feed_eof = eof && window == self.pending.len();
        let progress = parser.feed(&self.pending[..window], feed_eof, &mut self.sink);
        let consumed = progress.consumed.min(window);
        self.consume(consumed);
        budget.consumed += consumed;
        if !at_check || progress.status != Status::Continue {
            self.budget = Some(budget);
            let more = window < self.pending.len() + consumed;
            return self.after_region_feed(parser, progress.status, consumed, feed_eof, more);
        }
        let check = budget.consumed + (window - consumed);
        let events = self.sink.events();
        if events != budget.events {
            budget.events = events;
            budget.quiet_since = check;
        } else if check - budget.quiet_since > budget.limit {
            self.budget = None;
            return self.cut_region(parser, window - consumed, budget.limit);
        }
        budget.next_check = check + budget.step;
        self.budget = Some(budget);
        // The next window reaches past this check point: feed it if text past it has arrived.
        self.state = State::Region(parser);
        self.pending.len() > window - consumed
    }

    /// The region ran past `max_call_bytes`: tell its parser the output ended after the first
    /// `seen` pending bytes (it drops the call it was reading, reported as `too_large`), then
    /// drop the rest of the region.
    fn cut_region(&mut self, mut parser: Box<dyn RegionParser>, seen: usize, limit: usize) -> bool {
        self.sink.begin_cut(limit);
        let progress = parser.feed(&self.pending[..seen], true, &mut self.sink);
        let consumed = progress.consumed.min(seen);
        self.consume(consumed);
        self.at_output_start = false;
        if let Status::Reject(text) = progress.status {
            // Not a call after all: its text is content, and nothing is dropped.
            self.sink.cancel_cut();
            self.sink.content(&text);
            self.state = State::Content;
            return true;
        }
        self.sink.end_cut();
        self.state = State::Discard { dropped: 0 };
        true
    }

    pub(super) fn step_discard(&mut self, dropped: usize, eof: bool) -> bool {
        let lits: Vec<&str> = self.discard_lits.iter().map(|l| l.as_ref()).collect();
        // Dropped bytes are counted as text (a special-token marker by its characters).
        let found = text::scan(&self.pending, &lits);
        let (upto, end_len) = match found {
            Scan::Found { pos, which } => (pos, Some(lits[which].len())),
            Scan::NotFound { .. } if eof => (self.pending.len(), None),
            Scan::NotFound { safe } => (safe, None),
        };
        let dropped = dropped + self.markers.restore(&self.pending[..upto]).len();
        self.consume(upto + end_len.unwrap_or(0));
        if end_len.is_some() || eof {
            self.sink.finish_cut(dropped);
            self.state = State::Content;
            return end_len.is_some();
        }
        self.state = State::Discard { dropped };
        false
    }

    fn step_region_unbounded(&mut self, mut parser: Box<dyn RegionParser>, eof: bool) -> bool {
        let before = self.pending.len();
        let progress = parser.feed(&self.pending, eof, &mut self.sink);
        let consumed = progress.consumed.min(before);
        self.consume(consumed);
        let more = consumed > 0 && !self.pending.is_empty();
        self.after_region_feed(parser, progress.status, consumed, eof, more)
    }

    fn after_region_feed(
        &mut self,
        mut parser: Box<dyn RegionParser>,
        status: Status,
        consumed: usize,
        eof: bool,
        more: bool,
    ) -> bool {
        match status {
            Status::Continue if eof => {
                let rest = std::mem::take(&mut self.pending);
                self.sink.fail_call(
                    crate::message::IssueKind::Truncated,
                    "output ended inside a call",
                    &rest,
                );
                self.state = State::Content;
                false
            }
            Status::Continue => {
                self.state = State::Region(parser);
                more
            }
            Status::Done => {
                self.at_output_start = false;
                self.state = State::Content;
                if let Some(trigger) = self.region_trigger.take() {
                    if parser.restart() {
                        self.spare_region = Some((trigger, parser));
                    }
                }
                true
            }
            Status::Reject(text) => {
                self.at_output_start = false;
                let text = if text.is_empty() && consumed == 0 && !self.pending.is_empty() {
                    let first = self.pending.chars().next().map_or(0, char::len_utf8);
                    let head = self.pending[..first].to_owned();
                    self.consume(first);
                    head
                } else {
                    text
                };
                self.sink.content(&text);
                self.state = State::Content;
                true
            }
        }
    }
}
