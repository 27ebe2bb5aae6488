//! LongCat-Flash-Chat: `<longcat_tool_call>\n{"name": ..., "arguments": {...}}\n</longcat_tool_call>`,
//! one block per call, blocks back to back (vLLM `longcat`, SGLang `LongCatDetector`). Reasoning,
//! when the model thinks, is `<longcat_think>` ... `</longcat_think>`.
//!
//! LongCat also writes the GLM-4.5 key/value body under its own tags (the Flash-Thinking chat
//! templates):
//!
//! ```text
//! <longcat_tool_call>NAME
//! <longcat_arg_key>K</longcat_arg_key>
//! <longcat_arg_value>V</longcat_arg_value>
//! </longcat_tool_call>
//! ```
//!
//! A call whose first character after the opener is `{` is JSON; any other is that body, read by
//! [`super::glm`]'s region with values typed by the tool's schema.

use super::json_calls::{JsonRegion, JsonRegionSpec};
use super::Format;
use crate::region::{Progress, RegionCtx, RegionParser, Sink};
use crate::render::{self};
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Marker, ParamTags, Role, Syntax, Tokens, Trigger,
};
use crate::text;

const TEMPLATE: CallTemplate = CallTemplate::new(
    "<longcat_tool_call>\n{\"name\": \"{name}\", \"arguments\": ",
    "}\n</longcat_tool_call>",
    "",
);

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "longcat",
        aliases: &["longcat_flash", "longcat-flash-chat"],
        families: &["LongCat-Flash-Chat"],
        description:
            "JSON object {name, arguments} inside <longcat_tool_call>...</longcat_tool_call>, \
                  one block per call",
        // The tags are listed among LongCat's added tokens; not verified offline.
        implied: Implied::all(Tokens::Special),
        triggers: &[Trigger::marker("<longcat_tool_call>")],
        reasoning: Some(("<longcat_think>", "</longcat_think>")),
        stops: &["</longcat_s>"],
        template: Some(TEMPLATE),
        ..Syntax::EMPTY
    },
    new_region,
    write: render::with_template,
};

/// The key/value body's tags, as a syntax the GLM reader takes them from.
static XML_BODY: Syntax = Syntax {
    name: "longcat_xml",
    description: "<longcat_tool_call>NAME<longcat_arg_key>K</longcat_arg_key><longcat_arg_value>V</longcat_arg_value></longcat_tool_call>",
    extra_markers: &[
        Marker::special(Role::CallStart, "<longcat_tool_call>"),
        Marker::special(Role::CallEnd, "</longcat_tool_call>"),
        Marker::plain(Role::KeyStart, "<longcat_arg_key>"),
        Marker::plain(Role::KeyEnd, "</longcat_arg_key>"),
        Marker::plain(Role::ValueStart, "<longcat_arg_value>"),
        Marker::plain(Role::ValueEnd, "</longcat_arg_value>"),
    ],
    triggers: &[Trigger::marker("<longcat_tool_call>")],
    arguments: ArgSyntax::XmlParams(ParamTags::new(
        "<longcat_arg_key>{key}</longcat_arg_key>{ws}<longcat_arg_value>",
        "</longcat_arg_value>",
    )),
    ..Syntax::EMPTY
};

/// Waits for the first character after the opener, then hands the call to the JSON or the
/// key/value reader (both built up front: a region parser cannot keep the context).
struct LongcatRegion {
    trigger_len: usize,
    readers: Option<(JsonRegion, Box<dyn RegionParser>)>,
    chosen: Option<Box<dyn RegionParser>>,
}

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    let xml_ctx = RegionCtx {
        syntax: &XML_BODY,
        ..*ctx
    };
    let json = JsonRegion::new(
        ctx,
        JsonRegionSpec::after_marker(Some("</longcat_tool_call>")),
    );
    Box::new(LongcatRegion {
        trigger_len: ctx.trigger_lit().len(),
        readers: Some((json, super::glm::new_region(&xml_ctx))),
        chosen: None,
    })
}

impl RegionParser for LongcatRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        if let Some((json, xml)) = self.readers.take() {
            let body = input.get(self.trigger_len..).unwrap_or("");
            let first = body[text::skip_ws(body)..].chars().next();
            if first.is_none() && !eof {
                self.readers = Some((json, xml));
                return Progress::more(0);
            }
            self.chosen = Some(match first {
                Some(c) if c != '{' => xml,
                _ => Box::new(json),
            });
        }
        match self.chosen.as_mut() {
            Some(reader) => reader.feed(input, eof, sink),
            None => Progress::done(0),
        }
    }
}
