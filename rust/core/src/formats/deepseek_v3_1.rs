//! DeepSeek V3.1 / V3.1-Terminus / V3.2-Exp: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>`
//! (no type, no fence). Same special tokens as DeepSeek V3; in thinking mode the prompt opens
//! `<think>`. The V3 shape `function<｜tool▁sep｜>NAME\n```json ...` is read as well.

use super::deepseek_v3::{
    CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, MARKERS, SEP, SYNTAX, TRIGGERS,
};
use super::sectioned::SectionRegion;
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Layout, Syntax};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "deepseek_v3_1",
        aliases: &["deepseekv31", "deepseek_v31"],
        families: &["DeepSeek-V3.1", "DeepSeek-V3.1-Terminus", "DeepSeek-V3.2-Exp"],
        description: "<｜tool▁calls▁begin｜>, then per call <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>",
        markers: MARKERS,
        triggers: TRIGGERS,
        reasoning: Some(("<think>", "</think>")),
        stops: &["<｜end▁of▁sentence｜>"],
        template: Some(CallTemplate::new("<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "")),
        arguments: ArgSyntax::Json,
        layout: Layout::section(CALLS_BEGIN, CALLS_END),
    },
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(SectionRegion::new(ctx, SYNTAX))
}

fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(CALLS_BEGIN);
    for call in calls {
        out.push_str(CALL_BEGIN);
        out.push_str(&call.name);
        out.push_str(SEP);
        out.push_str(&call.arguments_json());
        out.push_str(CALL_END);
    }
    out.push_str(CALLS_END);
    out
}
