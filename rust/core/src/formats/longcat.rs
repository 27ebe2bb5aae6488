//! LongCat-Flash-Chat: `<longcat_tool_call>\n{"name": ..., "arguments": {...}}\n</longcat_tool_call>`,
//! one block per call, blocks back to back (vLLM `longcat`, SGLang `LongCatDetector`). Reasoning,
//! when the model thinks, is `<longcat_think>` ... `</longcat_think>`.

use super::json_calls;
use super::Format;
use crate::render::{self};
use crate::spec::{CallTemplate, Marker, Role, Syntax, Trigger};

const TEMPLATE: CallTemplate = CallTemplate::new(
    "<longcat_tool_call>\n{\"name\": \"{name}\", \"arguments\": ",
    "}\n</longcat_tool_call>",
    "",
);

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "longcat",
        aliases: &["longcat_flash", "longcat-flash-chat"],
        families: &["LongCat-Flash-Chat"],
        description:
            "JSON object {name, arguments} inside <longcat_tool_call>...</longcat_tool_call>, \
                  one block per call",
        // The tags are listed among LongCat's added tokens; not verified offline.
        markers: &[
            Marker::special(Role::CallStart, "<longcat_tool_call>"),
            Marker::special(Role::CallEnd, "</longcat_tool_call>"),
            Marker::special(Role::ReasoningStart, "<longcat_think>"),
            Marker::special(Role::ReasoningEnd, "</longcat_think>"),
        ],
        triggers: &[Trigger::marker("<longcat_tool_call>")],
        reasoning: Some(("<longcat_think>", "</longcat_think>")),
        template: Some(TEMPLATE),
        ..Syntax::EMPTY
    },
    new_region: |ctx| json_calls::after_marker(ctx, Some("</longcat_tool_call>")),
    render: |calls, content| render::with_template(&SPEC.syntax, calls, content),
};
