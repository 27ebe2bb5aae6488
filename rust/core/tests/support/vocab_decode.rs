//! Decoding helpers shared by the vocabulary tests (`vocab.rs`, `vocab_real.rs`): every decode
//! is run whole and in chunks of 1, 2 and 3 ids, and the results must agree.

use std::sync::Arc;

use toolwire_core::vocab::{Piece, TokenDecoder, Vocab};

pub fn text(s: &str) -> Piece {
    Piece::Text(s.to_owned())
}

pub fn special(id: u32, s: &str) -> Piece {
    Piece::Special {
        id,
        text: s.to_owned(),
    }
}

/// Merges adjacent Text pieces (pieces from different `push` calls).
pub fn normalize(pieces: impl IntoIterator<Item = Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for piece in pieces {
        match (out.last_mut(), piece) {
            (Some(Piece::Text(acc)), Piece::Text(t)) => acc.push_str(&t),
            (_, p) => out.push(p),
        }
    }
    out
}

/// Decodes with one `push` per chunk of `chunk` ids, then `finish`.
pub fn decode_chunked(vocab: &Arc<Vocab>, ids: &[u32], chunk: usize) -> Vec<Piece> {
    let mut dec = TokenDecoder::new(vocab.clone());
    let mut all = Vec::new();
    for part in ids.chunks(chunk.max(1)) {
        let pieces = dec.push(part);
        // Within one push, text is merged and never empty.
        for pair in pieces.windows(2) {
            assert!(
                !matches!(pair, [Piece::Text(_), Piece::Text(_)]),
                "adjacent Text pieces in one push: {pieces:?}"
            );
        }
        assert!(!pieces
            .iter()
            .any(|p| matches!(p, Piece::Text(t) if t.is_empty())));
        all.extend(pieces);
    }
    all.extend(dec.finish());
    assert!(!dec.has_pending());
    normalize(all)
}

/// Decodes in one push, one id per push, and chunks of 2 and 3; all must agree.
pub fn decode_all_ways(vocab: &Arc<Vocab>, ids: &[u32]) -> Vec<Piece> {
    let whole = decode_chunked(vocab, ids, ids.len());
    for chunk in [1, 2, 3] {
        assert_eq!(
            decode_chunked(vocab, ids, chunk),
            whole,
            "chunk size {chunk}"
        );
    }
    whole
}
