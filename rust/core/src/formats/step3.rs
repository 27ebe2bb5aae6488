//! StepFun Step-3: steptml invokes inside DeepSeek-style section tokens (the bars are U+FF5C, the
//! separator `_` is ASCII, not DeepSeek's U+2581):
//!
//! ```text
//! <｜tool_calls_begin｜>
//! <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
//! <steptml:parameter name="K">V</steptml:parameter>
//! </steptml:invoke><｜tool_call_end｜>
//! <｜tool_calls_end｜>
//! ```
//!
//! Several `<｜tool_call_begin｜>` ... `<｜tool_call_end｜>` entries in one section are parallel
//! calls. Values are raw text typed by the tool's schema: a string value is kept exactly
//! (whitespace included, as vLLM does; SGLang strips it), any other value is read trimmed.
//! The per-call wrapper is formatting: `<｜tool_call_begin｜>` and `function<｜tool_sep｜>` may be
//! missing (vLLM's tests write calls without them, and a lone `<｜tool_sep｜>` between calls), and
//! `<｜tool_call_end｜>` in place of a missing `</steptml:invoke>` ends the call. The entry type is not checked (only `function` exists).
//! The five `｜` markers are Step-3 special tokens (vLLM's `step3` parser disables
//! `skip_special_tokens` for them; `<｜tool_sep｜>` assumed alike); the steptml tags are text, read by
//! [`super::xml_invoke`]. Reasoning ends with the `</think>` token.

use super::xml_invoke::{write_params, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax, Tokens, Trigger,
    THINK,
};

const SECTION_START: &str = "<｜tool_calls_begin｜>";
const SECTION_END: &str = "<｜tool_calls_end｜>";
const CALL_START: &str = "<｜tool_call_begin｜>";
const CALL_END: &str = "<｜tool_call_end｜>";
const SEP: &str = "<｜tool_sep｜>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "step3",
        aliases: &["step-3", "step_3"],
        families: &["Step-3"],
        description: "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=...>\
                      <steptml:parameter name=...>V</steptml:parameter></steptml:invoke><｜tool_call_end｜>\
                      <｜tool_calls_end｜>, values typed by the tool schema",
        extra_markers: &[
            Marker::special(Role::CallWrapperStart, CALL_START),
            Marker::special(Role::CallWrapperEnd, CALL_END),
            Marker::special(Role::TypeSeparator, SEP),
            Marker::plain(Role::CallStart, "<steptml:invoke"),
            Marker::plain(Role::CallEnd, "</steptml:invoke>"),
        ],
        implied: Implied::all(Tokens::Special).with_call(Tokens::Unlisted).with_params(Tokens::Plain),
        triggers: &[Trigger::marker(SECTION_START)],
        reasoning: Some(THINK),
        stops: &[],
        template: Some(CallTemplate::new("<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"{name}\">\n", "</steptml:invoke><｜tool_call_end｜>", "\n")),
        arguments: ArgSyntax::XmlParams(ParamTags::new(
            "<steptml:parameter name=\"{key}\">",
            "</steptml:parameter>",
        )),
        layout: Layout::section("<｜tool_calls_begin｜>\n", "\n<｜tool_calls_end｜>"),
    },
    new_region: |ctx| Box::new(InvokeRegion::new(ctx, InvokeRegionSpec { separators: vec![ ctx.lit(CALL_START), ctx.lit("function<｜tool_sep｜>"), ctx.lit(SEP), ctx.lit(CALL_END), ], ..InvokeRegionSpec::of(ctx, "Step3") })),
    write: render,
};

/// The layout SGLang's `step3` detector documents: the section and each entry on their own
/// lines, one parameter per line; strings raw, other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let open = format!("{SECTION_START}\n");
    let section = (open.as_str(), SECTION_END);
    render::content_and_calls(calls, content, section, "", |out, _, call| {
        out.push_str(&format!(
            "{CALL_START}function{SEP}<steptml:invoke name=\"{}\">\n",
            call.name
        ));
        if let Some(map) = call.arguments.as_object() {
            write_params(out, map, "steptml:parameter");
        }
        out.push_str("</steptml:invoke>");
        out.push_str(CALL_END);
        out.push('\n');
    })
}
