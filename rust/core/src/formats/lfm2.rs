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
use crate::render::{self, RenderCall};
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK,
};
use crate::xml_value::python_str;

const START: &str = "<|tool_call_start|>";
const END: &str = "<|tool_call_end|>";
/// The calls' Python list between the markers.
const BLOCK: (&str, &str) = ("<|tool_call_start|>[", "]<|tool_call_end|>");

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "lfm2",
        aliases: &["lfm2.5", "lfm2_5", "liquid"],
        families: &["LFM2", "LFM2.5"],
        description: "<|tool_call_start|>[f(a=1, b='x'), g()]<|tool_call_end|>, Python call syntax",
        extra_markers: &[
            Marker::special(Role::CallStart, START),
            Marker::special(Role::CallEnd, END),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Special),
        triggers: &[Trigger::marker(START)],
        reasoning: Some(THINK),
        stops: &["<|im_end|>"],
        template: Some(CallTemplate::new("{name}(", ")", ", ")),
        arguments: ArgSyntax::PythonKwargs,
        layout: Layout::section(BLOCK.0, BLOCK.1),
    },
    new_region: |ctx| pythonic::new_wrapped_region(ctx, END),
    write: render,
};

/// As the LFM2.5 chat template writes calls after the content: strings quoted (single quotes, as
/// Python's `repr`), mappings as JSON, anything else as Python's `str()`.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render::content_and_calls(calls, content, BLOCK, ", ", |out, _, call| {
        pythonic::write_call(out, call, |value, out| match value {
            Value::Object(_) => out.push_str(&python_json(value)),
            other => out.push_str(&python_str(other)),
        })
    })
}
