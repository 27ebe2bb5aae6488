//! Incremental decoding of token ids into text and special-token pieces.

use std::sync::Arc;

use super::{Kind, Vocab};

/// A piece of decoded output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text of consecutive ordinary tokens.
    Text(String),
    /// One added/special token (see [`Vocab::is_added`]), with its text.
    Special { id: u32, text: String },
}

/// Incremental decoder: feed token ids, get text pieces.
///
/// * Consecutive ordinary tokens are merged into one [`Piece::Text`] per `push`.
/// * Each added/special token becomes its own [`Piece::Special`], after the text before it.
/// * A UTF-8 sequence left incomplete at the end of a `push` is held back until a later
///   token completes it. It is emitted as U+FFFD if the next token does not continue it,
///   if a special or unknown token comes first, or at [`TokenDecoder::finish`].
/// * Unknown ids become U+FFFD; invalid bytes become U+FFFD exactly as
///   [`String::from_utf8_lossy`] would render the concatenated bytes. Nothing panics.
///
/// The text of a run of ordinary tokens is exactly `String::from_utf8_lossy` of their
/// concatenated bytes, however the ids are split across `push` calls. Leading spaces
/// are never stripped.
#[derive(Debug, Clone)]
pub struct TokenDecoder {
    vocab: Arc<Vocab>,
    pending: Utf8Pending,
}

impl TokenDecoder {
    pub fn new(vocab: Arc<Vocab>) -> Self {
        TokenDecoder {
            vocab,
            pending: Utf8Pending::default(),
        }
    }

    /// The vocabulary this decoder reads.
    pub fn vocab(&self) -> &Arc<Vocab> {
        &self.vocab
    }

    /// Decodes `ids`. Runs in time linear in the bytes of the tokens; allocates only the
    /// returned pieces.
    pub fn push(&mut self, ids: &[u32]) -> Vec<Piece> {
        let mut out = Vec::new();
        let mut text = String::new();
        for &id in ids {
            match self.vocab.kind(id) {
                Kind::Normal => self.pending.feed(self.vocab.raw_bytes(id), &mut text),
                Kind::Added | Kind::Special => {
                    self.pending.flush(&mut text);
                    if !text.is_empty() {
                        out.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    out.push(Piece::Special {
                        id,
                        text: String::from_utf8_lossy(self.vocab.raw_bytes(id)).into_owned(),
                    });
                }
                Kind::Absent => {
                    self.pending.flush(&mut text);
                    text.push(char::REPLACEMENT_CHARACTER);
                }
            }
        }
        if !text.is_empty() {
            out.push(Piece::Text(text));
        }
        out
    }

    /// Ends the stream: a held-back incomplete UTF-8 sequence is emitted as U+FFFD. The
    /// decoder can then be reused for a new stream.
    pub fn finish(&mut self) -> Vec<Piece> {
        let mut text = String::new();
        self.pending.flush(&mut text);
        if text.is_empty() {
            Vec::new()
        } else {
            vec![Piece::Text(text)]
        }
    }

    /// True while an incomplete UTF-8 sequence is held back.
    pub fn has_pending(&self) -> bool {
        self.pending.len > 0
    }
}

/// Up to 3 bytes of an incomplete (but so far valid) UTF-8 sequence.
#[derive(Debug, Clone, Copy, Default)]
struct Utf8Pending {
    buf: [u8; 4],
    len: usize,
}

impl Utf8Pending {
    /// Appends the text of `bytes` (continuing any pending sequence) to `out`.
    fn feed(&mut self, mut bytes: &[u8], out: &mut String) {
        // The usual token: whole characters, nothing pending.
        if self.len == 0 {
            if let Ok(text) = std::str::from_utf8(bytes) {
                out.push_str(text);
                return;
            }
        }
        if self.len > 0 {
            // Try to complete the pending character with the first bytes of this token.
            let take = (4 - self.len).min(bytes.len());
            let mut tmp = [0u8; 4];
            tmp[..self.len].copy_from_slice(&self.buf[..self.len]);
            tmp[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            let joined = &tmp[..self.len + take];
            let (valid, invalid) = joined
                .utf8_chunks()
                .next()
                .map_or(("", &[][..]), |chunk| (chunk.valid(), chunk.invalid()));
            let used = if let Some(c) = valid.chars().next() {
                // The pending prefix became a complete character (it starts at the pending
                // lead byte, since the pending bytes alone are not a character).
                out.push(c);
                c.len_utf8().saturating_sub(self.len)
            } else if invalid.len() == joined.len() && is_incomplete(joined) {
                // Still incomplete; then `take == bytes.len()` (a prefix is < 4 bytes), so
                // this whole short token extends the pending bytes.
                self.buf[..joined.len()].copy_from_slice(joined);
                self.len = joined.len();
                return;
            } else {
                // The pending prefix, possibly extended by some bytes of this token, is a
                // maximal invalid sequence: one U+FFFD, as `from_utf8_lossy` would give.
                out.push(char::REPLACEMENT_CHARACTER);
                invalid.len().saturating_sub(self.len)
            };
            self.len = 0;
            bytes = bytes.get(used..).unwrap_or(&[]);
        }
        let mut chunks = bytes.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            out.push_str(chunk.valid());
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            if chunks.peek().is_none() && is_incomplete(invalid) {
                self.buf[..invalid.len()].copy_from_slice(invalid);
                self.len = invalid.len();
            } else {
                out.push(char::REPLACEMENT_CHARACTER);
            }
        }
    }

    /// Emits a pending incomplete sequence as U+FFFD.
    fn flush(&mut self, out: &mut String) {
        if self.len > 0 {
            out.push(char::REPLACEMENT_CHARACTER);
            self.len = 0;
        }
    }
}

/// True if `bytes` (1–3 bytes) is a proper prefix of some valid UTF-8 character.
fn is_incomplete(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.len() < 4
        && matches!(std::str::from_utf8(bytes), Err(e) if e.error_len().is_none())
}
