//! Cohere Command R7B / Command A (and the Command 4 generation): calls are one JSON array
//! `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "N", "parameters": {...}}, ...]<|END_ACTION|>`;
//! the plan is reasoning in `<|START_THINKING|>` ... `<|END_THINKING|>`; the reply to the user is
//! wrapped in `<|START_RESPONSE|>` ... `<|END_RESPONSE|>` (Command 3 generation) or
//! `<|START_TEXT|>` ... `<|END_TEXT|>` (Command 4): those wrappers are dropped, their text is
//! content. The model's `tool_call_id` ("0", "1", ...) restarts every turn and is not used as the
//! call id. Sources: the chat template `CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja`,
//! SGLang `cohere_command4_detector.py`, vLLM `cohere_command{3,4}`.

use super::json_calls::{CallKeys, JsonRegion, JsonRegionSpec, Payload};
use super::markup;
use super::Format;
use crate::json;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger};

const KEYS: CallKeys = CallKeys {
    name: &["tool_name", "name"],
    arguments: &["parameters", "arguments"],
    name_is_key: false,
};

const WRAPPERS: [&str; 5] = [
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
    "<|END_OF_TURN_TOKEN|>",
];

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "cohere_command",
        aliases: &["cohere", "command_a", "command_r7b"],
        families: &[
            "Command R7B",
            "Command A",
            "Command A Reasoning",
            "Command A Plus",
        ],
        description: "<|START_ACTION|> then a JSON array of {tool_call_id, tool_name, parameters} \
                  then <|END_ACTION|>; response wrappers dropped",
        // Cohere's markers are added tokens of its vocabulary (not verified offline); the response
        // wrappers are added but not special.
        extra_markers: &[
            Marker::special(Role::SectionStart, "<|START_ACTION|>"),
            Marker::special(Role::SectionEnd, "<|END_ACTION|>"),
            Marker::plain(Role::ResponseStart, WRAPPERS[0]),
            Marker::plain(Role::ResponseEnd, WRAPPERS[1]),
            Marker::plain(Role::ResponseStart, WRAPPERS[2]),
            Marker::plain(Role::ResponseEnd, WRAPPERS[3]),
            Marker::special(Role::TurnEnd, WRAPPERS[4]),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Special),
        triggers: &Trigger::markers([
            "<|START_ACTION|>",
            WRAPPERS[0],
            WRAPPERS[1],
            WRAPPERS[2],
            WRAPPERS[3],
            WRAPPERS[4],
        ]),
        reasoning: Some(("<|START_THINKING|>", "<|END_THINKING|>")),
        template: Some(CallTemplate::new(
            "{\"tool_call_id\": \"{index}\", \"tool_name\": \"{name}\", \"parameters\": ",
            "}",
            ",\n    ",
        )),
        layout: Layout::section("<|START_ACTION|>[\n    ", "\n]<|END_ACTION|>"),
        ..Syntax::EMPTY
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    markup::calls_or_wrapper(ctx, |ctx| {
        let spec = JsonRegionSpec {
            consume_trigger: true,
            payload: Payload::ObjectOrArray,
            end: Some("<|END_ACTION|>"),
            keys: KEYS,
        };
        Box::new(JsonRegion::new(ctx, spec))
    })
}

/// The template's layout: content alone as a response block; calls as the action list. The
/// template never writes both; content with calls is rendered as a response block first.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(content) = content {
        out.push_str("<|START_RESPONSE|>");
        out.push_str(content);
        out.push_str("<|END_RESPONSE|>");
    }
    if !calls.is_empty() {
        out.push_str("<|START_ACTION|>[\n");
        for (i, call) in calls.iter().enumerate() {
            if i > 0 {
                out.push_str(",\n");
            }
            out.push_str(&format!(
                "    {{\"tool_call_id\": \"{i}\", \"tool_name\": {}, \"parameters\": {}}}",
                json::quote(&call.name),
                call.arguments_json()
            ));
        }
        out.push_str("\n]<|END_ACTION|>");
    }
    out
}
