//! A bounded cache of bitmask rows keyed by a grammar state key.
//!
//! Computing a mask costs 1–50 µs per step in xgrammar, and most steps of a tool-calling reply
//! repeat a mask seen before (all free text shares one, forced scaffolding repeats across
//! requests). The caller supplies the key; the cache only promises to hand back the exact row it
//! was given for that key, and to stay within a byte budget by evicting the least recently used
//! entries. Soundness of the key is the caller's business (see `toolwire.masks` on the Python
//! side, which derives keys it can defend and can verify them).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Bytes charged per entry on top of its key and mask (map and recency bookkeeping).
pub const ENTRY_OVERHEAD: usize = 96;

struct Slot {
    mask: Box<[u32]>,
    tick: u64,
}

/// Hit, miss and eviction counts since creation (or the last [`MaskCache::clear`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub inserts: u64,
    pub evictions: u64,
}

/// Least-recently-used map from state keys to bitmask rows, bounded by a byte budget.
pub struct MaskCache {
    max_bytes: usize,
    used: usize,
    tick: u64,
    map: HashMap<Arc<[u8]>, Slot>,
    order: BTreeMap<u64, Arc<[u8]>>,
    stats: CacheStats,
}

impl MaskCache {
    /// An empty cache that holds at most `max_bytes` of keys, masks and bookkeeping.
    pub fn new(max_bytes: usize) -> Self {
        MaskCache {
            max_bytes,
            used: 0,
            tick: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
            stats: CacheStats::default(),
        }
    }

    fn cost(key: &[u8], words: usize) -> usize {
        key.len() + words * 4 + ENTRY_OVERHEAD
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The row stored under `key`, marking it most recently used. Counts a hit or a miss.
    pub fn get(&mut self, key: &[u8]) -> Option<&[u32]> {
        let tick = self.next_tick();
        match self.map.get_mut(key) {
            Some(slot) => {
                let shared = self
                    .order
                    .remove(&slot.tick)
                    .expect("every slot has a recency entry");
                slot.tick = tick;
                self.order.insert(tick, shared);
                self.stats.hits += 1;
                Some(&slot.mask)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// Whether `key` is stored, without touching recency or the counters.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.map.contains_key(key)
    }

    /// Stores `mask` under `key` (replacing an earlier row), evicting the least recently used
    /// entries until the budget holds. Returns false, storing nothing, when this one entry alone
    /// is larger than the budget.
    pub fn insert(&mut self, key: &[u8], mask: &[u32]) -> bool {
        let cost = Self::cost(key, mask.len());
        if cost > self.max_bytes {
            return false;
        }
        self.remove(key);
        while self.used + cost > self.max_bytes {
            let (_, oldest) = self
                .order
                .pop_first()
                .expect("used > 0 means some entry exists");
            let slot = self
                .map
                .remove(&oldest)
                .expect("recency entries point at slots");
            self.used -= Self::cost(&oldest, slot.mask.len());
            self.stats.evictions += 1;
        }
        let tick = self.next_tick();
        let shared: Arc<[u8]> = Arc::from(key);
        self.order.insert(tick, shared.clone());
        self.map.insert(
            shared,
            Slot {
                mask: mask.into(),
                tick,
            },
        );
        self.used += cost;
        self.stats.inserts += 1;
        true
    }

    /// Drops `key`; returns whether it was stored.
    pub fn remove(&mut self, key: &[u8]) -> bool {
        match self.map.remove(key) {
            Some(slot) => {
                self.order.remove(&slot.tick);
                self.used -= Self::cost(key, slot.mask.len());
                true
            }
            None => false,
        }
    }

    /// Drops every entry and resets the counters.
    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.used = 0;
        self.stats = CacheStats::default();
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Bytes charged against the budget now.
    pub fn used_bytes(&self) -> usize {
        self.used
    }

    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORDS: usize = 4;
    const ENTRY: usize = 1 + WORDS * 4 + ENTRY_OVERHEAD;

    fn row(x: u32) -> [u32; WORDS] {
        [x; WORDS]
    }

    #[test]
    fn get_returns_what_was_inserted_and_counts() {
        let mut c = MaskCache::new(1 << 20);
        assert!(c.get(b"a").is_none());
        assert!(c.insert(b"a", &row(7)));
        assert_eq!(c.get(b"a"), Some(&row(7)[..]));
        assert!(c.insert(b"a", &row(8)));
        assert_eq!(c.get(b"a"), Some(&row(8)[..]));
        assert_eq!(c.len(), 1);
        assert_eq!(c.used_bytes(), ENTRY);
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.inserts, s.evictions), (2, 1, 2, 0));
    }

    #[test]
    fn evicts_the_least_recently_used_within_the_budget() {
        let mut c = MaskCache::new(3 * ENTRY);
        for k in [b"a", b"b", b"c"] {
            assert!(c.insert(k, &row(1)));
        }
        assert!(c.get(b"a").is_some()); // b is now the oldest
        assert!(c.insert(b"d", &row(2)));
        assert!(c.contains(b"a") && !c.contains(b"b") && c.contains(b"c") && c.contains(b"d"));
        assert_eq!(c.stats().evictions, 1);
        assert!(c.used_bytes() <= c.max_bytes());
    }

    #[test]
    fn an_entry_larger_than_the_budget_is_refused() {
        let mut c = MaskCache::new(ENTRY - 1);
        assert!(!c.insert(b"a", &row(1)));
        assert!(c.is_empty());
        assert_eq!(c.used_bytes(), 0);
    }

    #[test]
    fn remove_and_clear_release_the_budget() {
        let mut c = MaskCache::new(10 * ENTRY);
        c.insert(b"a", &row(1));
        c.insert(b"b", &row(1));
        assert!(c.remove(b"a") && !c.remove(b"a"));
        assert_eq!(c.used_bytes(), ENTRY);
        c.clear();
        assert_eq!((c.len(), c.used_bytes()), (0, 0));
    }

    #[test]
    fn random_workload_keeps_the_invariants() {
        let mut c = MaskCache::new(20 * ENTRY);
        let mut x: u64 = 12345;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = [(x >> 33) as u8 % 64];
            if x >> 62 == 0 {
                c.remove(&key);
            } else if let Some(m) = c.get(&key) {
                assert_eq!(m, &row(u32::from(key[0]))[..]);
            } else {
                c.insert(&key, &row(u32::from(key[0])));
            }
            assert!(c.used_bytes() <= c.max_bytes());
            assert_eq!(c.map.len(), c.order.len());
            assert_eq!(c.used_bytes(), c.len() * ENTRY);
        }
    }
}
