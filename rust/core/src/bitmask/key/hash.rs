//! The digest in a key: two SipHash-1-3 streams with process-random keys (128 bits).
//!
//! A keyer writes most bytes one at a time, and a one-byte write costs SipHash about as much as
//! eight; so bytes wait in a small buffer and reach the streams in runs. A stream's digest
//! depends only on the bytes written, not on how the writes split them, so the keys are the
//! same as with every byte written at once.

use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

fn seeds() -> &'static (RandomState, RandomState) {
    static SEEDS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    SEEDS.get_or_init(|| (RandomState::new(), RandomState::new()))
}

const BUFFER: usize = 32;

#[derive(Clone)]
pub(super) struct Hash128 {
    a: DefaultHasher,
    b: DefaultHasher,
    buf: [u8; BUFFER],
    len: usize,
}

impl Hash128 {
    pub(super) fn new() -> Self {
        let (a, b) = seeds();
        Hash128 {
            a: a.build_hasher(),
            b: b.build_hasher(),
            buf: [0; BUFFER],
            len: 0,
        }
    }

    pub(super) fn write(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() <= BUFFER {
            self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
            return;
        }
        self.flush();
        if bytes.len() >= BUFFER {
            self.a.write(bytes);
            self.b.write(bytes);
        } else {
            self.buf[..bytes.len()].copy_from_slice(bytes);
            self.len = bytes.len();
        }
    }

    fn flush(&mut self) {
        let pending = &self.buf[..self.len];
        self.a.write(pending);
        self.b.write(pending);
        self.len = 0;
    }

    pub(super) fn digest(&self) -> [u8; 16] {
        let (mut a, mut b) = (self.a.clone(), self.b.clone());
        let pending = &self.buf[..self.len];
        a.write(pending);
        b.write(pending);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&a.finish().to_le_bytes());
        out[8..].copy_from_slice(&b.finish().to_le_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both streams written the whole text at once, unbuffered.
    fn at_once(text: &[u8]) -> [u8; 16] {
        let (a, b) = seeds();
        let (mut a, mut b) = (a.build_hasher(), b.build_hasher());
        a.write(text);
        b.write(text);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&a.finish().to_le_bytes());
        out[8..].copy_from_slice(&b.finish().to_le_bytes());
        out
    }

    #[test]
    fn digests_do_not_depend_on_how_writes_split_the_bytes() {
        let mut x: u64 = 7;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for _ in 0..300 {
            let text: Vec<u8> = (0..next(200)).map(|_| next(256) as u8).collect();
            let mut h = Hash128::new();
            let mut at = 0;
            while at < text.len() {
                let most = if next(4) == 0 { 80 } else { 6 };
                let step = (1 + next(most) as usize).min(text.len() - at);
                h.write(&text[at..at + step]);
                at += step;
                // asking for the digest midway changes nothing
                assert_eq!(h.digest(), at_once(&text[..at]));
            }
            assert_eq!(h.digest(), at_once(&text));
        }
        assert_ne!(at_once(b"ab"), at_once(b"ba"));
    }
}
