//! MiniMax M2 (M2, M2.1, M2.5, M2.7):
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="location">NYC</parameter>
//! <parameter name="days">3</parameter>
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! Several invokes in one block are parallel calls. Values are raw text typed by the tool's JSON
//! schema ([`crate::xml_value`]); entities are not decoded. A string value may hold any tag text,
//! `</minimax:tool_call>` included (frontend-crates#245): only `</parameter>` ends it. The chat
//! template's generation prompt ends in `<think>\n`, so completions start inside reasoning; a model
//! that goes from thinking straight into `<minimax:tool_call>` ends its reasoning there
//! (frontend-crates#108).

use super::xml_invoke::{python_json, write_params, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{
    ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax, Tokens, Trigger,
    THINK,
};

/// `<parameter name="K">V</parameter>`, typed by the tool's schema; dots.llm1 writes the same.
pub const PARAMS: ParamTags = ParamTags::new("<parameter name=\"{key}\">", "</parameter>");

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "minimax_m2",
        aliases: &["minimax"],
        families: &["MiniMax-M2", "MiniMax-M2.1", "MiniMax-M2.5", "MiniMax-M2.7"],
        description:
            "<minimax:tool_call> block of <invoke name=...> calls with <parameter name=...> \
                  values typed by the tool's schema",
        extra_markers: &[Marker::plain(Role::ReasoningExit, "<minimax:tool_call>")],
        implied: Implied::all(Tokens::Special)
            .with_call(Tokens::Plain)
            .with_params(Tokens::Plain),
        triggers: &[Trigger::marker("<minimax:tool_call>")],
        reasoning: Some(THINK),
        stops: &["[e~["],
        template: Some(CallTemplate::new(
            "<invoke name=\"{name}\">\n",
            "</invoke>",
            "\n",
        )),
        arguments: ArgSyntax::XmlParams(PARAMS),
        layout: Layout::section("<minimax:tool_call>\n", "\n</minimax:tool_call>"),
    },
    new_region: |ctx| Box::new(InvokeRegion::new(ctx, InvokeRegionSpec::of(ctx, "MiniMax"))),
    write: render,
};

/// What the chat template writes after the content: the block, one invoke per call, one parameter
/// per line; strings raw, other values as `tojson`.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let block = ("<minimax:tool_call>\n", "</minimax:tool_call>");
    render::content_and_calls(calls, content, block, "", |out, _, call| {
        out.push_str(&format!("<invoke name=\"{}\">\n", call.name));
        match call.arguments.as_object() {
            Some(map) => write_params(out, map, "parameter"),
            None => {
                out.push_str(&python_json(&call.arguments));
                out.push('\n');
            }
        }
        out.push_str("</invoke>\n");
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{parse, ParserConfig};
    use crate::tools::ToolSet;

    #[test]
    fn renders_like_the_chat_template() {
        let calls = [RenderCall {
            name: "f".into(),
            arguments: serde_json::json!({"q": "a b", "n": [1, {"k": true}]}),
            id: None,
        }];
        assert_eq!(
            SPEC.render(&calls, Some("Hi")),
            "Hi<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"q\">a b</parameter>\n\
             <parameter name=\"n\">[1, {\"k\": true}]</parameter>\n</invoke>\n</minimax:tool_call>"
        );
    }

    #[test]
    fn reasoning_ends_at_a_tool_call_without_closing_think() {
        for (reasoning, open, thought) in [
            ("native", "<think>\n", "\nNeed the weather.\n"),
            ("closing_only", "", "Need the weather.\n"),
        ] {
            let config =
                ParserConfig::new("minimax_m2", ToolSet::empty(), Some(reasoning)).unwrap();
            let text = format!(
                "{open}Need the weather.\n<minimax:tool_call>\n<invoke name=\"f\">\n\
                 <parameter name=\"x\">1</parameter>\n</invoke>\n</minimax:tool_call>"
            );
            let m = parse(&config, &text);
            assert_eq!(m.reasoning, thought);
            assert_eq!(m.tool_calls.len(), 1, "{reasoning}: {m:?}");
            assert_eq!(m.tool_calls[0].arguments, r#"{"x": "1"}"#);
        }
    }
}
