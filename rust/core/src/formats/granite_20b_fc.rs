//! IBM Granite-20B-FunctionCalling (vLLM `granite-20b-fc`): each call is `<function_call>`
//! followed by one JSON object `{"name": ..., "arguments": {...}}`, calls separated by a newline:
//!
//! ```text
//! Let me check.
//! <function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! <function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}
//! ```
//!
//! There is no closing marker: a call ends with its JSON object. `<function_call>` is written as
//! text (not a special token of the Granite 20B vocabulary, as far as the peers show). Read by
//! [`super::json_calls`].

use super::json_calls::{JsonRegion, JsonRegionSpec};
use super::xml_invoke::python_json;
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};

const START: &str = "<function_call>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "granite_20b_fc",
        aliases: &["granite-20b-fc", "granite_20b_functioncalling"],
        families: &["granite-20b-functioncalling"],
        description:
            "<function_call> {\"name\": ..., \"arguments\": {...}} per call, newline-separated",
        markers: &[Marker::plain(Role::CallStart, START)],
        triggers: &[Trigger::marker(START)],
        reasoning: None,
        stops: &["<|endoftext|>"],
        template: Some(CallTemplate::new(
            "<function_call> {\"name\": \"{name}\", \"arguments\": ",
            "}",
            "\n",
        )),
        arguments: ArgSyntax::Json,
        layout: Layout::BARE,
    },
    new_region,
    render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(JsonRegion::new(ctx, JsonRegionSpec::after_marker(None)))
}

/// As vLLM's samples write calls: each on its own line after the content.
fn render(calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for call in calls {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(START);
        out.push(' ');
        out.push_str(&format!(
            "{{\"name\": {}, \"arguments\": {}}}",
            crate::json::quote(&call.name),
            python_json(&call.arguments)
        ));
    }
    out
}
