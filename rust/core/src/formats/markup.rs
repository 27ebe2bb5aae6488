//! Regions for markup that carries no call: a wrapper marker that is consumed and dropped, the
//! text around it staying content (Cohere's `<|START_RESPONSE|>`, Hunyuan's `<answer>`, ...), and
//! a block of text that is reasoning, content or an issue as a whole.

use crate::message::IssueKind;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::text::{self, Scan};

pub struct DropMarker {
    len: usize,
}

impl DropMarker {
    pub fn new(ctx: &RegionCtx<'_>) -> Self {
        Self {
            len: ctx.trigger_lit().len(),
        }
    }
}

impl RegionParser for DropMarker {
    fn feed(&mut self, input: &str, _eof: bool, _sink: &mut Sink) -> Progress {
        Progress::done(self.len.min(input.len()))
    }
}

/// The region for a format whose first trigger opens its calls and whose later triggers are
/// wrapper markers: `calls` for the first, a [`DropMarker`] for the others.
pub fn calls_or_wrapper(
    ctx: &RegionCtx<'_>,
    calls: impl FnOnce(&RegionCtx<'_>) -> Box<dyn RegionParser>,
) -> Box<dyn RegionParser> {
    if ctx.trigger > 0 {
        Box::new(DropMarker::new(ctx))
    } else {
        calls(ctx)
    }
}

/// What a [`TextBlock`] does with its text.
#[derive(Debug, Clone, Copy)]
pub enum BlockText {
    Reasoning,
    Content,
    /// The block is one issue with its raw text (markers included): a construct the format has
    /// that a tool call cannot represent.
    Issue(IssueKind, &'static str),
}

/// A block of text from its opening marker up to the first of `ends` (consumed) or of `stops`
/// (left for what comes next), or to the end of the output: Inkling's thinking block, a Muse
/// message that is not a call.
pub struct TextBlock {
    skip: usize,
    what: BlockText,
    ends: Vec<String>,
    stops: Vec<String>,
    raw: String,
}

impl TextBlock {
    /// `opening`: the search text of the marker the region starts with (kept for an issue).
    pub fn new(opening: String, what: BlockText, ends: Vec<String>, stops: Vec<String>) -> Self {
        Self {
            skip: opening.len(),
            raw: opening,
            what,
            ends,
            stops,
        }
    }

    /// Text a wrapping parser consumed before the opening (a message header): it starts the
    /// issue's raw text.
    pub fn seed_raw(&mut self, text: &str) {
        self.raw.insert_str(0, text);
    }

    fn emit(&mut self, text: &str, sink: &mut Sink) {
        match self.what {
            BlockText::Reasoning => sink.reasoning(text),
            BlockText::Content => sink.content(text),
            BlockText::Issue(..) => self.raw.push_str(text),
        }
    }

    fn close(&mut self, end: &str, sink: &mut Sink) {
        if let BlockText::Issue(kind, why) = self.what {
            self.raw.push_str(end);
            sink.fail_call(kind, why, &std::mem::take(&mut self.raw));
        }
    }
}

impl RegionParser for TextBlock {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        let start = self.skip.min(input.len());
        self.skip -= start;
        let rest = &input[start..];
        let lits: Vec<&String> = self.ends.iter().chain(&self.stops).collect();
        match text::scan(rest, &lits) {
            Scan::Found { pos, which } => {
                self.emit(&rest[..pos], sink);
                let end = self.ends.get(which).cloned().unwrap_or_default();
                self.close(&end, sink);
                Progress::done(start + pos + end.len())
            }
            Scan::NotFound { .. } if eof => {
                self.emit(rest, sink);
                self.close("", sink);
                Progress::done(input.len())
            }
            Scan::NotFound { safe } => {
                self.emit(&rest[..safe], sink);
                Progress::more(start + safe)
            }
        }
    }
}
