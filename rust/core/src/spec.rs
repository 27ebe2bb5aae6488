//! The format description: one static `FormatSpec` per wire format.
//!
//! A spec names the markers a format uses (and whether each is a single special token in the
//! family's vocabulary), what opens a call region in content, how names and arguments are
//! encoded, and the native reasoning delimiters. The streaming parser, the renderer and the
//! structural-tag builder (through `format_info`) all read the same spec, so the grammar cannot
//! accept what the parser cannot read.

use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// What the marker does: `call_start`, `call_end`, `section_start`, `args_start`, ...
    /// `reasoning_exit`: a marker that also ends reasoning when it appears there (a model that
    /// goes from thinking straight into a tool call); the engine leaves it in the input.
    pub role: &'static str,
    pub text: &'static str,
    /// Whether the family's tokenizer has this marker as one special token. With token-id input
    /// such a marker is recognised by id only, so the same characters typed as text are content.
    pub special_token: bool,
}

/// Something that opens a call region when it appears in content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    pub text: &'static str,
    /// Only at the very start of the output (after whitespace), e.g. bare JSON.
    pub at_output_start: bool,
    /// A soft trigger may turn out not to be a call (bare `{` or `[`); the text is then content.
    pub soft: bool,
}

impl Trigger {
    pub const fn marker(text: &'static str) -> Self {
        Self {
            text,
            at_output_start: false,
            soft: false,
        }
    }
    pub const fn at_start(text: &'static str) -> Self {
        Self {
            text,
            at_output_start: true,
            soft: true,
        }
    }
    pub const fn soft(text: &'static str) -> Self {
        Self {
            text,
            at_output_start: false,
            soft: true,
        }
    }
}

/// The shape of one call, for renderers and structural tags: `begin` (with `{name}`), the
/// arguments in `style`, then `end`; parallel calls joined by `separator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTemplate {
    pub begin: &'static str,
    pub style: &'static str,
    pub end: &'static str,
    pub separator: &'static str,
}

pub struct FormatSpec {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub families: &'static [&'static str],
    pub description: &'static str,
    pub markers: &'static [Marker],
    pub triggers: &'static [Trigger],
    /// How the function name is written: `json_field`, `tag_attribute`, `python_call`, ...
    pub name_encoding: &'static str,
    /// How arguments are written: `json_object`, `xml_parameters`, `python_kwargs`, ...
    pub argument_encoding: &'static str,
    /// Between parallel calls, when the format has a separator.
    pub call_separator: Option<&'static str>,
    /// Native reasoning delimiters, e.g. `<think>` / `</think>`.
    pub reasoning: Option<(&'static str, &'static str)>,
    pub template: Option<CallTemplate>,
    pub new_region: fn(&RegionCtx<'_>) -> Box<dyn RegionParser>,
    pub render: fn(&[RenderCall], Option<&str>) -> String,
}

impl FormatSpec {
    pub fn marker(&self, role: &str) -> Option<&'static Marker> {
        self.markers.iter().find(|m| m.role == role)
    }
}

impl std::fmt::Debug for FormatSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FormatSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
