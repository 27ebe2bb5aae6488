//! How the token strings of a `tokenizer.json` model map to bytes: byte-level (GPT-2) or
//! Metaspace/SentencePiece, detected from the decoder, pre-tokenizer or model.

use serde_json::{Map, Value};

use super::VocabError;

/// How the token strings of a `tokenizer.json` model map to bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Mapping {
    /// GPT-2 byte-level alphabet.
    ByteLevel,
    /// Plain text after string replacements (`▁` → ` `), with optional `<0xNN>` byte
    /// fallback tokens.
    Text {
        replacements: Vec<(String, String)>,
        byte_fallback: bool,
    },
}

impl Mapping {
    pub(super) fn token_bytes(&self, token: &str) -> Vec<u8> {
        match self {
            Mapping::ByteLevel => byte_level_decode(token),
            Mapping::Text {
                replacements,
                byte_fallback,
            } => {
                if *byte_fallback {
                    if let Some(b) = parse_byte_token(token) {
                        return vec![b];
                    }
                }
                let mut text = token.to_owned();
                for (from, to) in replacements {
                    if !from.is_empty() && text.contains(from.as_str()) {
                        text = text.replace(from.as_str(), to);
                    }
                }
                text.into_bytes()
            }
        }
    }
}

/// `<0xNN>` (two hex digits) → byte `NN`.
pub(super) fn parse_byte_token(token: &str) -> Option<u8> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

fn type_of(section: &Value) -> Option<&str> {
    section.get("type").and_then(Value::as_str)
}

pub(super) fn detect_mapping(
    root: &Map<String, Value>,
    model: &Map<String, Value>,
) -> Result<Mapping, VocabError> {
    let model_byte_fallback = model.get("byte_fallback").and_then(Value::as_bool) == Some(true);
    match root.get("decoder") {
        Some(decoder) if !decoder.is_null() => {
            let mut byte_level = false;
            let mut byte_fallback = model_byte_fallback;
            let mut replacements = Vec::new();
            let mut visit = |d: &Value| -> Result<(), VocabError> {
                match type_of(d) {
                    Some("ByteLevel") => byte_level = true,
                    Some("Metaspace") => {
                        let replacement = d
                            .get("replacement")
                            .and_then(Value::as_str)
                            .unwrap_or("\u{2581}");
                        replacements.push((replacement.to_owned(), " ".to_owned()));
                    }
                    Some("Replace") => {
                        let from = d
                            .get("pattern")
                            .and_then(|p| p.get("String"))
                            .and_then(Value::as_str);
                        let to = d.get("content").and_then(Value::as_str);
                        match (from, to) {
                            (Some(from), Some(to)) => replacements.push((from.to_owned(), to.to_owned())),
                            _ => {
                                return Err(VocabError::new(
                                    "tokenizer.json: unsupported Replace decoder (only plain-string patterns are supported)",
                                ))
                            }
                        }
                    }
                    Some("ByteFallback") => byte_fallback = true,
                    // Fuse only joins strings; Strip would drop the leading space, which we
                    // deliberately keep (continuation streams).
                    Some("Fuse") | Some("Strip") => {}
                    Some(other) => {
                        return Err(VocabError::new(format!(
                            "tokenizer.json: unsupported decoder type {other:?}"
                        )))
                    }
                    None => return Err(VocabError::new("tokenizer.json: decoder without a type")),
                }
                Ok(())
            };
            if type_of(decoder) == Some("Sequence") {
                let children = decoder
                    .get("decoders")
                    .and_then(Value::as_array)
                    .ok_or_else(|| {
                        VocabError::new("tokenizer.json: Sequence decoder without decoders")
                    })?;
                for child in children {
                    visit(child)?;
                }
            } else {
                visit(decoder)?;
            }
            if byte_level {
                if !replacements.is_empty() {
                    return Err(VocabError::new(
                        "tokenizer.json: ByteLevel decoder combined with Replace/Metaspace is not supported",
                    ));
                }
                Ok(Mapping::ByteLevel)
            } else {
                Ok(Mapping::Text {
                    replacements,
                    byte_fallback,
                })
            }
        }
        _ => {
            // No decoder: infer from the pre-tokenizer, then the model.
            let mut pre = Vec::new();
            if let Some(p) = root.get("pre_tokenizer").filter(|p| !p.is_null()) {
                match p.get("pretokenizers").and_then(Value::as_array) {
                    Some(children) => pre.extend(children.iter()),
                    None => pre.push(p),
                }
            }
            if pre.iter().any(|p| type_of(p) == Some("ByteLevel")) {
                return Ok(Mapping::ByteLevel);
            }
            if let Some(m) = pre.iter().find(|p| type_of(p) == Some("Metaspace")) {
                let replacement = m
                    .get("replacement")
                    .and_then(Value::as_str)
                    .unwrap_or("\u{2581}");
                return Ok(Mapping::Text {
                    replacements: vec![(replacement.to_owned(), " ".to_owned())],
                    byte_fallback: model_byte_fallback,
                });
            }
            if model_byte_fallback || model.get("type").and_then(Value::as_str) == Some("Unigram") {
                return Ok(Mapping::Text {
                    replacements: vec![("\u{2581}".to_owned(), " ".to_owned())],
                    byte_fallback: model_byte_fallback,
                });
            }
            Err(VocabError::new(
                "tokenizer.json: no decoder, and the pre-tokenizer/model do not say whether it is ByteLevel or Metaspace",
            ))
        }
    }
}

/// The GPT-2 byte-level alphabet: byte `b` is written as `char(BYTE_TO_CHAR[b])`.
/// Printable Latin-1 bytes stand for themselves; the other 68 bytes are mapped, in
/// order, to U+0100..U+0143.
pub(super) fn byte_level_alphabet() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut next = 0x100u16;
    for (b, slot) in table.iter_mut().enumerate() {
        let printable = matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
        if printable {
            *slot = b as u16;
        } else {
            *slot = next;
            next += 1;
        }
    }
    table
}

/// Inverse of the byte-level alphabet for one character (slow reference version).
#[cfg(test)]
pub(super) fn byte_level_char(c: char) -> Option<u8> {
    let c = c as u32;
    match c {
        0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF => Some(c as u8),
        0x100..=0x143 => {
            // The k-th non-printable byte (in byte order) maps to 0x100 + k.
            let k = (c - 0x100) as usize;
            (0u16..=255)
                .filter(|b| !matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF))
                .nth(k)
                .map(|b| b as u8)
        }
        _ => None,
    }
}

/// Decodes a byte-level token string; if it has a character outside the alphabet, the
/// token is taken as its raw UTF-8 (the behaviour of the `tokenizers` library).
fn byte_level_decode(token: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(token.len());
    for c in token.chars() {
        match byte_level_char_fast(c) {
            Some(b) => out.push(b),
            None => return token.as_bytes().to_vec(),
        }
    }
    out
}

/// Table-driven version of [`byte_level_char`] (the table is built once).
pub(super) fn byte_level_char_fast(c: char) -> Option<u8> {
    use std::sync::OnceLock;
    static INVERSE: OnceLock<[u8; 0x144]> = OnceLock::new();
    let inverse = INVERSE.get_or_init(|| {
        // 0 marks "not in the alphabet"; byte 0 is represented at U+0100 and is
        // recovered by the explicit check below.
        let mut inv = [0u8; 0x144];
        for (b, &c) in byte_level_alphabet().iter().enumerate() {
            inv[c as usize] = b as u8;
        }
        inv
    });
    let c = c as u32;
    if c == 0x100 {
        return Some(0);
    }
    match inverse.get(c as usize) {
        Some(&b) if b != 0 => Some(b),
        _ => None,
    }
}
