//! The format description: one static `FormatSpec` per wire format.
//!
//! A spec names the markers a format uses (and whether each is a single special token in the
//! family's vocabulary), what opens a call region in content, how names and arguments are
//! encoded, and the native reasoning delimiters. The streaming parser, the renderer and the
//! structural-tag builder (through `format_info`) all read the same spec, so the grammar cannot
//! accept what the parser cannot read.

use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use serde::Serialize;

/// What a marker does in its format. Serialised in `snake_case` (`call_start`, `param_end`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    SectionStart,
    SectionEnd,
    CallStart,
    CallEnd,
    /// A per-call wrapper around a call's own tags (Step3's `<｜tool_call_begin｜>`).
    CallWrapperStart,
    CallWrapperEnd,
    /// What kind of call follows (Step3's `function`).
    CallKind,
    CallId,
    /// Ends the function name (Hunyuan's `<tool_sep>`).
    NameEnd,
    FunctionStart,
    FunctionEnd,
    ArgsStart,
    /// Between a call's type and its name (DeepSeek V3's `<｜tool▁sep｜>`).
    TypeSeparator,
    ParamStart,
    ParamEnd,
    KeyStart,
    KeyEnd,
    ValueStart,
    ValueEnd,
    /// The delimiter of a string value (Gemma's `<|"|>`).
    StringDelimiter,
    /// A special token that prefixes tag names (DSML's `｜DSML｜`, MiniMax M3's namespace).
    Namespace,
    ReasoningStart,
    ReasoningEnd,
    /// A marker that also ends reasoning when it appears there (a model that goes from thinking
    /// straight into a tool call); the engine leaves it in the input.
    ReasoningExit,
    /// The label that opens reasoning inside the reasoning block (Gemma's `thought\n`).
    ReasoningLabel,
    /// Chat markup around a response or answer, kept out of content.
    ResponseStart,
    ResponseEnd,
    AnswerStart,
    AnswerEnd,
    MessageStart,
    MessageEnd,
    TurnEnd,
    EndOfSequence,
    /// Harmony's header markers.
    Channel,
    Constrain,
    HeaderEnd,
    RoleSeparator,
    Return,
}

/// How a value's type is decided in an XML parameter format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Typing {
    /// By the tool's JSON schema for the parameter (see [`crate::xml_value`]).
    Schema,
    /// By a `string="true|false"` attribute (DSML, `{string}` in the opening tag): `true` is the
    /// raw string; otherwise a JSON value, or the raw string when the value is not JSON.
    StringAttribute,
}

/// How an XML-parameter format writes one parameter. The parser, the renderer and the grammar all
/// read their tag texts from here.
///
/// `open` holds `{key}` (the parameter name) and may hold `{ws}` (optional whitespace, GLM's
/// newline between `</arg_key>` and `<arg_value>`) and `{string}` (DSML's `true`/`false`);
/// `close` may hold `{key}` (MiniMax M3 repeats the name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ParamTags {
    pub open: &'static str,
    pub close: &'static str,
    /// One `\n` after the opening tag and one before the closing tag are formatting, not value.
    pub pad: bool,
    /// Whitespace may stand between parameters.
    pub between: bool,
    /// Objects and arrays are written as nested parameter tags (`item` for array elements), not
    /// as JSON.
    pub nested: bool,
    pub typing: Typing,
}

impl ParamTags {
    /// Unpadded, whitespace between parameters, JSON objects and arrays, typed by the schema.
    pub const fn new(open: &'static str, close: &'static str) -> Self {
        Self {
            open,
            close,
            pad: false,
            between: true,
            nested: false,
            typing: Typing::Schema,
        }
    }
    pub const fn padded(self) -> Self {
        Self { pad: true, ..self }
    }
    /// Nothing between parameters.
    pub const fn tight(self) -> Self {
        Self {
            between: false,
            ..self
        }
    }
    pub const fn nested(self) -> Self {
        Self {
            nested: true,
            ..self
        }
    }
    pub const fn string_attribute(self) -> Self {
        Self {
            typing: Typing::StringAttribute,
            ..self
        }
    }

    /// The opening tag up to the name: `<parameter=`, `<arg_key>`, `<parameter name="`.
    pub fn key_open(&self) -> &'static str {
        self.open.split_once("{key}").map_or(self.open, |(head, _)| head)
    }

    /// For a tag whose name is an attribute (`<parameter name="{key}">`): the tag up to its
    /// attributes, `<parameter`, `<｜DSML｜ parameter`.
    pub fn tag_head(&self) -> &'static str {
        let open = self.key_open();
        open.rsplit_once(' ').map_or(open, |(head, _)| head)
    }

    /// What follows the name, up to the value (`</arg_key>`, `<arg_value>`, with `{ws}` between
    /// them): `(key_close, value_open)`; `("", ">")` for `<parameter={key}>`.
    pub fn after_key(&self) -> (&'static str, &'static str) {
        let rest = self.open.split_once("{key}").map_or("", |(_, rest)| rest);
        rest.split_once("{ws}").unwrap_or(("", rest))
    }
}

/// How a format writes a call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArgSyntax {
    /// A JSON object.
    Json,
    /// One tag per parameter.
    XmlParams(ParamTags),
    /// Gemma's `{key:<Q>text<Q>,n:2}`, `<Q>` the string delimiter.
    Gemma { string_delimiter: &'static str },
    /// `key="text", n=2` inside the call's parentheses.
    PythonKwargs,
}

impl ArgSyntax {
    pub fn params(&self) -> Option<&ParamTags> {
        match self {
            ArgSyntax::XmlParams(tags) => Some(tags),
            _ => None,
        }
    }
}

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
    /// For a soft trigger: what the text from the trigger on must look like for the parser to
    /// take it for a call, as a small regex (literals, `[...]` classes, `\s`, groups, `?`, `*`,
    /// `+`). A grammar that must rule calls out bans this instead of the bare trigger (pythonic's
    /// `[` stays allowed in text; `[name(` does not).
    pub confirm: Option<&'static str>,
}

impl Trigger {
    pub const fn marker(text: &'static str) -> Self {
        Self {
            text,
            at_output_start: false,
            soft: false,
            confirm: None,
        }
    }
    pub const fn at_start(text: &'static str) -> Self {
        Self {
            text,
            at_output_start: true,
            soft: true,
            confirm: None,
        }
    }
    pub const fn soft(text: &'static str) -> Self {
        Self {
            text,
            at_output_start: false,
            soft: true,
            confirm: None,
        }
    }
    /// This trigger, with the pattern that confirms a call (see `confirm`).
    pub const fn confirmed(self, pattern: &'static str) -> Self {
        Self {
            confirm: Some(pattern),
            ..self
        }
    }
}

/// The shape of one call, for renderers and structural tags: `begin`, the arguments in `style`,
/// then `end`; parallel calls joined by `separator`.
///
/// `begin` holds `{name}` (the function name, JSON-escaped when `style` is `json`) and may hold
/// `{index}` (the call's position in the output, `0`, `1`, ...; a grammar allows any digits).
/// `style` names how the arguments object is written: `json`; an XML parameter style
/// (`qwen_xml` `<parameter=K>V</parameter>`, `glm_xml` `<arg_key>K</arg_key><arg_value>V</arg_value>`,
/// `hy4_xml`, `minimax_xml` `<parameter name="K">V</parameter>`, `steptml_xml`, `deepseek_xml` /
/// `deepseek_v4_1_xml` (DSML, `string="true|false"`), `beam_xml`, `minimax_m3_xml` (nested
/// tags); the grammar module holds how each writes a parameter); `gemma4` (`{key:<Q>text<Q>,n:2}`,
/// `<Q>` the format's `string_delimiter` marker); `python_kwargs` (`key="text", n=2` inside the
/// call's parentheses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTemplate {
    pub begin: &'static str,
    pub style: &'static str,
    pub end: &'static str,
    pub separator: &'static str,
}

impl CallTemplate {
    /// `{"name": "NAME", "arguments": {...}}`, parallel calls joined by `, ` (in a JSON array, the
    /// formats' layout says where).
    pub const JSON_OBJECT: CallTemplate = CallTemplate {
        begin: "{\"name\": \"{name}\", \"arguments\": ",
        style: "json",
        end: "}",
        separator: ", ",
    };
}

/// Where calls sit in the output, for structural tags (the parser reads more than this; a grammar
/// writes only this shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// What wraps a run of calls, `(begin, end)`: `<｜tool▁calls▁begin｜>` ... `<｜tool▁calls▁end｜>`,
    /// `<TOOLCALL>[` ... `]</TOOLCALL>`. `None`: each call stands alone (`template.begin` opens it).
    /// When the only trigger that opens the section is an `at_output_start` one, the section may
    /// only open the output.
    pub section: Option<(&'static str, &'static str)>,
    /// Content written as a block instead of bare text, `(begin, end)` (harmony's final channel).
    pub content_block: Option<(&'static str, &'static str)>,
    /// The reasoning block before calls, `(begin, end)`, when `reasoning` alone does not say how
    /// a grammar writes it (harmony's analysis channel and the next message's start; gemma4's
    /// `thought` label).
    pub reasoning_block: Option<(&'static str, &'static str)>,
    /// The family writes content after its calls (gemma4's chat template: the calls, then the
    /// text), so a grammar that requires calls still allows text after them.
    pub content_after_calls: bool,
}

impl Layout {
    /// Calls stand alone, content is bare text, reasoning is `reasoning`.
    pub const BARE: Layout = Layout {
        section: None,
        content_block: None,
        reasoning_block: None,
        content_after_calls: false,
    };

    /// Calls wrapped in `begin` ... `end`.
    pub const fn section(begin: &'static str, end: &'static str) -> Layout {
        Layout {
            section: Some((begin, end)),
            content_block: None,
            reasoning_block: None,
            content_after_calls: false,
        }
    }
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
    /// Section, content and reasoning blocks around the calls, for structural tags.
    pub layout: Layout,
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
