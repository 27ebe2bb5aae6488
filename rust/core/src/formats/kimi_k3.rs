//! Kimi K3: XTML, blocks written with three special tokens, `<|open|>`, `<|close|>` and
//! `<|sep|>` (the channel names and attributes between them are ordinary text):
//!
//! ```text
//! <|open|>think<|sep|>reasoning<|close|>think<|sep|>
//! <|open|>response<|sep|>text<|close|>response<|sep|>
//! <|open|>tools<|sep|>
//! <|open|>call tool="get_weather" index="1"<|sep|>
//! <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
//! <|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>
//! <|close|>call<|sep|>
//! <|close|>tools<|sep|>
//! <|close|>message<|sep|>
//! ```
//!
//! (written here on several lines; the model writes no whitespace between blocks). `type="string"`
//! (or no `type`) is the raw value, unescaped; any other type is JSON, kept as a string when it is
//! not. Attribute values escape `&` and `"` as `&amp;` and `&quot;`. `index` counts from 1 and
//! restarts every turn, so it is not a call id. The response wrapper and the message close are
//! dropped, their text is content; the chat prompt often opens the first block itself (`think`,
//! so `reasoning="closing_only"`, or `response`, whose close then ends the content). Sources:
//! SGLang `kimik3_detector.py` / `kimik3_format.py` / `kimik3_structural_tag.py`, vLLM
//! `kimi_k3_tool_parser.py` (both `kimi_k3`), Dynamo's `xtml/kimi_k3_parser.rs`, which cites
//! Moonshot's `encoding_k3.py`. Not read: the whole-arguments `<|open|>json ...<|sep|>` body
//! Dynamo also accepts (an issue, `malformed_json`).

use super::markup::calls_or_wrapper;
use super::xml_invoke::{python_json, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::{
    type_name, ArgSyntax, CallTemplate, Implied, Layout, Marker, ParamTags, Role, Syntax, Tokens,
    Trigger,
};

const TOOLS_OPEN: &str = "<|open|>tools<|sep|>";
const TOOLS_CLOSE: &str = "<|close|>tools<|sep|>";
const CALL_OPEN: &str = "<|open|>call";
const CALL_CLOSE: &str = "<|close|>call<|sep|>";
const THINK_OPEN: &str = "<|open|>think<|sep|>";
const THINK_CLOSE: &str = "<|close|>think<|sep|>";
const RESPONSE_OPEN: &str = "<|open|>response<|sep|>";
const RESPONSE_CLOSE: &str = "<|close|>response<|sep|>";
const MESSAGE_CLOSE: &str = "<|close|>message<|sep|>";
const END_OF_MSG: &str = "<|end_of_msg|>";

const PARAMS: ParamTags = ParamTags::new(
    "<|open|>argument key=\"{key}\" type=\"{type}\"<|sep|>",
    "<|close|>argument<|sep|>",
)
.tight()
.type_attribute();

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "kimi_k3",
        aliases: &["kimik3"],
        families: &["Kimi-K3"],
        description: "XTML: <|open|>tools<|sep|> of <|open|>call tool=... index=...<|sep|> blocks \
                      with <|open|>argument key=... type=...<|sep|> values",
        extra_markers: &[
            Marker::special(Role::Namespace, "<|open|>"),
            Marker::special(Role::Namespace, "<|close|>"),
            Marker::special(Role::HeaderEnd, "<|sep|>"),
            Marker::plain(Role::ResponseStart, RESPONSE_OPEN),
            Marker::plain(Role::ResponseEnd, RESPONSE_CLOSE),
            Marker::plain(Role::TurnEnd, MESSAGE_CLOSE),
            Marker::special(Role::EndOfSequence, END_OF_MSG),
        ],
        implied: Implied::all(Tokens::Plain),
        triggers: &Trigger::markers([
            TOOLS_OPEN,
            RESPONSE_OPEN,
            RESPONSE_CLOSE,
            MESSAGE_CLOSE,
            END_OF_MSG,
        ]),
        reasoning: Some((THINK_OPEN, THINK_CLOSE)),
        template: Some(CallTemplate::new(
            "<|open|>call tool=\"{name}\" index=\"{index}\"<|sep|>",
            CALL_CLOSE,
            "",
        )),
        stops: &[],
        arguments: ArgSyntax::XmlParams(PARAMS),
        layout: Layout::section(TOOLS_OPEN, TOOLS_CLOSE),
    },
    new_region,
    write: render,
};

fn new_region(ctx: &RegionCtx<'_>) -> Box<dyn RegionParser> {
    calls_or_wrapper(ctx, |ctx| {
        let spec = InvokeRegionSpec {
            attr_entities: true,
            ..InvokeRegionSpec::of(ctx, "Kimi K3")
        };
        Box::new(InvokeRegion::new(ctx, spec))
    })
}

/// `&` and `"` as the chat template escapes them in attribute values.
fn escape_attr(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;")
}

/// As Moonshot's encoder writes a turn: content in a response block, then the tools block, one
/// call per block with 1-based indices, one argument block per argument (strings raw, other
/// values as JSON with the type's name).
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(content) = content {
        out.push_str(RESPONSE_OPEN);
        out.push_str(content);
        out.push_str(RESPONSE_CLOSE);
    }
    if calls.is_empty() {
        return out;
    }
    out.push_str(TOOLS_OPEN);
    for (i, call) in calls.iter().enumerate() {
        let name = escape_attr(&call.name);
        out.push_str(&format!(
            "{CALL_OPEN} tool=\"{name}\" index=\"{}\"<|sep|>",
            i + 1
        ));
        for (key, value) in call.arguments.as_object().into_iter().flatten() {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => python_json(other),
            };
            out.push_str(&format!(
                "<|open|>argument key=\"{}\" type=\"{}\"<|sep|>{text}<|close|>argument<|sep|>",
                escape_attr(key),
                type_name(value)
            ));
        }
        out.push_str(CALL_CLOSE);
    }
    out.push_str(TOOLS_CLOSE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{parse, ParserConfig};
    use crate::tools::ToolSet;

    #[test]
    fn escaped_attributes_and_typed_values() {
        let config = ParserConfig::new("kimi_k3", ToolSet::empty(), None).unwrap();
        let text = "<|open|>tools<|sep|><|open|>call tool=\"a&amp;b\" index=\"1\"<|sep|>\
                    <|open|>argument key=\"say &quot;hi&quot;\" type=\"string\"<|sep|> 3 \
                    <|close|>argument<|sep|><|open|>argument key=\"n\" type=\"number\"<|sep|>3\
                    <|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        let m = parse(&config, text);
        assert_eq!(m.tool_calls.len(), 1, "{m:?}");
        assert_eq!(m.tool_calls[0].name, "a&b");
        assert_eq!(
            m.tool_calls[0].arguments,
            r#"{"say \"hi\"": " 3 ", "n": 3}"#
        );
        let calls = [RenderCall {
            name: "a&b".into(),
            arguments: serde_json::json!({"say \"hi\"": " 3 ", "n": 3}),
            id: None,
        }];
        assert_eq!(SPEC.render(&calls, None), text);
    }
}
