//! Preferred Networks PLaMo 3 (vLLM `plamo3`): JSON arguments inside tool-request tags:
//!
//! ```text
//! <|plamo:begin_tool_requests:plamo|>
//!   <|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
//!   <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{...}<|plamo:end_tool_arguments:plamo|>
//!   <|plamo:end_tool_request:plamo|>
//! <|plamo:end_tool_requests:plamo|>
//! ```
//!
//! (shown on several lines; the model writes the tags back to back, as vLLM's structural tag
//! does). `<|plamo:constrain|>json` and `<|plamo:msg|>` before the JSON are each optional (outputs
//! with only `<|plamo:msg|>` are seen). No tag is one token: each tokenises into pieces
//! (`<|plamo:begin_`, `<|plamo:end_`, `:plamo|>`, which vLLM's parser engine keeps from being
//! dropped as special tokens), so tags arrive split anywhere; the end of turn, `<|plamo:tag|>`,
//! is one special token. Reasoning is `<|plamo:begin_think:plamo|>` ...
//! `<|plamo:end_think:plamo|>`, and vLLM starts a completion inside it unless thinking is off.
//! Read by [`super::sectioned`]'s region, a request and its name tag as one call opener.

use super::sectioned::{Header, SectionRegion, SectionSyntax};
use super::Format;
use crate::spec::{CallTemplate, Implied, Layout, Marker, Role, Syntax, Tokens, Trigger};

const SECTION_BEGIN: &str = "<|plamo:begin_tool_requests:plamo|>";
const SECTION_END: &str = "<|plamo:end_tool_requests:plamo|>";
/// `<|plamo:begin_tool_request:plamo|>` and the name's opening tag.
const CALL_BEGIN: &str = "<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>";
/// The name's closing tag and the arguments' opening tag.
const ARGS_BEGIN: &str = "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>";
const ARGS_PREAMBLE: &[&str] = &["<|plamo:constrain|>json", "<|plamo:msg|>"];
/// The arguments' closing tag and `<|plamo:end_tool_request:plamo|>`.
const CALL_END: &str = "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>";

const SYNTAX: SectionSyntax = SectionSyntax {
    section_begins: &[SECTION_BEGIN],
    section_ends: &[SECTION_END],
    call_begin: CALL_BEGIN,
    call_end: CALL_END,
    args_begin: ARGS_BEGIN,
    args_preamble: ARGS_PREAMBLE,
    header: Header::Name,
};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "plamo3",
        aliases: &["plamo", "plamo-3", "plamo_3"],
        families: &["PLaMo 3"],
        description: "<|plamo:begin_tool_requests:plamo|>, then per call a tool request with \
                      <|plamo:begin_tool_name:plamo|>NAME and JSON arguments",
        extra_markers: &[
            Marker::plain(Role::ArgsStart, ARGS_BEGIN),
            Marker::plain(Role::Constrain, ARGS_PREAMBLE[0]),
            Marker::plain(Role::HeaderEnd, ARGS_PREAMBLE[1]),
            Marker::special(Role::TurnEnd, "<|plamo:tag|>"),
        ],
        implied: Implied::all(Tokens::Plain),
        triggers: &Trigger::markers([SECTION_BEGIN, CALL_BEGIN, SECTION_END, CALL_END]),
        reasoning: Some(("<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>")),
        template: Some(CallTemplate::new(
            "<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>{name}\
             <|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>\
             <|plamo:constrain|>json<|plamo:msg|>",
            CALL_END,
            "",
        )),
        layout: Layout::section(SECTION_BEGIN, SECTION_END),
        ..Syntax::EMPTY
    },
    new_region: |ctx| Box::new(SectionRegion::new(ctx, SYNTAX)),
    // As vLLM's structural tag writes them: compact JSON, as PLaMo outputs quoted by serving
    // clients, after `<|plamo:constrain|>json<|plamo:msg|>`.
    write: |_, calls, content| SYNTAX.render(calls, content),
};
