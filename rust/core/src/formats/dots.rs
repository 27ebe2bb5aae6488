//! rednote dots (vLLM / SGLang `dots`): invoke tags inside a `<dots_function_call>` block, or one
//! JSON call object as the block's body:
//!
//! ```text
//! <dots_function_call>
//! <invoke name="search">
//! <parameter name="query">weather in Shanghai</parameter>
//! </invoke>
//! </dots_function_call>
//! <dots_function_call>{"name": "search", "arguments": {"query": "tables"}}</dots_function_call>
//! ```
//!
//! Several invokes in one block, and several blocks, are parallel calls. Values are raw text typed
//! by the tool's schema (strings kept exactly; SGLang strips them). The invoke body is read by
//! [`super::xml_invoke`], the JSON body by [`super::json_calls`]; which one is decided by the
//! block's first non-blank character. The block tags are treated as text (whether they are
//! special tokens of the dots vocabulary was not verified).

use super::json_calls::{JsonRegion, JsonRegionSpec};
use super::xml_invoke::{write_params, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::region::{Progress, RegionParser, Sink};
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Implied, Layout, Syntax, Tokens, Trigger};
use crate::text;

const START: &str = "<dots_function_call>";
const END: &str = "</dots_function_call>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "dots",
        aliases: &["dots_llm", "dots.llm1"],
        families: &["dots.llm1"],
        description:
            "<dots_function_call> block of <invoke name=...> calls with <parameter name=...> \
                  values typed by the tool's schema, or one JSON call object",
        implied: Implied::all(Tokens::Plain),
        triggers: &[Trigger::marker(START)],
        template: Some(CallTemplate::new(
            "<invoke name=\"{name}\">\n",
            "</invoke>",
            "\n",
        )),
        arguments: ArgSyntax::XmlParams(super::minimax_m2::PARAMS),
        layout: Layout::section("<dots_function_call>\n", "\n</dots_function_call>"),
        stops: &["<|endofresponse|>", "<|endoftext|>"],
        ..Syntax::EMPTY
    },
    new_region: |ctx| {
        Box::new(DotsRegion {
            body: Body::Undecided,
            trigger_len: ctx.trigger_lit().len(),
            invoke: InvokeRegion::new(ctx, InvokeRegionSpec::of(ctx, "dots")),
            json: JsonRegion::new(ctx, JsonRegionSpec::after_marker(Some(END))),
        })
    },
    write: render,
};

/// Blank text after the block opener held back before choosing the body's reader; beyond this
/// the invoke reader is taken (it skips blanks itself).
const MAX_LOOKAHEAD: usize = 1024;

enum Body {
    Undecided,
    Invoke,
    Json,
}

struct DotsRegion {
    body: Body,
    trigger_len: usize,
    invoke: InvokeRegion,
    json: JsonRegion,
}

impl RegionParser for DotsRegion {
    fn feed(&mut self, input: &str, eof: bool, sink: &mut Sink) -> Progress {
        if let Body::Undecided = self.body {
            let after = input.get(self.trigger_len..).unwrap_or("");
            let ws = text::skip_ws(after);
            self.body = match after[ws..].chars().next() {
                Some('{') => Body::Json,
                Some(_) => Body::Invoke,
                None if eof || ws > MAX_LOOKAHEAD => Body::Invoke,
                None => return Progress::more(0),
            };
        }
        match self.body {
            Body::Json => self.json.feed(input, eof, sink),
            _ => self.invoke.feed(input, eof, sink),
        }
    }
}

/// The canonical layout of SGLang's `dots` detector: the block, one invoke per call, one
/// parameter per line; strings raw, other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let open = format!("{START}\n");
    render::content_and_calls(calls, content, (open.as_str(), END), "", |out, _, call| {
        out.push_str(&format!("<invoke name=\"{}\">\n", call.name));
        if let Some(map) = call.arguments.as_object() {
            write_params(out, map, "parameter");
        }
        out.push_str("</invoke>\n");
    })
}
