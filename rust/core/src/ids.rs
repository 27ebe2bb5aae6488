//! Tool-call ids: `call_` plus 24 random alphanumerics, unique per request, as OpenAI mints them.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

pub trait IdSource: Send + Sync {
    fn next_id(&mut self, index: usize, name: &str) -> String;
}

pub struct RandomIds {
    state: u64,
}

impl RandomIds {
    pub fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        Self {
            state: hasher.finish() | 1,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }
}

impl Default for RandomIds {
    fn default() -> Self {
        Self::new()
    }
}

impl IdSource for RandomIds {
    fn next_id(&mut self, _index: usize, _name: &str) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let mut id = String::with_capacity(29);
        id.push_str("call_");
        while id.len() < 29 {
            let mut r = self.next_u64();
            for _ in 0..8 {
                if id.len() == 29 {
                    break;
                }
                id.push(ALPHABET[(r % 62) as usize] as char);
                r /= 62;
            }
        }
        id
    }
}
