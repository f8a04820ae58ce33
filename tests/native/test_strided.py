"""native/strided.py (csrc/transpose.c): row-major copies of transposed arrays, tiled in C,
against NumPy's own copy, bit for bit, for every element width, layout and size."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import ember
from ember import native
from ember.native import strided
from native._differential import threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")

# one dtype of each width, and the ones whose bits a conversion could change (NaN payloads,
# -0.0, bfloat16): the copy moves bits, so every one must come back as it went in
DTYPES = [np.bool_, np.int8, np.float16, ml_dtypes.bfloat16, np.int32, np.float32,
          np.int64, np.float64, np.complex64]


def _array(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, int(np.prod(shape)) * np.dtype(dtype).itemsize, np.uint8)
    return raw.view(dtype).reshape(shape)  # (every bit pattern: NaNs with payloads too)


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.fixture
def every_size(monkeypatch):
    monkeypatch.setattr(strided, "MIN_ELEMENTS", 0)  # (small arrays through the kernel too)


def _views(a: np.ndarray):
    """Transposed views of `a`: every permutation, with a reversed and a stepped dim."""
    for perm in itertools.permutations(range(a.ndim)):
        v = a.transpose(perm)
        yield f"perm{perm}", v
        yield f"perm{perm}-flipped", v[::-1]
        yield f"perm{perm}-stepped", v[..., ::2] if v.shape[-1] > 2 else v[::-1]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n_threads", [1, 2])
def test_copies_are_numpys_bits(dtype, n_threads, every_size):
    declined = copied = 0
    with threads(n_threads):
        for shape in [(1, 1), (7, 9), (8, 8), (33, 65), (64, 40), (3, 17, 9), (2, 5, 33, 7)]:
            for name, v in _views(_array(shape, dtype)):
                got = strided.transposed_copy(v)
                if got is None:  # (NumPy's copy of contiguous runs, or nothing to move)
                    declined += 1
                    assert strided.plan(v) is None, name
                    continue
                copied += 1
                _same_bits(got, np.ascontiguousarray(v))
    assert copied > 50 and declined > 10


@pytest.mark.parametrize("n_threads", [1, 2])
def test_large_transposes_split_over_threads(n_threads):
    a = _array((1000, 700), np.float32, seed=3)
    with threads(n_threads):
        for v in (a.T, a[::-1, ::3].T, a.reshape(10, 100, 700).transpose(2, 0, 1)):
            _same_bits(strided.transposed_copy(v), np.ascontiguousarray(v))


def test_plan_declines_what_numpy_copies_well():
    a = np.zeros((64, 64), np.float32)
    assert strided.plan(a) is None  # (contiguous)
    assert strided.plan(a[:, ::2]) is None  # (the last dim is the fastest: runs)
    assert strided.plan(np.broadcast_to(a[:1], (64, 64)).T) is None  # (a stride-0 dim)
    assert strided.plan(np.zeros((64, 1, 64), np.complex128).transpose(2, 1, 0)) is None
    outer, rows, cols, row_src, col_src, row_dst = strided.plan(a.T)
    assert (outer, rows, cols, row_src, col_src, row_dst) == ([], 64, 64, 1, 64, 64)


def test_eager_contiguous_runs_the_tiles_with_numpys_result(every_size, monkeypatch):
    calls = []
    tiles = strided.transposed_copy
    monkeypatch.setattr(strided, "transposed_copy", lambda a: calls.append(a.shape) or tiles(a))
    x = ember.randn(96, 130)
    for make in (lambda t: t.t(), lambda t: t.reshape(6, 16, 130).permute(2, 0, 1),
                 lambda t: t.t().flip(0)):
        got = make(x).contiguous()
        with ember.native.use("numpy"):
            want = make(x).contiguous()
        assert got.is_contiguous() and got.stride() == want.stride()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    dst = ember.empty(130, 96)
    dst.copy_(x.t())  # (copy_ from a transposed source of its shape and dtype: the tiles)
    np.testing.assert_array_equal(dst.numpy(), x.numpy().T)
    dst64 = ember.empty(130, 96, dtype=ember.float64).copy_(x.t())  # (a cast: NumPy's)
    np.testing.assert_array_equal(dst64.numpy(), x.numpy().T.astype(np.float64))
    x.requires_grad_()
    y = x.t().contiguous()
    (y * ember.arange(96.0)).sum().backward()  # (the copy's gradient: the identity)
    assert calls.count((130, 96)) >= 4 and (130, 6, 16) in calls  # (the tiles ran)
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(np.arange(96.0)[:, None],
                                                                  (96, 130)))
