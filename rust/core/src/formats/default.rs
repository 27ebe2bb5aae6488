//! The catch-all JSON format: `<TOOLCALL>[...]</TOOLCALL>`, `<|python_tag|>{...}`, or bare JSON
//! (an object or an array of call objects) at the start of the output or after prose (`I'll
//! check.\n{"name": ...}`); JSON after prose that is not a call object stays content.

use super::json_calls::{JsonRegion, JsonRegionSpec, Payload, STANDARD_KEYS};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::{self};
use crate::spec::{CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "default",
        aliases: &["json"],
        families: &[
            "any model emitting bare JSON calls",
            "Nemotron (<TOOLCALL>)",
            "Llama 3.x (<|python_tag|>)",
        ],
        description:
            "<TOOLCALL>[...]</TOOLCALL>, <|python_tag|>{...}, or a bare JSON call object/array",
        extra_markers: &[
            Marker::plain(Role::CallStart, "<TOOLCALL>"),
            Marker::plain(Role::CallEnd, "</TOOLCALL>"),
            Marker::special(Role::CallStart, "<|python_tag|>"),
        ],
        triggers: &[
            Trigger::marker("<TOOLCALL>"),
            Trigger::marker("<|python_tag|>"),
            Trigger::at_start("{"),
            Trigger::at_start("["),
            // After prose, only JSON that opens like a call object is taken for calls.
            Trigger::soft("{").confirmed(r#"\{\s*"name"\s*:"#),
            Trigger::soft("[").confirmed(r#"\[\s*\{\s*"name"\s*:"#),
        ],
        template: Some(CallTemplate::JSON_OBJECT),
        layout: Layout::section("<TOOLCALL>[", "]</TOOLCALL>"),
        stops: &[
            "<|im_end|>",
            "<|eot_id|>",
            "<|eom_id|>",
            "<|end_of_text|>",
            "<|endoftext|>",
            "</s>",
        ],
        ..Syntax::EMPTY
    },
    new_region,
    write: render::with_template,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let spec = match ctx.trigger {
        0 => JsonRegionSpec::after_marker(Some("</TOOLCALL>")),
        1 => JsonRegionSpec {
            consume_trigger: true,
            payload: Payload::Sequence,
            end: None,
            keys: STANDARD_KEYS,
        },
        _ => JsonRegionSpec {
            consume_trigger: false,
            payload: Payload::ObjectOrArray,
            end: None,
            keys: STANDARD_KEYS,
        },
    };
    Box::new(JsonRegion::new(ctx, spec))
}
