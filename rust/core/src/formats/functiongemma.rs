//! FunctionGemma (Gemma 3 270M tuned for function calling): the Gemma 4 call body with `<escape>`
//! as the string delimiter, one block per call:
//!
//! ```text
//! <start_function_call>call:get_weather{location:<escape>Tokyo, Japan<escape>,days:3}<end_function_call>
//! ```
//!
//! Strings run between `<escape>` delimiters with no escaping; numbers, booleans and `null` are
//! bare; `{}` / `[]` nest; parallel calls are consecutive blocks. `<start_function_call>`,
//! `<end_function_call>` and `<escape>` are special tokens (Google's FunctionGemma formatting
//! guide: six function tokens plus the single `<escape>` token). The model has no reasoning
//! channel. Read by [`super::gemma4`]'s region with these tags. A string stays a string even when
//! its text looks like a number (vLLM's `functiongemma` parser JSON-decodes `<escape>42<escape>`
//! to 42; the chat template writes numbers bare, so a quoted one is the model's choice).

use super::gemma4::{self, GemmaTags};
use super::Format;
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Layout, Marker, Role, Syntax, Trigger};

const TAGS: GemmaTags = GemmaTags {
    start: "<start_function_call>",
    end: "<end_function_call>",
    quote: "<escape>",
};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "functiongemma",
        aliases: &["function_gemma", "function-gemma"],
        families: &["FunctionGemma", "functiongemma-270m-it"],
        description: "<start_function_call>call:NAME{key:value,...}<end_function_call> with <escape>-delimited strings and bare keys, one block per call",
        extra_markers: &[
            Marker::special(Role::CallStart, "<start_function_call>"),
            Marker::special(Role::CallEnd, "<end_function_call>"),
            Marker::special(Role::StringDelimiter, "<escape>"),
        ],
        // A stray `<escape>` in content is left as content (unlike Gemma 4's `<|"|>`, it reads as
        // ordinary text).
        triggers: &Trigger::markers(["<start_function_call>", "<end_function_call>"]),
        template: Some(CallTemplate::new("<start_function_call>call:{name}", "<end_function_call>", "")),
        arguments: ArgSyntax::Gemma {
            string_delimiter: "<escape>",
        },
        layout: Layout::BARE,
        stops: &["<end_of_turn>", "<eos>"],
        ..Syntax::EMPTY
    },
    new_region: |ctx| gemma4::new_region_with(ctx, &TAGS),
    write: render,
};

/// As the FunctionGemma chat template writes a model turn: the content, then one block per call
/// (keys sorted, strings between `<escape>`).
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    out.push_str(&gemma4::write_calls(calls, &TAGS));
    out
}
