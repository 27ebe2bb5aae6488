//! IBM Granite 3.x: `<|tool_call|>[{"name": ..., "arguments": {...}}, ...]` with no closing
//! marker. Granite 3.0 writes the special token `<|tool_call|>`; 3.1-3.3 may write the plain text
//! `<tool_call>` instead (vLLM's granite parser accepts both), and when the special token was
//! skipped on decode the array stands bare at the start of the output. The models sometimes put
//! `"arguments"` before `"name"`. A `</tool_call>` after the array (the Granite 4 habit) is taken as
//! its end; Granite 4 proper is the `hermes` format.

use super::json_calls::{JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self};
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "granite",
        aliases: &[
            "granite3",
            "granite3.0",
            "granite3.1",
            "granite3.2",
            "granite3.3",
        ],
        families: &["Granite 3.0", "Granite 3.1", "Granite 3.2", "Granite 3.3"],
        description:
            "<|tool_call|> (or plain <tool_call>) then a JSON call array, no closing marker",
        extra_markers: &[
            Marker::special(Role::CallStart, "<|tool_call|>"),
            Marker::plain(Role::CallStart, "<tool_call>"),
            Marker::plain(Role::CallEnd, "</tool_call>"),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Plain),
        triggers: &[
            Trigger::marker("<|tool_call|>"),
            Trigger::marker("<tool_call>"),
            Trigger::at_start("["),
        ],
        reasoning: Some(THINK),
        stops: &["<|end_of_text|>"],
        template: Some(CallTemplate::JSON_OBJECT),
        layout: Layout::section("<|tool_call|>[", "]"),
        ..Syntax::EMPTY
    },
    new_region,
    write: render::with_template,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let spec = match ctx.trigger {
        0 => JsonRegionSpec::after_marker(None),
        1 => JsonRegionSpec::after_marker(Some("</tool_call>")),
        _ => JsonRegionSpec {
            consume_trigger: false,
            payload: Payload::Array,
            end: None,
            keys: STANDARD_KEYS,
        },
    };
    Box::new(JsonRegion::new(ctx, spec))
}
