//! The digest in a key: two SipHash-1-3 streams with process-random keys (128 bits).

use std::collections::hash_map::{DefaultHasher, RandomState};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

fn seeds() -> &'static (RandomState, RandomState) {
    static SEEDS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    SEEDS.get_or_init(|| (RandomState::new(), RandomState::new()))
}

#[derive(Clone)]
pub(super) struct Hash128(DefaultHasher, DefaultHasher);

impl Hash128 {
    pub(super) fn new() -> Self {
        let (a, b) = seeds();
        Hash128(a.build_hasher(), b.build_hasher())
    }

    pub(super) fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }

    pub(super) fn digest(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.0.finish().to_le_bytes());
        out[8..].copy_from_slice(&self.1.finish().to_le_bytes());
        out
    }
}
