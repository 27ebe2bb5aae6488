//! Zero-copy bitmask kernels over tensor data pointers.
//!
//! `toolwire.torch` checks dtype, shape, device and contiguity in Python and passes the pointers
//! with their extents; here the pointers are checked for null and alignment, the row indices
//! against the extents, and then turned into slices for the pure kernels in
//! `toolwire_core::bitmask`. The functions are `unsafe_` because the extents cannot be checked
//! against the allocations: a wrong extent from the caller means memory corruption. The mask
//! cache's fills and stores write rows the same way (its keys come from `keyer.rs`).

use pyo3::prelude::*;
use toolwire_core::bitmask::{self, BF16_NEG_INF, BITS, F16_NEG_INF, F32_NEG_INF};

use crate::keyer::StateKeyer;
use crate::served::{FillKeyer, Served};
use crate::ToolwireError;

fn check_ptr(ptr: usize, align: usize, what: &str) -> PyResult<()> {
    if ptr == 0 {
        return Err(ToolwireError::new_err(format!(
            "{what} data pointer is null"
        )));
    }
    if ptr % align != 0 {
        return Err(ToolwireError::new_err(format!(
            "{what} data pointer {ptr:#x} is not aligned to {align} bytes"
        )));
    }
    Ok(())
}

/// A bitmask's extent: `rows` rows of `words` int32 words, contiguous.
#[derive(Clone, Copy)]
pub(crate) struct MaskBuf {
    pub ptr: usize,
    pub rows: usize,
    pub words: usize,
}

impl MaskBuf {
    pub fn new(ptr: usize, rows: usize, words: usize) -> PyResult<Self> {
        check_ptr(ptr, 4, "bitmask")?;
        rows.checked_mul(words)
            .and_then(|n| n.checked_mul(4))
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| ToolwireError::new_err("bitmask extent overflows"))?;
        Ok(MaskBuf { ptr, rows, words })
    }

    /// The bitmask at `ptr` as a batch step addresses it: one row of `indices` for each of its
    /// `items` (`what`: "request", "keyer"), every index checked before any row is touched, so
    /// a bad index fails the call rather than half of it.
    pub fn for_indices(
        ptr: usize,
        rows: usize,
        words: usize,
        indices: &[usize],
        items: usize,
        what: &str,
    ) -> PyResult<Self> {
        let buf = Self::new(ptr, rows, words)?;
        if items != indices.len() {
            return Err(ToolwireError::new_err(format!(
                "one bitmask row per {what}"
            )));
        }
        for &r in indices {
            buf.check_row(r)?;
        }
        Ok(buf)
    }

    pub fn check_row(&self, row: usize) -> PyResult<()> {
        if row >= self.rows {
            return Err(ToolwireError::new_err(format!(
                "row {row} is out of range for a bitmask of {} rows",
                self.rows
            )));
        }
        Ok(())
    }

    /// # Safety
    /// The buffer must hold `rows * words` int32 words, and `row` must have been checked.
    pub unsafe fn row<'a>(&self, row: usize) -> &'a [u32] {
        std::slice::from_raw_parts((self.ptr as *const u32).add(row * self.words), self.words)
    }

    /// # Safety
    /// As [`MaskBuf::row`], and nothing else may read or write the row meanwhile.
    pub unsafe fn row_mut<'a>(&self, row: usize) -> &'a mut [u32] {
        std::slice::from_raw_parts_mut((self.ptr as *mut u32).add(row * self.words), self.words)
    }
}

fn apply_rows<T: Copy>(
    logits_ptr: usize,
    width: usize,
    row_stride: usize,
    mask: MaskBuf,
    rows: &[usize],
    allowed_len: usize,
    neg_inf: T,
) {
    for &r in rows {
        // SAFETY: the caller vouched for the extents; rows were checked against them.
        let (logits, words) = unsafe {
            (
                std::slice::from_raw_parts_mut((logits_ptr as *mut T).add(r * row_stride), width),
                mask.row(r),
            )
        };
        bitmask::apply_row(logits, words, allowed_len, neg_inf);
    }
}

/// Mask logits in place from raw pointers; use :func:`toolwire.torch.apply_token_bitmask_`.
///
/// Each row ``r`` in ``rows`` (default: every logits row) of the logits at ``logits_ptr``
/// (``logits_rows`` rows of ``width`` elements, ``row_stride`` elements apart) is masked by row
/// ``r`` of the int32 bitmask at ``bitmask_ptr`` (``bitmask_rows`` x ``words``, contiguous):
/// columns below ``allowed_len`` whose bit is set keep their value, every other column becomes
/// ``-inf``. Pointers are checked for null and alignment and rows against the extents; the
/// extents themselves cannot be checked, so wrong ones corrupt memory.
///
/// Raises:
///     ToolwireError: on a null or misaligned pointer, an unknown dtype or an out-of-range row.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (logits_ptr, dtype, logits_rows, width, row_stride, bitmask_ptr, bitmask_rows, words, rows, allowed_len))]
pub fn unsafe_apply_token_bitmask(
    py: Python<'_>,
    logits_ptr: usize,
    dtype: &str,
    logits_rows: usize,
    width: usize,
    row_stride: usize,
    bitmask_ptr: usize,
    bitmask_rows: usize,
    words: usize,
    rows: Option<Vec<usize>>,
    allowed_len: usize,
) -> PyResult<()> {
    let elem = match dtype {
        "float32" => 4,
        "float16" | "bfloat16" => 2,
        other => {
            return Err(ToolwireError::new_err(format!(
                "logits dtype {other} is not supported (float32, float16, bfloat16)"
            )))
        }
    };
    check_ptr(logits_ptr, elem, "logits")?;
    let mask = MaskBuf::new(bitmask_ptr, bitmask_rows, words)?;
    if row_stride < width && logits_rows > 1 {
        return Err(ToolwireError::new_err(
            "logits rows overlap (row stride < width)",
        ));
    }
    if allowed_len > width || allowed_len > words * BITS {
        return Err(ToolwireError::new_err(format!(
            "allowed_len {allowed_len} exceeds the logits width {width} or the mask's {} tokens",
            words * BITS
        )));
    }
    let rows = rows.unwrap_or_else(|| (0..logits_rows).collect());
    for &r in &rows {
        mask.check_row(r)?;
        if r >= logits_rows {
            return Err(ToolwireError::new_err(format!(
                "row {r} is out of range for logits of {logits_rows} rows"
            )));
        }
    }
    py.allow_threads(|| match dtype {
        "float32" => apply_rows(
            logits_ptr,
            width,
            row_stride,
            mask,
            &rows,
            allowed_len,
            F32_NEG_INF,
        ),
        "float16" => apply_rows(
            logits_ptr,
            width,
            row_stride,
            mask,
            &rows,
            allowed_len,
            F16_NEG_INF,
        ),
        _ => apply_rows(
            logits_ptr,
            width,
            row_stride,
            mask,
            &rows,
            allowed_len,
            BF16_NEG_INF,
        ),
    });
    Ok(())
}

/// Allowed-token count of each row of a contiguous int32 bitmask, over the first ``vocab`` ids;
/// use :func:`toolwire.torch.count_allowed`.
#[pyfunction]
pub fn unsafe_count_allowed(
    bitmask_ptr: usize,
    rows: usize,
    words: usize,
    vocab: usize,
) -> PyResult<Vec<usize>> {
    let mask = MaskBuf::new(bitmask_ptr, rows, words)?;
    // SAFETY: the caller vouched for the extent.
    Ok((0..rows)
        .map(|r| bitmask::count_allowed(unsafe { mask.row(r) }, vocab))
        .collect())
}

/// Positions that missed, and `(position, filled position)` pairs of equal keys.
type FillOutcome = (Vec<usize>, Vec<(usize, usize)>);
/// What [`MaskCache::fill_keyed`] found: missed positions, copies, hits.
pub(crate) type KeyedFill = (Vec<usize>, Vec<(usize, usize)>, usize);

/// A bounded least-recently-used cache of bitmask rows (int32 words) keyed by bytes.
///
/// The byte budget counts keys, rows and a fixed per-entry overhead; inserting past it evicts
/// the least recently used entries. Thread-safe. Keys are the caller's business: see
/// :class:`toolwire.masks.BatchMasker`, which derives keys from the grammar state.
#[pyclass(name = "MaskCache", module = "toolwire._core", frozen)]
pub struct MaskCache(std::sync::Mutex<toolwire_core::bitmask::MaskCache>);

impl MaskCache {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, toolwire_core::bitmask::MaskCache> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Fill each `(position, row, keyer)`'s row of `buf` with the row cached under `namespace`
    /// followed by the keyer's key: the one cache walk of a batch step, whether the keyers come
    /// as a list (`unsafe_fill_rows`) or are read off request objects (`rows.rs`). Returns the
    /// positions that missed (each key once; a keyer that is not cacheable misses without a
    /// lookup), `(i, j)` pairs of later positions sharing missed position `j`'s key, and the
    /// number of hits.
    pub(crate) fn fill_keyed<K: FillKeyer>(
        &self,
        namespace: &[u8],
        buf: &MaskBuf,
        keyed: impl IntoIterator<Item = (usize, usize, K)>,
    ) -> PyResult<KeyedFill> {
        // In phases over the batch (keys, lookups, copies), not row by row: each phase's memory
        // loads (a keyer's state, an entry, a stored row) then overlap across the batch's rows.
        let (mut missed, mut copies, mut hits) = (Vec::new(), Vec::new(), 0);
        let mut keys = Vec::new();
        let mut looked_up = Vec::new(); // (position, row, keyer, its key's range in `keys`)
        for (i, r, held) in keyed {
            buf.check_row(r)?;
            if !held.keyer().inner.cacheable() {
                missed.push(i);
                continue;
            }
            let from = keys.len();
            keys.extend_from_slice(namespace);
            held.keyer().push_key(&mut keys);
            looked_up.push((i, r, held, from..keys.len()));
        }
        let asked: Vec<&[u8]> = looked_up
            .iter()
            .map(|(.., range)| &keys[range.clone()])
            .collect();
        let mut cache = self.lock();
        let stored = cache.touch_many(&asked);
        let cache = &*cache;
        let mut missed_keys: Vec<(&[u8], usize)> = Vec::new();
        for ((i, r, mut held, _), (key, stored)) in
            looked_up.into_iter().zip(asked.iter().zip(stored))
        {
            let found = if !stored {
                None
            } else if K::KEEPS_ROW {
                cache
                    .peek_with_handle(key)
                    .map(|(row, handle)| (row, Some(handle)))
            } else {
                cache.peek(key).map(|row| (row, None))
            };
            match found {
                Some((row, handle)) if row.len() == buf.words => {
                    // SAFETY: the caller vouched for the extent; the row index was checked.
                    row.copy_to(unsafe { buf.row_mut(r) });
                    hits += 1;
                    if let Some(handle) = handle {
                        held.served(Served::new(cache, namespace, handle));
                    }
                }
                Some(_) => {
                    return Err(ToolwireError::new_err(
                        "a cached row has another length: one cache serves one vocabulary size",
                    ))
                }
                None => match missed_keys.iter().find(|(k, _)| k == key) {
                    Some((_, j)) => copies.push((i, *j)),
                    None => {
                        missed.push(i);
                        missed_keys.push((key, i));
                    }
                },
            }
        }
        missed.sort_unstable(); // in batch order, the keyers that cannot be cached among them
        Ok((missed, copies, hits))
    }

    /// After [`MaskCache::fill_keyed`] and filling the missed rows: store each `(row, keyer)`'s
    /// row under its key (not where the keyer is not cacheable), then copy row `indices[j]`
    /// into row `indices[i]` for each `(i, j)` of `copies`. Returns how many rows were stored.
    pub(crate) fn store_keyed<'k>(
        &self,
        namespace: &[u8],
        buf: &MaskBuf,
        keyed: impl IntoIterator<Item = (usize, &'k StateKeyer)>,
        indices: &[usize],
        copies: &[(usize, usize)],
    ) -> PyResult<usize> {
        let row_of = |i: usize| -> PyResult<usize> {
            let r = *indices
                .get(i)
                .ok_or_else(|| ToolwireError::new_err(format!("position {i} is out of range")))?;
            buf.check_row(r)?;
            Ok(r)
        };
        let mut key = namespace.to_vec();
        let mut stored = 0;
        let mut cache = self.lock();
        for (r, keyer) in keyed {
            buf.check_row(r)?;
            if !keyer.inner.cacheable() {
                continue;
            }
            key.truncate(namespace.len());
            keyer.push_key(&mut key);
            // SAFETY: the caller vouched for the extent; the row index was checked.
            stored += usize::from(cache.insert(&key, unsafe { buf.row(r) }));
        }
        drop(cache);
        for &(i, j) in copies {
            let (dst, src) = (row_of(i)?, row_of(j)?);
            if dst != src {
                // SAFETY: as above; distinct rows of one buffer do not overlap.
                unsafe { buf.row_mut(dst) }.copy_from_slice(unsafe { buf.row(src) });
            }
        }
        Ok(stored)
    }
}

fn words_of(mask: &[u8]) -> PyResult<Vec<u32>> {
    if mask.len() % 4 != 0 {
        return Err(ToolwireError::new_err(
            "a mask is a whole number of 4-byte words",
        ));
    }
    Ok(mask
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[pymethods]
impl MaskCache {
    #[new]
    #[pyo3(signature = (max_bytes = None), text_signature = "(max_bytes=67108864)")]
    fn new(max_bytes: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let max_bytes = match max_bytes {
            Some(max_bytes) => crate::convert::unsigned(max_bytes, "max_bytes")?,
            None => 64 << 20,
        };
        Ok(MaskCache(std::sync::Mutex::new(
            toolwire_core::bitmask::MaskCache::new(max_bytes),
        )))
    }

    /// The row stored under ``key`` as little-endian int32 bytes (counts a hit or a miss).
    fn get<'py>(&self, py: Python<'py>, key: &[u8]) -> Option<Bound<'py, pyo3::types::PyBytes>> {
        let mut cache = self.lock();
        cache.get(key).map(|row| {
            let bytes: Vec<u8> = row.to_vec().iter().flat_map(|w| w.to_le_bytes()).collect();
            pyo3::types::PyBytes::new(py, &bytes)
        })
    }

    /// Store a row (little-endian int32 bytes); False when this entry alone exceeds the budget.
    fn insert(&self, key: &[u8], mask: &[u8]) -> PyResult<bool> {
        let words = words_of(mask)?;
        Ok(self.lock().insert(key, &words))
    }

    /// On a hit, copy the row into the ``words`` int32 words at ``ptr`` and return True.
    ///
    /// Raises:
    ///     ToolwireError: null or misaligned ``ptr``, or a cached row of another length.
    fn unsafe_get_into(&self, key: &[u8], ptr: usize, words: usize) -> PyResult<bool> {
        let buf = MaskBuf::new(ptr, 1, words)?;
        let mut cache = self.lock();
        let Some(row) = cache.get(key) else {
            return Ok(false);
        };
        if row.len() != words {
            return Err(ToolwireError::new_err(format!(
                "the cached row has {} words, the bitmask row {words}: one cache serves one vocabulary size",
                row.len()
            )));
        }
        // SAFETY: the caller vouched for `words` int32 words at `ptr`; `buf` checked null and alignment.
        row.copy_to(unsafe { std::slice::from_raw_parts_mut(buf.ptr as *mut u32, words) });
        Ok(true)
    }

    /// Fill rows ``indices[i]`` of the contiguous ``rows`` x ``words`` int32 bitmask at ``ptr``
    /// with the rows cached under ``namespace + keyers[i].key()``.
    ///
    /// Returns the positions that missed (each key once) and ``(i, j)`` pairs of later positions
    /// whose key equals that of the missed position ``j``. A keyer that is not ``cacheable``
    /// misses without a lookup, and its row is not stored.
    #[allow(clippy::too_many_arguments)]
    fn unsafe_fill_rows(
        &self,
        namespace: &[u8],
        keyers: Vec<PyRef<'_, StateKeyer>>,
        ptr: usize,
        rows: usize,
        words: usize,
        indices: Vec<usize>,
    ) -> PyResult<FillOutcome> {
        let buf = MaskBuf::for_indices(ptr, rows, words, &indices, keyers.len(), "keyer")?;
        let keyed = keyers.iter().zip(&indices).enumerate();
        let (missed, copies, _) =
            self.fill_keyed(namespace, &buf, keyed.map(|(i, (k, &r))| (i, r, &**k)))?;
        Ok((missed, copies))
    }

    /// After :meth:`unsafe_fill_rows` over the same ``keyers`` and ``indices`` and filling the
    /// missed rows: store each missed row under its key, and copy row ``indices[j]`` into row
    /// ``indices[i]`` for each ``(i, j)`` of ``copies``. Returns how many rows were stored (an
    /// entry larger than the cache's budget is not).
    #[allow(clippy::too_many_arguments)]
    fn unsafe_store_rows(
        &self,
        namespace: &[u8],
        keyers: Vec<PyRef<'_, StateKeyer>>,
        ptr: usize,
        rows: usize,
        words: usize,
        indices: Vec<usize>,
        missed: Vec<usize>,
        copies: Vec<(usize, usize)>,
    ) -> PyResult<usize> {
        let buf = MaskBuf::for_indices(ptr, rows, words, &indices, keyers.len(), "keyer")?;
        let mut keyed = Vec::with_capacity(missed.len());
        for &i in &missed {
            let (r, k) = indices
                .get(i)
                .zip(keyers.get(i))
                .ok_or_else(|| ToolwireError::new_err(format!("position {i} is out of range")))?;
            keyed.push((*r, &**k));
        }
        self.store_keyed(namespace, &buf, keyed, &indices, &copies)
    }

    /// Store row ``row`` of the bitmask at ``ptr`` under ``namespace + keyer.key()``.
    fn unsafe_insert_keyed(
        &self,
        namespace: &[u8],
        keyer: PyRef<'_, StateKeyer>,
        ptr: usize,
        rows: usize,
        words: usize,
        row: usize,
    ) -> PyResult<bool> {
        let buf = MaskBuf::new(ptr, rows, words)?;
        buf.check_row(row)?;
        let mut key = namespace.to_vec();
        keyer.push_key(&mut key);
        // SAFETY: as above.
        Ok(self.lock().insert(&key, unsafe { buf.row(row) }))
    }

    /// Store the ``words`` int32 words at ``ptr`` under ``key``.
    fn unsafe_insert_from(&self, key: &[u8], ptr: usize, words: usize) -> PyResult<bool> {
        let buf = MaskBuf::new(ptr, 1, words)?;
        // SAFETY: as above.
        let row = unsafe { buf.row(0) };
        Ok(self.lock().insert(key, row))
    }

    fn remove(&self, key: &[u8]) -> bool {
        self.lock().remove(key)
    }

    /// Drop every entry and reset the counters.
    fn clear(&self) {
        self.lock().clear();
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    fn __contains__(&self, key: &[u8]) -> bool {
        self.lock().contains(key)
    }

    #[getter]
    fn used_bytes(&self) -> usize {
        self.lock().used_bytes()
    }

    #[getter]
    fn max_bytes(&self) -> usize {
        self.lock().max_bytes()
    }

    /// ``hits``, ``misses``, ``inserts``, ``evictions``, ``entries``, ``used_bytes``, ``max_bytes``.
    fn stats(&self) -> std::collections::HashMap<&'static str, u64> {
        let cache = self.lock();
        let s = cache.stats();
        std::collections::HashMap::from([
            ("hits", s.hits),
            ("misses", s.misses),
            ("inserts", s.inserts),
            ("evictions", s.evictions),
            ("entries", cache.len() as u64),
            ("used_bytes", cache.used_bytes() as u64),
            ("max_bytes", cache.max_bytes() as u64),
        ])
    }

    fn __repr__(&self) -> String {
        let cache = self.lock();
        format!(
            "MaskCache(entries={}, used_bytes={}, max_bytes={})",
            cache.len(),
            cache.used_bytes(),
            cache.max_bytes()
        )
    }
}
