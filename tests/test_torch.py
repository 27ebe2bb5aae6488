"""toolwire.torch.apply_token_bitmask_ against a pure-torch reference of the documented rule."""

import pytest

torch = pytest.importorskip("torch")

import toolwire  # noqa: E402
from toolwire.torch import (  # noqa: E402
    _apply_with_torch,
    allocate_token_bitmask,
    apply_token_bitmask_,
    bitmask_words,
    count_allowed,
)

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
NEG_INF = float("-inf")


def random_bitmask(rows, vocab, gen):
    """Words drawn from all-zero, all-ones and random patterns, so every kernel branch runs."""
    words = bitmask_words(vocab)
    raw = torch.randint(-(2**31), 2**31, (rows, words), generator=gen, dtype=torch.int64).to(torch.int32)
    kind = torch.randint(0, 4, (rows, words), generator=gen)
    raw[kind == 0] = 0
    raw[kind == 1] = -1
    return raw


def reference(logits, bitmask, indices=None, vocab_size=None):
    """Row i, column j survives iff j < vocab_size, j < 32 * words and bit j of bitmask row i is set."""
    out = logits.clone()
    out2 = out.view(1, -1) if out.dim() == 1 else out
    mask2 = bitmask.view(1, -1) if bitmask.dim() == 1 else bitmask
    width, words = out2.shape[1], mask2.shape[1]
    limit = min(width if vocab_size is None else vocab_size, 32 * words)
    rows = range(out2.shape[0]) if indices is None else [int(i) for i in indices]
    for r in rows:
        for j in range(width):
            allowed = j < limit and (int(mask2[r, j // 32]) >> (j % 32)) & 1
            if not allowed:
                out2[r, j] = NEG_INF
    return out


def reference_fast(logits, bitmask, indices=None, vocab_size=None):
    """The same rule, vectorised differently (bool unpacking per token), for the big shapes."""
    out = logits.clone()
    out2 = out.view(1, -1) if out.dim() == 1 else out
    mask2 = bitmask.view(1, -1) if bitmask.dim() == 1 else bitmask
    width, words = out2.shape[1], mask2.shape[1]
    limit = min(width if vocab_size is None else vocab_size, 32 * words)
    tokens = torch.arange(width)
    word_of = torch.clamp(tokens // 32, max=words - 1)
    rows = range(out2.shape[0]) if indices is None else [int(i) for i in indices]
    for r in rows:
        bit = (mask2[r, word_of].to(torch.int64) >> (tokens % 32)) & 1
        keep = (bit == 1) & (tokens < limit)
        out2[r][~keep] = NEG_INF
    return out


def same(a, b):
    return torch.equal(a.float().nan_to_num(posinf=1e30, neginf=-1e30), b.float().nan_to_num(posinf=1e30, neginf=-1e30))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vocab", [1, 31, 32, 33, 100, 1000])
@pytest.mark.parametrize("extra", [0, 1, 45])
def test_matches_reference_2d(dtype, vocab, extra):
    gen = torch.Generator().manual_seed(vocab * 7 + extra)
    logits = torch.randn(3, vocab + extra, generator=gen).to(dtype)
    mask = random_bitmask(3, vocab, gen)
    for vocab_size in (None, vocab):
        want = reference(logits, mask, vocab_size=vocab_size)
        got = apply_token_bitmask_(logits.clone(), mask, vocab_size=vocab_size)
        assert same(got, want), (dtype, vocab, extra, vocab_size)
        via_torch = logits.clone()
        _apply_with_torch(via_torch, mask, None, min(vocab + extra if vocab_size is None else vocab_size, 32 * mask.shape[1]))
        assert same(via_torch, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_dimensional_logits_and_bitmask(dtype):
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(77, generator=gen).to(dtype)
    mask = random_bitmask(1, 77, gen)[0]
    want = reference(logits, mask)
    got = logits.clone()
    assert apply_token_bitmask_(got, mask) is got
    assert same(got, want)
    got = logits.clone()
    apply_token_bitmask_(got, mask.view(1, -1))
    assert same(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("as_tensor", [False, True])
def test_indices_select_rows(dtype, as_tensor):
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(5, 300, generator=gen).to(dtype)
    mask = random_bitmask(6, 260, gen)  # more mask rows than logits rows, narrower than the logits
    indices = [4, 0, 2]
    idx = torch.tensor(indices) if as_tensor else indices
    want = reference(logits, mask, indices=indices, vocab_size=260)
    got = apply_token_bitmask_(logits.clone(), mask, indices=idx, vocab_size=260)
    assert same(got, want)
    assert same(got[1], logits[1]) and same(got[3], logits[3])
    via_torch = logits.clone()
    _apply_with_torch(via_torch, mask, indices, 260)
    assert same(via_torch, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_real_vocabulary_sizes_with_padded_logits(dtype):
    """151,665 tokenizer ids in a 151,936-wide lm_head: the padding columns are masked."""
    gen = torch.Generator().manual_seed(3)
    vocab, width = 151_665, 151_936
    logits = torch.randn(4, width, generator=gen).to(dtype)
    mask = random_bitmask(4, vocab, gen)
    for kwargs in ({}, {"vocab_size": vocab}, {"indices": [3, 1], "vocab_size": vocab - 5}):
        want = reference_fast(logits, mask, **kwargs)
        got = apply_token_bitmask_(logits.clone(), mask, **kwargs)
        assert same(got, want), kwargs
    got = apply_token_bitmask_(logits.clone(), mask)
    assert torch.isinf(got[:, 32 * mask.shape[1] :]).all()


def test_row_strided_logits_are_masked_in_place():
    gen = torch.Generator().manual_seed(4)
    base = torch.randn(3, 4, 70, generator=gen)
    view = base[:, -1, :]  # what a decoder's last-position slice looks like
    assert view.stride() == (280, 1)
    mask = random_bitmask(3, 70, gen)
    want = reference(view, mask)
    apply_token_bitmask_(view, mask)
    assert same(base[:, -1, :], want)
    assert not torch.isinf(base[:, :-1, :]).any()


def test_all_allowed_and_all_blocked():
    logits = torch.zeros(2, 100)
    apply_token_bitmask_(logits, allocate_token_bitmask(2, 100))
    assert not torch.isinf(logits).any()
    apply_token_bitmask_(logits, torch.zeros(2, 4, dtype=torch.int32))
    assert torch.isinf(logits).all() and (logits < 0).all()


def test_matches_xgrammar_inside_the_vocabulary():
    xgr = pytest.importorskip("xgrammar")
    gen = torch.Generator().manual_seed(5)
    for dtype in DTYPES:
        logits = torch.randn(3, 1000, generator=gen).to(dtype)
        mask = random_bitmask(3, 1000, gen)
        ours = apply_token_bitmask_(logits.clone(), mask)
        theirs = logits.clone()
        xgr.apply_token_bitmask_inplace(theirs, mask)
        assert same(ours, theirs)


@pytest.mark.parametrize(
    ("logits", "mask", "kwargs", "message"),
    [
        (torch.zeros(2, 64, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.int32), {}, "dtype"),
        (torch.zeros(2, 64, dtype=torch.int32), torch.zeros(2, 2, dtype=torch.int32), {}, "dtype"),
        (torch.zeros(2, 64), torch.zeros(2, 2, dtype=torch.int64), {}, "int32"),
        (torch.zeros(2, 2, 64), torch.zeros(2, 2, dtype=torch.int32), {}, "1-D or 2-D"),
        (torch.zeros(2, 64), torch.zeros(2, 2, 2, dtype=torch.int32), {}, "1-D or 2-D"),
        (torch.zeros(3, 64), torch.zeros(2, 2, dtype=torch.int32), {}, "rows"),
        (torch.zeros(2, 64), torch.zeros(2, 2, dtype=torch.int32), {"indices": [2]}, "out of range"),
        (torch.zeros(2, 64), torch.zeros(2, 2, dtype=torch.int32), {"indices": [-1]}, "out of range"),
        (torch.zeros(2, 64), torch.zeros(2, 2, dtype=torch.int32), {"indices": torch.tensor([0.5])}, "integer"),
        (torch.zeros(2, 64), torch.zeros(2, 2, dtype=torch.int32), {"vocab_size": 65}, "exceeds"),
        (torch.zeros(2, 80), torch.zeros(2, 2, dtype=torch.int32), {"vocab_size": 70}, "bitmask words"),
        (torch.zeros(64, 2).t(), torch.zeros(2, 2, dtype=torch.int32), {}, "contiguous"),
        (torch.zeros(2, 64), torch.zeros(2, 4, dtype=torch.int32)[:, ::2], {}, "contiguous"),
        (torch.zeros(2, 64, requires_grad=True), torch.zeros(2, 2, dtype=torch.int32), {}, "grad"),
        (torch.zeros(2, 64), torch.zeros(2, 2, dtype=torch.int32).numpy(), {}, "torch tensors"),
    ],
)
def test_misuse_raises_toolwire_error(logits, mask, kwargs, message):
    with pytest.raises(toolwire.ToolwireError, match=message):
        apply_token_bitmask_(logits, mask, **kwargs)


def test_misaligned_pointers_are_refused():
    storage = torch.zeros(65)
    logits = storage[1:].view(torch.float16)[1:]  # a float16 view starting 2 bytes into a float
    assert logits.data_ptr() % 4 == 2
    mask = torch.zeros(3, dtype=torch.int32)
    apply_token_bitmask_(logits, mask)  # float16 needs 2-byte alignment only
    words = torch.frombuffer(bytearray(64), dtype=torch.int32, count=8, offset=2)
    assert words.data_ptr() % 4 == 2
    with pytest.raises(toolwire.ToolwireError, match="aligned"):
        apply_token_bitmask_(torch.zeros(256), words)
    floats = torch.frombuffer(bytearray(64), dtype=torch.float32, count=8, offset=2)
    with pytest.raises(toolwire.ToolwireError, match="aligned"):
        apply_token_bitmask_(floats, mask[:1])
    with pytest.raises(toolwire.ToolwireError, match="aligned"):
        toolwire._core.unsafe_apply_token_bitmask(2, "float32", 1, 8, 8, mask.data_ptr(), 1, 1, [0], 8)
    with pytest.raises(toolwire.ToolwireError, match="null"):
        toolwire._core.unsafe_apply_token_bitmask(0, "float32", 1, 8, 8, mask.data_ptr(), 1, 1, [0], 8)


def test_count_allowed():
    mask = torch.tensor([[0b1011, -1, -(2**31)], [0, 0, 1]], dtype=torch.int32)
    assert count_allowed(mask) == [3 + 32 + 1, 1]
    assert count_allowed(mask, 95) == [3 + 32, 1]
    assert count_allowed(mask[1]) == [1]
    with pytest.raises(toolwire.ToolwireError):
        count_allowed(mask.to(torch.int64))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_matches_cpu(dtype):
    gen = torch.Generator().manual_seed(6)
    logits = torch.randn(4, 1100, generator=gen).to(dtype)
    mask = random_bitmask(4, 1000, gen)
    for kwargs in ({}, {"vocab_size": 1000}, {"indices": [2, 0]}):
        cpu = apply_token_bitmask_(logits.clone(), mask, **kwargs)
        gpu = apply_token_bitmask_(logits.cuda(), mask, **kwargs)  # the CPU bitmask is copied over
        assert same(gpu.cpu(), cpu), kwargs
        gpu = apply_token_bitmask_(logits.cuda(), mask.cuda(), **kwargs)
        assert same(gpu.cpu(), cpu), kwargs
