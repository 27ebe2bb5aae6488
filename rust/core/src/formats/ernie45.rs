//! Baidu ERNIE 4.5 (vLLM `ernie45`): hermes-style blocks, a JSON object per `<tool_call>`:
//!
//! ```text
//! I need to call two tools.
//! </think>
//!
//! <tool_call>
//! {"name": "get_current_temperature", "arguments": {"location": "Beijing"}}
//! </tool_call>
//! ```
//!
//! A plain answer is wrapped in `<response>` ... `</response>`; those tags are markup and are
//! dropped, the text inside stays content. The thinking models open reasoning in the prompt and
//! close it with `</think>` (use reasoning `closing_only`). Read by [`super::json_calls`].

use super::json_calls;
use super::markup;
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Implied, Marker, Role, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "ernie45",
        aliases: &["ernie4_5", "ernie-4.5", "ernie45_moe"],
        families: &["ERNIE-4.5", "ERNIE-4.5-21B-A3B-Thinking"],
        description: "JSON object {name, arguments} inside <tool_call>...</tool_call>; <response> wrappers dropped",
        extra_markers: &[
            Marker::special(Role::AnswerStart, "<response>"),
            Marker::special(Role::AnswerEnd, "</response>"),
        ],
        implied: Implied::all(Tokens::Special),
        triggers: &Trigger::markers(["<tool_call>", "<response>", "</response>"]),
        reasoning: Some(THINK),
        stops: &["</s>"],
        template: Some(CallTemplate::new("<tool_call>\n{\"name\": \"{name}\", \"arguments\": ", "}\n</tool_call>", "\n")),
        ..Syntax::EMPTY
    },
    new_region: |ctx| markup::calls_or_wrapper(ctx, json_calls::after_trigger),
    write: render,
};

/// One block per call, each on its own lines, after the content.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render::each_on_its_line(calls, content, |out, call| {
        out.push_str("<tool_call>\n");
        out.push_str(&render::call_object(call, "arguments"));
        out.push_str("\n</tool_call>");
    })
}
