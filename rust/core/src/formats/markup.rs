//! A region for a wrapper marker that carries no call: the marker is consumed and dropped, and
//! the text around it stays content (Cohere's `<|START_RESPONSE|>`, Hunyuan's `<answer>`, ...).

use crate::region::{Progress, RegionCtx, RegionParser, Sink};

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
