//! Liquid LFM2 / LFM2.5: a pythonic call list between special tokens:
//!
//! ```text
//! <|tool_call_start|>[get_candidate_status(candidate_id='12345'), get_weather()]<|tool_call_end|>
//! ```
//!
//! (vLLM / SGLang `lfm2`; the LFM2.5 chat template writes strings single-quoted, mappings as JSON
//! and other values with Python's `str()`.) Content may come before or after the block;
//! reasoning is `<think>` ... `</think>`. Read by [`super::pythonic`]'s reader with these markers.
//! SGLang also accepts a JSON list `[{"name": ..., "arguments": ...}]` inside the block; that
//! form is reported as malformed here.

use serde_json::Value;

use super::pythonic;
use super::xml_invoke::python_json;
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};
use crate::xml_value::python_str;

const START: &str = "<|tool_call_start|>";
const END: &str = "<|tool_call_end|>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "lfm2",
        aliases: &["lfm2.5", "lfm2_5", "liquid"],
        families: &["LFM2", "LFM2.5"],
        description: "<|tool_call_start|>[f(a=1, b='x'), g()]<|tool_call_end|>, Python call syntax",
        markers: &[
            Marker::special(Role::CallStart, START),
            Marker::special(Role::CallEnd, END),
            Marker::special(Role::ReasoningStart, "<think>"),
            Marker::special(Role::ReasoningEnd, "</think>"),
        ],
        triggers: &[Trigger::marker(START)],
        reasoning: Some(("<think>", "</think>")),
        stops: &["<|im_end|>"],
        template: Some(CallTemplate::new("{name}(", ")", ", ")),
        arguments: ArgSyntax::PythonKwargs,
        layout: Layout::section("<|tool_call_start|>[", "]<|tool_call_end|>"),
    },
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    pythonic::new_wrapped_region(ctx, END)
}

/// As the LFM2.5 chat template writes calls after the content: strings quoted (single quotes, as
/// Python's `repr`), mappings as JSON, anything else as Python's `str()`.
fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(START);
    out.push('[');
    for (k, call) in calls.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        out.push_str(&call.name);
        out.push('(');
        if let Value::Object(map) = &call.arguments {
            for (j, (key, value)) in map.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push('=');
                match value {
                    Value::Object(_) => out.push_str(&python_json(value)),
                    other => out.push_str(&python_str(other)),
                }
            }
        }
        out.push(')');
    }
    out.push(']');
    out.push_str(END);
    out
}
