//! Kimi K2 / K2-Thinking / K2.5: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>`.
//! The model's `functions.NAME:IDX` is kept as the call id (the `functions.` prefix is
//! optional); the singular `<|tool_call_section_begin|>` / `<|tool_call_section_end|>` variants
//! are accepted. A section left open by `max_tokens` keeps its complete calls.

use super::sectioned::{Header, SectionRegion, SectionSyntax};
use super::Format;
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger, THINK};

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";
const SECTION_BEGIN_SINGULAR: &str = "<|tool_call_section_begin|>";
const SECTION_END_SINGULAR: &str = "<|tool_call_section_end|>";
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
const ARGS_BEGIN: &str = "<|tool_call_argument_begin|>";

const SYNTAX: SectionSyntax = SectionSyntax {
    section_begins: &[SECTION_BEGIN, SECTION_BEGIN_SINGULAR],
    section_ends: &[SECTION_END, SECTION_END_SINGULAR],
    call_begin: CALL_BEGIN,
    call_end: CALL_END,
    args_begin: ARGS_BEGIN,
    args_preamble: &[],
    header: Header::KimiId,
};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "kimi_k2",
        aliases: &["kimi", "kimi_k2_5"],
        families: &["Kimi-K2-Instruct", "Kimi-K2-Thinking", "Kimi K2.5"],
        description: "<|tool_calls_section_begin|>, then per call <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>",
        extra_markers: &[
            Marker::plain(Role::SectionStart, SECTION_BEGIN_SINGULAR),
            Marker::plain(Role::SectionEnd, SECTION_END_SINGULAR),
            Marker::special(Role::CallStart, CALL_BEGIN),
            Marker::special(Role::CallEnd, CALL_END),
            Marker::special(Role::ArgsStart, ARGS_BEGIN),
        ],
        implied: Implied::all(Tokens::Special).with_call(Tokens::Unlisted),
        triggers: &Trigger::markers([SECTION_BEGIN, SECTION_BEGIN_SINGULAR, CALL_BEGIN, SECTION_END, SECTION_END_SINGULAR, CALL_END, ARGS_BEGIN]),
        reasoning: Some(THINK),
        stops: &["<|im_end|>"],
        template: Some(CallTemplate::new("<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>", "<|tool_call_end|>", "")),
        layout: Layout::section(SECTION_BEGIN, SECTION_END),
        ..Syntax::EMPTY
    },
    new_region: |ctx| Box::new(SectionRegion::new(ctx, SYNTAX)),
    write: |_, calls, content| SYNTAX.render(calls, content),
};
