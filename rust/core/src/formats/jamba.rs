//! AI21 Jamba 1.5-1.7: `<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>`.
//! vLLM's Jamba parser looks both tags up in the vocabulary, so they are special tokens there;
//! SentencePiece decoding often leaves a space before the opening tag, which is content.

use super::json_calls;
use super::Format;
use crate::spec::{CallTemplate, Layout, Marker, Role, Syntax, Trigger};

pub static SPEC: Format = json_calls::format(Syntax {
    name: "jamba",
    aliases: &["jamba1.5", "jamba1.6", "jamba1.7"],
    families: &["AI21 Jamba 1.5", "AI21 Jamba 1.6", "AI21 Jamba 1.7"],
    description: "JSON call array inside <tool_calls>...</tool_calls>",
    extra_markers: &[
        Marker::special(Role::CallStart, "<tool_calls>"),
        Marker::special(Role::CallEnd, "</tool_calls>"),
    ],
    triggers: &[Trigger::marker("<tool_calls>")],
    template: Some(CallTemplate::JSON_OBJECT),
    layout: Layout::section("<tool_calls>[", "]</tool_calls>"),
    ..Syntax::EMPTY
});
