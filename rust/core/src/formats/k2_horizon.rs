//! K2 Horizon (MBZUAI IFM's K2, the "K2-v3" of SGLang's detector; not a Kimi model): GLM-4.7-style
//! calls in `<ifm|...>` tags inside one group,
//!
//! ```text
//! <ifm|tool_calls>
//! <ifm|tool_call>get_weather
//! <ifm|arg_key>city</ifm|arg_key>
//! <ifm|arg_value>Paris</ifm|arg_value>
//! </ifm|tool_call>
//! </ifm|tool_calls>
//! ```
//!
//! values typed by the tool's schema, reasoning in `<ifm|think>` ... `</ifm|think>`. This is the
//! `xml` tool-call format, vLLM's default (`chat_template_kwargs.tool_call_format`). Not read yet:
//! the `xml_typed` format's `<ifm|arg_type>` tag between key and value and the `json` format's
//! JSON call bodies (each an issue with its raw text), nor the `<ifm|think_fast>` and
//! `<ifm|think_faster>` reasoning blocks of the lower reasoning efforts. Whether the tags are
//! special tokens is not known (no tokenizer was available): they are matched as text. Sources:
//! vLLM `k2_horizon_tool_parser.py` and SGLang `k2_v3_detector.py` (both `k2_horizon`), SGLang's
//! `reasoning_parser.py` for the reasoning tags.

use super::glm;
use super::Format;
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Implied, Layout, ParamTags, Syntax, Tokens, Trigger};

const GROUP_OPEN: &str = "<ifm|tool_calls>";
const CALL_OPEN: &str = "<ifm|tool_call>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "k2_horizon",
        aliases: &["k2_v3", "k2v3"],
        families: &["K2 Horizon"],
        description: "<ifm|tool_calls><ifm|tool_call>NAME<ifm|arg_key>K</ifm|arg_key>\
                      <ifm|arg_value>V</ifm|arg_value></ifm|tool_call></ifm|tool_calls>, values \
                      typed by the tool schema",
        extra_markers: &[],
        implied: Implied::all(Tokens::Plain),
        triggers: &[Trigger::marker(GROUP_OPEN), Trigger::marker(CALL_OPEN)],
        reasoning: Some(("<ifm|think>", "</ifm|think>")),
        template: Some(CallTemplate::new(
            "<ifm|tool_call>{name}\n",
            "</ifm|tool_call>",
            "\n",
        )),
        stops: &[],
        arguments: ArgSyntax::XmlParams(ParamTags::new(
            "<ifm|arg_key>{key}</ifm|arg_key>{ws}<ifm|arg_value>",
            "</ifm|arg_value>",
        )),
        layout: Layout::section("<ifm|tool_calls>\n", "\n</ifm|tool_calls>"),
    },
    new_region: glm::new_region,
    write: render,
};

/// One tag per line inside the group, as vLLM's parser expects the template's framing.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    glm::render_tags(&SPEC.syntax, calls, content, "\n")
}
