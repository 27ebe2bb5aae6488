//! Model-native text for tool calls: what the model would have written. Used to put assistant
//! tool calls back into a prompt, and to test that parsing inverts rendering.

use serde_json::Value;

use crate::spec::{ArgSyntax, ParamTags, Syntax};

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

/// Content first, then each call as the syntax's template writes it: `begin`, the arguments, `end`,
/// joined by the separator, inside the layout's section if it has one. Arguments are JSON, or for
/// XML parameters one parameter per line in the syntax's [`crate::spec::ParamTags`] (a string raw,
/// any other value as `tojson`, a padded value between newlines; objects and arrays as JSON, not
/// nested tags). A format whose chat template spaces its tags otherwise writes its own renderer.
pub fn with_template(syntax: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    let Some(template) = &syntax.template else {
        return out;
    };
    let section = syntax.layout.section.filter(|_| !calls.is_empty());
    if let Some((open, _)) = section {
        out.push_str(open);
    }
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
        match syntax.arguments.params() {
            Some(params) => write_params(&mut out, params, &call.arguments),
            None => out.push_str(&call.arguments_json()),
        }
        out.push_str(template.end);
    }
    if let Some((_, close)) = section {
        out.push_str(close);
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

/// `content`, then (when there are calls) `open`, each call as `write` writes it (given its
/// position), joined by `separator`, and `close`: the frame of the hand-written renderers.
pub fn content_and_calls(
    calls: &[RenderCall],
    content: Option<&str>,
    (open, close): (&str, &str),
    separator: &str,
    mut write: impl FnMut(&mut String, usize, &RenderCall),
) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(open);
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        write(&mut out, i, call);
    }
    out.push_str(close);
    out
}

/// `content`, then each call as `write` writes it, each on a line of its own.
pub fn each_on_its_line(
    calls: &[RenderCall],
    content: Option<&str>,
    mut write: impl FnMut(&mut String, &RenderCall),
) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for call in calls {
        if !out.is_empty() {
            out.push('\n');
        }
        write(&mut out, call);
    }
    out
}

fn write_params(out: &mut String, params: &ParamTags, arguments: &Value) {
    let pad = if params.pad { "\n" } else { "" };
    for (key, value) in arguments.as_object().into_iter().flatten() {
        let string = if value.is_string() { "true" } else { "false" };
        let open = params
            .open
            .replace("{ws}", "")
            .replace("{string}", string)
            .replace("{type}", crate::spec::type_name(value));
        out.push_str(&open.replace("{key}", key));
        out.push_str(pad);
        out.push_str(&crate::xml_value::template_text(value));
        out.push_str(pad);
        out.push_str(&params.close.replace("{key}", key));
        if params.between {
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{parse, ParserConfig};
    use crate::tools::ToolSet;

    /// The XML-parameter path, as a format without its own renderer would use it: what it writes
    /// in a syntax's tags, that syntax's parser reads back.
    #[test]
    fn template_parameters_parse_back() {
        let arguments = serde_json::json!({"q": "a <b>\nc", "n": 3, "o": {"k": [true, null]}});
        let calls = [RenderCall {
            name: "f".into(),
            arguments: arguments.clone(),
            id: None,
        }];
        let tools = ToolSet::from_json(&serde_json::json!([{"type": "function", "function": {
            "name": "f", "parameters": {"type": "object", "properties": {
                "q": {"type": "string"}, "n": {"type": "integer"}, "o": {"type": "object"}}}}}]))
        .unwrap();
        for name in ["qwen3_coder", "glm45", "minimax_m2", "deepseek_v3_2"] {
            let config = ParserConfig::new(name, tools.clone(), None).unwrap();
            let text = with_template(&config.spec.syntax, &calls, Some("Hi"));
            let message = parse(&config, &text);
            assert_eq!(message.content.trim_end(), "Hi", "{name}: {text}");
            assert_eq!(message.tool_calls.len(), 1, "{name}: {text}");
            let parsed: Value = serde_json::from_str(&message.tool_calls[0].arguments).unwrap();
            assert_eq!(parsed, arguments, "{name}: {text}");
        }
    }
}
