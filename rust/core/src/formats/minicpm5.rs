//! OpenBMB MiniCPM5 (SGLang `minicpm5`, vLLM `minicpm5`): bare function tags, no wrapper:
//!
//! ```text
//! <function name="get_weather"><param name="city">Paris</param></function>
//! <function name="write"><param name="text"><![CDATA[line 1
//! a < b & c]]></param></function>
//! ```
//!
//! Calls follow the content, one per line. The chat template tells the model to wrap a value that
//! holds `<`, `&` or a newline in a CDATA section; a CDATA section's text is the value's whatever
//! tags it holds, and text outside one is raw (entities are not decoded). Values are typed by the
//! tool's schema, strings kept exactly. `<function`, `</function>`, `<param` and `</param>` are
//! special tokens of the MiniCPM5 vocabulary (vLLM's parser turns `skip_special_tokens` off for
//! them; SGLang detects the family by those vocabulary entries); `name="..."` is text. The
//! generation prompt ends in `<think>\n` (thinking on) or an empty `<think>\n\n</think>\n\n` block.
//! Read by [`super::xml_invoke`]'s region, bare invokes with CDATA values.

use serde_json::Value;

use super::xml_invoke::{python_json, InvokeRegion, InvokeRegionSpec};
use super::Format;
use crate::render::{self, RenderCall};
use crate::spec::{ArgSyntax, CallTemplate, Implied, ParamTags, Syntax, Tokens, Trigger, THINK};

const PARAMS: ParamTags = ParamTags::new("<param name=\"{key}\">", "</param>");

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "minicpm5",
        aliases: &["minicpm5xml", "minicpm5_xml", "minicpm-5"],
        families: &["MiniCPM5-1B", "MiniCPM5-2B"],
        description:
            "<function name=NAME><param name=K>V</param></function> per call, no wrapper; \
                      values in CDATA when they hold <, & or newlines, typed by the tool schema",
        implied: Implied::all(Tokens::Special).with_reasoning(Tokens::Plain),
        triggers: &[Trigger::marker("<function")],
        reasoning: Some(THINK),
        template: Some(CallTemplate::new(
            "<function name=\"{name}\">",
            "</function>",
            "\n",
        )),
        arguments: ArgSyntax::XmlParams(PARAMS.tight()),
        ..Syntax::EMPTY
    },
    new_region: |ctx| {
        let spec = InvokeRegionSpec {
            cdata: true,
            ..InvokeRegionSpec::of(ctx, "MiniCPM5")
        };
        Box::new(InvokeRegion::new(ctx, spec))
    },
    write: render,
};

/// As the MiniCPM5 chat template writes an assistant turn: the content, then the calls one per
/// line; strings raw (in CDATA when they hold `<`, `&` or a newline), other values as JSON.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    render::each_on_its_line(calls, content, |out, call| {
        out.push_str(&format!("<function name=\"{}\">", call.name));
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                let text = match value {
                    Value::String(s) => s.clone(),
                    other => python_json(other),
                };
                out.push_str(&PARAMS.open.replace("{key}", key));
                out.push_str(&cdata_if_needed(&text));
                out.push_str(PARAMS.close);
            }
        }
        out.push_str("</function>");
    })
}

/// `text` in a CDATA section when it holds `<`, `&` or a newline (a `]]>` in it split across two
/// sections), else as it is.
fn cdata_if_needed(text: &str) -> String {
    if text.contains(['<', '&', '\n']) {
        format!("<![CDATA[{}]]>", text.replace("]]>", "]]]]><![CDATA[>"))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_with_markup_go_into_cdata() {
        assert_eq!(cdata_if_needed("Paris"), "Paris");
        assert_eq!(cdata_if_needed("a]]>b"), "a]]>b");
        assert_eq!(cdata_if_needed("a<b"), "<![CDATA[a<b]]>");
        assert_eq!(
            cdata_if_needed("x\n]]>y"),
            "<![CDATA[x\n]]]]><![CDATA[>y]]>"
        );
    }
}
