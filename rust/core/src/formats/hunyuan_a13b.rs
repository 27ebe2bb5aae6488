//! Hunyuan-A13B: one JSON array of `{"name": ..., "arguments": {...}}` objects inside
//! `<tool_calls>` ... `</tool_calls>` (vLLM `hunyuan_a13b`). The model wraps its answer in
//! `<answer>` ... `</answer>` after `<think>` ... `</think>`; the answer tags are markup and are
//! dropped, the text inside stays content.
//!
//! Not this format: Hunyuan HY-V3 (SGLang `hunyuan`, vLLM `hy_v3`), which writes
//! `<tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`.

use super::json_calls::{JsonRegion, JsonRegionSpec};
use super::markup::DropMarker;
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "hunyuan_a13b",
        aliases: &["hunyuan_a13b_instruct"],
        families: &["Hunyuan-A13B-Instruct"],
        description: "JSON array of {name, arguments} inside <tool_calls>...</tool_calls>; \
                  <answer> wrappers dropped",
        markers: &[
            Marker::plain(Role::SectionStart, "<tool_calls>"),
            Marker::plain(Role::SectionEnd, "</tool_calls>"),
            Marker::plain(Role::AnswerStart, "<answer>"),
            Marker::plain(Role::AnswerEnd, "</answer>"),
            Marker::plain(Role::ReasoningStart, "<think>"),
            Marker::plain(Role::ReasoningEnd, "</think>"),
        ],
        triggers: &[
            Trigger::marker("<tool_calls>"),
            Trigger::marker("<answer>"),
            Trigger::marker("</answer>"),
        ],
        reasoning: Some(("<think>", "</think>")),
        stops: &["<|eos|>"],
        template: Some(CallTemplate::JSON_OBJECT),
        arguments: ArgSyntax::Json,
        layout: Layout::section("<tool_calls>[", "]</tool_calls>"),
    },
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    if ctx.trigger > 0 {
        return Box::new(DropMarker::new(ctx));
    }
    Box::new(JsonRegion::new(
        ctx,
        JsonRegionSpec::after_marker(Some("</tool_calls>")),
    ))
}

fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    render::content_and_array(calls, content, "<tool_calls>", "</tool_calls>")
}
