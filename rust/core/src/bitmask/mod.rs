//! Token bitmasks: the layout every constrained-decoding engine shares, and the pure kernels that
//! read it.
//!
//! A row of a bitmask is `ceil(vocab / 32)` little-endian 32-bit words; token `t` is bit `t % 32`
//! of word `t / 32`, and a set bit means the token is allowed. An all-ones word (`-1` as int32)
//! allows 32 tokens at once. This is the layout of xgrammar, llguidance and vLLM, so masks move
//! between them without conversion.
//!
//! The kernels here work on slices; the Python glue turns tensor data pointers into slices after
//! checking them. Logits are written as raw bit patterns (`u32` for float32, `u16` for float16 and
//! bfloat16), so one generic loop serves every dtype and no half-precision crate is needed.

pub mod cache;
pub mod call_begins;
pub mod key;

pub use cache::{CacheStats, MaskCache, Row, RowHandle};
pub use call_begins::CallBegins;
pub use key::{KeyPlan, StateKeyer};

/// Tokens per bitmask word.
pub const BITS: usize = 32;

/// float32 negative infinity, as bits.
pub const F32_NEG_INF: u32 = 0xFF80_0000;
/// IEEE half (float16) negative infinity, as bits: sign 1, exponent all ones, mantissa 0.
pub const F16_NEG_INF: u16 = 0xFC00;
/// bfloat16 negative infinity, as bits: the top half of the float32 pattern.
pub const BF16_NEG_INF: u16 = 0xFF80;

/// Words in one bitmask row for a vocabulary of `vocab` tokens.
pub const fn words_for(vocab: usize) -> usize {
    vocab.div_ceil(BITS)
}

/// Masks one row of logits in place.
///
/// Column `j` keeps its value when `j < allowed_len` and bit `j` of `mask` is set; every other
/// column of the row, including columns beyond the mask's `32 * mask.len()` tokens, becomes
/// `neg_inf`. An id the grammar does not know (lm_head padding, ids past the tokenizer's
/// vocabulary) is therefore never sampled.
///
/// All-ones words are skipped and all-zero words fill 32 logits at once, so the cost follows the
/// number of words that are neither.
///
/// # Panics
/// When `allowed_len > 32 * mask.len()`.
pub fn apply_row<T: Copy>(logits: &mut [T], mask: &[u32], allowed_len: usize, neg_inf: T) {
    assert!(
        allowed_len <= mask.len() * BITS,
        "allowed_len {allowed_len} exceeds the mask's {} tokens",
        mask.len() * BITS
    );
    let limit = allowed_len.min(logits.len());
    // Words whose 32 columns all lie below `limit`: the hot loop, 8 words at a time so that
    // runs of all-ones words cost one vectorised AND per 256 tokens.
    let full = limit / BITS;
    let (head, tail) = logits.split_at_mut(full * BITS);
    for (group, cols) in mask[..full]
        .chunks(GROUP)
        .zip(head.chunks_mut(GROUP * BITS))
    {
        if group.iter().fold(u32::MAX, |acc, &w| acc & w) == u32::MAX {
            continue;
        }
        for (&bits, chunk) in group.iter().zip(cols.chunks_mut(BITS)) {
            block_word(chunk, bits, neg_inf);
        }
    }
    // The partial word at `limit`, then everything past it.
    let partial = limit - full * BITS;
    if partial > 0 {
        block_word(&mut tail[..partial], mask[full], neg_inf);
    }
    tail[partial..].fill(neg_inf);
}

const GROUP: usize = 8;

/// Writes `neg_inf` at each position of `chunk` (at most 32 long) whose bit in `bits` is clear.
#[inline(always)]
fn block_word<T: Copy>(chunk: &mut [T], bits: u32, neg_inf: T) {
    if bits == u32::MAX {
        return;
    }
    if bits == 0 {
        chunk.fill(neg_inf);
        return;
    }
    let mut blocked = !bits;
    while blocked != 0 {
        let i = blocked.trailing_zeros() as usize;
        if i >= chunk.len() {
            break;
        }
        chunk[i] = neg_inf;
        blocked &= blocked - 1;
    }
}

/// Number of allowed tokens among the first `vocab` ids of a mask row (bits past `vocab` are
/// ignored).
pub fn count_allowed(mask: &[u32], vocab: usize) -> usize {
    let vocab = vocab.min(mask.len() * BITS);
    let full = vocab / BITS;
    let mut n: usize = mask[..full].iter().map(|w| w.count_ones() as usize).sum();
    let rest = vocab % BITS;
    if rest != 0 {
        n += (mask[full] & ((1u32 << rest) - 1)).count_ones() as usize;
    }
    n
}

/// The one allowed token among the first `vocab` ids, or `None` when zero or several are allowed.
pub fn single_allowed(mask: &[u32], vocab: usize) -> Option<u32> {
    let vocab = vocab.min(mask.len() * BITS);
    let mut found = None;
    for (w, &word) in mask.iter().enumerate().take(vocab.div_ceil(BITS)) {
        let base = w * BITS;
        let word = if vocab - base < BITS {
            word & ((1u32 << (vocab - base)) - 1)
        } else {
            word
        };
        match word.count_ones() {
            0 => {}
            1 if found.is_none() => found = Some((base + word.trailing_zeros() as usize) as u32),
            _ => return None,
        }
    }
    found
}

/// Whether token `id` is allowed by a mask row.
pub fn is_allowed(mask: &[u32], id: usize) -> bool {
    mask.get(id / BITS)
        .is_some_and(|w| w >> (id % BITS) & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(logits: &[f32], mask: &[u32], allowed_len: usize) -> Vec<f32> {
        logits
            .iter()
            .enumerate()
            .map(|(j, &x)| {
                if j < allowed_len && is_allowed(mask, j) {
                    x
                } else {
                    f32::NEG_INFINITY
                }
            })
            .collect()
    }

    /// A small deterministic generator (xorshift), so the tests need no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn word(&mut self) -> u32 {
            match self.next() % 4 {
                0 => 0,
                1 => u32::MAX,
                _ => self.next() as u32,
            }
        }
    }

    #[test]
    fn negative_infinity_bit_patterns() {
        assert_eq!(f32::from_bits(F32_NEG_INF), f32::NEG_INFINITY);
        // bfloat16 is the top half of a float32.
        assert_eq!(
            f32::from_bits(u32::from(BF16_NEG_INF) << 16),
            f32::NEG_INFINITY
        );
        // float16: sign bit, five exponent ones, ten zero mantissa bits.
        assert_eq!(F16_NEG_INF, 0b1111_1100_0000_0000);
    }

    #[test]
    fn matches_the_bitwise_reference_for_random_masks_and_widths() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for vocab in [1usize, 31, 32, 33, 63, 64, 65, 100, 1000] {
            let words = words_for(vocab);
            for width in [
                vocab,
                vocab + 1,
                vocab + 40,
                words * BITS,
                words * BITS + 64,
            ] {
                for allowed_len in [vocab, vocab.saturating_sub(3), words * BITS] {
                    let mask: Vec<u32> = (0..words).map(|_| rng.word()).collect();
                    let logits: Vec<f32> = (0..width).map(|j| j as f32).collect();
                    let mut got = logits.clone();
                    apply_row(&mut got, &mask, allowed_len, f32::NEG_INFINITY);
                    assert_eq!(
                        got,
                        reference(&logits, &mask, allowed_len),
                        "vocab {vocab} width {width}"
                    );
                }
            }
        }
    }

    #[test]
    fn logits_narrower_than_the_mask_ignore_the_extra_bits() {
        let mut logits = vec![1.0f32; 40];
        apply_row(&mut logits, &[u32::MAX, 0b10, 0], 64, f32::NEG_INFINITY);
        assert!(logits[..32].iter().all(|&x| x == 1.0));
        assert_eq!(logits[33], 1.0);
        assert_eq!(logits.iter().filter(|x| x.is_infinite()).count(), 7);
    }

    #[test]
    fn half_precision_rows_get_their_own_pattern() {
        let mut row = vec![0x3C00u16; 70]; // 1.0 in float16
        apply_row(&mut row, &[0, 1, 0], 70, F16_NEG_INF);
        assert_eq!(row.iter().filter(|&&x| x == 0x3C00).count(), 1);
        assert_eq!(row[32], 0x3C00);
    }

    #[test]
    #[should_panic(expected = "exceeds")]
    fn allowed_len_past_the_mask_panics() {
        apply_row(&mut [0.0f32; 8], &[0], 33, 0.0);
    }

    #[test]
    fn counting_allowed_tokens() {
        let mask = [0b1011u32, u32::MAX, 1 << 31];
        assert_eq!(count_allowed(&mask, 96), 3 + 32 + 1);
        assert_eq!(count_allowed(&mask, 95), 3 + 32);
        assert_eq!(count_allowed(&mask, 2), 2);
        assert_eq!(count_allowed(&mask, 1000), 36);
        assert_eq!(single_allowed(&mask, 96), None);
        assert_eq!(single_allowed(&[0, 1 << 5, 0], 96), Some(37));
        assert_eq!(single_allowed(&[0, 0, 1 << 31], 95), None);
        assert_eq!(single_allowed(&[0, 0, 1 << 31], 96), Some(95));
        assert_eq!(single_allowed(&[0b11], 32), None);
        assert_eq!(single_allowed(&[1, 1], 64), None);
        assert!(is_allowed(&mask, 95) && !is_allowed(&mask, 2) && !is_allowed(&mask, 96));
    }
}
