//! Llama-based Nemotron (Super 49B, Ultra 253B, Nano v2): `<TOOLCALL>[{"name": ...,
//! "arguments": ...}, ...]</TOOLCALL>`, after optional `<think>...</think>` reasoning. The system
//! prompt shows `"arguments": "tool_args1"`, and the models do write the arguments as a
//! JSON-encoded string at times; that string is decoded. In the Llama-3 vocabulary `<TOOLCALL>`
//! is five ordinary tokens.

use super::json_calls::{JsonRegion, JsonRegionSpec};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};

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
        markers: &[
            Marker::plain(Role::CallStart, "<TOOLCALL>"),
            Marker::plain(Role::CallEnd, "</TOOLCALL>"),
            Marker::plain(Role::ReasoningStart, "<think>"),
            Marker::plain(Role::ReasoningEnd, "</think>"),
        ],
        triggers: &[Trigger::marker("<TOOLCALL>")],
        reasoning: Some(("<think>", "</think>")),
        stops: &["<|eot_id|>", "<|end_of_text|>"],
        template: Some(CallTemplate::JSON_OBJECT),
        arguments: ArgSyntax::Json,
        layout: Layout::section("<TOOLCALL>[", "]</TOOLCALL>"),
    },
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(JsonRegion::new(
        ctx,
        JsonRegionSpec::after_marker(Some("</TOOLCALL>")),
    ))
}

/// As the Nemotron chat template writes an assistant turn: content, a blank line, the block.
fn render(calls: &[RenderCall], content: Option<&str>) -> String {
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
