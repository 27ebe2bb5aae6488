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
use crate::request::{read_tools, Declared, ToolDecl};
use crate::schema::Validator;

pub use crate::request::{ToolChoice, ToolKind};

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
    /// Fails for a list [`read_tools`] refuses (duplicate or empty names, a custom tool with a
    /// grammar format, ...) and for a `strict` tool whose schema cannot be compiled.
    pub fn from_json(tools: &Value) -> Result<Self> {
        let mut set = ToolSet {
            digest: digest_of(tools),
            ..ToolSet::default()
        };
        for decl in read_tools(tools)? {
            let tool = compile_tool(decl)?;
            set.by_name.insert(tool.name.clone(), set.tools.len());
            set.tools.push(tool);
        }
        Ok(set)
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index_of(name).map(|i| &self.tools[i])
    }

    /// The position of the tool named `name` in [`ToolSet::tools`]. A short list is searched in
    /// order (names are unique), which costs less than hashing the name: every parsed call looks
    /// its tool up, and a request rarely declares more than a few tools.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        if self.tools.len() <= LINEAR_LOOKUP {
            return self.tools.iter().position(|t| t.name == name);
        }
        self.by_name.get(name).copied()
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// A hash of the tool list's JSON: equal lists share a digest.
    pub fn digest(&self) -> u64 {
        self.digest
    }
}

/// Tool lists up to this long are searched in order rather than through the hash map.
const LINEAR_LOOKUP: usize = 8;

fn digest_of(tools: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    tools.to_string().hash(&mut hasher);
    hasher.finish()
}

impl Declared for ToolSet {
    fn kind_of(&self, name: &str) -> Option<ToolKind> {
        self.get(name).map(|t| t.kind)
    }
    fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// A declared tool with its parameters schema compiled (a function tool without parameters
/// takes any arguments).
fn compile_tool(decl: ToolDecl) -> Result<Tool> {
    let ToolDecl {
        name,
        kind,
        description,
        parameters,
        strict,
    } = decl;
    let parameters = parameters.unwrap_or_else(|| Value::Object(Default::default()));
    if kind == ToolKind::Custom {
        return Ok(Tool {
            name,
            description,
            kind,
            parameters,
            strict: false,
            validator: None,
            schema_error: None,
        });
    }
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
        description,
        kind,
        parameters,
        strict,
        validator,
        schema_error,
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
    fn one_parse_checks_arguments_as_json_and_against_the_schema() {
        let tools = json!([{"name": "f", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}}}]);
        let config = ParserConfig::new("hermes", ToolSet::from_json(&tools).unwrap(), None);
        let config = config.unwrap();
        let kinds = |arguments: &str| {
            let text =
                format!(r#"<tool_call>{{"name": "f", "arguments": {arguments}}}</tool_call>"#);
            let message = parse(&config, &text);
            let kinds: Vec<_> = message.issues.iter().map(|i| i.kind).collect();
            (message.tool_calls.len(), kinds)
        };
        assert_eq!(kinds(r#"{"city": "Oslo"}"#), (1, vec![]));
        assert_eq!(
            kinds(r#"{"city": 5}"#),
            (1, vec![IssueKind::SchemaViolation])
        );
        assert_eq!(
            kinds(r#"{"city": Oslo}"#),
            (0, vec![IssueKind::MalformedJson])
        );
        // A lone surrogate escape: serde_json's `Value` (and so the schema check) refuses it,
        // its lenient pass does not: the call stands, unchecked, as it did before the two
        // passes became one.
        assert_eq!(kinds(r#"{"city": "\ud800"}"#), (1, vec![]));
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
