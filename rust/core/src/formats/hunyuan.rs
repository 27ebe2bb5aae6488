//! Tencent Hunyuan HY3 (`hunyuan`; vLLM `hy_v3`, SGLang `hunyuan`) and HY4 (`hy_v4`): GLM-style
//! key/value tags inside a `<tool_calls>` section.
//!
//! ```text
//! hunyuan: <tool_calls>\n<tool_call>NAME<tool_sep>\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n</tool_call>\n</tool_calls>
//! hy_v4:   <tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>K</arg_key:opensource><arg_value:opensource>V</arg_value:opensource></tool_call:opensource></tool_calls:opensource>
//! ```
//!
//! Several `<tool_call>` blocks in one section are parallel calls. Values are raw text typed by
//! the tool's schema (strings kept exactly). The name ends at `<tool_sep>` (HY3) or at the first
//! key / the call's end (HY4; HY3 output without `<tool_sep>` is read too). A `<tool_call>`
//! written without the section is read as one call. Every tag is a special token of the
//! tokenizers (SGLang resolves them from the vocab; vLLM's `hy_v4` test vocabulary holds each
//! opening and closing form). HY4's shipping tokenizer suffixes every tag with `:opensource`
//! (vLLM's `hy_v4` tests); SGLang notes the shipping HY3 tokenizer may carry such a suffix too,
//! which `hunyuan` does not read. Read by [`super::glm`]'s region.

use super::glm;
use super::Format;
use crate::render::RenderCall;
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax, Tokens, Trigger,
    THINK,
};

pub static HUNYUAN: Format = Format {
    syntax: Syntax {
        name: "hunyuan",
        aliases: &["hy3", "hunyuan_hy3", "hy3_preview"],
        families: &["Hy3-preview", "Hunyuan HY3"],
        description:
            "<tool_calls><tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value>\
                  </tool_call></tool_calls>, values typed by the tool schema",
        extra_markers: &[Marker::special(Role::NameEnd, "<tool_sep>")],
        implied: Implied::all(Tokens::Special),
        triggers: &Trigger::markers(["<tool_calls>", "<tool_call>"]),
        reasoning: Some(THINK),
        stops: &[],
        template: Some(CallTemplate::new(
            "<tool_call>{name}<tool_sep>\n",
            "</tool_call>",
            "\n",
        )),
        arguments: ArgSyntax::XmlParams(super::glm::PARAMS),
        layout: Layout::section("<tool_calls>\n", "\n</tool_calls>"),
    },
    new_region: glm::new_region,
    write: render_hy3,
};

pub static HY_V4: Format = Format {
    syntax: Syntax {
        name: "hy_v4",
        aliases: &["hy4", "hunyuan_hy4"],
        families: &["Hunyuan HY4"],
        description: "<tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>K</arg_key:opensource>\
                      <arg_value:opensource>V</arg_value:opensource></tool_call:opensource></tool_calls:opensource>, \
                      values typed by the tool schema",
        extra_markers: &[
        ],
        implied: Implied::all(Tokens::Special),
        triggers: &Trigger::markers(["<tool_calls:opensource>", "<tool_call:opensource>"]),
        reasoning: Some(("<think:opensource>", "</think:opensource>")),
        stops: &[],
        template: Some(CallTemplate::new("<tool_call:opensource>{name}", "</tool_call:opensource>", "")),
        arguments: ArgSyntax::XmlParams(ParamTags::new(
            "<arg_key:opensource>{key}</arg_key:opensource>{ws}<arg_value:opensource>",
            "</arg_value:opensource>",
        )),
        layout: Layout::section("<tool_calls:opensource>", "</tool_calls:opensource>"),
    },
    new_region: glm::new_region,
    write: render_hy4,
};

/// The layout of the HY3 parsers' docs and tests: the section, each call and each tag on its own
/// line; strings raw, other values as JSON.
fn render_hy3(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    glm::render_tags(&HUNYUAN.syntax, calls, content, "\n")
}

/// As vLLM's `hy_v4` tests write calls: no whitespace between tags.
fn render_hy4(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    glm::render_tags(&HY_V4.syntax, calls, content, "")
}
