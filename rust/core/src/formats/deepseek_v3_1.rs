//! DeepSeek V3.1 / V3.1-Terminus / V3.2-Exp: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>`
//! (no type, no fence). Same special tokens as DeepSeek V3; in thinking mode the prompt opens
//! `<think>`. The V3 shape `function<｜tool▁sep｜>NAME\n```json ...` is read as well.

use super::deepseek_v3::{render_calls, FAMILY, SEP, SYNTAX};
use super::sectioned::SectionRegion;
use super::Format;
use crate::render::RenderCall;
use crate::spec::{CallTemplate, Implied, Marker, Role, Syntax, Tokens};

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "deepseek_v3_1",
        aliases: &[],
        families: &["DeepSeek-V3.1", "DeepSeek-V3.1-Terminus", "DeepSeek-V3.2-Exp"],
        description: "<｜tool▁calls▁begin｜>, then per call <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>",
        template: Some(CallTemplate::new("<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "")),
        stops: &["<｜end▁of▁sentence｜>"],
        extra_markers: &[Marker::special(Role::ArgsStart, SEP)],
        implied: Implied::all(Tokens::Special),
        ..FAMILY
    },
    new_region: |ctx| Box::new(SectionRegion::new(ctx, SYNTAX)),
    write: render,
};

fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_calls(calls, content, "", |out, call| {
        out.push_str(&format!("{}{SEP}{}", call.name, call.arguments_json()));
    })
}
