//! The names serving engines give each format: SGLang 0.5.23's `--tool-call-parser` names
//! (`FunctionCallParser.ToolCallParserEnum`), vLLM 0.33's (`ToolParserManager`), and Dynamo's
//! (`dynamo-parsers` 11.0.1's registry and `dynamo-parsers-v2` 0.9.6's families).
//!
//! One home for them, because users pick a parser by the name their engine uses, the engines
//! disagree (`deepseekv31`, `deepseek_v31`, `deepseek_v3_1` are one format), and a wrong pick
//! parses nothing. [`super::lookup`] accepts every name here; `format_info` reports them; the
//! format table in `docs/formats.md` is rendered from them. A name is listed only after reading
//! the engine's parser and finding it reads the format's wire text (a subclass that only changes
//! whitespace handling, `step5`'s, counts as the same format).
//!
//! A row whose format toolwire does not have is listed in [`NOT_SUPPORTED`] with the reason, so
//! every engine name either resolves or says why not.

/// One format's names in each engine (empty: the engine has no parser for it).
#[derive(Debug)]
pub struct EngineNames {
    pub format: &'static str,
    pub sglang: &'static [&'static str],
    pub vllm: &'static [&'static str],
    pub dynamo: &'static [&'static str],
}

/// A format toolwire does not read yet (keyed by the name it will have), and why.
#[derive(Debug)]
pub struct NotSupported {
    pub format: &'static str,
    pub reason: &'static str,
}

const fn row(
    format: &'static str,
    sglang: &'static [&'static str],
    vllm: &'static [&'static str],
    dynamo: &'static [&'static str],
) -> EngineNames {
    EngineNames {
        format,
        sglang,
        vllm,
        dynamo,
    }
}

#[rustfmt::skip]
pub static ENGINE_NAMES: &[EngineNames] = &[
    row("hermes", &["hermes", "qwen", "qwen25", "trinity"], &["hermes", "granite4", "qwen3_json"], &["hermes", "qwen25"]),
    row("llama3_json", &["llama3"], &["llama3_json", "llama4_json"], &["llama3_json"]),
    row("mistral", &["mistral"], &["mistral"], &["mistral"]),
    row("harmony", &["gpt-oss"], &["openai"], &["harmony", "harmony_text"]),
    row("beam", &["beam"], &["beam"], &[]),
    row("longcat", &[], &["longcat"], &[]),
    row("hunyuan_a13b", &[], &["hunyuan_a13b"], &[]),
    row("cohere_command", &["cohere_command4"], &["cohere_command3", "cohere_command4"], &[]),
    row("qwen3_coder", &["qwen3_coder", "mimo", "nanbeige", "step3p5"], &["qwen3_coder", "qwen3_xml", "mimo", "step3p5", "step5"], &["qwen3_coder", "nemotron_nano"]),
    row("glm45", &["glm", "glm45", "ling3", "spark25"], &["glm45", "ling3"], &[]),
    row("glm47", &["glm47"], &["glm47"], &["glm47"]),
    row("deepseek_v3_2", &["deepseekv32"], &["deepseek_v32"], &["deepseek_v3_2"]),
    row("deepseek_v4", &["deepseekv4"], &["deepseek_v4"], &["deepseek_v4", "deepseek-v4", "deepseekv4"]),
    row("deepseek_v4_1", &["deepseekv41"], &["deepseek_v41"], &[]),
    row("minimax_m2", &["minimax-m2"], &["minimax_m2"], &["minimax_m2"]),
    row("minimax_m3", &["minimax-m3"], &["minimax_m3"], &["minimax_m3", "minimax-m3", "minimax_m3_nom", "minimax-m3-nom"]),
    row("default", &[], &[], &["default"]),
    row("deepseek_v3", &["deepseekv3"], &["deepseek_v3"], &["deepseek_v3"]),
    row("deepseek_v3_1", &["deepseekv31"], &["deepseek_v31"], &["deepseek_v3_1"]),
    row("kimi_k2", &["kimi_k2"], &["kimi_k2"], &["kimi_k2"]),
    row("gemma4", &["gemma4"], &["gemma4"], &["gemma4", "gemma-4"]),
    row("pythonic", &["pythonic"], &["pythonic", "llama4_pythonic", "olmo3"], &["pythonic"]),
    row("phi4", &[], &["phi4_mini_json"], &["phi4"]),
    row("jamba", &[], &["jamba"], &["jamba"]),
    row("nemotron_deci", &[], &[], &["nemotron_deci"]),
    row("granite", &[], &["granite"], &[]),
    row("xlam", &[], &["xlam"], &[]),
    row("internlm", &["interns1"], &["internlm"], &[]),
    row("seed_oss", &[], &["seed_oss"], &[]),
    row("step3", &["step3"], &["step3"], &[]),
    row("functiongemma", &[], &["functiongemma"], &[]),
    row("hunyuan", &["hunyuan"], &["hy_v3"], &[]),
    row("hy_v4", &[], &["hy_v4"], &[]),
    row("apertus", &["apertus2509"], &["apertus"], &[]),
    row("gigachat3", &["gigachat3"], &["gigachat3"], &[]),
    row("lfm2", &["lfm2"], &["lfm2"], &[]),
    row("dots", &["dots"], &["dots"], &[]),
    row("iquest_q1", &["iquest_q1"], &[], &[]),
    row("granite_20b_fc", &[], &["granite-20b-fc"], &[]),
    row("ernie45", &[], &["ernie45"], &[]),
    row("poolside_v1", &["poolside_v1"], &["poolside_v1"], &[]),
    row("minicpm5", &["minicpm5"], &["minicpm5"], &[]),
    row("gigachat35", &["gigachat35"], &[], &[]),
    row("plamo3", &[], &["plamo3"], &[]),
    // `solar_open2` in SGLang and vLLM releases after the ones above (Upstage's patch set).
    row("solar_open2", &[], &[], &[]),
    row("kimi_k3", &["kimi_k3"], &["kimi_k3"], &["kimi_k3", "kimi-k3"]),
    row("k2_horizon", &["k2_horizon"], &["k2_horizon"], &[]),
    row("inkling", &["inkling"], &["inkling"], &["inkling"]),
    // Muse Spark and Muse Glimmer write the same messages (vLLM's `muse_glimmer` subclasses its
    // `muse` parser; SGLang's `muse` is its Glimmer detector).
    row("muse", &["muse"], &["muse", "musespark1x", "muse_glimmer"], &["muse_spark", "muse_spark_open", "muse_glimmer"]),
    row("response_template", &["response_template"], &["hf"], &[]),
];

#[rustfmt::skip]
pub static NOT_SUPPORTED: &[NotSupported] = &[
    NotSupported { format: "response_template", reason: "not one wire format: the engines build the parser from a `response_template` grammar each checkpoint ships in its tokenizer config" },
];

/// The row of the format with canonical name `format`, if an engine names it.
pub fn of(format: &str) -> Option<&'static EngineNames> {
    ENGINE_NAMES.iter().find(|row| row.format == format)
}

impl EngineNames {
    /// Every engine's names, SGLang's first.
    pub fn all(&self) -> impl Iterator<Item = &'static str> {
        self.sglang
            .iter()
            .chain(self.vllm)
            .chain(self.dynamo)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{lookup, REGISTRY};

    fn registered(format: &str) -> bool {
        REGISTRY.iter().any(|f| f.syntax.name == format)
    }

    #[test]
    fn every_row_is_a_format_or_says_why_not() {
        for row in ENGINE_NAMES {
            let listed = NOT_SUPPORTED.iter().any(|n| n.format == row.format);
            assert!(
                registered(row.format) != listed,
                "{}: registered {}, in NOT_SUPPORTED {listed}",
                row.format,
                registered(row.format)
            );
        }
        for entry in NOT_SUPPORTED {
            assert!(
                !registered(entry.format),
                "{} is a format now",
                entry.format
            );
            assert!(!entry.reason.is_empty(), "{}", entry.format);
        }
    }

    #[test]
    fn every_engine_name_of_a_format_finds_it() {
        for row in ENGINE_NAMES.iter().filter(|row| registered(row.format)) {
            for name in row.all() {
                let found = lookup(name).map(|f| f.syntax.name);
                assert_eq!(found, Some(row.format), "{name}");
            }
        }
    }

    #[test]
    fn each_engine_names_a_parser_once() {
        let engines: [fn(&EngineNames) -> &'static [&'static str]; 3] =
            [|r| r.sglang, |r| r.vllm, |r| r.dynamo];
        for engine in engines {
            let mut seen = std::collections::HashSet::new();
            for name in ENGINE_NAMES.iter().flat_map(engine) {
                assert!(seen.insert(*name), "{name} is in two rows");
            }
        }
    }

    /// An engine's name is said once, here: a format's own aliases are the other names.
    #[test]
    fn no_alias_repeats_an_engine_name() {
        for format in REGISTRY {
            let Some(row) = of(format.syntax.name) else {
                continue;
            };
            for alias in format.syntax.aliases {
                let engine = row.all().any(|name| name == *alias);
                assert!(
                    !engine,
                    "{}: alias {alias} is in engine_names.rs",
                    format.syntax.name
                );
            }
        }
    }
}
