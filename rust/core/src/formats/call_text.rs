//! The model's text of a call while a tag-based reader reads it, and the steps that every such
//! reader takes with it alike: report the call broken, wait for a tag or report the call cut off,
//! skip a broken call to the next stop, report text in a block that belongs to no call.
//!
//! A reader keeps the text (markers included) so that a broken call is reported with what the
//! model wrote, and so that a soft trigger that was not a call after all is given back as content.
//! The readers' states differ per format; each passes the markers that stop a step, in its own
//! order. Most readers are [`StepReader`]s: one step per state, the loop over the input shared.

use std::ops::ControlFlow;

use crate::message::IssueKind;
use crate::region::{Progress, RegionParser, Sink, Status};
use crate::text::{self, Scan};

/// One feed of a region: its input, and whether the output ends with it.
#[derive(Debug, Clone, Copy)]
pub struct Feed<'a> {
    pub input: &'a str,
    pub eof: bool,
}

/// A reader that reads its input one state at a time: `step` reads, in the reader's state, from
/// byte `i` of the input, and goes on from where the next step starts or returns what the feed
/// made of the input. Its region's `feed` runs the steps from the input's start, so the readers
/// share one loop over the input instead of each writing its own. A reader that keeps where its
/// feed starts in the stream (so that a whitespace run split across feeds, [`text::WsRun`], is
/// counted once) gives that offset as `feed_offset`; it moves on by what each feed consumed.
pub trait StepReader: Send + Sync {
    fn step(&mut self, input: &str, eof: bool, i: usize, sink: &mut Sink) -> Step<usize>;

    fn feed_offset(&mut self) -> Option<&mut usize> {
        None
    }

    /// As [`RegionParser::restart`].
    fn restart(&mut self) -> bool {
        false
    }
}

impl<R: StepReader> RegionParser for R {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let mut i = 0;
        let progress = loop {
            match self.step(input, eof, i, sink) {
                ControlFlow::Continue(next) => i = next,
                ControlFlow::Break(progress) => break progress,
            }
        };
        if let Some(offset) = self.feed_offset() {
            *offset += progress.consumed;
        }
        progress
    }

    fn restart(&mut self) -> bool {
        StepReader::restart(self)
    }
}

/// What a shared step leaves to the reader: go on (from the offset it advanced), or return.
pub type Step<T = ()> = ControlFlow<Progress, T>;

pub trait CallText {
    /// The call's text so far.
    fn raw_mut(&mut self) -> &mut String;

    /// Adds `input[from..to]` to the call's text.
    fn take(&mut self, input: &str, from: usize, to: usize) {
        self.raw_mut().push_str(&input[from..to]);
    }

    /// Reads `n` bytes at `*at` into the call's text.
    fn advance(&mut self, input: &str, at: &mut usize, n: usize) {
        self.take(input, *at, *at + n);
        *at += n;
    }

    /// Reports the call so far as broken.
    fn fail(&mut self, kind: IssueKind, why: &str, sink: &mut Sink) {
        let raw = std::mem::take(self.raw_mut());
        sink.fail_call(kind, why, &raw);
    }

    /// Reports the call broken; the region is done after `consumed` bytes.
    fn fail_done(
        &mut self,
        kind: IssueKind,
        why: &str,
        consumed: usize,
        sink: &mut Sink,
    ) -> Progress {
        self.fail(kind, why, sink);
        Progress::done(consumed)
    }

    /// Reports the call complete, with its text.
    fn end(&mut self, sink: &mut Sink) {
        let raw = std::mem::take(self.raw_mut());
        sink.end_call(&raw);
    }

    /// Streams `text` as the next piece of the call's arguments, keeping it in the call's text.
    fn stream_args(&mut self, text: &str, sink: &mut Sink) {
        sink.args(text);
        self.raw_mut().push_str(text);
    }

    /// Gives the call so far back as content: it was not a call after all.
    fn reject(&mut self, consumed: usize) -> Progress {
        Progress {
            consumed,
            status: Status::Reject(std::mem::take(self.raw_mut())),
        }
    }

    /// The input from `i` on may still become what the reader waits for: wait for more, or at the
    /// end of the output report the call truncated, with `why`.
    fn wait_or_truncate(
        &mut self,
        feed: Feed<'_>,
        i: usize,
        why: &str,
        sink: &mut Sink,
    ) -> Progress {
        if !feed.eof {
            return Progress::more(i);
        }
        self.take(feed.input, i, feed.input.len());
        self.fail(IssueKind::Truncated, why, sink);
        Progress::done(feed.input.len())
    }

    /// Waits for more, or at the end of the output reports the call truncated at `i`, with `why`;
    /// unlike [`CallText::wait_or_truncate`], the input from `i` on is left unread.
    fn truncated_at_eof(&mut self, eof: bool, i: usize, why: &str, sink: &mut Sink) -> Progress {
        if eof {
            return self.fail_done(IssueKind::Truncated, why, i, sink);
        }
        Progress::more(i)
    }

    /// A broken call: its text up to the first of `stops` is skipped, and the call reported with
    /// `issue`. The first `owned` stops belong to the call (they are skipped too); any other is
    /// left to be read next. Goes on after the skipped text, with the stop found; at the end of the
    /// output without a stop, the region is done.
    fn skip_broken<S: AsRef<str>>(
        &mut self,
        feed: Feed<'_>,
        at: &mut usize,
        stops: &[S],
        owned: usize,
        issue: (IssueKind, &str),
        sink: &mut Sink,
    ) -> Step<usize> {
        let i = *at;
        let rest = &feed.input[i..];
        match text::scan(rest, stops) {
            Scan::Found { pos, which } => {
                let n = if which < owned {
                    pos + stops[which].as_ref().len()
                } else {
                    pos
                };
                self.take(feed.input, i, i + n);
                self.fail(issue.0, issue.1, sink);
                *at = i + n;
                ControlFlow::Continue(which)
            }
            Scan::NotFound { .. } if feed.eof => {
                self.take(feed.input, i, feed.input.len());
                self.fail(issue.0, issue.1, sink);
                ControlFlow::Break(Progress::done(feed.input.len()))
            }
            Scan::NotFound { safe } => {
                self.take(feed.input, i, i + safe);
                ControlFlow::Break(Progress::more(i + safe))
            }
        }
    }

    /// Text inside a block of calls that belongs to no call, up to the first of `stops`, is
    /// reported as unexpected text with `why`. The first character is stray for sure when the text
    /// starts here (it started no tag). Goes on at the stop; returns when waiting for more, and
    /// when the output ended.
    fn stray_in_block<S: AsRef<str>>(
        &mut self,
        feed: Feed<'_>,
        at: &mut usize,
        stops: &[S],
        why: &str,
        sink: &mut Sink,
    ) -> Step {
        let i = *at;
        let rest = &feed.input[i..];
        if rest.is_empty() {
            if feed.eof {
                self.fail(IssueKind::UnexpectedText, why, sink);
                return ControlFlow::Break(Progress::done(i));
            }
            return ControlFlow::Break(Progress::more(i));
        }
        let skip = if self.raw_mut().is_empty() {
            rest.chars().next().map_or(0, char::len_utf8)
        } else {
            0
        };
        let hay = &rest[skip..];
        let (n, found) = match text::find_any(hay, stops) {
            Some((p, _)) => (skip + p, true),
            None if feed.eof => (rest.len(), true),
            None => (rest.len() - text::partial_suffix_len(hay, stops), false),
        };
        self.take(feed.input, i, i + n);
        *at = i + n;
        if !found {
            return ControlFlow::Break(Progress::more(*at));
        }
        self.fail(IssueKind::UnexpectedText, why, sink);
        if feed.eof && *at == feed.input.len() {
            return ControlFlow::Break(Progress::done(*at));
        }
        ControlFlow::Continue(())
    }
}
