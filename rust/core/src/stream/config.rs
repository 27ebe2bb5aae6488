//! What a stream is configured with: the format, the tools, how reasoning is delimited, and the
//! request's rules. Built once per tool set and cloned into each stream, so it holds no state of
//! any one output.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::formats;
use crate::formats::Format;
use crate::request::{ReasoningMode, ToolChoice};
use crate::spec::Syntax;
use crate::tools::ToolSet;

/// How reasoning is delimited in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reasoning {
    /// Reasoning stays in content.
    Off,
    /// The output may open with `open`; text up to `close` is reasoning.
    Paired {
        open: &'static str,
        close: &'static str,
    },
    /// The prompt already opened reasoning: text up to `close` is reasoning (an `open` the model
    /// writes again at the start is dropped).
    ClosingOnly {
        open: &'static str,
        close: &'static str,
    },
}

impl Reasoning {
    /// How the request's reasoning mode delimits reasoning in this format's output.
    pub fn resolve(syntax: &Syntax, mode: ReasoningMode) -> Self {
        match (mode, mode.delimiters(syntax.reasoning)) {
            (ReasoningMode::ClosingOnly, Some((open, close))) => {
                Reasoning::ClosingOnly { open, close }
            }
            (_, Some((open, close))) => Reasoning::Paired { open, close },
            (_, None) => Reasoning::Off,
        }
    }
}

/// Everything a stream needs that does not change between requests with the same tools.
#[derive(Debug, Clone)]
pub struct ParserConfig {
    pub spec: &'static Format,
    pub tools: Arc<ToolSet>,
    pub reasoning: Reasoning,
    /// What the request allows; calls against it are flagged, not dropped.
    pub tool_choice: ToolChoice,
    pub parallel_tool_calls: bool,
    /// The most bytes one tool call may take (`None`: no limit). A call region that runs this
    /// long without producing anything but argument text (no content, reasoning, call start or
    /// end) is cut: see [`ParserConfig::with_max_call_bytes`].
    pub max_call_bytes: Option<usize>,
}

impl ParserConfig {
    /// `reasoning`: a [`ReasoningMode`] name (`None`: unset, no reasoning).
    pub fn new(format: &str, tools: ToolSet, reasoning: Option<&str>) -> Result<Self> {
        let spec =
            formats::lookup(format).ok_or_else(|| Error::UnknownFormat(format.to_owned()))?;
        let mode = reasoning.map_or(Ok(ReasoningMode::Unset), ReasoningMode::from_name)?;
        let reasoning = Reasoning::resolve(&spec.syntax, mode);
        Ok(Self {
            spec,
            tools: Arc::new(tools),
            reasoning,
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: true,
            max_call_bytes: None,
        })
    }

    /// Bound what one call may make the parser hold. A call region that runs past `max` bytes
    /// without producing content, reasoning, or a call start or end (a call whose name and
    /// arguments run that long, or text a format's parser must hold before it can decide what it
    /// is) is cut there: the parser is told the output ended, the call it was reading is dropped
    /// and reported as a `too_large` issue whose raw text is what the parser had kept of it, and
    /// the rest of the region, up to the format's next section-end marker (call-end or
    /// message-end for formats without sections; the end of the output when none comes), is
    /// dropped; the detail says how many bytes. The length is checked
    /// every `max / 16` bytes (at fixed offsets in the region, so the cut does not depend on how
    /// the output was chunked): a call is cut within `max + max / 8` bytes of where it began.
    /// Content and reasoning outside calls are never cut.
    pub fn with_max_call_bytes(mut self, max: Option<usize>) -> Self {
        self.max_call_bytes = max;
        self
    }

    /// Delimit reasoning as `mode` says.
    pub fn with_reasoning(mut self, mode: ReasoningMode) -> Self {
        self.reasoning = Reasoning::resolve(&self.spec.syntax, mode);
        self
    }

    /// Share an already compiled tool set.
    pub fn with_tool_set(mut self, tools: Arc<ToolSet>) -> Self {
        self.tools = tools;
        self
    }

    /// Flag calls that break the request's `tool_choice` / `parallel_tool_calls`, and a missing
    /// call when one was required. The choice must fit the tools ([`ToolChoice::check`]).
    pub fn with_tool_choice(
        mut self,
        tool_choice: ToolChoice,
        parallel_tool_calls: bool,
    ) -> Result<Self> {
        tool_choice.check(&*self.tools)?;
        self.tool_choice = tool_choice;
        self.parallel_tool_calls = parallel_tool_calls;
        Ok(self)
    }

    /// Marker texts of this configuration that a tokenizer may have as special tokens.
    pub fn special_marker_texts(&self) -> Vec<&'static str> {
        let mut texts: Vec<&'static str> = self
            .spec
            .syntax
            .markers()
            .filter(|m| m.special_token)
            .map(|m| m.text)
            .chain(self.spec.syntax.stops.iter().copied())
            .collect();
        match self.reasoning {
            Reasoning::Paired { open, close } | Reasoning::ClosingOnly { open, close } => {
                texts.extend([open, close])
            }
            Reasoning::Off => {}
        }
        texts.dedup();
        texts
    }
}
