//! DeepSeek V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>`,
//! parallel calls joined by `\n`, then `<｜tool▁calls▁end｜>`. The bars are U+FF5C and the
//! spaces U+2581; every marker is one special token of the DeepSeek vocabulary (128806-128814),
//! the fence is plain text. The V3.1 shape `NAME<｜tool▁sep｜>{...}` is read as well.

use super::sectioned::{Header, SectionRegion, SectionSyntax};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
pub const CALLS_END: &str = "<｜tool▁calls▁end｜>";
pub const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
pub const CALL_END: &str = "<｜tool▁call▁end｜>";
pub const SEP: &str = "<｜tool▁sep｜>";

pub const SYNTAX: SectionSyntax = SectionSyntax {
    section_begins: &[CALLS_BEGIN],
    section_ends: &[CALLS_END],
    call_begin: CALL_BEGIN,
    call_end: CALL_END,
    args_begin: SEP,
    header: Header::DeepSeek,
};

/// The DeepSeek tool-call markers (special tokens 128806-128809 and 128814) and `<think>`.
pub const MARKERS: &[Marker] = &[
    Marker::special(Role::SectionStart, CALLS_BEGIN),
    Marker::special(Role::SectionEnd, CALLS_END),
    Marker::special(Role::CallStart, CALL_BEGIN),
    Marker::special(Role::CallEnd, CALL_END),
    Marker::special(Role::ArgsStart, SEP),
    Marker::special(Role::ReasoningStart, "<think>"),
    Marker::special(Role::ReasoningEnd, "</think>"),
];

/// A region opens at the section begin, at a bare call begin, or at a stray marker.
pub const TRIGGERS: &[Trigger] = &[
    Trigger::marker(CALLS_BEGIN),
    Trigger::marker(CALL_BEGIN),
    Trigger::marker(CALLS_END),
    Trigger::marker(CALL_END),
    Trigger::marker(SEP),
];

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "deepseek_v3",
        aliases: &["deepseekv3", "deepseek_r1", "deepseekr1"],
        families: &["DeepSeek-V3", "DeepSeek-V3-0324", "DeepSeek-R1", "DeepSeek-R1-0528"],
        description: "<｜tool▁calls▁begin｜>, then per call <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME and a ```json fenced object, <｜tool▁call▁end｜>",
        markers: MARKERS,
        triggers: TRIGGERS,
        reasoning: Some(("<think>", "</think>")),
        stops: &["<｜end▁of▁sentence｜>"],
        template: Some(CallTemplate::new("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n", "\n```<｜tool▁call▁end｜>", "\n")),
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
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(CALL_BEGIN);
        out.push_str("function");
        out.push_str(SEP);
        out.push_str(&call.name);
        out.push_str("\n```json\n");
        out.push_str(&call.arguments_json());
        out.push_str("\n```");
        out.push_str(CALL_END);
    }
    out.push_str(CALLS_END);
    out
}
