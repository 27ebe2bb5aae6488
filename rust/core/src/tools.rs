//! The request's tools, compiled once and shared by every stream of a parser.
//!
//! Parsing needs the tools to type XML-encoded parameter values by their JSON schema (an XML
//! value is only text), to flag calls to tools the request never declared, to check arguments
//! against each tool's schema, and to tell custom (freeform) tools from function tools. A
//! `ToolSet` compiles all of that once; `digest` identifies equal tool lists so callers can share
//! one compiled set across requests.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::schema::Validator;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    Function,
    /// A freeform tool: the call carries raw text (`custom.input`), not JSON arguments.
    Custom,
}

#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub kind: ToolKind,
    /// The tool's parameters schema (`{}` when absent; `{}` for custom tools).
    pub parameters: Value,
    pub strict: bool,
    /// The compiled parameters schema; `None` when it could not be compiled (see `schema_error`).
    pub validator: Option<Validator>,
    pub schema_error: Option<String>,
}

impl Tool {
    /// Schema of one top-level parameter, if the tool declares it.
    pub fn parameter_schema(&self, param: &str) -> Option<&Value> {
        let props = self
            .parameters
            .get("properties")
            .unwrap_or(&self.parameters);
        props.get(param).filter(|s| s.is_object() || s.is_boolean())
    }

    /// Schema keywords the validator does not implement (they are not checked).
    pub fn unsupported_keywords(&self) -> &[String] {
        self.validator
            .as_ref()
            .map_or(&[], Validator::unsupported_keywords)
    }
}

/// What the request allows the model to call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
    Required,
    Named(String),
}

impl ToolChoice {
    /// From an OpenAI `tool_choice` value: `"auto"`, `"none"`, `"required"`, or
    /// `{"type": "function", "function": {"name": ...}}` (also `{"type": "custom", "custom": {...}}`).
    pub fn from_json(value: &Value) -> Result<Self> {
        match value {
            Value::Null => Ok(ToolChoice::Auto),
            Value::String(s) => match s.as_str() {
                "auto" => Ok(ToolChoice::Auto),
                "none" => Ok(ToolChoice::None),
                "required" | "any" => Ok(ToolChoice::Required),
                other => Err(Error::InvalidArgument(format!(
                    "unknown tool_choice {other:?}"
                ))),
            },
            Value::Object(map) => {
                let kind = map
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("function");
                let name = map
                    .get(kind)
                    .and_then(|f| f.get("name"))
                    .or_else(|| map.get("name"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        Error::InvalidArgument("a named tool_choice needs a name".into())
                    })?;
                Ok(ToolChoice::Named(name.to_owned()))
            }
            _ => Err(Error::InvalidArgument(
                "tool_choice must be a string or an object".into(),
            )),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
    digest: u64,
}

impl ToolSet {
    pub fn empty() -> Self {
        Self::default()
    }

    /// From OpenAI tool dicts (`{"type": "function", "function": {...}}`, `{"type": "custom",
    /// "custom": {...}}`) or bare function dicts (`{"name", "parameters"}`), as a JSON array.
    ///
    /// Fails for a custom tool with a grammar format (toolwire cannot constrain or check it) and
    /// for a `strict` tool whose schema cannot be compiled.
    pub fn from_json(tools: &Value) -> Result<Self> {
        let list = tools
            .as_array()
            .ok_or_else(|| Error::InvalidTools("tools must be a list".into()))?;
        let mut set = ToolSet {
            digest: digest_of(tools),
            ..ToolSet::default()
        };
        for (i, entry) in list.iter().enumerate() {
            let tool = match entry.get("type").and_then(Value::as_str) {
                Some("function") | None => {
                    function_tool(i, entry.get("function").unwrap_or(entry))?
                }
                Some("custom") => custom_tool(i, entry.get("custom").unwrap_or(entry))?,
                Some(other) => {
                    return Err(Error::InvalidTools(format!(
                        "tools[{i}] has unsupported type {other:?}"
                    )));
                }
            };
            set.by_name.insert(tool.name.clone(), set.tools.len());
            set.tools.push(tool);
        }
        Ok(set)
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// A hash of the tool list's JSON: equal lists share a digest.
    pub fn digest(&self) -> u64 {
        self.digest
    }
}

fn digest_of(tools: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    tools.to_string().hash(&mut hasher);
    hasher.finish()
}

fn name_of(i: usize, spec: &Value) -> Result<String> {
    spec.get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Error::InvalidTools(format!("tools[{i}] has no name")))
}

fn function_tool(i: usize, function: &Value) -> Result<Tool> {
    let name = name_of(i, function)?;
    let parameters = function
        .get("parameters")
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    let strict = function
        .get("strict")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (validator, schema_error) = match Validator::compile(&parameters) {
        Ok(v) => (Some(v), None),
        Err(e) if strict => {
            return Err(Error::InvalidTools(format!(
                "the schema of strict tool {name:?} cannot be used: {e}"
            )));
        }
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(Tool {
        name,
        description: function
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        kind: ToolKind::Function,
        parameters,
        strict,
        validator,
        schema_error,
    })
}

fn custom_tool(i: usize, custom: &Value) -> Result<Tool> {
    let name = name_of(i, custom)?;
    if let Some(format) = custom.get("format") {
        let kind = format.get("type").and_then(Value::as_str).unwrap_or("text");
        if kind != "text" {
            return Err(Error::InvalidTools(format!(
                "custom tool {name:?} has a {kind:?} format; only text custom tools are supported \
                 (a grammar-constrained custom tool cannot be enforced or checked)"
            )));
        }
    }
    Ok(Tool {
        name,
        description: custom
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned),
        kind: ToolKind::Custom,
        parameters: Value::Object(Default::default()),
        strict: false,
        validator: None,
        schema_error: None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::message::IssueKind;
    use crate::stream::{parse, ParserConfig, StreamParser};
    use crate::vocab::Vocab;

    fn tools(strict: bool) -> Value {
        json!([{"name": "f", "strict": strict, "parameters": {"type": "banana"}}])
    }

    #[test]
    fn an_invalid_schema_is_refused_when_strict_and_flags_each_call_otherwise() {
        let refused = ToolSet::from_json(&tools(true)).unwrap_err().to_string();
        assert!(refused.contains(r#"strict tool "f""#), "{refused}");
        assert!(refused.contains(r#"unknown type "banana""#), "{refused}");

        let config = ParserConfig::new("hermes", ToolSet::from_json(&tools(false)).unwrap(), None);
        let text = r#"<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>"#;
        let message = parse(&config.unwrap(), text);
        assert_eq!(message.tool_calls.len(), 1);
        let issues: Vec<_> = message.issues.iter().map(|i| (i.kind, i.index)).collect();
        assert_eq!(issues, [(IssueKind::UncheckedArguments, Some(0))]);
        assert!(message.issues[0].detail.contains("unknown type"));
    }

    #[test]
    fn a_token_id_missing_from_the_vocab_is_refused_before_anything_is_fed() {
        let pieces = [(0, b"x".to_vec(), false), (1, b"y".to_vec(), false)];
        let vocab = Arc::new(Vocab::from_pieces(pieces).unwrap());
        let config = ParserConfig::new("hermes", ToolSet::empty(), None).unwrap();
        let mut stream = StreamParser::new(config);
        let refused = stream.feed_tokens(&vocab, &[0, 7]).unwrap_err().to_string();
        assert!(
            refused.contains("token id 7 is not in the vocabulary"),
            "{refused}"
        );
        stream.feed_tokens(&vocab, &[1]).unwrap();
        stream.finish(None).unwrap();
        assert_eq!(stream.message().content_or_none(), Some("y"));
    }
}
