//! DeepSeek V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>`,
//! parallel calls joined by `\n`, then `<｜tool▁calls▁end｜>`. The bars are U+FF5C and the
//! spaces U+2581; every marker is one special token of the DeepSeek vocabulary (128806-128814),
//! the fence is plain text. The V3.1 shape `NAME<｜tool▁sep｜>{...}` is read as well.

use super::sectioned::{Header, SectionRegion, SectionSyntax};
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK};

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
    args_preamble: &[],
    header: Header::DeepSeek,
};

/// The DeepSeek tool-call markers the section and `<think>` do not give (with those, special
/// tokens 128806-128809 and 128814).
pub const MARKERS: &[Marker] = &[
    Marker::special(Role::CallStart, CALL_BEGIN),
    Marker::special(Role::CallEnd, CALL_END),
    Marker::special(Role::ArgsStart, SEP),
];

/// A region opens at the section begin, at a bare call begin, or at a stray marker.
pub const TRIGGERS: &[Trigger] =
    &Trigger::markers([CALLS_BEGIN, CALL_BEGIN, CALLS_END, CALL_END, SEP]);

/// What DeepSeek V3 and V3.1 share: the markers, the triggers, `<think>`, the section.
pub const FAMILY: Syntax = Syntax {
    extra_markers: MARKERS,
    implied: Implied::all(Tokens::Special).with_call(Tokens::Unlisted),
    triggers: TRIGGERS,
    reasoning: Some(THINK),
    layout: Layout::section(CALLS_BEGIN, CALLS_END),
    ..Syntax::EMPTY
};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "deepseek_v3",
        aliases: &["deepseek_r1", "deepseekr1"],
        families: &["DeepSeek-V3", "DeepSeek-V3-0324", "DeepSeek-R1", "DeepSeek-R1-0528"],
        description: "<｜tool▁calls▁begin｜>, then per call <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME and a ```json fenced object, <｜tool▁call▁end｜>",
        template: Some(CallTemplate::new("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n", "\n```<｜tool▁call▁end｜>", "\n")),
        stops: &["<｜end▁of▁sentence｜>"],
        ..FAMILY
    },
    new_region: |ctx| Box::new(SectionRegion::new(ctx, SYNTAX)),
    write: render,
};

fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_calls(calls, content, "\n", |out, call| {
        let args = call.arguments_json();
        out.push_str(&format!("function{SEP}{}\n```json\n{args}\n```", call.name));
    })
}

/// The section, each call between `<｜tool▁call▁begin｜>` and `<｜tool▁call▁end｜>` as `write`
/// writes its inside, calls joined by `separator`.
pub fn render_calls(
    calls: &[RenderCall],
    content: Option<&str>,
    separator: &str,
    write: impl Fn(&mut String, &RenderCall),
) -> String {
    let section = (CALLS_BEGIN, CALLS_END);
    render::content_and_calls(calls, content, section, separator, |out, _, call| {
        out.push_str(CALL_BEGIN);
        write(out, call);
        out.push_str(CALL_END);
    })
}
