//! IQuest-Q1 (SGLang `iquest_q1`): the GLM-4.7 key/value body inside its own call tokens:
//!
//! ```text
//! <iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></iquest_tool_call>
//! ```
//!
//! One block per call. Values are raw text typed by the tool's schema (strings kept exactly,
//! whitespace included). `<iquest_tool_call>`, `</iquest_tool_call>`, `<think>` and `</think>`
//! are tokens of the IQuest-Q1 vocabulary (looked up by id in IQuest's own vLLM plugin and in
//! llama.cpp-style loaders); the argument tags are assumed to be tokens as in GLM. Read by
//! [`super::glm`]'s region with these tags.

use serde_json::Value;

use super::glm::{self, GlmTags};
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, FormatSpec, Layout, Marker, Trigger};

const TAGS: GlmTags = GlmTags {
    call_start: "<iquest_tool_call>",
    call_end: "</iquest_tool_call>",
    key_start: "<arg_key>",
    key_end: "</arg_key>",
    value_start: "<arg_value>",
    value_end: "</arg_value>",
    name_sep: None,
    section: None,
};

const fn special(role: &'static str, text: &'static str) -> Marker {
    Marker {
        role,
        text,
        special_token: true,
    }
}

pub static SPEC: FormatSpec = FormatSpec {
    name: "iquest_q1",
    aliases: &["iquest", "iquest-q1"],
    families: &["IQuest-Q1"],
    description:
        "<iquest_tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></iquest_tool_call>, \
                  values typed by the tool schema",
    markers: &[
        special("call_start", "<iquest_tool_call>"),
        special("call_end", "</iquest_tool_call>"),
        special("key_start", "<arg_key>"),
        special("key_end", "</arg_key>"),
        special("value_start", "<arg_value>"),
        special("value_end", "</arg_value>"),
        special("reasoning_start", "<think>"),
        special("reasoning_end", "</think>"),
    ],
    triggers: &[Trigger::marker("<iquest_tool_call>")],
    name_encoding: "text_after_marker",
    argument_encoding: "xml_key_value",
    call_separator: None,
    reasoning: Some(("<think>", "</think>")),
    template: Some(CallTemplate {
        begin: "<iquest_tool_call>{name}",
        style: "glm_xml",
        end: "</iquest_tool_call>",
        separator: "",
    }),
    layout: Layout::BARE,
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    glm::new_region_with(ctx, &TAGS)
}

/// The compact GLM-4.7 layout under IQuest's call tokens: strings raw, other values as JSON.
fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for call in calls {
        out.push_str(TAGS.call_start);
        out.push_str(&call.name);
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                out.push_str(TAGS.key_start);
                out.push_str(key);
                out.push_str(TAGS.key_end);
                out.push_str(TAGS.value_start);
                match value {
                    Value::String(s) => out.push_str(s),
                    other => out.push_str(&crate::xml_value::template_json(other)),
                }
                out.push_str(TAGS.value_end);
            }
        }
        out.push_str(TAGS.call_end);
    }
    out
}
