//! The row a batch step's fill served a keyer, kept on the keyer for the same step's accept.
//!
//! A step computes each request's state key twice: the fill looks its row up, and the accept
//! (`TokenTable::defer`) looks the same row up again to see whether the sampled token is allowed,
//! before the keyer moves. Keeping a weak handle on the served row from the one to the other
//! saves the second key and lookup. The handle is dropped whenever the keyer moves or is
//! relabelled, and names the cache and namespace it came from, so it is only ever read as the
//! row of the state it was served for.

use toolwire_core::bitmask::{MaskCache, RowHandle};

use crate::keyer::StateKeyer;

/// Namespaces up to this many bytes are kept inline (the maskers' default is 8).
const NAMESPACE_BYTES: usize = 16;

#[derive(Clone)]
pub(crate) struct Served {
    cache: usize,
    namespace: [u8; NAMESPACE_BYTES],
    namespace_len: u8,
    row: RowHandle,
}

impl Served {
    /// None where the namespace is too long to keep inline.
    pub(crate) fn new(cache: &MaskCache, namespace: &[u8], row: RowHandle) -> Option<Self> {
        let mut kept = [0; NAMESPACE_BYTES];
        kept.get_mut(..namespace.len())?.copy_from_slice(namespace);
        Some(Served {
            cache: cache as *const MaskCache as usize,
            namespace: kept,
            namespace_len: namespace.len() as u8,
            row,
        })
    }

    /// Whether the served row allows `token`, where it came from `cache` under `namespace` and
    /// an entry still holds it; None: ask the cache.
    pub(crate) fn allows(&self, cache: &MaskCache, namespace: &[u8], token: u32) -> Option<bool> {
        let same = self.cache == cache as *const MaskCache as usize
            && self.namespace[..usize::from(self.namespace_len)] == *namespace;
        same.then(|| self.row.allows(cache, token as usize))
            .flatten()
    }
}

/// A keyer as a batch step's fill holds it: read only, or also given the row it was served.
pub(crate) trait FillKeyer {
    /// Whether the fill should hand over the row it served (a handle costs two atomic counts).
    const KEEPS_ROW: bool;
    fn keyer(&self) -> &StateKeyer;
    fn served(&mut self, _served: Option<Served>) {}
}

impl FillKeyer for &StateKeyer {
    const KEEPS_ROW: bool = false;
    fn keyer(&self) -> &StateKeyer {
        self
    }
}

impl FillKeyer for &mut StateKeyer {
    const KEEPS_ROW: bool = true;
    fn keyer(&self) -> &StateKeyer {
        self
    }
    fn served(&mut self, served: Option<Served>) {
        self.served = served;
    }
}
