//! Hunyuan-A13B: one JSON array of `{"name": ..., "arguments": {...}}` objects inside
//! `<tool_calls>` ... `</tool_calls>` (vLLM `hunyuan_a13b`). The model wraps its answer in
//! `<answer>` ... `</answer>` after `<think>` ... `</think>`; the answer tags are markup and are
//! dropped, the text inside stays content.
//!
//! Not this format: Hunyuan HY-V3 (SGLang `hunyuan`, vLLM `hy_v3`), which writes
//! `<tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`.

use super::json_calls;
use super::markup;
use super::Format;
use crate::render::{self};
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "hunyuan_a13b",
        aliases: &["hunyuan_a13b_instruct"],
        families: &["Hunyuan-A13B-Instruct"],
        description: "JSON array of {name, arguments} inside <tool_calls>...</tool_calls>; \
                  <answer> wrappers dropped",
        extra_markers: &[
            Marker::plain(Role::SectionStart, "<tool_calls>"),
            Marker::plain(Role::SectionEnd, "</tool_calls>"),
            Marker::plain(Role::AnswerStart, "<answer>"),
            Marker::plain(Role::AnswerEnd, "</answer>"),
        ],
        implied: Implied::NONE.with_reasoning(Tokens::Plain),
        triggers: &Trigger::markers(["<tool_calls>", "<answer>", "</answer>"]),
        reasoning: Some(THINK),
        stops: &["<|eos|>"],
        template: Some(CallTemplate::JSON_OBJECT),
        layout: Layout::section("<tool_calls>[", "]</tool_calls>"),
        ..Syntax::EMPTY
    },
    new_region: |ctx| markup::calls_or_wrapper(ctx, json_calls::after_trigger),
    write: render::with_template,
};
