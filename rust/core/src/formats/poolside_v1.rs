//! Poolside Laguna (vLLM / SGLang / TensorRT-LLM / Dynamo `poolside_v1`): the GLM key/value body
//! under GLM's call tags, with the argument tags written as text:
//!
//! ```text
//! XS.2, M.1:     <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>
//! XS-2.1, S-2.1: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>
//! ```
//!
//! The Laguna templates differ only in the newlines, and the reader accepts either spacing. Values
//! are raw text typed by the tool's schema, strings kept exactly (vLLM's `poolside_v1`; SGLang's
//! also drops one newline on each side, which the templates never write). `<tool_call>`,
//! `</tool_call>`, `<think>` and `</think>` are single tokens of the Laguna vocabulary (a public
//! Laguna renderer looks them up by id, as vLLM's reasoning parser does for `<think>`); the
//! `<arg_key>` / `<arg_value>` tags are plain text that tokenises into several pieces. The
//! generation prompt ends in `<think>` (thinking on) or `</think>` (off), so a completion may start
//! inside reasoning. Read by [`super::glm`]'s region with these tags.

use super::glm;
use super::Format;
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Implied, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "poolside_v1",
        aliases: &["poolside", "laguna"],
        families: &["Laguna-XS.2", "Laguna-XS-2.1", "Laguna-S-2.1", "Laguna-M.1"],
        description:
            "<tool_call>NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n</tool_call> \
                      (argument tags as text), values typed by the tool schema",
        implied: Implied::all(Tokens::Special).with_params(Tokens::Plain),
        triggers: &[Trigger::marker("<tool_call>")],
        reasoning: Some(THINK),
        template: Some(CallTemplate::new("<tool_call>{name}", "</tool_call>", "\n")),
        arguments: ArgSyntax::XmlParams(glm::PARAMS),
        ..Syntax::EMPTY
    },
    new_region: glm::new_region,
    write: render,
};

/// As the Laguna XS.2 template writes calls: the name and each tag pair on their own lines;
/// strings raw, other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    glm::render_tags(&SPEC.syntax, calls, content, "\n")
}
