//! Hermes / Qwen2.5 / Qwen3: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, one
//! block per call. `<tool_call>` and `</tool_call>` are special tokens in the Qwen vocabularies
//! (151657/151658) but plain text in Hermes-on-Llama models.

use super::json_calls;
use super::Format;
use crate::render::{self};
use crate::spec::{CallTemplate, Implied, Syntax, Tokens, Trigger, THINK};

const TEMPLATE: CallTemplate = CallTemplate::new(
    "<tool_call>\n{\"name\": \"{name}\", \"arguments\": ",
    "}\n</tool_call>",
    "\n",
);

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "hermes",
        aliases: &["qwen2_5", "qwen3"],
        families: &[
            "Qwen2.5",
            "Qwen3",
            "QwQ",
            "Hermes 2 Pro",
            "Hermes 3",
            "Granite 4",
        ],
        description:
            "JSON object {name, arguments} inside <tool_call>...</tool_call>, one block per call",
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker("<tool_call>")],
        reasoning: Some(THINK),
        stops: &["<|im_end|>", "<|endoftext|>"],
        template: Some(TEMPLATE),
        ..Syntax::EMPTY
    },
    new_region: |ctx| json_calls::after_marker(ctx, Some("</tool_call>")),
    render: |calls, content| render::with_template(&SPEC.syntax, calls, content),
};
