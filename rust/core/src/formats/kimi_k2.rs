//! Kimi K2 / K2-Thinking / K2.5: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>`.
//! The model's `functions.NAME:IDX` is kept as the call id (the `functions.` prefix is
//! optional); the singular `<|tool_call_section_begin|>` / `<|tool_call_section_end|>` variants
//! are accepted. A section left open by `max_tokens` keeps its complete calls.

use super::sectioned::{kimi_name, Header, SectionRegion, SectionSyntax};
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, FormatSpec, Layout, Marker, Trigger};

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const SECTION_BEGIN_SINGULAR: &str = "<|tool_call_section_begin|>";
const SECTION_END_SINGULAR: &str = "<|tool_call_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
const ARGS_BEGIN: &str = "<|tool_call_argument_begin|>";

const SYNTAX: SectionSyntax = SectionSyntax {
    section_begins: &[SECTION_BEGIN, SECTION_BEGIN_SINGULAR],
    section_ends: &[SECTION_END, SECTION_END_SINGULAR],
    call_begin: CALL_BEGIN,
    call_end: CALL_END,
    args_begin: ARGS_BEGIN,
    header: Header::KimiId,
};

pub static SPEC: FormatSpec = FormatSpec {
    name: "kimi_k2",
    aliases: &["kimi", "kimi_k2_5"],
    families: &["Kimi-K2-Instruct", "Kimi-K2-Thinking", "Kimi K2.5"],
    description: "<|tool_calls_section_begin|>, then per call <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>",
    markers: &[
        Marker { role: "section_start", text: SECTION_BEGIN, special_token: true },
        Marker { role: "section_end", text: SECTION_END, special_token: true },
        Marker { role: "section_start", text: SECTION_BEGIN_SINGULAR, special_token: false },
        Marker { role: "section_end", text: SECTION_END_SINGULAR, special_token: false },
        Marker { role: "call_start", text: CALL_BEGIN, special_token: true },
        Marker { role: "call_end", text: CALL_END, special_token: true },
        Marker { role: "args_start", text: ARGS_BEGIN, special_token: true },
        Marker { role: "reasoning_start", text: "<think>", special_token: true },
        Marker { role: "reasoning_end", text: "</think>", special_token: true },
    ],
    triggers: &[
        Trigger::marker(SECTION_BEGIN),
        Trigger::marker(SECTION_BEGIN_SINGULAR),
        Trigger::marker(CALL_BEGIN),
        Trigger::marker(SECTION_END),
        Trigger::marker(SECTION_END_SINGULAR),
        Trigger::marker(CALL_END),
        Trigger::marker(ARGS_BEGIN),
    ],
    name_encoding: "call_id",
    argument_encoding: "json_object",
    call_separator: None,
    reasoning: Some(("<think>", "</think>")),
    template: Some(CallTemplate {
        begin: "<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>",
        style: "json",
        end: "<|tool_call_end|>",
        separator: "",
    }),
    layout: Layout::section(SECTION_BEGIN, SECTION_END),
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(SectionRegion::new(ctx, SYNTAX))
}

/// As the Kimi chat template writes calls. A call's own id is kept when it is a Kimi id for the
/// same function; otherwise the id is `functions.NAME:INDEX`.
fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(SECTION_BEGIN);
    for (i, call) in calls.iter().enumerate() {
        out.push_str(CALL_BEGIN);
        match call.id.as_deref() {
            Some(id) if kimi_name(id) == Some(call.name.as_str()) => out.push_str(id),
            _ => out.push_str(&format!("functions.{}:{i}", call.name)),
        }
        out.push_str(ARGS_BEGIN);
        out.push_str(&call.arguments_json());
        out.push_str(CALL_END);
    }
    out.push_str(SECTION_END);
    out
}
