//! LongCat-Flash-Chat: `<longcat_tool_call>\n{"name": ..., "arguments": {...}}\n</longcat_tool_call>`,
//! one block per call, blocks back to back (vLLM `longcat`, SGLang `LongCatDetector`). Reasoning,
//! when the model thinks, is `<longcat_think>` ... `</longcat_think>`.

use super::json_calls::{JsonRegion, JsonRegionSpec};
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, FormatSpec, Layout, Marker, Trigger};

const TEMPLATE: CallTemplate = CallTemplate {
    begin: "<longcat_tool_call>\n{\"name\": \"{name}\", \"arguments\": ",
    style: "json",
    end: "}\n</longcat_tool_call>",
    separator: "",
};

pub static SPEC: FormatSpec = FormatSpec {
    name: "longcat",
    aliases: &["longcat_flash", "longcat-flash-chat"],
    families: &["LongCat-Flash-Chat"],
    description:
        "JSON object {name, arguments} inside <longcat_tool_call>...</longcat_tool_call>, \
                  one block per call",
    // The tags are listed among LongCat's added tokens; not verified offline.
    markers: &[
        Marker {
            role: "call_start",
            text: "<longcat_tool_call>",
            special_token: true,
        },
        Marker {
            role: "call_end",
            text: "</longcat_tool_call>",
            special_token: true,
        },
        Marker {
            role: "reasoning_start",
            text: "<longcat_think>",
            special_token: true,
        },
        Marker {
            role: "reasoning_end",
            text: "</longcat_think>",
            special_token: true,
        },
    ],
    triggers: &[Trigger::marker("<longcat_tool_call>")],
    name_encoding: "json_field",
    argument_encoding: "json_object",
    call_separator: Some(""),
    reasoning: Some(("<longcat_think>", "</longcat_think>")),
    template: Some(TEMPLATE),
    layout: Layout::BARE,
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(JsonRegion::new(
        ctx,
        JsonRegionSpec::after_marker(Some("</longcat_tool_call>")),
    ))
}

fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    render::with_template(&TEMPLATE, calls, content)
}
