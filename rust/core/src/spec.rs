//! The format description as plain data: one [`Syntax`] per wire format.
//!
//! A syntax names the markers a format uses (and whether each is a single special token in the
//! family's vocabulary), what opens a call region in content, how a call and its arguments are
//! written, where calls sit in the output, and the native reasoning delimiters. The streaming
//! parser, the renderer and the structural-tag builder (through `format_info`, which is this data
//! serialised) all read the same syntax, so the grammar cannot accept what the parser cannot read.
//! What binds a syntax to its region parser and renderer is [`crate::formats::Format`]; this module
//! depends on nothing else in the crate.

use serde::{Serialize, Serializer};

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
    /// By a `type="string|number|boolean|array|object|null"` attribute (Kimi K3, `{type}` in the
    /// opening tag; [`TYPE_NAMES`]): `string` or no attribute is the raw string; any other type a
    /// JSON value, or the raw string when the value is not JSON.
    TypeAttribute,
}

/// The type names of [`Typing::TypeAttribute`], the raw-string one first.
pub const TYPE_NAMES: [&str; 6] = ["string", "number", "boolean", "array", "object", "null"];

/// The [`TYPE_NAMES`] entry of a JSON value.
pub fn type_name(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// How an XML-parameter format writes one parameter. The parser, the renderer and the grammar all
/// read their tag texts from here.
///
/// `open` holds `{key}` (the parameter name) and may hold `{ws}` (optional whitespace, GLM's
/// newline between `</arg_key>` and `<arg_value>`), `{string}` (DSML's `true`/`false`) and
/// `{type}` (Kimi K3's type name);
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
    pub const fn type_attribute(self) -> Self {
        Self {
            typing: Typing::TypeAttribute,
            ..self
        }
    }

    /// The opening tag up to the name: `<parameter=`, `<arg_key>`, `<parameter name="`.
    pub fn key_open(&self) -> &'static str {
        self.open
            .split_once("{key}")
            .map_or(self.open, |(head, _)| head)
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Marker {
    pub role: Role,
    pub text: &'static str,
    /// Whether the family's tokenizer has this marker as one special token. With token-id input
    /// such a marker is recognised by id only, so the same characters typed as text are content.
    pub special_token: bool,
}

impl Marker {
    /// A marker that is one special token of the family's vocabulary.
    pub const fn special(role: Role, text: &'static str) -> Self {
        Self {
            role,
            text,
            special_token: true,
        }
    }
    /// A marker written as ordinary text.
    pub const fn plain(role: Role, text: &'static str) -> Self {
        Self {
            role,
            text,
            special_token: false,
        }
    }
}

/// Something that opens a call region when it appears in content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// The shape of one call, for renderers and structural tags: `begin`, the arguments (as the
/// syntax's [`ArgSyntax`] writes them), then `end`; parallel calls joined by `separator`.
///
/// `begin` holds `{name}` (the function name, JSON-escaped when the arguments are JSON) and may
/// hold `{index}` (the call's position in the output, `0`, `1`, ...; a grammar allows any digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CallTemplate {
    pub begin: &'static str,
    pub end: &'static str,
    pub separator: &'static str,
}

impl CallTemplate {
    pub const fn new(begin: &'static str, end: &'static str, separator: &'static str) -> Self {
        Self {
            begin,
            end,
            separator,
        }
    }

    /// `{"name": "NAME", "arguments": {...}}`, parallel calls joined by `, ` (in a JSON array, the
    /// formats' layout says where).
    pub const JSON_OBJECT: CallTemplate =
        CallTemplate::new("{\"name\": \"{name}\", \"arguments\": ", "}", ", ");
}

/// Where calls sit in the output, for structural tags (the parser reads more than this; a grammar
/// writes only this shape). Serialised as `{"begin", "end"}` objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// What wraps a run of calls, `(begin, end)`: `<｜tool▁calls▁begin｜>` ... `<｜tool▁calls▁end｜>`,
    /// `<TOOLCALL>[` ... `]</TOOLCALL>`. `None`: each call stands alone (`template.begin` opens it).
    /// When the only trigger that opens the section is an `at_output_start` one, the section may
    /// only open the output.
    #[serde(serialize_with = "begin_end")]
    pub section: Option<(&'static str, &'static str)>,
    /// Content written as a block instead of bare text, `(begin, end)` (harmony's final channel).
    #[serde(serialize_with = "begin_end")]
    pub content_block: Option<(&'static str, &'static str)>,
    /// The reasoning block before calls, `(begin, end)`, when `reasoning` alone does not say how
    /// a grammar writes it (harmony's analysis channel and the next message's start; gemma4's
    /// `thought` label).
    #[serde(serialize_with = "begin_end")]
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

/// `<think>` ... `</think>`, the native reasoning delimiters most families share.
pub const THINK: (&str, &str) = ("<think>", "</think>");

/// One wire format, as data. Serialised, it is `toolwire.format_info(name)`.
#[derive(Debug, Serialize)]
pub struct Syntax {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub families: &'static [&'static str],
    pub description: &'static str,
    pub markers: &'static [Marker],
    pub triggers: &'static [Trigger],
    /// Native reasoning delimiters, e.g. `<think>` / `</think>`; serialised as `{"start", "end"}`.
    #[serde(serialize_with = "start_end")]
    pub reasoning: Option<(&'static str, &'static str)>,
    /// The texts that end the family's turn: the end-of-sequence and end-of-turn tokens of its
    /// tokenizer and chat template (`<|im_end|>`, `<｜end▁of▁sentence｜>`). An engine that keeps
    /// its stop text in the output passes one at the very end; there it is not content and the
    /// parser drops it (with any whitespace after it). Anywhere else it is what the model wrote.
    /// A text the format reads as a marker (harmony's `<|return|>`) is not listed here.
    pub stops: &'static [&'static str],
    pub template: Option<CallTemplate>,
    pub arguments: ArgSyntax,
    /// Section, content and reasoning blocks around the calls, for structural tags.
    #[serde(flatten)]
    pub layout: Layout,
}

impl Syntax {
    /// What a format that does not say otherwise has: no aliases, no native reasoning, no call
    /// template, JSON arguments, calls standing alone. A format writes the fields it sets and
    /// `..Syntax::EMPTY` for the rest; its name, description, markers and triggers are its own.
    pub const EMPTY: Syntax = Syntax {
        name: "",
        aliases: &[],
        families: &[],
        description: "",
        markers: &[],
        triggers: &[],
        reasoning: None,
        stops: &[],
        template: None,
        arguments: ArgSyntax::Json,
        layout: Layout::BARE,
    };

    pub fn marker(&self, role: Role) -> Option<&'static Marker> {
        self.markers.iter().find(|m| m.role == role)
    }

    /// The text of the first marker with `role`, or `""`.
    pub fn marker_text(&self, role: Role) -> &'static str {
        self.marker(role).map_or("", |m| m.text)
    }
}

fn pair<S: Serializer>(
    pair: &Option<(&'static str, &'static str)>,
    keys: [&'static str; 2],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    match pair {
        None => serializer.serialize_none(),
        Some((a, b)) => {
            let mut map = serializer.serialize_map(Some(2))?;
            map.serialize_entry(keys[0], a)?;
            map.serialize_entry(keys[1], b)?;
            map.end()
        }
    }
}

fn begin_end<S: Serializer>(
    p: &Option<(&'static str, &'static str)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    pair(p, ["begin", "end"], serializer)
}

fn start_end<S: Serializer>(
    p: &Option<(&'static str, &'static str)>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    pair(p, ["start", "end"], serializer)
}

/// Markup a family's chat template writes that the format's call template and markers do not
/// show, read by format detection ([`crate::detect`]) only: the layout a template writes calls
/// in where it differs from the one the grammar and renderer use, and tool-result envelopes.
pub static CHAT_TEMPLATE_MARKUP: &[(&str, &[&str])] = &[
    // gpt-oss's template puts the recipient in the role header and `json` after the channel.
    (
        "harmony",
        &[
            "<|start|>assistant to=functions.",
            "<|channel|>commentary json<|message|>",
        ],
    ),
    // Llama 3.x templates write tool results as an `ipython` turn.
    (
        "llama3_json",
        &["<|start_header_id|>ipython<|end_header_id|>"],
    ),
    // Laguna's templates write GLM-4.5's call tags inside their own role tags.
    ("poolside_v1", &["<assistant>", "<available_tools>"]),
];
