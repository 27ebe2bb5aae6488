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

impl Role {
    /// Chat markup around a response, an answer or a turn: kept out of content, but no tag a
    /// call is written in.
    pub fn is_markup(self) -> bool {
        matches!(
            self,
            Role::ResponseStart
                | Role::ResponseEnd
                | Role::AnswerStart
                | Role::AnswerEnd
                | Role::TurnEnd
        )
    }

    pub fn is_reasoning(self) -> bool {
        matches!(
            self,
            Role::ReasoningStart | Role::ReasoningEnd | Role::ReasoningExit | Role::ReasoningLabel
        )
    }
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
    /// A marker trigger for each text, in order: the common case of a format whose calls open
    /// at any of several markers.
    pub const fn markers<const N: usize>(texts: [&'static str; N]) -> [Self; N] {
        let mut triggers = [Self::marker(""); N];
        let mut k = 0;
        while k < N {
            triggers[k] = Self::marker(texts[k]);
            k += 1;
        }
        triggers
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

/// How the texts of a [`Syntax`] field that are also markers are tokenised, or that they are not
/// markers (the format lists what it needs in `extra_markers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokens {
    Unlisted,
    /// Written as ordinary text ([`Marker::plain`]).
    Plain,
    /// Each one special token of the family's vocabulary ([`Marker::special`]).
    Special,
}

impl Tokens {
    const fn marker(self, role: Role, text: &'static str) -> Option<Marker> {
        match self {
            Tokens::Unlisted => None,
            _ if text.is_empty() => None,
            Tokens::Plain => Some(Marker::plain(role, text)),
            Tokens::Special => Some(Marker::special(role, text)),
        }
    }
}

/// Which fields of a [`Syntax`] also give its markers, so a format writes each tag once:
///
/// * `section`: `layout.section`, trimmed, as `SectionStart` and `SectionEnd`;
/// * `call`: the template's `begin` up to `{name}`, trimmed (for a name written as an attribute,
///   `<invoke name="`, the tag up to its attributes, `<invoke`), as `CallStart`, and its `end`,
///   trimmed, as `CallEnd`; with JSON arguments, the text before and after the JSON object
///   (`<tool_call>` and `</tool_call>` around `{"name": ...}`);
/// * `params`: the [`ParamTags`], as `KeyStart`, `KeyEnd`, `ValueStart` and `ValueEnd` where the
///   name stands between tags (`<arg_key>{key}</arg_key><arg_value>`), otherwise as `ParamStart`
///   (the tag up to its attributes for a name attribute) and `ParamEnd`;
/// * `reasoning`: `reasoning`, as `ReasoningStart` and `ReasoningEnd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Implied {
    pub section: Tokens,
    pub call: Tokens,
    pub params: Tokens,
    pub reasoning: Tokens,
}

impl Implied {
    pub const NONE: Implied = Implied::all(Tokens::Unlisted);

    pub const fn all(tokens: Tokens) -> Implied {
        Implied {
            section: tokens,
            call: tokens,
            params: tokens,
            reasoning: tokens,
        }
    }
    pub const fn with_section(self, section: Tokens) -> Implied {
        Implied { section, ..self }
    }
    pub const fn with_call(self, call: Tokens) -> Implied {
        Implied { call, ..self }
    }
    pub const fn with_params(self, params: Tokens) -> Implied {
        Implied { params, ..self }
    }
    pub const fn with_reasoning(self, reasoning: Tokens) -> Implied {
        Implied { reasoning, ..self }
    }
}

/// One wire format, as data. Serialised, it is `toolwire.format_info(name)`, with `markers` the
/// full list ([`Syntax::markers`]).
#[derive(Debug)]
pub struct Syntax {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub families: &'static [&'static str],
    pub description: &'static str,
    /// The markers no other field implies (see `implied`).
    pub extra_markers: &'static [Marker],
    /// Which other fields' texts are markers too.
    pub implied: Implied,
    pub triggers: &'static [Trigger],
    /// Native reasoning delimiters, e.g. `<think>` / `</think>`; serialised as `{"start", "end"}`.
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
    pub layout: Layout,
}

impl Syntax {
    /// What a format that does not say otherwise has: no aliases, no native reasoning, no call
    /// template, JSON arguments, calls standing alone, no implied markers. A format writes the
    /// fields it sets and `..Syntax::EMPTY` for the rest; its name, description, markers and
    /// triggers are its own.
    pub const EMPTY: Syntax = Syntax {
        name: "",
        aliases: &[],
        families: &[],
        description: "",
        extra_markers: &[],
        implied: Implied::NONE,
        triggers: &[],
        reasoning: None,
        stops: &[],
        template: None,
        arguments: ArgSyntax::Json,
        layout: Layout::BARE,
    };

    /// Every marker of the format: those its fields imply (see [`Implied`]: section, call,
    /// parameter and reasoning tags, in that order), then `extra_markers`.
    pub fn markers(&self) -> impl Iterator<Item = Marker> + Clone + '_ {
        self.implied_markers()
            .into_iter()
            .flatten()
            .chain(self.extra_markers.iter().copied())
    }

    fn implied_markers(&self) -> [Option<Marker>; 10] {
        let implied = self.implied;
        let mut out = [None; 10];
        if let Some((begin, end)) = self.layout.section {
            out[0] = implied.section.marker(Role::SectionStart, begin.trim());
            out[1] = implied.section.marker(Role::SectionEnd, end.trim());
        }
        if let Some(template) = self.template {
            let mut head = template.begin.split_once("{name}").map_or("", |(h, _)| h);
            let mut end = template.end;
            if self.arguments == ArgSyntax::Json {
                head = head.split_once('{').map_or(head, |(h, _)| h);
                end = end.rsplit_once('}').map_or(end, |(_, e)| e);
            }
            out[2] = implied
                .call
                .marker(Role::CallStart, attribute_tag(head.trim()));
            out[3] = implied.call.marker(Role::CallEnd, end.trim());
        }
        if let Some(params) = self.arguments.params() {
            let (key_close, value_open) = params.after_key();
            let close = params
                .close
                .split_once("{key}")
                .map_or(params.close, |(h, _)| h);
            let t = implied.params;
            if !key_close.is_empty() || value_open.starts_with('<') {
                out[4] = t.marker(Role::KeyStart, params.key_open());
                out[5] = t.marker(Role::KeyEnd, key_close);
                out[6] = t.marker(Role::ValueStart, value_open);
                out[7] = t.marker(Role::ValueEnd, close);
            } else {
                out[4] = t.marker(Role::ParamStart, attribute_tag(params.key_open()));
                out[5] = t.marker(Role::ParamEnd, close);
            }
        }
        if let Some((start, end)) = self.reasoning {
            out[8] = implied.reasoning.marker(Role::ReasoningStart, start);
            out[9] = implied.reasoning.marker(Role::ReasoningEnd, end);
        }
        out
    }

    /// The texts a raw argument value cannot hold, which a grammar therefore keeps out of
    /// values: for XML parameters, every marker but the reasoning and markup ones (the parser
    /// ends a value at the next tag or message marker) and the triggers that open a call
    /// anywhere; for Gemma's delimited strings, every marker but the reasoning ones; nothing for
    /// JSON and Python literals, whose strings escape. In marker order, each text once.
    pub fn value_excludes(&self) -> Vec<&'static str> {
        let is_markup = |text: &str| {
            let mut roles = self.markers().filter(|m| m.text == text).peekable();
            roles.peek().is_some() && roles.all(|m| m.role.is_markup())
        };
        let texts: Vec<&'static str> = match self.arguments {
            ArgSyntax::XmlParams(_) => self
                .markers()
                .filter(|m| !m.role.is_markup() && !m.role.is_reasoning())
                .map(|m| m.text)
                .chain(
                    self.triggers
                        .iter()
                        .filter(|t| !t.at_output_start && !is_markup(t.text))
                        .map(|t| t.text),
                )
                .collect(),
            ArgSyntax::Gemma { .. } => self
                .markers()
                .filter(|m| !m.role.is_reasoning())
                .map(|m| m.text)
                .collect(),
            ArgSyntax::Json | ArgSyntax::PythonKwargs => Vec::new(),
        };
        let mut out: Vec<&'static str> = Vec::new();
        for text in texts {
            if !text.is_empty() && !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }

    pub fn marker(&self, role: Role) -> Option<Marker> {
        self.markers().find(|m| m.role == role)
    }
    /// The text of the first marker with `role`, or `""`.
    pub fn marker_text(&self, role: Role) -> &'static str {
        self.marker(role).map_or("", |m| m.text)
    }
}

/// For a tag that ends in a name attribute (`<invoke name="`): the tag up to its attributes
/// (`<invoke`); any other text as it is.
fn attribute_tag(text: &'static str) -> &'static str {
    match text.strip_suffix('"') {
        Some(_) => text.rsplit_once(' ').map_or(text, |(head, _)| head),
        None => text,
    }
}

impl Serialize for Syntax {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The serialised fields, in `format_info`'s order, `markers` the full list.
        #[derive(Serialize)]
        struct Info<'a> {
            name: &'a str,
            aliases: &'a [&'a str],
            families: &'a [&'a str],
            description: &'a str,
            markers: Vec<Marker>,
            triggers: &'a [Trigger],
            #[serde(serialize_with = "start_end")]
            reasoning: Option<(&'static str, &'static str)>,
            stops: &'a [&'a str],
            template: Option<CallTemplate>,
            arguments: ArgSyntax,
            #[serde(flatten)]
            layout: Layout,
            value_excludes: Vec<&'static str>,
        }
        Info {
            name: self.name,
            aliases: self.aliases,
            families: self.families,
            description: self.description,
            markers: self.markers().collect(),
            triggers: self.triggers,
            reasoning: self.reasoning,
            stops: self.stops,
            template: self.template,
            arguments: self.arguments,
            layout: self.layout,
            value_excludes: self.value_excludes(),
        }
        .serialize(serializer)
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
