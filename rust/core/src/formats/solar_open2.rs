//! Upstage Solar Open 2 (vLLM and SGLang `solar_open2`, from Upstage's vLLM patch set): the name
//! on the call's first line, then key/value markers:
//!
//! ```text
//! <|tool_call:start|>NAME
//! <|tool_arg:start|>K<|tool_arg:value|>V<|tool_arg:end|>
//! <|tool_call:end|>
//! ```
//!
//! Every marker, `<|think:start|>` / `<|think:end|>` included, is a single special token (the
//! engines' parsers say so; their tests encode each as one token). Values are raw text typed by
//! the tool's schema, strings kept exactly (the engines do not strip them). The engines also take
//! a call opened by a Markdown fence carrying the name (```` ```NAME ```` before the first
//! argument marker); that degenerate shape is not read here. Read by [`super::glm`]'s region,
//! the value marker ending the key.

use super::glm;
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Implied, ParamTags, Syntax, Tokens, Trigger};
use crate::xml_value::template_text;

const CALL_START: &str = "<|tool_call:start|>";
const CALL_END: &str = "<|tool_call:end|>";
const PARAMS: ParamTags = ParamTags::new(
    "<|tool_arg:start|>{key}<|tool_arg:value|>",
    "<|tool_arg:end|>",
);

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "solar_open2",
        aliases: &["solar-open2", "solar_open_2", "solar-open-2"],
        families: &["Solar-Open2-250B"],
        description:
            "<|tool_call:start|>NAME\\n<|tool_arg:start|>K<|tool_arg:value|>V<|tool_arg:end|>\
                      <|tool_call:end|>, values typed by the tool schema",
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker(CALL_START)],
        reasoning: Some(("<|think:start|>", "<|think:end|>")),
        template: Some(CallTemplate::new(
            "<|tool_call:start|>{name}\n",
            CALL_END,
            "\n",
        )),
        arguments: ArgSyntax::XmlParams(PARAMS),
        ..Syntax::EMPTY
    },
    new_region: glm::new_region,
    write: render,
};

/// The layout of the engines' examples: the name on the call's first line, one argument per line,
/// the closing marker on its own line; strings raw, other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render::content_and_calls(calls, content, ("", ""), "\n", |out, _, call| {
        out.push_str(CALL_START);
        out.push_str(&call.name);
        out.push('\n');
        for (key, value) in call.arguments.as_object().into_iter().flatten() {
            out.push_str(&PARAMS.open.replace("{key}", key));
            out.push_str(&template_text(value));
            out.push_str(PARAMS.close);
            out.push('\n');
        }
        out.push_str(CALL_END);
    })
}
