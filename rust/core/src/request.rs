//! The request's rules: what an OpenAI chat request's `tools`, `tool_choice` and `reasoning` mean.
//!
//! The parser (which flags calls that break the request) and the grammar (which keeps the model
//! from writing them) must read a request the same way, or one accepts what the other refuses.
//! Both read it here: [`read_tools`] checks the tool list, [`ToolChoice::read`] checks the choice
//! against it, [`ReasoningMode::from_json`] and [`SchemaMode::from_json`] read the two settings,
//! and every refusal is one [`Error`] whose text both sides show.
//!
//! Decisions a request can not make for itself:
//! - `tool_choice` absent: `auto` when tools are declared, `none` when not (OpenAI's default).
//! - `tool_choice="any"` is refused, with a hint to say `"required"`: vLLM and SGLang refuse it
//!   too (their request models allow only `none`, `auto`, `required` and a named tool), so a
//!   request that toolwire accepted would fail on the server it is sent to.
//! - `required`, a named tool and `allowed_tools` need the tools they refer to to be declared.
//! - `{"type": "allowed_tools", "allowed_tools": {"mode": "auto" | "required", "tools": [refs]}}`
//!   (and the Responses API's flat `{"type": "allowed_tools", "mode", "tools"}`) allows the listed
//!   tools, in the order they were declared.
//! - A tool's `strict` is `true`, `false` or null: anything else is refused, as a quoted `"true"`
//!   would otherwise silently turn validation off.

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Function,
    /// A freeform tool: the call carries raw text (`custom.input`), not JSON arguments.
    Custom,
}

impl ToolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Function => "function",
            ToolKind::Custom => "custom",
        }
    }
}

/// One declared tool, as the request states it (schemas are not compiled here).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    pub name: String,
    pub kind: ToolKind,
    pub description: Option<String>,
    /// The parameters schema; `None` when absent or null (custom tools have none).
    pub parameters: Option<Value>,
    pub strict: bool,
}

/// Check an OpenAI tool list: `{"type": "function", "function": {...}}`, `{"type": "custom",
/// "custom": {...}}`, or bare function dicts (`{"name", "parameters"}`). Names must be non-empty
/// and unique; a custom tool must have a text format (a grammar-constrained one cannot be
/// enforced or checked).
pub fn read_tools(tools: &Value) -> Result<Vec<ToolDecl>> {
    let list = match tools {
        Value::Null => return Ok(Vec::new()),
        Value::Array(list) => list,
        _ => return Err(Error::InvalidTools("tools must be a list".into())),
    };
    let out = list
        .iter()
        .enumerate()
        .map(|(i, entry)| read_tool(i, entry))
        .collect::<Result<Vec<_>>>()?;
    let mut first_index: HashMap<&str, usize> = HashMap::new();
    for (i, decl) in out.iter().enumerate() {
        if let Some(first) = first_index.insert(&decl.name, i) {
            return Err(Error::InvalidTools(format!(
                "tools[{i}] repeats the name {:?} of tools[{first}]; tool names must be unique",
                decl.name
            )));
        }
    }
    Ok(out)
}

fn read_tool(i: usize, entry: &Value) -> Result<ToolDecl> {
    if !entry.is_object() {
        return Err(Error::InvalidTools(format!("tools[{i}] is not an object")));
    }
    let kind = match entry.get("type") {
        None | Some(Value::Null) => ToolKind::Function,
        Some(Value::String(s)) if s == "function" => ToolKind::Function,
        Some(Value::String(s)) if s == "custom" => ToolKind::Custom,
        Some(other) => {
            return Err(Error::InvalidTools(format!(
                "tools[{i}] has unsupported type {}; expected \"function\" or \"custom\"",
                short(other)
            )));
        }
    };
    let inner = match entry.get(kind.as_str()) {
        None => entry,
        Some(inner) if inner.is_object() => inner,
        Some(_) => {
            return Err(Error::InvalidTools(format!(
                "tools[{i}].{} is not an object",
                kind.as_str()
            )));
        }
    };
    let name = match inner.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        Some(Value::String(_)) => {
            return Err(Error::InvalidTools(format!("tools[{i}] has an empty name")));
        }
        _ => return Err(Error::InvalidTools(format!("tools[{i}] has no name"))),
    };
    let description = inner
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if kind == ToolKind::Custom {
        check_custom_format(&name, inner.get("format"))?;
        return Ok(ToolDecl {
            name,
            kind,
            description,
            parameters: None,
            strict: false,
        });
    }
    let strict = match inner.get("strict") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => *flag,
        Some(other) => {
            return Err(Error::InvalidTools(format!(
                "tool {name:?} has strict {}; it must be true, false or null",
                short(other)
            )));
        }
    };
    Ok(ToolDecl {
        name,
        kind,
        description,
        parameters: inner.get("parameters").filter(|p| !p.is_null()).cloned(),
        strict,
    })
}

fn check_custom_format(name: &str, format: Option<&Value>) -> Result<()> {
    let kind = match format {
        None | Some(Value::Null) => return Ok(()),
        Some(format) => format.get("type").and_then(Value::as_str).unwrap_or("text"),
    };
    if kind == "text" {
        return Ok(());
    }
    Err(Error::InvalidTools(format!(
        "custom tool {name:?} has a {kind:?} format; only text custom tools are supported \
         (a grammar-constrained custom tool cannot be enforced or checked)"
    )))
}

/// What the request allows the model to call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
    Required,
    /// Exactly this tool (`{"type": "function" | "custom", ...: {"name"}}`).
    Named {
        kind: ToolKind,
        name: String,
    },
    /// `allowed_tools`: calls to these tools only, at least one when `required`.
    Allowed {
        required: bool,
        names: Vec<String>,
    },
}

/// The tools a choice is checked against: by name, their kind.
pub trait Declared {
    fn kind_of(&self, name: &str) -> Option<ToolKind>;
    fn is_empty(&self) -> bool;
}

impl Declared for [ToolDecl] {
    fn kind_of(&self, name: &str) -> Option<ToolKind> {
        self.iter().find(|t| t.name == name).map(|t| t.kind)
    }
    fn is_empty(&self) -> bool {
        <[ToolDecl]>::is_empty(self)
    }
}

impl ToolChoice {
    /// Read an OpenAI `tool_choice` (null: the default) and check it against the declared tools.
    pub fn read(value: &Value, tools: &(impl Declared + ?Sized)) -> Result<Self> {
        let choice = match value {
            Value::Null if tools.is_empty() => ToolChoice::None,
            Value::Null => ToolChoice::Auto,
            Value::String(word) => Self::from_word(word)?,
            Value::Object(map) => match map.get("type") {
                None | Some(Value::Null) => named(ToolKind::Function, value)?,
                Some(Value::String(t)) if t == "function" => named(ToolKind::Function, value)?,
                Some(Value::String(t)) if t == "custom" => named(ToolKind::Custom, value)?,
                Some(Value::String(t)) if t == "allowed_tools" => {
                    allowed(map.get("allowed_tools").unwrap_or(value))?
                }
                Some(other) => return Err(invalid(UNKNOWN_TYPE, other)),
            },
            other => return Err(invalid(NOT_A_CHOICE, other)),
        };
        choice.check(tools)?;
        Ok(choice)
    }

    fn from_word(word: &str) -> Result<Self> {
        match word {
            "auto" => Ok(ToolChoice::Auto),
            "none" => Ok(ToolChoice::None),
            "required" => Ok(ToolChoice::Required),
            "any" => Err(Error::InvalidArgument(ANY.into())),
            other => Err(Error::InvalidArgument(format!(
                "unknown tool_choice {other:?}; expected \"auto\", \"none\", \"required\" or an object"
            ))),
        }
    }

    /// Refuse a choice the declared tools cannot satisfy (see [`ToolChoice::read`]).
    pub fn check(&self, tools: &(impl Declared + ?Sized)) -> Result<()> {
        match self {
            ToolChoice::Required if tools.is_empty() => Err(Error::InvalidArgument(
                "tool_choice \"required\" needs at least one tool".into(),
            )),
            ToolChoice::Named { kind, name } => match tools.kind_of(name) {
                None => Err(Error::InvalidArgument(format!(
                    "tool_choice names {name:?}, which is not among the tools"
                ))),
                Some(declared) if declared != *kind => Err(Error::InvalidArgument(format!(
                    "tool_choice names the {} tool {name:?}, but {name:?} is a {} tool",
                    kind.as_str(),
                    declared.as_str()
                ))),
                Some(_) => Ok(()),
            },
            ToolChoice::Allowed { required, names } => {
                let missing: Vec<&String> = names
                    .iter()
                    .filter(|n| tools.kind_of(n).is_none())
                    .collect();
                if !missing.is_empty() {
                    return Err(Error::InvalidArgument(format!(
                        "allowed_tools names tools that are not declared: {missing:?}"
                    )));
                }
                if *required && names.is_empty() {
                    return Err(Error::InvalidArgument(
                        "allowed_tools with mode \"required\" needs at least one tool".into(),
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `"none"`, `"auto"`, `"required"` or `"named"`: how the grammar holds the allowed tools
    /// (`allowed_tools` reads as its mode).
    pub fn mode(&self) -> &'static str {
        match self {
            ToolChoice::None => "none",
            ToolChoice::Auto
            | ToolChoice::Allowed {
                required: false, ..
            } => "auto",
            ToolChoice::Required | ToolChoice::Allowed { required: true, .. } => "required",
            ToolChoice::Named { .. } => "named",
        }
    }

    /// Whether a call to `name` keeps to the choice.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            ToolChoice::None => false,
            ToolChoice::Auto | ToolChoice::Required => true,
            ToolChoice::Named { name: wanted, .. } => wanted == name,
            ToolChoice::Allowed { names, .. } => names.iter().any(|n| n == name),
        }
    }

    /// Why a call to `name` breaks the choice (`None`: it keeps to it).
    pub fn refusal(&self, name: &str) -> Option<String> {
        if self.allows(name) {
            return None;
        }
        Some(match self {
            ToolChoice::Named { name: wanted, .. } => format!("tool_choice names {wanted:?}"),
            ToolChoice::Allowed { names, .. } => format!("allowed_tools allows only {names:?}"),
            _ => "tool_choice is \"none\"".to_owned(),
        })
    }

    /// Whether the output must make a call.
    pub fn requires_call(&self) -> bool {
        matches!(self.mode(), "required" | "named")
    }
}

const ANY: &str = "unknown tool_choice \"any\"; say \"required\" (\"any\" is Anthropic's and \
                   Mistral's word for it, which vLLM and SGLang refuse too)";
const UNKNOWN_TYPE: &str =
    "unknown tool_choice type {}; expected \"function\", \"custom\" or \"allowed_tools\"";
const NOT_A_CHOICE: &str = "tool_choice must be a string or an object, not {}";

/// `why` (with one `{}`) about `value`.
fn invalid(why: &str, value: &Value) -> Error {
    Error::InvalidArgument(why.replacen("{}", &short(value), 1))
}

fn named(kind: ToolKind, choice: &Value) -> Result<ToolChoice> {
    match reference_name(kind, choice) {
        Some(name) => Ok(ToolChoice::Named {
            kind,
            name: name.to_owned(),
        }),
        None => Err(Error::InvalidArgument(format!(
            "a named tool_choice needs a non-empty name: {}",
            short(choice)
        ))),
    }
}

/// The name in `{"type": kind, kind: {"name"}}` or the flat `{"type": kind, "name"}`.
fn reference_name(kind: ToolKind, reference: &Value) -> Option<&str> {
    reference
        .get(kind.as_str())
        .filter(|inner| inner.is_object())
        .unwrap_or(reference)
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
}

fn allowed(spec: &Value) -> Result<ToolChoice> {
    let required = match spec.get("mode") {
        None | Some(Value::Null) => false,
        Some(Value::String(m)) if m == "auto" => false,
        Some(Value::String(m)) if m == "required" => true,
        Some(other) => {
            return Err(Error::InvalidArgument(format!(
                "unknown allowed_tools mode {}; expected \"auto\" or \"required\"",
                short(other)
            )))
        }
    };
    let Some(refs) = spec.get("tools").and_then(Value::as_array) else {
        return Err(Error::InvalidArgument(
            "allowed_tools needs a list of tools".into(),
        ));
    };
    let mut names: Vec<String> = Vec::with_capacity(refs.len());
    for (i, reference) in refs.iter().enumerate() {
        let kind = match reference.get("type").and_then(Value::as_str) {
            Some("custom") => ToolKind::Custom,
            _ => ToolKind::Function,
        };
        let name = reference_name(kind, reference).ok_or_else(|| {
            Error::InvalidArgument(format!("allowed_tools.tools[{i}] has no name"))
        })?;
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    Ok(ToolChoice::Allowed { required, names })
}

/// What the request says about reasoning: one vocabulary for the parser (`ToolParser`'s
/// `reasoning=`) and the grammar (`grammar.plan`'s `reasoning=`, which also takes xgrammar's
/// `enabled` / `auto` / `disabled`).
///
/// | value | mode | parser | grammar |
/// |---|---|---|---|
/// | None | `Unset` | no reasoning | the format's default (none; channel formats keep their analysis message) |
/// | False, `"none"`, `"off"`, `"disabled"` | `Off` | no reasoning | no block |
/// | `"think"`, `"paired"` | `Think` | `<think>` … `</think>` may open the output | an optional `<think>` block |
/// | True, `"native"` | `Native` | the format's own block may open the output | an optional native block (a required analysis message on per-turn formats) |
/// | `"auto"`, `"optional"` | `Optional` | as `Native` | an optional native block (also on per-turn formats) |
/// | `"closing_only"`, `"enabled"` | `ClosingOnly` | the prompt opened the block; the output starts inside it | the same |
///
/// A format without native reasoning delimiters uses `<think>` / `</think>`. With any mode but
/// `Unset` and `Off`, a block may also open again later in the output (after content or calls);
/// a call written inside a block is reasoning, never a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningMode {
    #[default]
    Unset,
    Off,
    Think,
    Native,
    Optional,
    ClosingOnly,
}

impl ReasoningMode {
    /// From a JSON value: null, a bool, or one of the names in the table.
    pub fn from_json(value: &Value) -> Result<Self> {
        match value {
            Value::Null => Ok(ReasoningMode::Unset),
            Value::Bool(true) => Ok(ReasoningMode::Native),
            Value::Bool(false) => Ok(ReasoningMode::Off),
            Value::String(name) => Self::from_name(name),
            other => Err(Error::InvalidArgument(format!(
                "reasoning must be None, a bool or a string, not {}",
                short(other)
            ))),
        }
    }

    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "none" | "off" | "disabled" => ReasoningMode::Off,
            "think" | "paired" => ReasoningMode::Think,
            "native" => ReasoningMode::Native,
            "auto" | "optional" => ReasoningMode::Optional,
            "closing_only" | "enabled" => ReasoningMode::ClosingOnly,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown reasoning {other:?}; expected None, a bool, 'none' / 'off' / \
                     'disabled', 'think' / 'paired', 'native', 'auto' / 'optional' or \
                     'closing_only' / 'enabled'"
                )))
            }
        })
    }

    /// The canonical name (`None` for `Unset`).
    pub fn name(self) -> Option<&'static str> {
        match self {
            ReasoningMode::Unset => None,
            ReasoningMode::Off => Some("off"),
            ReasoningMode::Think => Some("think"),
            ReasoningMode::Native => Some("native"),
            ReasoningMode::Optional => Some("optional"),
            ReasoningMode::ClosingOnly => Some("closing_only"),
        }
    }

    /// The block's `(open, close)` for a format with these native delimiters (`None`: the
    /// request wants no block).
    pub fn delimiters(
        self,
        native: Option<(&'static str, &'static str)>,
    ) -> Option<(&'static str, &'static str)> {
        const THINK: (&str, &str) = ("<think>", "</think>");
        match self {
            ReasoningMode::Unset | ReasoningMode::Off => None,
            ReasoningMode::Think => Some(THINK),
            _ => Some(native.unwrap_or(THINK)),
        }
    }
}

/// Which tools' arguments a grammar holds to their schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaMode {
    /// Strict tools only; the others' arguments are any object.
    #[default]
    Auto,
    /// Every tool.
    Strict,
}

impl SchemaMode {
    pub fn from_json(value: &Value) -> Result<Self> {
        match value.as_str() {
            Some("auto") => Ok(SchemaMode::Auto),
            Some("strict") => Ok(SchemaMode::Strict),
            _ => Err(Error::InvalidArgument(format!(
                "unknown schema mode {}; expected \"auto\" or \"strict\"",
                short(value)
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SchemaMode::Auto => "auto",
            SchemaMode::Strict => "strict",
        }
    }
}

/// A value as it appears in an error: its JSON, cut to a readable length.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolDecl> {
        read_tools(&json!([
            {"type": "function", "function": {"name": "f", "strict": true}},
            {"name": "g", "parameters": {"type": "object"}},
            {"type": "custom", "custom": {"name": "c", "format": {"type": "text"}}},
        ]))
        .unwrap()
    }

    fn refusal(tool_list: serde_json::Value) -> String {
        read_tools(&tool_list).unwrap_err().to_string()
    }

    #[test]
    fn tool_lists_are_read_and_checked() {
        let t = tools();
        assert_eq!(
            t.iter()
                .map(|t| (t.name.as_str(), t.kind, t.strict))
                .collect::<Vec<_>>(),
            [
                ("f", ToolKind::Function, true),
                ("g", ToolKind::Function, false),
                ("c", ToolKind::Custom, false)
            ]
        );
        assert_eq!(t[0].parameters, None);
        assert_eq!(t[1].parameters, Some(json!({"type": "object"})));
        assert!(
            refusal(json!([{"name": "f"}, {"type": "custom", "custom": {"name": "f"}}]))
                .contains("tools[1] repeats the name \"f\" of tools[0]")
        );
        assert!(refusal(json!([{"name": ""}])).contains("tools[0] has an empty name"));
        assert!(refusal(json!([{"function": {}}])).contains("tools[0] has no name"));
        assert!(refusal(json!([{"name": "f", "strict": "true"}])).contains("strict \"true\""));
        assert!(refusal(json!([{"type": "web"}])).contains("unsupported type \"web\""));
        assert!(refusal(json!({"name": "f"})).contains("tools must be a list"));
        assert!(refusal(json!([3])).contains("tools[0] is not an object"));
        let grammar =
            json!([{"type": "custom", "custom": {"name": "c", "format": {"type": "grammar"}}}]);
        assert!(refusal(grammar).contains("only text custom tools"));
    }

    #[test]
    fn tool_choices_are_read_against_the_tools() {
        let t = tools();
        let read = |v: serde_json::Value| ToolChoice::read(&v, t.as_slice());
        let err = |v: serde_json::Value| read(v).unwrap_err().to_string();
        assert_eq!(read(json!(null)).unwrap(), ToolChoice::Auto);
        assert_eq!(
            ToolChoice::read(&json!(null), &[] as &[ToolDecl]).unwrap(),
            ToolChoice::None
        );
        assert_eq!(read(json!("required")).unwrap().mode(), "required");
        let named = read(json!({"type": "function", "function": {"name": "g"}})).unwrap();
        assert!(named.allows("g") && !named.allows("f") && named.requires_call());
        assert_eq!(
            read(json!({"type": "custom", "name": "c"})).unwrap().mode(),
            "named"
        );
        let allowed = read(json!({"type": "allowed_tools", "allowed_tools": {"mode": "required",
            "tools": [{"type": "function", "function": {"name": "g"}}, {"type": "function", "name": "g"}]}}))
        .unwrap();
        assert_eq!(
            allowed,
            ToolChoice::Allowed {
                required: true,
                names: vec!["g".into()]
            }
        );
        assert_eq!(
            allowed.refusal("f").unwrap(),
            "allowed_tools allows only [\"g\"]"
        );
        assert!(err(json!("any")).contains("say \"required\""));
        assert!(err(json!("sometimes")).contains("unknown tool_choice \"sometimes\""));
        assert!(err(json!(3)).contains("must be a string or an object"));
        assert!(err(json!({"type": "function", "function": {"name": "zz"}}))
            .contains("not among the tools"));
        assert!(
            err(json!({"type": "custom", "custom": {"name": "g"}})).contains("is a function tool")
        );
        assert!(err(json!({"type": "function", "function": {}})).contains("needs a non-empty name"));
        assert!(
            err(json!({"type": "allowed_tools", "mode": "x", "tools": []})).contains("mode \"x\"")
        );
        assert!(
            err(json!({"type": "allowed_tools", "mode": "auto", "tools": [{"name": "q"}]}))
                .contains("not declared: [\"q\"]")
        );
        assert!(err(json!({"type": "banana"})).contains("unknown tool_choice type \"banana\""));
        let none: &[ToolDecl] = &[];
        assert!(ToolChoice::read(&json!("required"), none)
            .unwrap_err()
            .to_string()
            .contains("at least one tool"));
    }

    #[test]
    fn reasoning_has_one_vocabulary() {
        for (value, mode) in [
            (json!(null), ReasoningMode::Unset),
            (json!(false), ReasoningMode::Off),
            (json!("disabled"), ReasoningMode::Off),
            (json!(true), ReasoningMode::Native),
            (json!("paired"), ReasoningMode::Think),
            (json!("auto"), ReasoningMode::Optional),
            (json!("enabled"), ReasoningMode::ClosingOnly),
        ] {
            assert_eq!(ReasoningMode::from_json(&value).unwrap(), mode, "{value}");
        }
        assert!(ReasoningMode::from_json(&json!(2)).is_err());
        assert!(ReasoningMode::from_name("sometimes")
            .unwrap_err()
            .to_string()
            .contains("'enabled'"));
        let seed = Some(("<seed:think>", "</seed:think>"));
        assert_eq!(
            ReasoningMode::Think.delimiters(seed),
            Some(("<think>", "</think>"))
        );
        assert_eq!(ReasoningMode::Optional.delimiters(seed), seed);
        assert_eq!(
            ReasoningMode::Native.delimiters(None),
            Some(("<think>", "</think>"))
        );
        assert_eq!(
            SchemaMode::from_json(&json!("strict")).unwrap(),
            SchemaMode::Strict
        );
        assert!(SchemaMode::from_json(&json!("lax"))
            .unwrap_err()
            .to_string()
            .contains("\"lax\""));
    }
}
