//! ByteDance Seed-OSS: the qwen3_coder body inside `<seed:tool_call>`:
//!
//! ```text
//! <seed:tool_call>
//! <function=NAME>
//! <parameter=KEY>VALUE</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! Values are written inline (the chat template puts no newline around them, but one leading and
//! one trailing `\n` are formatting, as in qwen3_coder) and typed by the tool's schema; the
//! template writes non-string values with Jinja's `| string`, i.e. Python's `str()` (`True`,
//! `{'a': 1}`), which the schema typing reads. One block per call, blocks joined by `\n`.
//! Reasoning is `<seed:think>` ... `</seed:think>`, with `<seed:cot_budget_reflect>` notes inside
//! it (kept as reasoning text). `<seed:tool_call>`, `</seed:tool_call>`, `<seed:think>` and
//! `</seed:think>` are tokens of the Seed-OSS vocabulary (vLLM's `seed_oss` parser looks them up in
//! the vocab and refuses a tokenizer without the call tags); `<function=` and `<parameter=` are
//! text. The body is read by [`super::qwen3_coder`]'s region, wrapper tags swapped.

use serde_json::Value;

use super::qwen3_coder::{self, PARAMS};
use super::Format;
use crate::render::RenderCall;
use crate::spec::{ArgSyntax, CallTemplate, Implied, Marker, Role, Syntax, Tokens, Trigger};

const CALL_START: &str = "<seed:tool_call>";
const CALL_END: &str = "</seed:tool_call>";

pub static SPEC: Format = Format {
    syntax: Syntax {
        name: "seed_oss",
        aliases: &["seed-oss", "seedoss", "seed_oss_36b"],
        families: &["Seed-OSS-36B-Instruct", "Seed-OSS-36B-Base"],
        description: "<seed:tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></seed:tool_call>, values typed by the tool schema",
        extra_markers: &[
            Marker::special(Role::CallStart, CALL_START),
            Marker::special(Role::CallEnd, CALL_END),
            Marker::plain(Role::FunctionStart, "<function="),
            Marker::plain(Role::FunctionEnd, "</function>"),
        ],
        implied: Implied::NONE.with_params(Tokens::Plain).with_reasoning(Tokens::Special),
        triggers: &[Trigger::marker(CALL_START), Trigger::soft("<function=")],
        reasoning: Some(("<seed:think>", "</seed:think>")),
        stops: &["<seed:eos>"],
        // No structural-tag style writes Seed's inline values.
        template: Some(CallTemplate::new("<seed:tool_call>\n<function={name}>\n", "</function>\n</seed:tool_call>", "\n")),
        arguments: ArgSyntax::XmlParams(PARAMS),
        ..Syntax::EMPTY
    },
    new_region: qwen3_coder::new_region,
    write: render,
};

/// As the Seed-OSS chat template writes an assistant turn with calls: the content, a blank line,
/// then one block per call joined by `\n`; strings raw, other values as Python's `str()`.
fn render(_: &Syntax, calls: &[RenderCall], content: Option<&str>) -> String {
    let mut out = String::from(content.unwrap_or(""));
    for (k, call) in calls.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        } else if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(CALL_START);
        out.push_str("\n<function=");
        out.push_str(&call.name);
        out.push_str(">\n");
        if let Some(args) = call.arguments.as_object() {
            for (key, value) in args {
                out.push_str(&PARAMS.open.replace("{key}", key));
                match value {
                    Value::String(s) => out.push_str(s),
                    other => out.push_str(&crate::xml_value::python_str(other)),
                }
                out.push_str(PARAMS.close);
                out.push('\n');
            }
        }
        out.push_str("</function>\n");
        out.push_str(CALL_END);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_the_chat_template() {
        let calls = [
            RenderCall {
                name: "get_weather".into(),
                arguments: serde_json::json!({"location": "Barcelona, Spain", "days": 3, "o": {"a": true, "b": [null, "it's"]}}),
                id: None,
            },
            RenderCall {
                name: "ping".into(),
                arguments: serde_json::json!({}),
                id: None,
            },
        ];
        assert_eq!(
            SPEC.render(&calls, Some("Sure.")),
            "Sure.\n\n<seed:tool_call>\n<function=get_weather>\n<parameter=location>Barcelona, Spain</parameter>\n\
             <parameter=days>3</parameter>\n<parameter=o>{'a': True, 'b': [None, \"it's\"]}</parameter>\n\
             </function>\n</seed:tool_call>\n<seed:tool_call>\n<function=ping>\n</function>\n</seed:tool_call>"
        );
    }
}
