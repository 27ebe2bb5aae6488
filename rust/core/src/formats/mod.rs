//! The format registry: every wire format is one file in this folder with a `SPEC` (its
//! [`Syntax`] bound to its region parser and renderer), plus one line in `registry!` below, which
//! declares the module and lists the format. Shared readers, and modules that define several
//! formats, are declared here by hand. `cargo fmt` does not see modules a macro declares, so
//! `make fmt` and `make lint` name this folder's files to rustfmt as well. The names serving
//! engines give the formats are in [`engine_names`].

pub mod call_text;
pub mod dsml;
pub mod engine_names;
pub mod glm;
pub mod hunyuan;
pub mod json_calls;
pub mod markup;
pub mod pylit;
pub mod sectioned;
pub mod xml_invoke;
pub mod xml_params;

use crate::region::{RegionCtx, RegionParser};
use crate::render::RenderCall;
use crate::spec::Syntax;

/// A format: its syntax (plain data), and the code that reads and writes it. Both functions are
/// handed the syntax (`new_region` as `ctx.syntax`), so a family's formats can share them and
/// differ only in their syntax.
pub struct Format {
    pub syntax: Syntax,
    pub new_region: fn(&RegionCtx<'_>) -> Box<dyn RegionParser>,
    /// Writes an assistant turn's content and calls as the format's model does.
    pub write: fn(&Syntax, &[RenderCall], Option<&str>) -> String,
}

impl Format {
    /// The model-native text of `content`, then `calls`.
    pub fn render(&self, calls: &[RenderCall], content: Option<&str>) -> String {
        (self.write)(&self.syntax, calls, content)
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Format")
            .field("name", &self.syntax.name)
            .finish_non_exhaustive()
    }
}

/// Declares each single-format module (`pub mod name;`, its format `name::SPEC`) and lists every
/// format in `REGISTRY`, in order. `module::CONST` registers one of several formats a module
/// declared above defines.
macro_rules! registry {
    (@list [$($done:expr,)*]) => {
        /// Every format, in the order `formats()` lists them.
        pub static REGISTRY: &[&Format] = &[$($done),*];
    };
    (@list [$($done:expr,)*] $module:ident :: $format:ident, $($rest:tt)*) => {
        registry!(@list [$($done,)* &$module::$format,] $($rest)*);
    };
    (@list [$($done:expr,)*] $module:ident, $($rest:tt)*) => {
        pub mod $module;
        registry!(@list [$($done,)* &$module::SPEC,] $($rest)*);
    };
    ($($entries:tt)*) => {
        registry!(@list [] $($entries)*);
    };
}

registry! {
    hermes,
    llama3_json,
    mistral,
    harmony,
    beam,
    longcat,
    hunyuan_a13b,
    cohere,
    qwen3_coder,
    glm::GLM45,
    glm::GLM47,
    dsml::DEEPSEEK_V3_2,
    dsml::DEEPSEEK_V4,
    dsml::DEEPSEEK_V4_1,
    minimax_m2,
    minimax_m3,
    default,
    deepseek_v3,
    deepseek_v3_1,
    kimi_k2,
    gemma4,
    pythonic,
    phi4,
    jamba,
    nemotron_deci,
    granite,
    xlam,
    internlm,
    seed_oss,
    step3,
    functiongemma,
    hunyuan::HUNYUAN,
    hunyuan::HY_V4,
    apertus,
    gigachat3,
    lfm2,
    dots,
    iquest,
    granite_20b_fc,
    ernie45,
    poolside_v1,
    minicpm5,
    gigachat35,
    plamo3,
    solar_open2,
    kimi_k3,
    inkling,
    muse,
    k2_horizon,
}

/// Find a format by canonical name, alias or engine name (case-insensitive, `-` and `_`
/// interchangeable). A format's own names win over another format's engine names.
pub fn lookup(name: &str) -> Option<&'static Format> {
    let wanted = normalize(name);
    let is_wanted = |candidate: &str| normalize(candidate) == wanted;
    let own = REGISTRY.iter().copied().find(|format| {
        let syntax = &format.syntax;
        is_wanted(syntax.name) || syntax.aliases.iter().any(|a| is_wanted(a))
    });
    own.or_else(|| {
        let row = engine_names::ENGINE_NAMES
            .iter()
            .find(|row| row.all().any(is_wanted))?;
        REGISTRY
            .iter()
            .copied()
            .find(|format| format.syntax.name == row.format)
    })
}

/// The names besides the canonical one that [`lookup`] is given for `format`: its own aliases,
/// then its engine names (as each engine spells them, each once).
pub fn aliases(format: &Format) -> Vec<&'static str> {
    let syntax = &format.syntax;
    let engine = engine_names::of(syntax.name)
        .into_iter()
        .flat_map(|row| row.all());
    let mut out: Vec<&'static str> = Vec::new();
    for name in syntax.aliases.iter().copied().chain(engine) {
        if name != syntax.name && !out.contains(&name) {
            out.push(name);
        }
    }
    out
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
    use crate::spec::{Implied, Marker, Role, Syntax, Tokens, Typing};

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
                for marker in syntax.markers().filter(|m| m.role == role) {
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
        // the fifteen XML-parameter formats of this writing, and any added since
        assert!(xml >= 15, "{xml}");
    }

    /// One of `Implied`'s `with_*` setters.
    type WithGroup = fn(Implied, Tokens) -> Implied;

    /// A format lists in `extra_markers` only what no field implies: no marker twice, and no
    /// group of markers that `implied` would give (a format writes each tag once).
    #[test]
    fn extra_markers_restate_nothing_implied() {
        let mut problems = Vec::new();
        for format in REGISTRY {
            let syntax = &format.syntax;
            let all: Vec<Marker> = syntax.markers().collect();
            for (i, m) in all.iter().enumerate() {
                if all[..i].contains(m) {
                    problems.push(format!("{}: {m:?} twice", syntax.name));
                }
            }
            let groups: [(&str, WithGroup); 4] = [
                ("section", Implied::with_section),
                ("call", Implied::with_call),
                ("params", Implied::with_params),
                ("reasoning", Implied::with_reasoning),
            ];
            for (group, with) in groups {
                for tokens in [Tokens::Plain, Tokens::Special] {
                    let alone = Syntax {
                        extra_markers: &[],
                        implied: with(Implied::NONE, tokens),
                        ..*syntax
                    };
                    let group_markers: Vec<Marker> = alone.markers().collect();
                    let restated = !group_markers.is_empty()
                        && group_markers
                            .iter()
                            .all(|m| syntax.extra_markers.contains(m));
                    if restated {
                        problems.push(format!(
                            "{}: `implied` can give the {group} markers",
                            syntax.name
                        ));
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
