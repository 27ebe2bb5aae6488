//! The format registry: every wire format is one file in this folder with a `SPEC` (its
//! [`Syntax`] bound to its region parser and renderer), plus one line in `REGISTRY`.

pub mod apertus;
pub mod beam;
pub mod call_text;
pub mod cohere;
pub mod deepseek_v3;
pub mod deepseek_v3_1;
pub mod default;
pub mod dots;
pub mod dsml;
pub mod ernie45;
pub mod functiongemma;
pub mod gemma4;
pub mod gigachat3;
pub mod glm;
pub mod granite;
pub mod granite_20b_fc;
pub mod harmony;
pub mod hermes;
pub mod hunyuan;
pub mod hunyuan_a13b;
pub mod inkling;
pub mod internlm;
pub mod iquest;
pub mod jamba;
pub mod json_calls;
pub mod k2_horizon;
pub mod kimi_k2;
pub mod kimi_k3;
pub mod lfm2;
pub mod llama3_json;
pub mod longcat;
pub mod markup;
pub mod minimax_m2;
pub mod minimax_m3;
pub mod mistral;
pub mod muse;
pub mod nemotron_deci;
pub mod phi4;
pub mod pylit;
pub mod pythonic;
pub mod qwen3_coder;
pub mod sectioned;
pub mod seed_oss;
pub mod step3;
pub mod xlam;
pub mod xml_invoke;
pub mod xml_params;

use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::Syntax;

/// A format: its syntax (plain data), and the code that reads and writes it. Both functions read
/// their tag texts from `syntax`.
pub struct Format {
    pub syntax: Syntax,
    pub new_region: fn(&RegionCtx<'_>) -> Box<dyn RegionParser>,
    pub render: fn(&[RenderCall], Option<&str>) -> String,
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Format")
            .field("name", &self.syntax.name)
            .finish_non_exhaustive()
    }
}

/// Every format, in the order `formats()` lists them.
pub static REGISTRY: &[&Format] = &[
    &hermes::SPEC,
    &llama3_json::SPEC,
    &mistral::SPEC,
    &harmony::SPEC,
    &beam::SPEC,
    &longcat::SPEC,
    &hunyuan_a13b::SPEC,
    &cohere::SPEC,
    &qwen3_coder::SPEC,
    &glm::GLM45,
    &glm::GLM47,
    &dsml::DEEPSEEK_V3_2,
    &dsml::DEEPSEEK_V4,
    &dsml::DEEPSEEK_V4_1,
    &minimax_m2::SPEC,
    &minimax_m3::SPEC,
    &default::SPEC,
    &deepseek_v3::SPEC,
    &deepseek_v3_1::SPEC,
    &kimi_k2::SPEC,
    &gemma4::SPEC,
    &pythonic::SPEC,
    &phi4::SPEC,
    &jamba::SPEC,
    &nemotron_deci::SPEC,
    &granite::SPEC,
    &xlam::SPEC,
    &internlm::SPEC,
    &seed_oss::SPEC,
    &step3::SPEC,
    &functiongemma::SPEC,
    &hunyuan::HUNYUAN,
    &hunyuan::HY_V4,
    &apertus::SPEC,
    &gigachat3::SPEC,
    &lfm2::SPEC,
    &dots::SPEC,
    &iquest::SPEC,
    &granite_20b_fc::SPEC,
    &ernie45::SPEC,
    &kimi_k3::SPEC,
    &inkling::SPEC,
    &muse::SPEC,
    &k2_horizon::SPEC,
];

/// Find a format by canonical name or alias (case-insensitive, `-` and `_` interchangeable).
pub fn lookup(name: &str) -> Option<&'static Format> {
    let wanted = normalize(name);
    REGISTRY.iter().copied().find(|format| {
        let syntax = &format.syntax;
        normalize(syntax.name) == wanted || syntax.aliases.iter().any(|a| normalize(a) == wanted)
    })
}

fn normalize(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|format| format.syntax.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Role, Typing};

    /// The parameter markers a syntax lists (for the grammar's exclusions and the engine's special
    /// tokens) are the texts its `ParamTags` give the parser, renderer and grammar.
    #[test]
    fn parameter_markers_agree_with_the_parameter_tags() {
        let mut xml = 0;
        for format in REGISTRY {
            let syntax = &format.syntax;
            let Some(params) = syntax.arguments.params() else {
                continue;
            };
            xml += 1;
            let (key_end, value_open) = params.after_key();
            let expect = [
                (Role::ParamStart, vec![params.key_open(), params.tag_head()]),
                (Role::ParamEnd, vec![params.close]),
                (Role::KeyStart, vec![params.key_open()]),
                (Role::KeyEnd, vec![key_end]),
                (Role::ValueStart, vec![value_open]),
                (Role::ValueEnd, vec![params.close]),
            ];
            for (role, texts) in expect {
                for marker in syntax.markers.iter().filter(|m| m.role == role) {
                    assert!(
                        texts.contains(&marker.text),
                        "{}: {role:?} {marker:?}",
                        syntax.name
                    );
                }
            }
            for (hole, typing) in [
                ("{string}", Typing::StringAttribute),
                ("{type}", Typing::TypeAttribute),
            ] {
                let attribute = params.open.contains(hole);
                assert_eq!(attribute, params.typing == typing, "{}", syntax.name);
            }
            assert!(params.open.contains("{key}"), "{}", syntax.name);
        }
        assert_eq!(xml, 18);
    }
}
