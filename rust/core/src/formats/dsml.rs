//! DeepSeek V3.2, V4 and V4.1: DSML, the DeepSeek markup for tool calls.
//!
//! ```text
//! <｜DSML｜function_calls>                      (V4: <｜DSML｜tool_calls>)
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="location" string="true">NYC</｜DSML｜parameter>
//! <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜function_calls>
//! ```
//!
//! Several invokes in one block are parallel calls. `string="true"`: the value is the raw string
//! (written without escaping, kept verbatim); `string="false"` or no attribute: a JSON value, and a
//! value that is not JSON is kept as a string. Only `｜DSML｜` is a special token (128825); every tag
//! is several tokens, so tags arrive split anywhere. Both block names are accepted by both formats
//! (models drift); V4 may write a parameterless call as `<｜DSML｜invoke name="N"/>`; an invoke body
//! may be one JSON object instead of parameters (SGLang accepts it); and a model that forgets the
//! block opener at long context (vllm#48931) still has its `<｜DSML｜invoke` blocks read as calls.
//!
//! V4.1 writes every tag name with a leading space (`<｜DSML｜ calls>`, `<｜DSML｜ invoke name=...>`,
//! `<｜DSML｜ parameter ...>`; SGLang `deepseekv41`, which notes the space is intentional), in the
//! same layout.
//!
//! The body is read by [`super::xml_invoke`]: string values are streamed as escaped JSON fragments
//! while they arrive; a JSON value is held until its closing tag, because a value that is not JSON
//! becomes a string.

use serde_json::Value;

use super::xml_invoke::{python_json, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, Implied, Marker, Role, Syntax, Tokens, Trigger, THINK};

const DSML: &str = "｜DSML｜";

/// DSML's parameter tags under the tag-name prefix `$prefix` (a literal: `｜DSML｜`, V4.1's
/// `｜DSML｜ `, GigaChat 3.5's `｜GCML｜`). `string="true"`: the raw string; `false`: a JSON value.
macro_rules! params {
    ($prefix:literal) => {
        $crate::spec::ParamTags::new(
            concat!(
                "<",
                $prefix,
                "parameter name=\"{key}\" string=\"{string}\">"
            ),
            concat!("</", $prefix, "parameter>"),
        )
        .string_attribute()
    };
}

/// One invoke under the tag-name prefix `$prefix`, invokes one per line.
macro_rules! invoke_template {
    ($prefix:literal) => {
        $crate::spec::CallTemplate::new(
            concat!("<", $prefix, "invoke name=\"{name}\">\n"),
            concat!("</", $prefix, "invoke>"),
            "\n",
        )
    };
}

/// The block of invokes named `$block` under the tag-name prefix `$prefix`, its tags on their
/// own lines.
macro_rules! block_layout {
    ($prefix:literal, $block:literal) => {
        $crate::spec::Layout::section(
            concat!("<", $prefix, $block, ">\n"),
            concat!("\n</", $prefix, $block, ">"),
        )
    };
}

pub(crate) use {block_layout, invoke_template, params};

/// V3.2 and V4 each read the other's section tags too.
const MARKERS_V3_2: &[Marker] = &[
    Marker::special(Role::Namespace, "｜DSML｜"),
    Marker::plain(Role::SectionStart, "<｜DSML｜tool_calls>"),
    Marker::plain(Role::SectionEnd, "</｜DSML｜tool_calls>"),
];
const MARKERS_V4: &[Marker] = &[
    Marker::special(Role::Namespace, "｜DSML｜"),
    Marker::plain(Role::SectionStart, "<｜DSML｜function_calls>"),
    Marker::plain(Role::SectionEnd, "</｜DSML｜function_calls>"),
];

pub static DEEPSEEK_V3_2: Format = Format {
    syntax: Syntax {
        name: "deepseek_v3_2",
        aliases: &[],
        families: &["DeepSeek-V3.2", "DeepSeek-V3.2-Speciale"],
        description: "DSML: <｜DSML｜function_calls> with <｜DSML｜invoke name=...> calls and \
                  <｜DSML｜parameter name=... string=...> values",
        extra_markers: MARKERS_V3_2,
        implied: Implied::all(Tokens::Plain).with_reasoning(Tokens::Special),
        triggers: &Trigger::markers([
            "<｜DSML｜function_calls>",
            "<｜DSML｜tool_calls>",
            "<｜DSML｜invoke",
        ]),
        reasoning: Some(THINK),
        stops: &["<｜end▁of▁sentence｜>"],
        template: Some(invoke_template!("｜DSML｜")),
        arguments: ArgSyntax::XmlParams(params!("｜DSML｜")),
        layout: block_layout!("｜DSML｜", "function_calls"),
    },
    new_region,
    write: render_v32,
};

pub static DEEPSEEK_V4: Format = Format {
    syntax: Syntax {
        name: "deepseek_v4",
        aliases: &[],
        families: &["DeepSeek-V4-Pro", "DeepSeek-V4-Flash"],
        description: "DSML: <｜DSML｜tool_calls> with <｜DSML｜invoke name=...> calls and \
                  <｜DSML｜parameter name=... string=...> values",
        triggers: &Trigger::markers([
            "<｜DSML｜tool_calls>",
            "<｜DSML｜function_calls>",
            "<｜DSML｜invoke",
        ]),
        extra_markers: MARKERS_V4,
        layout: block_layout!("｜DSML｜", "tool_calls"),
        ..DEEPSEEK_V3_2.syntax
    },
    new_region,
    write: render_v4,
};

const MARKERS_V41: &[Marker] = &[Marker::special(Role::Namespace, "｜DSML｜")];

pub static DEEPSEEK_V4_1: Format = Format {
    syntax: Syntax {
        name: "deepseek_v4_1",
        aliases: &["deepseek-v4.1"],
        families: &["DeepSeek-V4.1"],
        description:
            "DSML with spaced tag names: <｜DSML｜ calls> with <｜DSML｜ invoke name=...> calls and \
                      <｜DSML｜ parameter name=... string=...> values",
        extra_markers: MARKERS_V41,
        triggers: &Trigger::markers(["<｜DSML｜ calls>", "<｜DSML｜ invoke"]),
        template: Some(invoke_template!("｜DSML｜ ")),
        arguments: ArgSyntax::XmlParams(params!("｜DSML｜ ")),
        layout: block_layout!("｜DSML｜ ", "calls"),
        ..DEEPSEEK_V3_2.syntax
    },
    new_region,
    write: render_v41,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    Box::new(InvokeRegion::new(ctx, InvokeRegionSpec::of(ctx, "DSML")))
}

/// What the DeepSeek encoder writes after the assistant's content: `\n\n`, the block, invokes
/// joined by `\n`, parameters joined by `\n`.
fn render_block(block: &str, calls: &[RenderCall], content: Option<&str>) -> String {
    render_tags(DSML, block, calls, content)
}

/// [`render_block`] with the tag-name prefix `d` (V4.1: `｜DSML｜ `; GigaChat 3.5: `｜GCML｜`).
pub fn render_tags(d: &str, block: &str, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    if calls.is_empty() {
        return out;
    }
    out.push_str(&format!("\n\n<{d}{block}>\n"));
    for (k, call) in calls.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(&format!("<{d}invoke name=\"{}\">\n", call.name));
        match call.arguments.as_object() {
            Some(map) => {
                for (j, (key, value)) in map.iter().enumerate() {
                    if j > 0 {
                        out.push('\n');
                    }
                    let (string, text) = match value {
                        Value::String(s) => ("true", s.clone()),
                        other => ("false", python_json(other)),
                    };
                    out.push_str(&format!(
                        "<{d}parameter name=\"{key}\" string=\"{string}\">{text}</{d}parameter>"
                    ));
                }
            }
            None => out.push_str(&python_json(&call.arguments)),
        }
        out.push_str(&format!("\n</{d}invoke>"));
    }
    out.push_str(&format!("\n</{d}{block}>"));
    out
}

fn render_v32(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_block("function_calls", calls, content)
}

fn render_v4(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_block("tool_calls", calls, content)
}

/// The V4.1 encoder's layout (as V4's, with the spaced tag names).
fn render_v41(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render_tags("｜DSML｜ ", "calls", calls, content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{ParserConfig, StreamParser};
    use crate::tools::ToolSet;

    #[test]
    fn renders_like_the_encoder() {
        let calls = [RenderCall {
            name: "f".into(),
            arguments: serde_json::json!({"q": "a b", "n": [1, {"k": true}]}),
            id: None,
        }];
        assert_eq!(
            DEEPSEEK_V3_2.render(&calls, Some("Hi")),
            "Hi\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n\
             <｜DSML｜parameter name=\"q\" string=\"true\">a b</｜DSML｜parameter>\n\
             <｜DSML｜parameter name=\"n\" string=\"false\">[1, {\"k\": true}]</｜DSML｜parameter>\n\
             </｜DSML｜invoke>\n</｜DSML｜function_calls>"
        );
    }

    fn token_mode(format: &str, reasoning: Option<&str>) -> StreamParser {
        let config = ParserConfig::new(format, ToolSet::empty(), reasoning).unwrap();
        let special = config.special_marker_texts();
        let mut stream = StreamParser::new(config);
        stream.use_special_markers(&special);
        stream
    }

    #[test]
    fn token_mode_matches_the_dsml_token_only() {
        let mut stream = token_mode("deepseek_v4", None);
        let d = stream.markers().sentinel_for(DSML).unwrap().to_owned();
        let text = format!(
            "typed <｜DSML｜tool_calls> stays text\n\n<{d}tool_calls>\n<{d}invoke name=\"f\">\n\
             <{d}parameter name=\"x\" string=\"true\">a</｜DSML｜parameter>b</{d}parameter>\n\
             </{d}invoke>\n</{d}tool_calls>"
        );
        for c in text.chars() {
            stream.feed(&c.to_string()).unwrap();
        }
        stream.finish(None).unwrap();
        let m = stream.message();
        assert_eq!(m.content, "typed <｜DSML｜tool_calls> stays text\n\n");
        assert_eq!(m.tool_calls.len(), 1, "{m:?}");
        assert_eq!(
            m.tool_calls[0].arguments,
            r#"{"x": "a</｜DSML｜parameter>b"}"#
        );
    }

    #[test]
    fn reasoning_holds_dsml_written_while_thinking() {
        let config = ParserConfig::new("deepseek_v3_2", ToolSet::empty(), Some("native")).unwrap();
        let text =
            "<think>maybe <｜DSML｜function_calls> here</think>Sure.\n\n<｜DSML｜function_calls>\n\
                    <｜DSML｜invoke name=\"f\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let m = crate::stream::parse(&config, text);
        assert_eq!(m.reasoning, "maybe <｜DSML｜function_calls> here");
        assert_eq!(m.content, "Sure.\n\n");
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.tool_calls[0].arguments, "{}");
    }

    #[test]
    fn hostile_inputs_do_not_panic_and_stay_linear() {
        let config = ParserConfig::new("deepseek_v3_2", ToolSet::empty(), None).unwrap();
        let deep = format!(
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">{}",
            "{".repeat(100_000)
        );
        let m = crate::stream::parse(&config, &deep);
        assert_eq!(m.issues[0].kind, crate::message::IssueKind::Truncated);
        let spaces = format!("<｜DSML｜invoke name=\"f\"/>{}x", " ".repeat(200_000));
        let mut stream = StreamParser::new(config.clone());
        for chunk in spaces.as_bytes().chunks(7) {
            stream.feed(std::str::from_utf8(chunk).unwrap()).unwrap();
        }
        stream.finish(None).unwrap();
        assert_eq!(stream.message().tool_calls.len(), 1);
        for junk in [
            "<｜DSML｜invoke name=\"",
            "<｜DSML｜invoke name='a'>\u{10FF00}<｜DSML｜parameter name=>",
            "<｜DSML｜tool_calls><｜DSML｜<｜DSML｜",
        ] {
            let _ = crate::stream::parse(&config, junk);
        }
    }
}
