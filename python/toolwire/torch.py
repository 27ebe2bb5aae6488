"""Apply token bitmasks to logits in place (needs ``torch``).

A bitmask is int32 ``[B, ceil(V / 32)]``: token ``t`` is bit ``t % 32`` of word ``t // 32``, a set
bit allows the token, and ``-1`` allows a whole word. This is the layout of xgrammar, llguidance
and vLLM, so masks from any of them work here.

On CPU the masking runs in the Rust core (all-ones words are skipped, all-zero words write 32
``-inf`` at once); on other devices it runs as a handful of vectorised torch ops. Both follow one
rule, which differs from xgrammar's in one place:

    A logit survives when its column is below ``vocab_size`` (default: every column), lies within
    the mask (``32 * words``) and its bit is set. Every other column of a selected row becomes
    ``-inf``, including columns past the mask or past ``vocab_size`` (lm_head padding).

xgrammar leaves columns past ``vocab_size`` (or past the mask) untouched, so a padded id can be
sampled and then rejected by the matcher; here they can never be sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolwire._core import ToolwireError, unsafe_apply_token_bitmask, unsafe_count_allowed

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised only without torch
    raise ImportError("toolwire.torch needs PyTorch: pip install 'toolwire[torch]' (or pip install torch)") from e

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["allocate_token_bitmask", "apply_token_bitmask_", "count_allowed", "bitmask_words"]

_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


def bitmask_words(vocab_size: int) -> int:
    """Words in one bitmask row: ``ceil(vocab_size / 32)``."""
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> Tensor:
    """An int32 CPU bitmask ``[batch_size, ceil(vocab_size / 32)]`` with every token allowed."""
    return torch.full((batch_size, bitmask_words(vocab_size)), -1, dtype=torch.int32)


def _as_2d(t: Tensor, name: str) -> Tensor:
    if t.dim() == 1:
        return t.unsqueeze(0)
    if t.dim() == 2:
        return t
    raise ToolwireError(f"{name} must be 1-D or 2-D, got shape {tuple(t.shape)}")


def _rows(indices: Any, logits_rows: int, mask_rows: int) -> list[int] | None:
    if indices is None:
        if logits_rows != mask_rows:
            raise ToolwireError(
                f"logits have {logits_rows} rows but the bitmask has {mask_rows}; pass indices= to select rows"
            )
        return None
    if isinstance(indices, torch.Tensor):
        if indices.dim() != 1 or indices.dtype.is_floating_point or indices.dtype == torch.bool:
            raise ToolwireError("indices must be a 1-D integer tensor or a sequence of ints")
        rows = [int(i) for i in indices.tolist()]
    elif isinstance(indices, Sequence) and not isinstance(indices, (str, bytes)):
        rows = [int(i) for i in indices]
    else:
        raise ToolwireError("indices must be a 1-D integer tensor or a sequence of ints")
    for r in rows:
        if not 0 <= r < min(logits_rows, mask_rows):
            raise ToolwireError(
                f"index {r} is out of range for logits of {logits_rows} rows and a bitmask of {mask_rows} rows"
            )
    return rows


def apply_token_bitmask_(
    logits: Tensor,
    bitmask: Tensor,
    indices: Sequence[int] | Tensor | None = None,
    vocab_size: int | None = None,
) -> Tensor:
    """Set ``logits`` to ``-inf`` wherever ``bitmask`` blocks the token, in place; returns ``logits``.

    Arguments:
        logits: float32, float16 or bfloat16, ``[V']`` or ``[B, V']``; the last dimension must be
            contiguous (any row stride is fine).
        bitmask: int32, contiguous, ``[W]`` or ``[B', W]``. A CPU bitmask is copied to the logits'
            device when the logits live elsewhere (synchronously; move it yourself, e.g. from
            pinned memory with ``non_blocking=True``, to overlap the copy).
        indices: rows to mask; row ``i`` of the logits uses row ``i`` of the bitmask. Without it,
            every row is masked and the row counts must match.
        vocab_size: the tokenizer's vocabulary; columns at or past it are set to ``-inf``. Defaults
            to the logits' width. Must not exceed the width nor ``32 * W``.

    Columns past ``32 * W`` are always set to ``-inf``: an id the mask does not cover is not allowed.

    Raises:
        ToolwireError: on a wrong dtype, shape, device, layout or index.
    """
    if not isinstance(logits, torch.Tensor) or not isinstance(bitmask, torch.Tensor):
        raise ToolwireError("logits and bitmask must be torch tensors")
    dtype = _DTYPES.get(logits.dtype)
    if dtype is None:
        raise ToolwireError(f"logits dtype {logits.dtype} is not supported (float32, float16, bfloat16)")
    if bitmask.dtype != torch.int32:
        raise ToolwireError(f"bitmask must be int32, got {bitmask.dtype}")
    if logits.requires_grad and torch.is_grad_enabled():
        raise ToolwireError("logits require grad; mask them under torch.no_grad() or detach them first")
    logits2 = _as_2d(logits, "logits")
    mask2 = _as_2d(bitmask, "bitmask")
    n_rows, width = logits2.shape
    words = mask2.shape[1]
    if width and logits2.stride(1) != 1:
        raise ToolwireError("the last dimension of logits must be contiguous (stride 1)")
    if not mask2.is_contiguous():
        raise ToolwireError("bitmask must be contiguous")
    if vocab_size is None:
        allowed_len = min(width, 32 * words)
    else:
        vocab_size = int(vocab_size)
        if not 0 <= vocab_size <= width:
            raise ToolwireError(f"vocab_size {vocab_size} exceeds the logits width {width}")
        if vocab_size > 32 * words:
            raise ToolwireError(
                f"vocab_size {vocab_size} needs {bitmask_words(vocab_size)} bitmask words, the bitmask has {words}"
            )
        allowed_len = vocab_size
    rows = _rows(indices, n_rows, mask2.shape[0])
    if logits.device != bitmask.device:
        if bitmask.device.type != "cpu" or logits.device.type == "cpu":
            raise ToolwireError(f"logits on {logits.device} and bitmask on {bitmask.device}")
        # a synchronous copy: the caller may refill its CPU bitmask right after this returns
        mask2 = mask2.to(logits.device)
    if logits.device.type != "cpu":
        _apply_with_torch(logits2, mask2, rows, allowed_len)
        return logits
    if n_rows == 0 or width == 0 or rows == []:
        return logits
    if logits2.data_ptr() % logits2.element_size() or mask2.data_ptr() % 4:
        raise ToolwireError("logits or bitmask data is not aligned to its element size")
    unsafe_apply_token_bitmask(
        logits2.data_ptr(),
        dtype,
        n_rows,
        width,
        logits2.stride(0),
        mask2.data_ptr(),
        mask2.shape[0],
        words,
        rows,
        allowed_len,
    )
    return logits


_SHIFTS: dict[torch.device, Tensor] = {}


def _apply_with_torch(logits: Tensor, bitmask: Tensor, rows: list[int] | None, allowed_len: int) -> None:
    """The same rule with vectorised torch ops, for any device (used off CPU; tested on CPU)."""
    shifts = _SHIFTS.get(logits.device)
    if shifts is None:
        shifts = _SHIFTS[logits.device] = torch.arange(32, dtype=torch.int32, device=logits.device)
    index = None if rows is None else torch.tensor(rows, dtype=torch.long, device=logits.device)
    words = bitmask if index is None else bitmask.index_select(0, index)
    n, width = words.shape[0], logits.shape[1]
    if n == 0 or width == 0:
        return
    bits = ((words.unsqueeze(-1) >> shifts) & 1).reshape(n, -1)[:, :allowed_len]
    blocked = torch.ones((n, width), dtype=torch.bool, device=logits.device)
    blocked[:, :allowed_len] = bits == 0
    if index is None:
        logits.masked_fill_(blocked, float("-inf"))
    else:
        logits.index_copy_(0, index, logits.index_select(0, index).masked_fill_(blocked, float("-inf")))


def count_allowed(bitmask: Tensor, vocab_size: int | None = None) -> list[int]:
    """Allowed tokens in each row of a CPU int32 bitmask, over the first ``vocab_size`` ids."""
    if not isinstance(bitmask, torch.Tensor) or bitmask.dtype != torch.int32 or bitmask.device.type != "cpu":
        raise ToolwireError("count_allowed needs an int32 CPU tensor")
    mask2 = _as_2d(bitmask, "bitmask")
    if not mask2.is_contiguous():
        raise ToolwireError("bitmask must be contiguous")
    rows, words = mask2.shape
    if rows == 0 or words == 0:
        return [0] * rows
    vocab = 32 * words if vocab_size is None else int(vocab_size)
    return unsafe_count_allowed(mask2.data_ptr(), rows, words, vocab)
