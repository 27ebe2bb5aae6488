//! Model-native text for tool calls: what the model would have written. Used to put assistant
//! tool calls back into a prompt, and to test that parsing inverts rendering.

use serde_json::Value;

use crate::spec::{ArgSyntax, Syntax};

#[derive(Debug, Clone, PartialEq)]
pub struct RenderCall {
    pub name: String,
    /// Arguments as a JSON value (normally an object).
    pub arguments: Value,
    pub id: Option<String>,
}

impl RenderCall {
    pub fn arguments_json(&self) -> String {
        self.arguments.to_string()
    }
}

/// Content first, then each call as the syntax's template writes it: `begin` + arguments as JSON +
/// `end`, joined by the separator.
pub fn with_template(syntax: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    let Some(template) = &syntax.template else {
        return out;
    };
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(template.separator);
        }
        let name = if syntax.arguments == ArgSyntax::Json {
            let quoted = crate::json::quote(&call.name);
            quoted[1..quoted.len() - 1].to_owned()
        } else {
            call.name.clone()
        };
        out.push_str(&template.begin.replace("{name}", &name));
        out.push_str(&call.arguments_json());
        out.push_str(template.end);
    }
    out
}

/// `{"name": ..., "arguments": ...}` objects, compact, as JSON-family formats write them.
pub fn call_object(call: &RenderCall, args_key: &str) -> String {
    format!(
        "{{\"name\": {}, \"{args_key}\": {}}}",
        crate::json::quote(&call.name),
        call.arguments_json()
    )
}

pub fn call_array(calls: &[RenderCall], args_key: &str) -> String {
    let items: Vec<String> = calls.iter().map(|c| call_object(c, args_key)).collect();
    format!("[{}]", items.join(", "))
}

/// `content`, then (when there are calls) `open`, the calls as [`call_array`] and `close`.
pub fn content_and_array(
    calls: &[RenderCall],
    content: Option<&str>,
    open: &str,
    close: &str,
) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if !calls.is_empty() {
        out.push_str(open);
        out.push_str(&call_array(calls, "arguments"));
        out.push_str(close);
    }
    out
}
