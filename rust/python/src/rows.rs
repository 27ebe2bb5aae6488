//! A batch step over request objects in one call each way: the rows a batch of composed
//! requests (`toolwire.grammar.composed_batch`) needs, and the tokens it takes through the keyers
//! alone.
//!
//! A step of `ComposedMasker` used to loop over its requests in Python to collect each one's
//! keyer before the one Rust lookup (`MaskCache.unsafe_fill_rows`) and again before
//! `TokenTable.feed_deferred`: about a microsecond a row, as much as the row copy itself. Here
//! the requests are handed over as they are and the loop reads, for each, the one attribute the
//! request keeps current: the keyer of its row (`_fill_key`) or of the tokens it may take alone
//! (`_accept_key`), None where it has none (a terminated request has none: Python, which visits
//! the rows that missed and the tokens left to the matchers, fills and skips those).

use pyo3::prelude::*;

use crate::bitmask::{MaskBuf, MaskCache};
use crate::keyer::{Deferral, StateKeyer, TokenTable};
use crate::steps::take_step;
use crate::ToolwireError;

/// What a request asks of a step.
enum Slot<'py> {
    /// None: the row allows everything, the token is taken.
    Done,
    /// No keyer: the caller's.
    Unkeyed,
    Keyed(Bound<'py, StateKeyer>),
}

fn slots<'py>(requests: &[Bound<'py, PyAny>], attr: &str) -> PyResult<Vec<Slot<'py>>> {
    let Some(first) = requests.first() else {
        return Ok(Vec::new());
    };
    let py = first.py();
    let attr = pyo3::types::PyString::intern(py, attr);
    requests
        .iter()
        .map(|r| {
            if r.is_none() {
                return Ok(Slot::Done);
            }
            let k = r.getattr(&attr)?;
            if k.is_none() {
                return Ok(Slot::Unkeyed);
            }
            Ok(Slot::Keyed(k.downcast_into::<StateKeyer>()?))
        })
        .collect()
}

/// Missed positions (each key once), `(i, j)` pairs of later positions sharing the key of missed
/// position `j`, unkeyed positions, and rows served from the cache.
type Outcome = (Vec<usize>, Vec<(usize, usize)>, Vec<usize>, usize);

/// Fill row ``indices[i]`` of the contiguous ``rows`` x ``words`` int32 bitmask at ``ptr`` for
/// ``requests[i]``: all allowed for None, else the row cached under ``namespace`` + the key of its
/// ``_fill_key`` keyer.
///
/// Returns ``(missed, copies, unkeyed, hits)``: the positions whose key missed (each key once;
/// a keyer that is not ``cacheable`` misses without a lookup), ``(i, j)`` pairs of later
/// positions whose key equals that of missed position ``j``, the positions whose ``_fill_key``
/// is None, and how many rows the cache served.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn unsafe_fill_request_rows(
    cache: &MaskCache,
    namespace: &[u8],
    requests: Vec<Bound<'_, PyAny>>,
    ptr: usize,
    rows: usize,
    words: usize,
    indices: Vec<usize>,
) -> PyResult<Outcome> {
    let buf = MaskBuf::for_indices(ptr, rows, words, &indices, requests.len(), "request")?;
    let slots = slots(&requests, "_fill_key")?;
    let mut keyers = Vec::with_capacity(slots.len());
    let mut unkeyed = Vec::new();
    for (i, slot) in slots.iter().enumerate() {
        match slot {
            // SAFETY: the caller vouched for the extent; the row index was checked.
            Slot::Done => unsafe { buf.row_mut(indices[i]) }.fill(u32::MAX),
            Slot::Unkeyed => unkeyed.push(i),
            // Mutably: each keeps the row it is served (`served.rs`); a keyer met twice is an
            // error, as in `feed_requests`.
            Slot::Keyed(k) => keyers.push((i, k.try_borrow_mut()?)),
        }
    }
    let keyed = keyers.iter_mut().map(|(i, k)| (*i, indices[*i], &mut **k));
    let (missed, copies, hits) = cache.fill_keyed(namespace, &buf, keyed)?;
    Ok((missed, copies, unkeyed, hits))
}

/// After :func:`unsafe_fill_request_rows` over the same ``requests`` and ``indices`` and filling
/// the missed rows: store each missed row under its key, and copy row ``indices[j]`` into row
/// ``indices[i]`` for each ``(i, j)`` of ``copies``. Returns how many rows were stored.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn unsafe_store_request_rows(
    cache: &MaskCache,
    namespace: &[u8],
    requests: Vec<Bound<'_, PyAny>>,
    ptr: usize,
    rows: usize,
    words: usize,
    indices: Vec<usize>,
    missed: Vec<usize>,
    copies: Vec<(usize, usize)>,
) -> PyResult<usize> {
    let buf = MaskBuf::for_indices(ptr, rows, words, &indices, requests.len(), "request")?;
    let picked: Vec<Bound<'_, PyAny>> = missed
        .iter()
        .map(|&i| {
            requests
                .get(i)
                .cloned()
                .ok_or_else(|| ToolwireError::new_err(format!("position {i} is out of range")))
        })
        .collect::<PyResult<_>>()?;
    let slots = slots(&picked, "_fill_key")?;
    let mut keyers = Vec::new();
    for (&i, slot) in missed.iter().zip(&slots) {
        if let Slot::Keyed(k) = slot {
            keyers.push((indices[i], k.try_borrow()?));
        }
    }
    let keyed = keyers.iter().map(|(r, k)| (*r, &**k));
    cache.store_keyed(namespace, &buf, keyed, &indices, &copies)
}

/// Take ``tokens[i]`` for ``requests[i]`` through the request's ``_accept_key`` keyer alone where
/// the mask cached under its key allows it (as :meth:`TokenTable.feed_deferred`), or, where
/// the keyer does not take it, through a step of the request's ``_steps`` (a :class:`CallSteps`)
/// that the row allows (the request gets a new keyer and journals the old one, see
/// :class:`CallSteps`). Returns the positions left to the caller (requests without such a
/// keyer, and tokens neither took), the positions among those whose token the row cached under
/// the keyer's (text-level) key allows, so the request's matcher would accept it, how many
/// tokens the keyers took and how many steps were taken. None requests are skipped.
#[pyfunction]
pub fn feed_requests(
    table: &TokenTable,
    cache: &MaskCache,
    namespace: &[u8],
    requests: Vec<Bound<'_, PyAny>>,
    tokens: Vec<u32>,
) -> PyResult<(Vec<usize>, Vec<usize>, usize, usize)> {
    if requests.len() != tokens.len() {
        return Err(ToolwireError::new_err("accept needs one token per request"));
    }
    let slots = slots(&requests, "_accept_key")?;
    let mut left = Vec::new();
    let mut keyers = Vec::with_capacity(slots.len());
    for (i, slot) in slots.iter().enumerate() {
        match slot {
            Slot::Done => {}
            Slot::Unkeyed => left.push(i),
            // Borrowed all at once: a keyer met twice is an error, not fed twice.
            Slot::Keyed(k) => keyers.push((i, k, k.try_borrow_mut()?)),
        }
    }
    let ns = namespace.len();
    let mut key = namespace.to_vec();
    let mut scratch = Vec::new();
    let cache = cache.lock();
    let (mut taken, mut stepped, mut allowed) = (0, 0, Vec::new());
    for (i, old, keyer) in &mut keyers {
        let (i, token) = (*i, tokens[*i]);
        let deferral = table.defer(&cache, &mut key, ns, keyer, token);
        if deferral == Deferral::Taken {
            taken += 1;
            continue;
        }
        let known = deferral == Deferral::Allowed;
        let bytes = table.bytes_of(token);
        let allows = || known || TokenTable::row_allows(&cache, &mut key, ns, keyer, token);
        if take_step(&requests[i], old, keyer, token, bytes, &mut scratch, allows)? {
            stepped += 1;
            continue;
        }
        if known {
            allowed.push(i);
        }
        left.push(i);
    }
    left.sort_unstable();
    Ok((left, allowed, taken, stepped))
}
