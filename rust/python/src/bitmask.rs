//! Zero-copy bitmask kernels over tensor data pointers.
//!
//! `toolwire.torch` checks dtype, shape, device and contiguity in Python and passes the pointers
//! with their extents; here the pointers are checked for null and alignment, the row indices
//! against the extents, and then turned into slices for the pure kernels in
//! `toolwire_core::bitmask`. The functions are `unsafe_` because the extents cannot be checked
//! against the allocations: a wrong extent from the caller means memory corruption.

use pyo3::prelude::*;
use toolwire_core::bitmask::{self, BF16_NEG_INF, BITS, F16_NEG_INF, F32_NEG_INF};

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
        let mut key = namespace.to_vec();
        let (mut missed, mut copies, mut hits) = (Vec::new(), Vec::new(), 0);
        let mut missed_keys: Vec<(Vec<u8>, usize)> = Vec::new();
        let mut cache = self.lock();
        for (i, r, mut held) in keyed {
            buf.check_row(r)?;
            let keyer = held.keyer();
            if !keyer.inner.cacheable() {
                missed.push(i);
                continue;
            }
            key.truncate(namespace.len());
            keyer.push_key(&mut key);
            if let Some((_, j)) = missed_keys.iter().find(|(k, _)| *k == key) {
                copies.push((i, *j));
                continue;
            }
            let found = if K::KEEPS_ROW {
                cache
                    .get_with_handle(&key)
                    .map(|(row, handle)| (row, Some(handle)))
            } else {
                cache.get(&key).map(|row| (row, None))
            };
            match found {
                Some((row, handle)) if row.len() == buf.words => {
                    // SAFETY: the caller vouched for the extent; the row index was checked.
                    row.copy_to(unsafe { buf.row_mut(r) });
                    hits += 1;
                    if let Some(handle) = handle {
                        held.served(Served::new(&cache, namespace, handle));
                    }
                }
                Some(_) => {
                    return Err(ToolwireError::new_err(
                        "a cached row has another length: one cache serves one vocabulary size",
                    ))
                }
                None => {
                    missed.push(i);
                    missed_keys.push((key.clone(), i));
                }
            }
        }
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

fn to_grammar_id(id: &[u8]) -> PyResult<[u8; 16]> {
    id.try_into()
        .map_err(|_| ToolwireError::new_err("a grammar id is 16 bytes"))
}

/// How a grammar's output is read for mask-cache keys: anchors in free text, after each call
/// and inside unconstrained JSON strings of a structural tag (see ``toolwire.masks.BatchMasker``).
#[pyclass(name = "StateKeyPlan", module = "toolwire._core", frozen)]
pub struct StateKeyPlan(toolwire_core::bitmask::KeyPlan);

#[pymethods]
impl StateKeyPlan {
    /// The plan for a structural tag (JSON text); ``grammar_id`` (16 bytes) names it in keys.
    /// ``ordered_objects``: the grammar engine takes an object's members in ``properties``
    /// order (``toolwire.grammar.engine_facts.objects_in_declared_order``), so a key after a
    /// member names that member alone, not every optional member before it.
    ///
    /// Raises:
    ///     ToolwireError: the id is not 16 bytes or the tag is not JSON.
    #[staticmethod]
    #[pyo3(signature = (grammar_id, tag_json, *, ordered_objects = false))]
    fn from_tag(grammar_id: &[u8], tag_json: &str, ordered_objects: bool) -> PyResult<Self> {
        let tag: serde_json::Value = serde_json::from_str(tag_json)
            .map_err(|e| ToolwireError::new_err(format!("structural tag is not JSON: {e}")))?;
        Ok(StateKeyPlan(
            toolwire_core::bitmask::KeyPlan::from_tag(to_grammar_id(grammar_id)?, &tag)
                .with_ordered_objects(ordered_objects),
        ))
    }

    /// A grammar known only by its id: keys cover the token ids since the start.
    #[staticmethod]
    fn opaque(grammar_id: &[u8]) -> PyResult<Self> {
        Ok(StateKeyPlan(toolwire_core::bitmask::KeyPlan::opaque(
            to_grammar_id(grammar_id)?,
        )))
    }

    /// Whether the tag's structure is followed (False: keys cover the whole output).
    #[getter]
    fn anchored(&self) -> bool {
        self.0.anchored()
    }

    /// False when the grammar has token-level elements (keys then use token ids).
    #[getter]
    fn text_level(&self) -> bool {
        self.0.text_level()
    }

    /// E.g. ``triggered(prefix=[], tags=[json,json])`` or ``whole output (tokens)``.
    fn describe(&self) -> String {
        self.0.describe()
    }

    /// The kinds of anchor the keyer can reach (see `KeyPlan::anchors`).
    fn anchors(&self) -> Vec<&'static str> {
        self.0.anchors()
    }

    /// A keyer for one request.
    fn keyer(&self) -> StateKeyer {
        StateKeyer::new(toolwire_core::bitmask::StateKeyer::new(&self.0))
    }

    fn __repr__(&self) -> String {
        format!("StateKeyPlan({})", self.0.describe())
    }
}

/// Follows one request's output and names its grammar state.
#[pyclass(name = "StateKeyer", module = "toolwire._core")]
#[derive(Clone)]
pub struct StateKeyer {
    pub(crate) inner: toolwire_core::bitmask::StateKeyer,
    deferred: Vec<u8>,
    deferred_lengths: Vec<u32>,
    tokens: u64,
    label: Label,
    /// Set for a keyer of a call's text inside several tools' begins (`CallBegins.keyer`).
    walk: Option<BeginWalk>,
    /// The row a batch step's fill served this state (dropped when the keyer moves).
    pub(crate) served: Option<Served>,
}

/// A keyer's call text among the begins it was made for: the text is its state (in its key,
/// after the label's prefix) and grows with every token fed.
#[derive(Clone)]
struct BeginWalk {
    begins: std::sync::Arc<toolwire_core::bitmask::CallBegins>,
    text: Vec<u8>,
}

/// What a composed grammar adds to a keyer: bytes around its key, and where
/// :meth:`TokenTable.feed_deferred` hands a token back (where the composed matcher may change
/// parts: a token that completes a call's end, or one after which the keyer is not in free text).
#[derive(Clone, Default)]
struct Label {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    stop_at: Vec<u8>,
    tail: Vec<u8>, // the last `stop_at.len() - 1` bytes fed
    free_text_only: bool,
    /// The suffix only while the text fed ends with a start of `stop_at` (see `label`).
    suffix_near_stop: bool,
}

impl Label {
    /// Whether the text fed since the label ends with a non-empty proper prefix of `stop_at`.
    fn near_stop(&self) -> bool {
        let (stop, tail) = (&self.stop_at, &self.tail);
        let Some(&last) = tail.last() else {
            return false;
        };
        stop.len() > 1
            && stop[..stop.len() - 1].contains(&last)
            && (1..stop.len()).any(|j| tail.ends_with(&stop[..j]))
    }
}

impl StateKeyer {
    fn new(inner: toolwire_core::bitmask::StateKeyer) -> Self {
        StateKeyer {
            inner,
            deferred: Vec::new(),
            deferred_lengths: Vec::new(),
            tokens: 0,
            label: Label::default(),
            walk: None,
            served: None,
        }
    }

    /// A keyer of the call text `text` among `begins`, keyed by `prefix`, the text and `plan`'s
    /// (constant) key.
    pub(crate) fn in_begins(
        plan: &StateKeyPlan,
        begins: std::sync::Arc<toolwire_core::bitmask::CallBegins>,
        prefix: &[u8],
        text: &[u8],
    ) -> Self {
        let mut k = StateKeyer::new(toolwire_core::bitmask::StateKeyer::new(&plan.0));
        k.label.prefix = prefix.to_vec();
        k.walk = Some(BeginWalk {
            begins,
            text: text.to_vec(),
        });
        k
    }

    fn feed(&mut self, token: u32, data: &[u8]) {
        self.tokens += 1;
        self.served = None;
        if let Some(walk) = &mut self.walk {
            walk.text.extend_from_slice(data);
            return;
        }
        self.inner.accept(token, data);
        let keep = self.label.stop_at.len().saturating_sub(1);
        if keep > 0 {
            let tail = &mut self.label.tail;
            tail.extend_from_slice(data);
            if tail.len() > keep {
                tail.drain(..tail.len() - keep);
            }
        }
    }

    /// Append the cache key of the current state (the label's prefix, the key, its suffix).
    pub(crate) fn push_key(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.label.prefix);
        if let Some(walk) = &self.walk {
            out.extend_from_slice(&walk.text);
        }
        out.extend_from_slice(&self.inner.key());
        if !self.label.suffix_near_stop || self.label.near_stop() {
            out.extend_from_slice(&self.label.suffix);
        }
    }

    /// Whether `data` would complete the label's `stop_at` text.
    fn stops_at(&self, data: &[u8]) -> bool {
        let stop = &self.label.stop_at;
        if stop.is_empty() {
            return false;
        }
        // Each place `stop` could end within `data`: the part before `data` must end the tail
        // (no copy of the two together: this runs for every token inside a call).
        let tail = &self.label.tail;
        (1..=data.len()).any(|end| {
            if end >= stop.len() {
                data[end - stop.len()..end] == stop[..]
            } else {
                let (before, within) = stop.split_at(stop.len() - end);
                data[..end] == *within && tail.ends_with(before)
            }
        })
    }
}

#[pymethods]
impl StateKeyer {
    /// Feed one accepted token (not a stop token): its id and its bytes.
    fn accept(&mut self, token: u32, data: &[u8]) {
        self.feed(token, data);
    }

    /// The key of the current state (34 bytes): grammar id, anchor kind, calls so far (0/1),
    /// digest; with :meth:`label`'s prefix before and suffix after.
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        let mut key = Vec::new();
        self.push_key(&mut key);
        pyo3::types::PyBytes::new(py, &key)
    }

    /// Put ``prefix`` before and ``suffix`` after every key of this keyer (in :meth:`key` and
    /// wherever a :class:`MaskCache` or :class:`TokenTable` keys rows by it), and make
    /// :meth:`TokenTable.feed_deferred` leave to the caller any token that completes
    /// ``stop_at`` in the text fed from now on (empty: none).
    /// With ``free_text_only``, it leaves any token after which the keyer is not in the free
    /// text of a ``triggered_tags`` format (mode ``free``). With ``suffix_near_stop``, the
    /// suffix is added only while the text fed since ends with a non-empty proper prefix of
    /// ``stop_at`` (where what the suffix tells apart matters only there).
    #[pyo3(
        signature = (prefix, suffix = b"".as_slice(), stop_at = b"".as_slice(), free_text_only = false, suffix_near_stop = false),
        text_signature = "(self, /, prefix, suffix=b'', stop_at=b'', free_text_only=False, suffix_near_stop=False)"
    )]
    fn label(
        &mut self,
        prefix: &[u8],
        suffix: &[u8],
        stop_at: &[u8],
        free_text_only: bool,
        suffix_near_stop: bool,
    ) {
        self.served = None;
        self.label = Label {
            prefix: prefix.to_vec(),
            suffix: suffix.to_vec(),
            stop_at: stop_at.to_vec(),
            tail: Vec::new(),
            free_text_only,
            suffix_near_stop,
        };
    }

    /// Where the keyer is; ``lost``: no anchors any more (or no plan).
    #[getter]
    fn mode(&self) -> &'static str {
        self.inner.mode().name()
    }

    /// The kind of the last anchor: ``S``/``I`` (start, by text/ids), ``F`` (free text), ``A`` (after a
    /// call), ``X`` (in an XML call), ``J`` (in JSON content, after a member's value).
    #[getter]
    fn family(&self) -> String {
        char::from(self.inner.family()).to_string()
    }

    /// Calls completed so far, as far as the keyer followed them.
    #[getter]
    fn calls(&self) -> u32 {
        self.inner.calls()
    }

    /// Tokens fed so far (stop tokens are not fed).
    #[getter]
    fn tokens(&self) -> u64 {
        self.tokens
    }

    /// False once more than 128 bytes were read without anchors (mode ``lost``): only a replay
    /// of the same output could share such a key, so :class:`toolwire.masks.BatchMasker` skips
    /// the cache for it.
    #[getter]
    fn cacheable(&self) -> bool {
        self.inner.cacheable()
    }

    /// Tokens taken by :meth:`TokenTable.feed_deferred` whose bytes the matcher has not read.
    #[getter]
    fn deferred_tokens(&self) -> usize {
        self.deferred_lengths.len()
    }

    /// The deferred bytes, handed over once (the caller gives them to the matcher).
    fn take_deferred<'py>(&mut self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        self.take_deferred_run(py).0
    }

    /// The deferred bytes and each deferred token's length in them, handed over once.
    fn take_deferred_run<'py>(
        &mut self,
        py: Python<'py>,
    ) -> (Bound<'py, pyo3::types::PyBytes>, Vec<u32>) {
        let out = pyo3::types::PyBytes::new(py, &self.deferred);
        self.deferred.clear();
        (out, std::mem::take(&mut self.deferred_lengths))
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "StateKeyer(mode={}, calls={})",
            self.inner.mode().name(),
            self.inner.calls()
        )
    }
}

/// Token bytes by id and the ids that end generation, for feeding a batch of keyers in one call.
#[pyclass(name = "TokenTable", module = "toolwire._core", frozen)]
pub struct TokenTable {
    offsets: Vec<usize>,
    data: Vec<u8>,
    stops: std::collections::HashSet<u32>,
}

impl TokenTable {
    fn build<'a>(tokens: impl Iterator<Item = &'a [u8]>, stops: Vec<u32>) -> Self {
        let mut offsets = vec![0];
        let mut data = Vec::new();
        for t in tokens {
            data.extend_from_slice(t);
            offsets.push(data.len());
        }
        TokenTable {
            offsets,
            data,
            stops: stops.into_iter().collect(),
        }
    }

    fn bytes_of(&self, token: u32) -> &[u8] {
        let t = token as usize;
        match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.data[a..b],
            _ => &[],
        }
    }

    /// :meth:`feed_deferred` for one keyer: whether it took `token` (fed and deferred), and if
    /// not, whether the row cached under its key allows it. `key` holds the namespace's `ns`
    /// bytes and serves as scratch.
    pub(crate) fn defer(
        &self,
        cache: &toolwire_core::bitmask::MaskCache,
        key: &mut Vec<u8>,
        ns: usize,
        keyer: &mut StateKeyer,
        token: u32,
    ) -> Deferral {
        let bytes = self.bytes_of(token);
        let stop = self.stops.contains(&token);
        let keyed_by_text = !stop
            && match &keyer.walk {
                // A call's text among several begins: only a step inside two or more of them.
                Some(walk) => walk.begins.literal_step(&walk.text, bytes),
                None => {
                    keyer.inner.text_level() && keyer.inner.cacheable() && !keyer.stops_at(bytes)
                }
            };
        // Told apart for a text-level keyer of its own state (no walk): where it cannot take
        // the token alone, the caller may still know from this that its matcher would.
        let answers = keyed_by_text
            || (keyer.walk.is_none() && keyer.inner.text_level() && keyer.inner.cacheable());
        let allowed = answers && {
            let served = keyer.served.as_ref();
            match served.and_then(|s| s.allows(cache, &key[..ns], token)) {
                Some(allows) => allows,
                None => {
                    key.truncate(ns);
                    keyer.push_key(key);
                    cache
                        .peek(key)
                        .is_some_and(|row| row.allows(token as usize))
                }
            }
        };
        if !allowed {
            return Deferral::Left;
        }
        if !keyed_by_text {
            return Deferral::Allowed;
        }
        // Kept to undo the feed if the token leaves free text (plain free text cannot; a call's
        // text among begins is not free text).
        let before =
            (keyer.walk.is_none() && keyer.label.free_text_only && !keyer.inner.stays_free(bytes))
                .then(|| (keyer.inner.clone(), keyer.label.tail.clone()));
        keyer.feed(token, bytes);
        if let Some((inner, tail)) = before.filter(|_| keyer.inner.mode().name() != "free") {
            keyer.inner = inner;
            keyer.label.tail = tail;
            keyer.tokens -= 1;
            return Deferral::Allowed;
        }
        keyer.deferred.extend_from_slice(bytes);
        keyer.deferred_lengths.push(bytes.len() as u32);
        Deferral::Taken
    }
}

/// What [`TokenTable::defer`] did with a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deferral {
    /// The keyer took it alone (fed, its bytes deferred for the matcher).
    Taken,
    /// Not taken, but the row cached under the keyer's text-level key allows it: the
    /// request's matcher would accept it.
    Allowed,
    /// Not taken, nothing known.
    Left,
}

#[pymethods]
impl TokenTable {
    /// From a list of token bytes (id = position) and the ids that end generation.
    #[new]
    fn new(tokens: Vec<Vec<u8>>, stop_ids: Vec<u32>) -> Self {
        Self::build(tokens.iter().map(Vec::as_slice), stop_ids)
    }

    /// ``size`` ids of ``vocab`` (ids without a token have no bytes).
    #[staticmethod]
    fn from_vocab(vocab: &crate::vocab::Vocab, size: usize, stop_ids: Vec<u32>) -> Self {
        let v = &vocab.0;
        Self::build(
            (0..size).map(|i| {
                u32::try_from(i)
                    .ok()
                    .and_then(|i| v.token_bytes(i))
                    .unwrap_or(&[])
            }),
            stop_ids,
        )
    }

    fn __len__(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Feed ``tokens[i]`` to ``keyers[i]``, stop tokens excepted; returns their positions.
    fn feed(
        &self,
        mut keyers: Vec<PyRefMut<'_, StateKeyer>>,
        tokens: Vec<u32>,
    ) -> PyResult<Vec<usize>> {
        if keyers.len() != tokens.len() {
            return Err(ToolwireError::new_err("one token per keyer"));
        }
        let mut stopped = Vec::new();
        for (i, (keyer, &token)) in keyers.iter_mut().zip(&tokens).enumerate() {
            if self.stops.contains(&token) {
                stopped.push(i);
            } else {
                keyer.feed(token, self.bytes_of(token));
            }
        }
        Ok(stopped)
    }

    /// Take ``tokens[i]`` for ``keyers[i]`` without the matcher where the mask cached under the
    /// keyer's key allows it (the keyer is fed, the bytes deferred); returns the positions left
    /// to the caller (stop tokens, refused tokens, uncached keys, token-level grammars). The
    /// cached mask is the one the request's last fill produced, so it answers exactly as the
    /// matcher's ``accept_token`` would.
    fn feed_deferred(
        &self,
        cache: &MaskCache,
        namespace: &[u8],
        mut keyers: Vec<PyRefMut<'_, StateKeyer>>,
        tokens: Vec<u32>,
    ) -> PyResult<Vec<usize>> {
        if keyers.len() != tokens.len() {
            return Err(ToolwireError::new_err("one token per keyer"));
        }
        let mut left = Vec::new();
        let mut key = namespace.to_vec();
        let cache = cache.lock();
        for (i, (keyer, &token)) in keyers.iter_mut().zip(&tokens).enumerate() {
            if self.defer(&cache, &mut key, namespace.len(), keyer, token) != Deferral::Taken {
                left.push(i);
            }
        }
        Ok(left)
    }
}
