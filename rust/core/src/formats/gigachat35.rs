//! Sber GigaChat 3.5 (SGLang `gigachat35`): GCML, DSML's layout under the `｜GCML｜` prefix:
//!
//! ```text
//! <｜GCML｜tool_calls>
//! <｜GCML｜invoke name="get_weather">
//! <｜GCML｜parameter name="city" string="true">Москва</｜GCML｜parameter>
//! <｜GCML｜parameter name="days" string="false">3</｜GCML｜parameter>
//! </｜GCML｜invoke>
//! </｜GCML｜tool_calls>
//! ```
//!
//! Several invokes in one block are parallel calls. `string="true"`: the raw string; `false`: a
//! JSON value, kept as a string when it is not JSON (SGLang's detector). `｜GCML｜`, `<think>` and
//! `</think>` are special tokens (llama.cpp's GigaChat 3.5 support preserves them); every tag is
//! several tokens. With reasoning on, the template opens a `<think>` block in the generation
//! prompt, and the model writes `</think>\n\n` before its content. Read by [`super::xml_invoke`]'s
//! region, as DSML.

use super::dsml::{self, block_layout, invoke_template, params};
use super::xml_invoke::{InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, Implied, Marker, Role, Syntax, Tokens, Trigger, THINK};

const GCML: &str = "｜GCML｜";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "gigachat35",
        aliases: &["gigachat3_5", "gigachat3.5", "gigachat-3.5", "gcml"],
        families: &["GigaChat 3.5"],
        description: "GCML: <｜GCML｜tool_calls> with <｜GCML｜invoke name=...> calls and \
                      <｜GCML｜parameter name=... string=...> values",
        extra_markers: &[Marker::special(Role::Namespace, GCML)],
        implied: Implied::all(Tokens::Plain).with_reasoning(Tokens::Special),
        triggers: &[Trigger::marker("<｜GCML｜tool_calls>")],
        reasoning: Some(THINK),
        template: Some(invoke_template!("｜GCML｜")),
        stops: &["<|message_sep|>", "</s>"],
        arguments: ArgSyntax::XmlParams(params!("｜GCML｜")),
        layout: block_layout!("｜GCML｜", "tool_calls"),
    },
    new_region: |ctx| Box::new(InvokeRegion::new(ctx, InvokeRegionSpec::of(ctx, "GCML"))),
    write: render,
};

/// As the GigaChat 3.5 template writes calls (the DeepSeek encoder's layout): `\n\n`, the block,
/// invokes and parameters one per line; strings raw with `string="true"`, other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    dsml::render_tags(GCML, "tool_calls", calls, content)
}
