//! Robustness of the pythonic and JSON-family formats beyond the case matrix: hostile nesting,
//! long inputs streamed byte by byte, special-token input, native reasoning, and random inputs
//! (no panic, and the same message however the text is split).

use std::time::{Duration, Instant};

use proptest::prelude::*;
use toolwire_core::message::Message;
use toolwire_core::stream::{parse, ParserConfig, StreamParser};
use toolwire_core::tools::ToolSet;

const FORMATS: &[&str] = &[
    "pythonic",
    "phi4",
    "jamba",
    "nemotron_deci",
    "granite",
    "xlam",
    "internlm",
];

fn config(format: &str) -> ParserConfig {
    ParserConfig::new(format, ToolSet::empty(), None).unwrap()
}

fn stream(config: &ParserConfig, chunks: &[&str]) -> Message {
    let mut s = StreamParser::new(config.clone());
    for c in chunks {
        s.feed(c).unwrap();
    }
    s.finish(None).unwrap();
    s.message()
}

type Shape = (String, Vec<(String, String)>, Vec<(&'static str, String)>);

fn shape(m: &Message) -> Shape {
    (
        m.content.clone(),
        m.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments.clone()))
            .collect(),
        m.issues
            .iter()
            .map(|i| (i.kind.as_str(), i.raw.clone()))
            .collect(),
    )
}

fn by_chars(text: &str) -> Vec<String> {
    text.chars().map(String::from).collect()
}

#[test]
fn hostile_nesting_is_an_issue_not_a_crash() {
    let cfg = config("pythonic");
    for open in ["[", "(", "{'k': "] {
        let text = format!("[f(a={}", open.repeat(200_000));
        let m = parse(&cfg, &text);
        assert!(m.tool_calls.is_empty());
        assert_eq!(m.issues.len(), 1, "{:?}", m.issues.first().map(|i| i.kind));
        assert_eq!(m.issues[0].kind.as_str(), "malformed_json");
        assert_eq!(m.issues[0].raw, text, "the raw text is kept whole");
    }
    let text = format!(
        "<|python_start|>[f(a={}1{})]<|python_end|>after",
        "[".repeat(50),
        "]".repeat(50)
    );
    let m = parse(&cfg, &text);
    assert_eq!(m.tool_calls.len(), 1);
    assert_eq!(m.content, "after");
}

#[test]
fn long_values_stream_in_linear_time() {
    let long = "x".repeat(200_000);
    let inputs = [
        ("pythonic", format!("[search(query='{long}', tags=[{}1])]", "1, ".repeat(20_000))),
        ("pythonic", format!("<function_calls>\n{}</function_calls>", "ping()\n".repeat(20_000))),
        ("phi4", format!("functools[{{\"name\": \"search\", \"arguments\": {{\"query\": \"{long}\"}}}}]")),
        ("xlam", format!("```json\n[{{\"name\": \"search\", \"arguments\": {{\"query\": \"{long}\"}}}}]\n```")),
        ("internlm", format!("<|action_start|><|plugin|>\n{{\"name\": \"search\", \"parameters\": {{\"query\": \"{long}\"}}}}<|action_end|>")),
        ("pythonic", "[a ".repeat(50_000)),
        ("phi4", "functools ".repeat(30_000)),
    ];
    for (format, text) in inputs {
        let cfg = config(format);
        let start = Instant::now();
        let chars = by_chars(&text);
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        let streamed = stream(&cfg, &refs);
        let elapsed = start.elapsed();
        assert!(
            elapsed < Duration::from_secs(20),
            "{format}: {elapsed:?} for {} bytes",
            text.len()
        );
        assert_eq!(shape(&streamed), shape(&parse(&cfg, &text)), "{format}");
    }
}

#[test]
fn special_token_markers_match_only_as_tokens() {
    let cases = [
        (
            "jamba",
            "<tool_calls>",
            "[{\"name\": \"ping\", \"arguments\": {}}]</tool_calls>",
        ),
        ("pythonic", "<|python_start|>", "ping()"),
        (
            "granite",
            "<|tool_call|>",
            "[{\"name\": \"ping\", \"arguments\": {}}]",
        ),
        (
            "internlm",
            "<|action_start|>",
            "<|plugin|>\n{\"name\": \"ping\", \"parameters\": {}}<|action_end|>",
        ),
    ];
    for (format, marker, body) in cases {
        let cfg = config(format);
        let special = cfg.special_marker_texts();
        // As text, the marker is content.
        let mut typed = StreamParser::new(cfg.clone());
        typed.use_special_markers(&special);
        typed.feed(&format!("{marker}{body}")).unwrap();
        typed.finish(None).unwrap();
        assert!(
            typed.message().tool_calls.is_empty(),
            "{format}: typed marker made a call"
        );
        // As a token, it opens the call; every special marker in the body is a token too.
        let mut tokens = StreamParser::new(cfg.clone());
        tokens.use_special_markers(&special);
        let mut text = format!("{marker}{body}");
        for m in &special {
            if let Some(s) = tokens.markers().sentinel_for(m) {
                text = text.replace(m, s);
            }
        }
        tokens.feed(&text).unwrap();
        tokens.finish(None).unwrap();
        let m = tokens.message();
        assert_eq!(m.tool_calls.len(), 1, "{format}: {m:?}");
        assert_eq!(m.tool_calls[0].name, "ping");
        assert!(
            m.issues.is_empty() && m.content.is_empty(),
            "{format}: {m:?}"
        );
    }
}

#[test]
fn nemotron_reasoning_then_call() {
    let cfg = ParserConfig::new("nemotron", ToolSet::empty(), Some("native")).unwrap();
    let text = "<think>\nThe user wants NYC weather.\n</think>\n<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]</TOOLCALL>";
    for chunks in [vec![text.to_owned()], by_chars(text)] {
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        let m = stream(&cfg, &refs);
        assert_eq!(m.reasoning, "\nThe user wants NYC weather.\n");
        assert_eq!(m.tool_calls.len(), 1);
        assert_eq!(m.content_or_none(), None);
    }
}

fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        "'",
        "\"",
        "\\",
        "=",
        ",",
        ":",
        " ",
        "\n",
        ";",
        "f",
        "get_weather",
        "a",
        "x",
        "1",
        "-",
        ".",
        "e",
        "True",
        "None",
        "r",
        "u",
        "é",
        "😀",
        "\"\"\"",
        "'''",
        "\\u00e9",
        "\\x4",
        "<|python_start|>",
        "<|python_end|>",
        "<function_calls>",
        "</function_calls>",
        "functools",
        "<tool_calls>",
        "</tool_calls>",
        "<TOOLCALL>",
        "</TOOLCALL>",
        "<|tool_call|>",
        "<tool_call>",
        "</tool_call>",
        "```",
        "```json\n",
        "[TOOL_CALLS]",
        "<|action_start|>",
        "<|plugin|>",
        "<|action_end|>",
        "<|interpreter|>",
        "{\"name\": \"f\", \"arguments\": {\"k\": [1]}}",
        "\"name\"",
        "\"arguments\"",
        "location=\"NYC\"",
        "<",
        "|",
        "`",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn random_text_never_panics_and_splits_agree(
        pieces in prop::collection::vec(piece(), 0..40),
        cut in any::<prop::sample::Index>(),
    ) {
        let text: String = pieces.concat();
        for format in FORMATS {
            let cfg = config(format);
            let whole = parse(&cfg, &text);
            let chars = by_chars(&text);
            let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
            let char_by_char = stream(&cfg, &refs);
            prop_assert_eq!(shape(&whole), shape(&char_by_char), "{} {:?}", format, text);
            let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
            let at = bounds[cut.index(bounds.len())];
            let two = stream(&cfg, &[&text[..at], &text[at..]]);
            prop_assert_eq!(shape(&whole), shape(&two), "{} {:?} split at {}", format, text, at);
        }
    }
}

#[test]
fn aliases_resolve() {
    for (alias, name) in [
        ("llama4_pythonic", "pythonic"),
        ("olmo3", "pythonic"),
        ("llama4", "pythonic"),
        ("phi4_mini_json", "phi4"),
        ("phi-4", "phi4"),
        ("nemotron", "nemotron_deci"),
        ("llama_nemotron", "nemotron_deci"),
        ("granite3", "granite"),
        ("granite3.3", "granite"),
        ("xlam_llama", "xlam"),
        ("xlam_qwen", "xlam"),
        ("internlm2", "internlm"),
        ("granite4", "hermes"),
    ] {
        assert_eq!(config(alias).spec.syntax.name, name, "{alias}");
    }
}

/// Mistral pre-v11 writes each call's id in the call object; that id, not a made-up one, is the
/// call's, in the message and in the first delta of the call, however the text is split.
#[test]
fn mistral_pre_v11_calls_keep_the_id_the_model_wrote() {
    let text = "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}, \"id\": \"a1B2c3D4e\"}, \
                {\"id\": \"Z9y8X7w6v\", \"name\": \"get_time\", \"arguments\": {}}, {\"name\": \"ping\", \"arguments\": {}}]";
    let config = config("mistral");
    for cut in 0..=text.len() {
        if !text.is_char_boundary(cut) {
            continue;
        }
        let mut s = StreamParser::new(config.clone());
        let mut deltas = s.feed(&text[..cut]).unwrap();
        deltas.extend(s.feed(&text[cut..]).unwrap());
        deltas.extend(s.finish(None).unwrap());
        let message = s.message();
        let ids: Vec<&str> = message.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(&ids[..2], ["a1B2c3D4e", "Z9y8X7w6v"], "cut at {cut}");
        assert!(!ids[2].is_empty() && ids[2] != ids[0] && ids[2] != ids[1]);
        let streamed: Vec<&str> = deltas
            .iter()
            .flat_map(|d| &d.tool_calls)
            .filter_map(|c| c.id.as_deref())
            .collect();
        assert_eq!(streamed, ids, "cut at {cut}");
        assert!(message.issues.is_empty(), "{:?}", message.issues);
    }
}
