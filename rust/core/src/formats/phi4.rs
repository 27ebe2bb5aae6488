//! Phi-4-mini: `functools[{"name": ..., "arguments": {...}}, ...]`, a JSON call array after the
//! `functools` marker, with no closing marker (vLLM `phi4_mini_json`, Dynamo `phi4`). The word is
//! ordinary text (Python's `functools` module is a likely word in prose), so the trigger is soft:
//! unless a call object follows, the text stays content.

use super::json_calls;
use super::Format;
use crate::spec::{CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub static SPEC: Format = json_calls::format(Syntax {
    name: "phi4",
    aliases: &["phi-4", "phi4_mini"],
    families: &["Phi-4-mini-instruct"],
    description: "functools[{name, arguments}, ...]: a JSON call array after the functools marker, no closing marker",
    extra_markers: &[Marker::plain(Role::CallStart, "functools")],
    triggers: &[Trigger::soft("functools")],
    template: Some(CallTemplate::JSON_OBJECT),
    layout: Layout::section("functools[", "]"),
    stops: &["<|end|>", "<|endoftext|>"],
    ..Syntax::EMPTY
});
