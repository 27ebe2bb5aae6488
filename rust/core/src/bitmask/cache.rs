//! A bounded cache of bitmask rows keyed by a grammar state key.
//!
//! Computing a mask costs 1–50 µs per step in xgrammar, and most steps of a tool-calling reply
//! repeat a mask seen before (all free text shares one, forced scaffolding repeats across
//! requests). The caller supplies the key; the cache only promises to hand back the exact row it
//! was given for that key, and to stay within a byte budget by evicting the least recently used
//! entries. Soundness of the key is the caller's business (see `toolwire.masks` on the Python
//! side, which derives keys it can defend and can verify them).
//!
//! Rows are stored as runs of equal words when the runs are long, as they mostly are: a
//! free-text mask is all ones but for a few words, a mask inside a call is all zeros but for a
//! few. A Qwen row (4,748 words, 19 KB raw) then takes a few hundred bytes, so a budget holds
//! far more states, and a hit reads little memory (filling the row is a few `memset`s). A row of
//! many short runs is kept as words: copying them is faster than writing the runs. Keys with
//! equal rows share one stored row (every state inside a plain string value, every free-text
//! state: a reply's few hundred keys name a few dozen distinct rows), found by a hash of the
//! words and checked word for word, so storing a row already held allocates nothing: a fresh
//! allocation costs more than the row's copy (the new pages are cleared first), and the budget
//! counts each row once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};

/// The maps' hasher: a step looks up one key of 60-120 bytes per row (and again when a keyer
/// takes a token), where SipHash cost as much as the lookup's other work together. Keys are
/// mostly keyed digests, and a collision costs time, never a wrong row (keys are compared whole).
type KeyHasher = foldhash::fast::RandomState;

/// Bytes charged per entry on top of its key and mask (map and recency bookkeeping).
pub const ENTRY_OVERHEAD: usize = 96;

const RUN_BLOCK: usize = 16;

/// A stored row: its words, or runs `(word, end)` when those take fewer bytes (each run's end
/// offset rather than its length, so that a word is found by binary search: a keyer asks whether
/// a row allows a token at every deferred step).
enum Stored {
    Raw(Box<[u32]>),
    Runs { len: usize, runs: Box<[(u32, u32)]> },
}

impl Stored {
    /// Whether the row stored is `mask`, word for word.
    fn is(&self, mask: &[u32]) -> bool {
        match self {
            Stored::Raw(words) => **words == *mask,
            Stored::Runs { len, runs } => {
                *len == mask.len() && {
                    let mut at = 0;
                    runs.iter().all(|&(value, end)| {
                        let end = end as usize;
                        let same = mask[at..end].iter().all(|&w| w == value);
                        at = end;
                        same
                    })
                }
            }
        }
    }

    fn encode(mask: &[u32]) -> Self {
        // Counted first, then written into a vector of their exact size: grown step by step,
        // each row's runs took several allocations (fresh pages, under a mask cache that grows).
        match run_count(mask) {
            Some(count) if count > 0 => {
                let mut runs = Vec::with_capacity(count);
                for_each_run(mask, |value, end| {
                    runs.push((value, end as u32));
                    true
                });
                Stored::Runs {
                    len: mask.len(),
                    runs: runs.into_boxed_slice(),
                }
            }
            _ => Stored::Raw(mask.into()),
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Stored::Raw(words) => words.len() * 4,
            Stored::Runs { runs, .. } => runs.len() * 8,
        }
    }
}

/// A row's words hashed in four interleaved lanes (one multiply chain a lane, so the lanes run
/// side by side): which stored row might be equal; [`Stored::is`] decides.
fn content_hash(mask: &[u32]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut lanes = [mask.len() as u64, 1, 2, 3];
    let mut blocks = mask.chunks_exact(8);
    for block in &mut blocks {
        for (lane, pair) in lanes.iter_mut().zip(block.chunks_exact(2)) {
            let word = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
            *lane = (lane.rotate_left(23) ^ word).wrapping_mul(K);
        }
    }
    for &w in blocks.remainder() {
        lanes[0] = (lanes[0].rotate_left(23) ^ u64::from(w)).wrapping_mul(K);
    }
    lanes
        .iter()
        .fold(0u64, |h, &lane| (h.rotate_left(29) ^ lane).wrapping_mul(K))
}

/// A stored row and its hash, shared by the entries whose rows are equal.
struct Shared {
    stored: Stored,
    hash: u64,
}

/// Rows are stored as runs only where they average at least this many words a run. Writing a
/// run costs about as much as copying a few dozen words, so a row of many short runs (a string
/// value's row: every token but those holding a quote or a backslash, over 1,000 runs in a Qwen
/// row) was slower to write than its 19 KB copied whole; a fifth of a steady hermes batch's rows
/// had over 256 runs.
const WORDS_PER_RUN: usize = 32;

/// How many runs `mask` has where it is to be stored as runs: where they take fewer bytes than
/// its words (8 bytes a run, 4 a word) and are few (at most 4, or one per [`WORDS_PER_RUN`]
/// words); else None (counting stops as soon as there are too many).
fn run_count(mask: &[u32]) -> Option<usize> {
    let most = (mask.len() / WORDS_PER_RUN)
        .max(4)
        .min((mask.len() * 4).saturating_sub(1) / 8);
    let mut count = 0;
    let whole = for_each_run(mask, |_, _| {
        count += 1;
        count <= most
    });
    whole.then_some(count)
}

/// Calls `visit(value, end)` for each run of equal words in order (`end`: the offset after it)
/// while it returns true; returns whether every run was visited.
fn for_each_run(mask: &[u32], mut visit: impl FnMut(u32, usize) -> bool) -> bool {
    let mut at = 0;
    while at < mask.len() {
        let value = mask[at];
        let mut end = at + 1;
        // Whole blocks equal to `value` first (a branch-free OR, so it vectorises), then words.
        while end + RUN_BLOCK <= mask.len()
            && mask[end..end + RUN_BLOCK]
                .iter()
                .fold(0, |acc, &w| acc | (w ^ value))
                == 0
        {
            end += RUN_BLOCK;
        }
        while end < mask.len() && mask[end] == value {
            end += 1;
        }
        if !visit(value, end) {
            return false;
        }
        at = end;
    }
    true
}

/// `words.fill(value)`, as one `memset` where the value's four bytes are equal (all-zero and
/// all-one runs, nearly every run of a row): the libc routine uses the machine's widest stores,
/// where the generic loop is compiled for the baseline target's 16-byte ones.
fn fill_words(words: &mut [u32], value: u32) {
    let byte = value as u8;
    if value == u32::from_ne_bytes([byte; 4]) {
        // SAFETY: writes `words.len()` u32s, the slice's own extent; every byte pattern is a u32.
        unsafe { std::ptr::write_bytes(words.as_mut_ptr(), byte, words.len()) }
    } else {
        words.fill(value);
    }
}

/// A row in the cache, read by copying it out.
#[derive(Clone, Copy)]
pub struct Row<'a>(&'a Stored);

impl Row<'_> {
    /// Words in the row.
    pub fn len(&self) -> usize {
        match self.0 {
            Stored::Raw(words) => words.len(),
            Stored::Runs { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the row into `out`.
    ///
    /// # Panics
    /// When `out.len() != self.len()`.
    pub fn copy_to(&self, out: &mut [u32]) {
        assert_eq!(out.len(), self.len(), "row length mismatch");
        match self.0 {
            Stored::Raw(words) => out.copy_from_slice(words),
            Stored::Runs { runs, .. } => {
                let mut at = 0;
                for &(value, end) in runs.iter() {
                    let end = end as usize;
                    fill_words(&mut out[at..end], value);
                    at = end;
                }
            }
        }
    }

    /// Whether bit `id` is set (token `id` allowed); false past the row's end.
    pub fn allows(&self, id: usize) -> bool {
        let (word, bit) = (id / 32, id % 32);
        let value = match self.0 {
            Stored::Raw(words) => words.get(word).copied(),
            Stored::Runs { runs, .. } => {
                let at = runs.partition_point(|&(_, end)| end as usize <= word);
                runs.get(at).map(|&(value, _)| value)
            }
        };
        value.is_some_and(|w| (w >> bit) & 1 == 1)
    }

    pub fn to_vec(&self) -> Vec<u32> {
        let mut out = vec![0; self.len()];
        self.copy_to(&mut out);
        out
    }
}

/// A weak hold on a stored row, kept past the cache's lock: a request's keyer keeps the row a
/// batch step's fill served it, so the same step's token check reads that row rather than
/// computing the key and looking it up again. Weak, so it neither keeps an evicted row's words
/// alive nor counts as an entry holding the row (which [`MaskCache`]'s byte budget counts).
#[derive(Clone)]
pub struct RowHandle(Weak<Shared>);

impl RowHandle {
    /// Whether the row allows token `id`; None once no entry holds the row any more. Takes the
    /// cache (its lock held) so that no entry is dropped while the row is read.
    pub fn allows(&self, _cache: &MaskCache, id: usize) -> Option<bool> {
        self.0
            .upgrade()
            .map(|shared| Row(&shared.stored).allows(id))
    }
}

/// `tick` is the entry's last use; `queued` its place in `MaskCache::order`, at most `tick`: a
/// hit only moves `tick` (no reordering on the hot path), and eviction moves an entry that was
/// used since it was queued to the back instead of dropping it, which still drops the least
/// recently used one (every other entry's last use is later than its place in the queue).
struct Slot {
    mask: Arc<Shared>,
    tick: u64,
    queued: u64,
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
    map: HashMap<Arc<[u8]>, Slot, KeyHasher>,
    order: BTreeMap<u64, Arc<[u8]>>,
    /// One stored row per content hash, for entries whose rows are equal to it.
    rows: HashMap<u64, Arc<Shared>, KeyHasher>,
    stats: CacheStats,
}

impl MaskCache {
    /// An empty cache that holds at most `max_bytes` of keys, masks and bookkeeping.
    pub fn new(max_bytes: usize) -> Self {
        MaskCache {
            max_bytes,
            used: 0,
            tick: 0,
            map: HashMap::default(),
            order: BTreeMap::new(),
            rows: HashMap::default(),
            stats: CacheStats::default(),
        }
    }

    /// An entry's bytes other than its row's (charged once, to the rows shared).
    fn key_cost(key: &[u8]) -> usize {
        key.len() + ENTRY_OVERHEAD
    }

    /// Bytes an entry of `mask` under `key` is charged against the budget when no other entry
    /// holds an equal row (the row's bytes are charged once, to the first entry holding it).
    pub fn entry_cost(key: &[u8], mask: &[u32]) -> usize {
        Self::key_cost(key) + Stored::encode(mask).bytes()
    }

    /// The stored row equal to `mask` if an entry holds one (no allocation), else a new one
    /// (registered for later equal rows where its hash is free). Second: the bytes it adds.
    fn share(&mut self, mask: &[u32]) -> (Arc<Shared>, usize) {
        let hash = content_hash(mask);
        if let Some(held) = self.rows.get(&hash) {
            if held.stored.is(mask) {
                return (held.clone(), 0);
            }
        }
        let shared = Arc::new(Shared {
            stored: Stored::encode(mask),
            hash,
        });
        self.rows.entry(hash).or_insert_with(|| shared.clone());
        let bytes = shared.stored.bytes();
        (shared, bytes)
    }

    /// Lets go of an entry's row; returns the bytes freed (the row's, where no entry holds it
    /// any more).
    fn release(&mut self, shared: Arc<Shared>) -> usize {
        let registered = self
            .rows
            .get(&shared.hash)
            .is_some_and(|held| Arc::ptr_eq(held, &shared));
        // Held by the entry, and by the hash table where registered.
        if Arc::strong_count(&shared) > 1 + usize::from(registered) {
            return 0;
        }
        if registered {
            self.rows.remove(&shared.hash);
        }
        shared.stored.bytes()
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The entry stored under `key`, marked most recently used. Counts a hit or a miss.
    fn touch(&mut self, key: &[u8]) -> Option<&Slot> {
        let tick = self.next_tick();
        match self.map.get_mut(key) {
            Some(slot) => {
                slot.tick = tick;
                self.stats.hits += 1;
                Some(slot)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// The row stored under `key`, marking it most recently used. Counts a hit or a miss.
    pub fn get(&mut self, key: &[u8]) -> Option<Row<'_>> {
        self.touch(key).map(|slot| Row(&slot.mask.stored))
    }

    /// Marks each of `keys` used, in order, counting a hit or a miss for each; returns which are
    /// stored. A batch's lookups then run one after another with nothing between them, so their
    /// memory loads overlap (where a row was copied after each lookup, the next one waited), and
    /// reading the rows after ([`MaskCache::peek_with_handle`]) finds entries just read.
    pub fn touch_many(&mut self, keys: &[&[u8]]) -> Vec<bool> {
        keys.iter().map(|key| self.touch(key).is_some()).collect()
    }

    /// The row stored under `key` and a handle on it, without touching recency or the counters.
    pub fn peek_with_handle(&self, key: &[u8]) -> Option<(Row<'_>, RowHandle)> {
        self.map.get(key).map(|slot| {
            (
                Row(&slot.mask.stored),
                RowHandle(Arc::downgrade(&slot.mask)),
            )
        })
    }

    /// The row stored under `key`, without touching recency or the counters.
    pub fn peek(&self, key: &[u8]) -> Option<Row<'_>> {
        self.map.get(key).map(|slot| Row(&slot.mask.stored))
    }

    /// Whether `key` is stored, without touching recency or the counters.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.map.contains_key(key)
    }

    /// Stores `mask` under `key` (replacing an earlier row), evicting the least recently used
    /// entries until the budget holds. Returns false, storing nothing, when this one entry alone
    /// is larger than the budget.
    pub fn insert(&mut self, key: &[u8], mask: &[u32]) -> bool {
        let (shared, row_bytes) = self.share(mask);
        let cost = Self::key_cost(key);
        if cost + row_bytes > self.max_bytes {
            self.release(shared);
            return false;
        }
        self.remove(key);
        // The row's bytes stay charged while evictions run: an evicted entry holding an equal
        // row does not free them (this entry holds the row too).
        self.used += row_bytes;
        while self.used + cost > self.max_bytes {
            let (queued, oldest) = self
                .order
                .pop_first()
                .expect("used > 0 means some entry exists");
            let slot = self
                .map
                .get_mut(&oldest)
                .expect("recency entries point at slots");
            if slot.tick != queued {
                slot.queued = slot.tick; // used since: back of the queue
                self.order.insert(slot.tick, oldest);
                continue;
            }
            let slot = self.map.remove(&oldest).expect("just found");
            self.used -= Self::key_cost(&oldest) + self.release(slot.mask);
            self.stats.evictions += 1;
        }
        let tick = self.next_tick();
        let shared_key: Arc<[u8]> = Arc::from(key);
        self.order.insert(tick, shared_key.clone());
        self.map.insert(
            shared_key,
            Slot {
                mask: shared,
                tick,
                queued: tick,
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
                self.order.remove(&slot.queued);
                self.used -= Self::key_cost(key) + self.release(slot.mask);
                true
            }
            None => false,
        }
    }

    /// Drops every entry and resets the counters.
    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.rows.clear();
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
    /// A row of four equal words is stored as one run (8 bytes).
    const ENTRY: usize = 1 + 8 + ENTRY_OVERHEAD;

    fn row(x: u32) -> [u32; WORDS] {
        [x; WORDS]
    }

    #[test]
    fn get_returns_what_was_inserted_and_counts() {
        let mut c = MaskCache::new(1 << 20);
        assert!(c.get(b"a").is_none());
        assert!(c.insert(b"a", &row(7)));
        assert_eq!(c.get(b"a").map(|r| r.to_vec()), Some(row(7).to_vec()));
        assert!(c.insert(b"a", &row(8)));
        assert_eq!(c.get(b"a").map(|r| r.to_vec()), Some(row(8).to_vec()));
        assert_eq!(c.len(), 1);
        assert_eq!(c.used_bytes(), ENTRY);
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.inserts, s.evictions), (2, 1, 2, 0));
    }

    #[test]
    fn a_handle_reads_its_row_while_an_entry_holds_it_and_frees_nothing() {
        let mut c = MaskCache::new(1 << 20);
        c.insert(b"a", &[0b100, 0, 0, 0]);
        c.insert(b"b", &[0b100, 0, 0, 0]);
        assert_eq!(c.touch_many(&[b"a", b"missing"]), [true, false]);
        let (served, held) = c.peek_with_handle(b"a").expect("stored");
        assert!(served.allows(2));
        assert_eq!(
            (held.allows(&c, 2), held.allows(&c, 3)),
            (Some(true), Some(false))
        );
        assert!(c.peek_with_handle(b"missing").is_none());
        c.remove(b"a"); // "b" holds the same row
        assert_eq!(held.allows(&c, 2), Some(true));
        c.remove(b"b");
        assert_eq!(held.allows(&c, 2), None);
        // The handle did not keep the row's bytes charged.
        assert_eq!((c.len(), c.used_bytes()), (0, 0));
        c.insert(b"a", &row(1));
        assert_eq!(
            held.allows(&c, 0),
            None,
            "a new row under the key is not the handle's"
        );
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (1, 1));
    }

    #[test]
    fn touch_many_marks_and_counts_each_key_and_peeking_changes_nothing() {
        let mut c = MaskCache::new(1 << 20);
        c.insert(b"a", &row(1));
        c.insert(b"b", &row(2));
        let keys: [&[u8]; 4] = [b"b", b"missing", b"a", b"b"];
        assert_eq!(c.touch_many(&keys), [true, false, true, true]);
        let s = c.stats();
        assert_eq!((s.hits, s.misses), (3, 1));
        let (served, held) = c.peek_with_handle(b"a").expect("stored");
        assert_eq!(served.to_vec(), row(1));
        assert_eq!(held.allows(&c, 0), Some(true));
        assert!(c.peek_with_handle(b"missing").is_none());
        assert_eq!((c.stats().hits, c.stats().misses), (3, 1));
        // "a" was touched after "b"'s first touch but before its second: "a" is now the oldest.
        let budget = c.used_bytes();
        let mut small = MaskCache::new(budget);
        small.insert(b"a", &row(1));
        small.insert(b"b", &row(2));
        small.touch_many(&[b"b", b"a", b"b"]);
        small.insert(b"c", &row(3));
        assert!(small.contains(b"b") && small.contains(b"c") && !small.contains(b"a"));
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
    fn equal_rows_are_stored_once() {
        let mut c = MaskCache::new(1 << 24);
        let noisy: Vec<u32> = (0..4748u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let one = MaskCache::entry_cost(b"k0", &noisy);
        for k in 0..100u32 {
            assert!(c.insert(format!("k{k}").as_bytes(), &noisy));
        }
        let per_key = 2 + ENTRY_OVERHEAD;
        assert_eq!(
            c.used_bytes(),
            one + 10 * per_key + 90 * (per_key + 1) - per_key
        );
        let held: Vec<*const Shared> = c.map.values().map(|s| Arc::as_ptr(&s.mask)).collect();
        assert!(held.iter().all(|p| *p == held[0]), "one row for all");
        let mut other = noisy.clone();
        other[4747] ^= 1; // equal but for one word: its own row
        assert!(c.insert(b"odd", &other));
        assert_eq!(c.get(b"odd").map(|r| r.to_vec()), Some(other));
        assert_eq!(c.get(b"k7").map(|r| r.to_vec()), Some(noisy.clone()));
        for k in 0..100u32 {
            assert!(c.remove(format!("k{k}").as_bytes()));
        }
        assert_eq!(
            c.used_bytes(),
            MaskCache::entry_cost(b"odd", &c.get(b"odd").unwrap().to_vec())
        );
        assert!(c.remove(b"odd"));
        assert_eq!((c.used_bytes(), c.rows.len()), (0, 0));
        // a row stored again after its last holder left is charged again
        assert!(c.insert(b"k0", &noisy));
        assert_eq!(c.used_bytes(), one);
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
            let want = row(u32::from(key[0]) % 5); // keys share rows
            if x >> 62 == 0 {
                c.remove(&key);
            } else if let Some(m) = c.get(&key) {
                assert_eq!(m.to_vec(), want);
            } else {
                c.insert(&key, &want);
            }
            assert!(c.used_bytes() <= c.max_bytes());
            assert_eq!(c.map.len(), c.order.len());
            // each entry's key and overhead, and each distinct row once
            let mut rows = std::collections::HashSet::new();
            let charged: usize = c
                .map
                .iter()
                .map(|(k, slot)| {
                    let first = rows.insert(Arc::as_ptr(&slot.mask));
                    k.len() + ENTRY_OVERHEAD + if first { slot.mask.stored.bytes() } else { 0 }
                })
                .sum();
            assert_eq!(c.used_bytes(), charged);
            assert!(rows.len() <= 5);
            assert!(c.rows.values().all(|r| rows.contains(&Arc::as_ptr(r))));
        }
    }

    #[test]
    fn evictions_follow_a_reference_lru() {
        // A hit only moves the entry's tick; eviction requeues entries used since they were
        // queued. The entries kept must be those of an exact LRU.
        let mut c = MaskCache::new(8 * ENTRY);
        let mut model: Vec<u8> = Vec::new(); // least recently used first
        let mut x: u64 = 99;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (x >> 33) as u8 % 24;
            if c.get(&[k]).is_some() {
                model.retain(|&m| m != k);
                model.push(k);
            } else {
                assert!(c.insert(&[k], &row(1)));
                if model.len() == 8 {
                    model.remove(0);
                }
                model.push(k);
            }
            let mut kept: Vec<u8> = (0..24).filter(|k| c.contains(&[*k])).collect();
            let mut want = model.clone();
            want.sort_unstable();
            kept.sort_unstable();
            assert_eq!(kept, want);
        }
    }

    #[test]
    fn rows_come_back_exactly_whatever_their_shape() {
        let mut x: u64 = 99;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x
        };
        let mut c = MaskCache::new(1 << 24);
        for n in 0..200u32 {
            let len = 1 + (next() % 300) as usize;
            // Runs of random lengths: all-zero, all-one, four equal bytes other than those (one
            // `memset`), and words whose bytes differ.
            let mut mask: Vec<u32> = Vec::with_capacity(len);
            while mask.len() < len {
                let value = match next() % 8 {
                    0..=2 => 0,
                    3..=4 => u32::MAX,
                    5 => u32::from_ne_bytes([next() as u8; 4]),
                    _ => next() as u32,
                };
                let run = 1 + (next() % if next() % 2 == 0 { 40 } else { 400 }) as usize;
                mask.extend(std::iter::repeat_n(value, run.min(len - mask.len())));
            }
            let key = n.to_le_bytes();
            assert!(c.insert(&key, &mask));
            let row = c.get(&key).expect("just stored");
            assert_eq!(row.len(), len);
            assert_eq!(row.to_vec(), mask);
            let peeked = c.peek(&key).expect("stored");
            for id in 0..len * 32 + 40 {
                let bit = mask.get(id / 32).is_some_and(|w| (w >> (id % 32)) & 1 == 1);
                assert_eq!(peeked.allows(id), bit, "id {id}");
            }
        }
        let noisy: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        assert_eq!(
            MaskCache::entry_cost(b"k", &noisy),
            1 + 64 * 4 + ENTRY_OVERHEAD
        );
        let flat = vec![u32::MAX; 4748];
        assert_eq!(MaskCache::entry_cost(b"k", &flat), 1 + 8 + ENTRY_OVERHEAD);
    }
}
