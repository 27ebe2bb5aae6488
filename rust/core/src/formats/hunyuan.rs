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

use serde_json::Value;

use super::glm::{self, GlmTags};
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, FormatSpec, Layout, Marker, Trigger};

const HY3: GlmTags = GlmTags {
    call_start: "<tool_call>",
    call_end: "</tool_call>",
    key_start: "<arg_key>",
    key_end: "</arg_key>",
    value_start: "<arg_value>",
    value_end: "</arg_value>",
    name_sep: Some("<tool_sep>"),
    section: Some(("<tool_calls>", "</tool_calls>")),
};

const HY4: GlmTags = GlmTags {
    call_start: "<tool_call:opensource>",
    call_end: "</tool_call:opensource>",
    key_start: "<arg_key:opensource>",
    key_end: "</arg_key:opensource>",
    value_start: "<arg_value:opensource>",
    value_end: "</arg_value:opensource>",
    name_sep: None,
    section: Some(("<tool_calls:opensource>", "</tool_calls:opensource>")),
};

const fn special(role: &'static str, text: &'static str) -> Marker {
    Marker {
        role,
        text,
        special_token: true,
    }
}

pub static HUNYUAN: FormatSpec = FormatSpec {
    name: "hunyuan",
    aliases: &["hy_v3", "hy3", "hunyuan_hy3", "hy3_preview"],
    families: &["Hy3-preview", "Hunyuan HY3"],
    description:
        "<tool_calls><tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value>\
                  </tool_call></tool_calls>, values typed by the tool schema",
    markers: &[
        special("section_start", "<tool_calls>"),
        special("section_end", "</tool_calls>"),
        special("call_start", "<tool_call>"),
        special("call_end", "</tool_call>"),
        special("name_end", "<tool_sep>"),
        special("key_start", "<arg_key>"),
        special("key_end", "</arg_key>"),
        special("value_start", "<arg_value>"),
        special("value_end", "</arg_value>"),
        special("reasoning_start", "<think>"),
        special("reasoning_end", "</think>"),
    ],
    triggers: &[
        Trigger::marker("<tool_calls>"),
        Trigger::marker("<tool_call>"),
    ],
    name_encoding: "text_after_marker",
    argument_encoding: "xml_key_value",
    call_separator: Some("\n"),
    reasoning: Some(("<think>", "</think>")),
    template: Some(CallTemplate {
        begin: "<tool_call>{name}<tool_sep>\n",
        style: "glm_xml",
        end: "</tool_call>",
        separator: "\n",
    }),
    layout: Layout::section("<tool_calls>\n", "\n</tool_calls>"),
    new_region: new_hy3,
    render: render_hy3,
};

pub static HY_V4: FormatSpec = FormatSpec {
    name: "hy_v4",
    aliases: &["hy4", "hunyuan_hy4"],
    families: &["Hunyuan HY4"],
    description: "<tool_calls:opensource><tool_call:opensource>NAME<arg_key:opensource>K</arg_key:opensource>\
                  <arg_value:opensource>V</arg_value:opensource></tool_call:opensource></tool_calls:opensource>, \
                  values typed by the tool schema",
    markers: &[
        special("section_start", "<tool_calls:opensource>"),
        special("section_end", "</tool_calls:opensource>"),
        special("call_start", "<tool_call:opensource>"),
        special("call_end", "</tool_call:opensource>"),
        special("key_start", "<arg_key:opensource>"),
        special("key_end", "</arg_key:opensource>"),
        special("value_start", "<arg_value:opensource>"),
        special("value_end", "</arg_value:opensource>"),
        special("reasoning_start", "<think:opensource>"),
        special("reasoning_end", "</think:opensource>"),
    ],
    triggers: &[
        Trigger::marker("<tool_calls:opensource>"),
        Trigger::marker("<tool_call:opensource>"),
    ],
    name_encoding: "text_after_marker",
    argument_encoding: "xml_key_value",
    call_separator: Some(""),
    reasoning: Some(("<think:opensource>", "</think:opensource>")),
    template: Some(CallTemplate {
        begin: "<tool_call:opensource>{name}",
        style: "hy4_xml",
        end: "</tool_call:opensource>",
        separator: "",
    }),
    layout: Layout::section("<tool_calls:opensource>", "</tool_calls:opensource>"),
    new_region: new_hy4,
    render: render_hy4,
};

fn new_hy3(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    glm::new_region_with(ctx, &HY3)
}

fn new_hy4(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    glm::new_region_with(ctx, &HY4)
}

fn render_with(calls: &[RenderCall], content: Option<&str>, tags: &GlmTags, nl: &str) -> String {
    let mut out = String::from(content.unwrap_or(""));
    let Some((open, close)) = tags.section else {
        return out;
    };
    if calls.is_empty() {
        return out;
    }
    out.push_str(open);
    out.push_str(nl);
    for call in calls {
        out.push_str(tags.call_start);
        out.push_str(&call.name);
        out.push_str(tags.name_sep.unwrap_or(""));
        out.push_str(nl);
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                out.push_str(tags.key_start);
                out.push_str(key);
                out.push_str(tags.key_end);
                out.push_str(nl);
                out.push_str(tags.value_start);
                match value {
                    Value::String(s) => out.push_str(s),
                    other => out.push_str(&crate::xml_value::template_json(other)),
                }
                out.push_str(tags.value_end);
                out.push_str(nl);
            }
        }
        out.push_str(tags.call_end);
        out.push_str(nl);
    }
    out.push_str(close);
    out
}

/// The layout of the HY3 parsers' docs and tests: the section, each call and each tag on its own
/// line; strings raw, other values as JSON.
fn render_hy3(calls: &[RenderCall], content: Option<&str>) -> String {
    render_with(calls, content, &HY3, "\n")
}

/// As vLLM's `hy_v4` tests write calls: no whitespace between tags.
fn render_hy4(calls: &[RenderCall], content: Option<&str>) -> String {
    render_with(calls, content, &HY4, "")
}
