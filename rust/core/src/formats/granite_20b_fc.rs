//! IBM Granite-20B-FunctionCalling (vLLM `granite-20b-fc`): each call is `<function_call>`
//! followed by one JSON object `{"name": ..., "arguments": {...}}`, calls separated by a newline:
//!
//! ```text
//! Let me check.
//! <function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! <function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}
//! ```
//!
//! There is no closing marker: a call ends with its JSON object. `<function_call>` is written as
//! text (not a special token of the Granite 20B vocabulary, as far as the peers show). Read by
//! [`super::json_calls`].

use super::json_calls;
use super::xml_invoke::python_json;
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Implied, Syntax, Tokens, Trigger};

const START: &str = "<function_call>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "granite_20b_fc",
        aliases: &["granite_20b_functioncalling"],
        families: &["granite-20b-functioncalling"],
        description:
            "<function_call> {\"name\": ..., \"arguments\": {...}} per call, newline-separated",
        implied: Implied::all(Tokens::Plain),
        triggers: &[Trigger::marker(START)],
        template: Some(CallTemplate::new(
            "<function_call> {\"name\": \"{name}\", \"arguments\": ",
            "}",
            "\n",
        )),
        stops: &["<|endoftext|>"],
        ..Syntax::EMPTY
    },
    new_region: json_calls::after_trigger,
    write: render,
};

/// As vLLM's samples write calls: each on its own line after the content.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render::each_on_its_line(calls, content, |out, call| {
        out.push_str(START);
        out.push(' ');
        out.push_str(&format!(
            "{{\"name\": {}, \"arguments\": {}}}",
            crate::json::quote(&call.name),
            python_json(&call.arguments)
        ));
    })
}
