//! The raw encodings of vocabulary files: base64 (tiktoken ranks, Tekken) and protobuf
//! (SentencePiece models).

use super::VocabError;

/// Standard-alphabet base64 (`+`, `/`), padding optional. `None` on malformed input.
pub(super) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let data = text.trim_end_matches('=').as_bytes();
    if text.len() - data.len() > 2 || data.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(data.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0u32;
    for &c in data {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// A field value of a protobuf message (groups are rejected).
pub(super) enum ProtoValue<'a> {
    Varint(u64),
    Fixed,
    Bytes(&'a [u8]),
}

/// Minimal protobuf wire-format reader: enough to walk a SentencePiece `ModelProto`.
pub(super) struct Protobuf<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Protobuf<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Protobuf { data, pos: 0 }
    }

    fn varint(&mut self) -> Result<u64, VocabError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(VocabError::new("sentencepiece: truncated protobuf varint"));
            };
            self.pos += 1;
            value |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(VocabError::new(
            "sentencepiece: protobuf varint longer than 10 bytes",
        ))
    }

    fn skip(&mut self, n: u64) -> Result<&'a [u8], VocabError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| VocabError::new("sentencepiece: truncated protobuf field"))?;
        let slice = &self.data[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    /// The next `(field number, value)`, or `None` at the end of the message.
    pub(super) fn next_field(&mut self) -> Result<Option<(u64, ProtoValue<'a>)>, VocabError> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 7 {
            0 => ProtoValue::Varint(self.varint()?),
            1 => {
                self.skip(8)?;
                ProtoValue::Fixed
            }
            2 => {
                let len = self.varint()?;
                ProtoValue::Bytes(self.skip(len)?)
            }
            5 => {
                self.skip(4)?;
                ProtoValue::Fixed
            }
            wire => {
                return Err(VocabError::new(format!(
                    "sentencepiece: unsupported protobuf wire type {wire} (not a SentencePiece model file?)"
                )))
            }
        };
        Ok(Some((key >> 3, value)))
    }
}
