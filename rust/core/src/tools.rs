//! The request's tools, compiled once and shared by every stream of a parser.
//!
//! Parsing needs the tools for two things: typing XML-encoded parameter values by their JSON
//! schema (an XML value is only text), and flagging calls to tools the request never declared.

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    /// The tool's parameters schema (`{}` when absent).
    pub parameters: Value,
    pub strict: bool,
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
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSet {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
}

impl ToolSet {
    pub fn empty() -> Self {
        Self::default()
    }

    /// From OpenAI tool dicts (`{"type": "function", "function": {...}}`) or bare function dicts
    /// (`{"name", "parameters"}`), as a JSON array.
    pub fn from_json(tools: &Value) -> Result<Self> {
        let list = tools
            .as_array()
            .ok_or_else(|| Error::InvalidTools("tools must be a list".into()))?;
        let mut set = ToolSet::default();
        for (i, entry) in list.iter().enumerate() {
            let function = match entry.get("type").and_then(Value::as_str) {
                Some("function") | None => entry.get("function").unwrap_or(entry),
                Some(other) => {
                    return Err(Error::InvalidTools(format!(
                        "tools[{i}] has unsupported type {other:?}"
                    )));
                }
            };
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| Error::InvalidTools(format!("tools[{i}] has no function name")))?;
            let tool = Tool {
                name: name.to_owned(),
                description: function
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                parameters: function
                    .get("parameters")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Default::default())),
                strict: function
                    .get("strict")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
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
}
