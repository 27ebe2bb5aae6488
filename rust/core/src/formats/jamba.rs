//! AI21 Jamba 1.5-1.7: `<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>`.
//! vLLM's Jamba parser looks both tags up in the vocabulary, so they are special tokens there;
//! SentencePiece decoding often leaves a space before the opening tag, which is content.

use super::json_calls::{JsonRegion, JsonRegionSpec};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "jamba",
        aliases: &["jamba1.5", "jamba1.6", "jamba1.7"],
        families: &["AI21 Jamba 1.5", "AI21 Jamba 1.6", "AI21 Jamba 1.7"],
        description: "JSON call array inside <tool_calls>...</tool_calls>",
        markers: &[
            Marker::special(Role::CallStart, "<tool_calls>"),
            Marker::special(Role::CallEnd, "</tool_calls>"),
        ],
        triggers: &[Trigger::marker("<tool_calls>")],
        reasoning: None,
        stops: &[],
        template: Some(CallTemplate::JSON_OBJECT),
        arguments: ArgSyntax::Json,
        layout: Layout::section("<tool_calls>[", "]</tool_calls>"),
    },
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(JsonRegion::new(
        ctx,
        JsonRegionSpec::after_marker(Some("</tool_calls>")),
    ))
}

fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    render::content_and_array(calls, content, "<tool_calls>", "</tool_calls>")
}
