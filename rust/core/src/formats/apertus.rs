//! Swiss AI Apertus (2509): a JSON array of single-key objects, the key naming the tool:
//!
//! ```text
//! <|tools_prefix|>[{"get_weather": {"location": "London"}}, {"get_time": {}}]<|tools_suffix|>
//! ```
//!
//! (vLLM `apertus`, SGLang `apertus2509`, mlx-lm `apertus`.) A `null` value means no arguments.
//! `<|tools_prefix|>` / `<|tools_suffix|>` are special tokens, as are the reasoning markers
//! `<|inner_prefix|>` / `<|inner_suffix|>` (ids 69/70 of the Apertus vocabulary). Read by
//! [`super::json_calls`] with the name-as-key call object; the arguments stream as they arrive.
//! A missing `<|tools_suffix|>` (or a missing closing `}]` after complete arguments) still gives
//! the calls, as vLLM does.

use serde_json::Value;

use super::json_calls::{CallKeys, JsonRegion, JsonRegionSpec, Payload};
use super::xml_invoke::python_json;
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger};

const START: &str = "<|tools_prefix|>";
const END: &str = "<|tools_suffix|>";
/// The calls' list between the markers.
const BLOCK: (&str, &str) = ("<|tools_prefix|>[", "]<|tools_suffix|>");

const KEYS: CallKeys = CallKeys {
    name: &[],
    arguments: &[],
    name_is_key: true,
};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "apertus",
        aliases: &["apertus_2509", "swiss_ai_apertus"],
        families: &["Apertus-8B-Instruct-2509", "Apertus-70B-Instruct-2509"],
        description: "<|tools_prefix|>[{\"NAME\": {...arguments}}, ...]<|tools_suffix|>",
        extra_markers: &[
            Marker::special(Role::SectionStart, START),
            Marker::special(Role::SectionEnd, END),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Special),
        triggers: &[Trigger::marker(START)],
        reasoning: Some(("<|inner_prefix|>", "<|inner_suffix|>")),
        stops: &["<|assistant_end|>"],
        template: Some(CallTemplate::new("{\"{name}\": ", "}", ", ")),
        layout: Layout::section(BLOCK.0, BLOCK.1),
        ..Syntax::EMPTY
    },
    new_region: |ctx| {
        Box::new(JsonRegion::new(
            ctx,
            JsonRegionSpec {
                consume_trigger: true,
                payload: Payload::ObjectOrArray,
                end: Some(END),
                keys: KEYS,
            },
        ))
    },
    write: render,
};

/// The block as the parsers' tests write it: `json.dumps` of the list of `{name: arguments}`.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render::content_and_calls(calls, content, BLOCK, ", ", |out, _, call| {
        out.push('{');
        out.push_str(&python_json(&Value::String(call.name.clone())));
        out.push_str(": ");
        out.push_str(&python_json(&call.arguments));
        out.push('}');
    })
}
