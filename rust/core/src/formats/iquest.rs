//! IQuest-Q1 (SGLang `iquest_q1`): the GLM-4.7 key/value body inside its own call tokens:
//!
//! ```text
//! <iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></iquest_tool_call>
//! ```
//!
//! One block per call. Values are raw text typed by the tool's schema (strings kept exactly,
//! whitespace included). `<iquest_tool_call>`, `</iquest_tool_call>`, `<think>` and `</think>`
//! are tokens of the IQuest-Q1 vocabulary (looked up by id in IQuest's own vLLM plugin and in
//! llama.cpp-style loaders); the argument tags are assumed to be tokens as in GLM. Read by
//! [`super::glm`]'s region with these tags.

use super::glm;
use super::Format;
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Implied, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "iquest_q1",
        aliases: &["iquest", "iquest-q1"],
        families: &["IQuest-Q1"],
        description:
            "<iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></iquest_tool_call>, \
                      values typed by the tool schema",
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker("<iquest_tool_call>")],
        reasoning: Some(THINK),
        stops: &["<|iquest_end|>"],
        template: Some(CallTemplate::new("<iquest_tool_call>{name}", "</iquest_tool_call>", "")),
        arguments: ArgSyntax::XmlParams(super::glm::PARAMS),
        ..Syntax::EMPTY
    },
    new_region: glm::new_region,
    write: render,
};

/// The compact GLM-4.7 layout under IQuest's call tokens: strings raw, other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    glm::render_tags(&SPEC.syntax, calls, content, "")
}
