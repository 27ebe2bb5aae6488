//! Hermes / Qwen2.5 / Qwen3: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, one
//! block per call. `<tool_call>` and `</tool_call>` are special tokens in the Qwen vocabularies
//! (151657/151658) but plain text in Hermes-on-Llama models.

use super::json_calls;
use super::Format;
use crate::spec::{CallTemplate, Implied, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = json_calls::format(Syntax {
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
    template: Some(CallTemplate::new(
        "<tool_call>\n{\"name\": \"{name}\", \"arguments\": ",
        "}\n</tool_call>",
        "\n",
    )),
    ..Syntax::EMPTY
});
