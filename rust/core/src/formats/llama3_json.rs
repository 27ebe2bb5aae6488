//! Llama 3.1-3.3 JSON tool calls: `{"name": ..., "parameters": {...}}` at the start of the
//! output, optionally after `<|python_tag|>`; parallel calls separated by `;`.

use super::json_calls::{JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "llama3_json",
        aliases: &["llama3.1", "llama3.2", "llama3.3", "llama3_1", "llama"],
        families: &["Llama 3.1", "Llama 3.2", "Llama 3.3"],
        description: "JSON object {name, parameters} at the start of the output or after <|python_tag|>; ';' between calls",
        extra_markers: &[
            Marker::special(Role::CallStart, "<|python_tag|>"),
            Marker::special(Role::TurnEnd, "<|eom_id|>"),
        ],
        triggers: &[Trigger::marker("<|python_tag|>"), Trigger::at_start("{")],
        template: Some(CallTemplate::new("{\"name\": \"{name}\", \"parameters\": ", "}", "; ")),
        layout: Layout::section("<|python_tag|>", ""),
        stops: &["<|eot_id|>", "<|end_of_text|>"],
        ..Syntax::EMPTY
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let consume_trigger = ctx.trigger == 0;
    Box::new(JsonRegion::new(
        ctx,
        JsonRegionSpec {
            consume_trigger,
            payload: Payload::Sequence,
            end: None,
            keys: STANDARD_KEYS,
        },
    ))
}

fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let body: Vec<String> = calls
        .iter()
        .map(|c| render::call_object(c, "parameters"))
        .collect();
    let mut out = String::from(content.unwrap_or(""));
    if !calls.is_empty() {
        out.push_str("<|python_tag|>");
        out.push_str(&body.join("; "));
    }
    out
}
