//! Llama-based Nemotron (Super 49B, Ultra 253B, Nano v2): `<TOOLCALL>[{"name": ...,
//! "arguments": ...}, ...]</TOOLCALL>`, after optional `<think>...</think>` reasoning. The system
//! prompt shows `"arguments": "tool_args1"`, and the models do write the arguments as a
//! JSON-encoded string at times; that string is decoded. In the Llama-3 vocabulary `<TOOLCALL>`
//! is five ordinary tokens.

use super::json_calls;
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "nemotron_deci",
        aliases: &["nemotron", "llama_nemotron", "nemotron_json"],
        families: &[
            "Llama-3.3-Nemotron-Super-49B",
            "Llama-3.1-Nemotron-Ultra-253B",
            "Nemotron Nano v2",
        ],
        description: "JSON call array inside <TOOLCALL>...</TOOLCALL>; arguments an object or a JSON-encoded string",
        extra_markers: &[
            Marker::plain(Role::CallStart, "<TOOLCALL>"),
            Marker::plain(Role::CallEnd, "</TOOLCALL>"),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Plain),
        triggers: &[Trigger::marker("<TOOLCALL>")],
        reasoning: Some(THINK),
        stops: &["<|eot_id|>", "<|end_of_text|>"],
        template: Some(CallTemplate::JSON_OBJECT),
        layout: Layout::section("<TOOLCALL>[", "]</TOOLCALL>"),
        ..Syntax::EMPTY
    },
    new_region: json_calls::after_trigger,
    write: render,
};

/// As the Nemotron chat template writes an assistant turn: content, a blank line, the block.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or("").trim());
    if !calls.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str("<TOOLCALL>");
        out.push_str(&render::call_array(calls, "arguments"));
        out.push_str("</TOOLCALL>");
    }
    out
}
