//! Zero-copy bitmask kernels over tensor data pointers.
//!
//! `toolwire.torch` checks dtype, shape, device and contiguity in Python and passes the pointers
//! with their extents; here the pointers are checked for null and alignment, the row indices
//! against the extents, and then turned into slices for the pure kernels in
//! `toolwire_core::bitmask`. The functions are `unsafe_` because the extents cannot be checked
//! against the allocations: a wrong extent from the caller means memory corruption.

use pyo3::prelude::*;
use toolwire_core::bitmask::{self, BF16_NEG_INF, BITS, F16_NEG_INF, F32_NEG_INF};

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

/// Sets the logits of each row in `rows` (default: every logits row) to -inf where the bitmask row of the same index blocks
/// the token, and at every column `>= allowed_len`.
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

/// Allowed-token counts of each bitmask row, over the first `vocab` ids.
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
