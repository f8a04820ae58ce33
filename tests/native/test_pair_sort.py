"""csrc/pair_sort.c against the NumPy / Python paths it stands beside (whose ties follow
libstdc++'s steps as PyTorch's CPU ops leave them; tests/ops hold those to torch):

- topk against sorting.py's NumPy kernel: the same indices and value bits, on rows full
  of ties, NaN, inf and -0.0, either path of ATen's loop (partial_sort where k * 64 <= n,
  nth_element then a sort of k - 1 elsewhere), sorted or not, largest or smallest, any dim
  and layout, one thread and two;
- `std::sort`'s row order against the step-by-step Python replay (`_stl_sort.sort`), on
  values and on integer rank keys (`_stl_sort.sort_rows`), including rows that spend the
  depth budget (the heap-sort fallback)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import _stl_sort
from ember.ops._pair_sort_native import sort_rows
from ember.ops.sorting import TOPK
from native._differential import assert_bits, layouts, threads

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")


def _rows(n: int, seed: int, dtype) -> np.ndarray:
    """(3, n) values from a few numbers (ties everywhere), NaN, +-inf and both zeros."""
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.nan, np.inf, -np.inf, 3.0, 1.0], dtype)
    a = pool[rng.integers(0, len(pool), (3, n))]
    a[1] = rng.standard_normal(n)  # (one row of distinct values)
    return a


def _ks(n: int) -> list[int]:
    return sorted(k for k in {1, 2, n // 64, n // 2, n - 1, n} if 0 < k <= n)


def test_topk_rows_match_numpy_to_the_index():
    numpy_k, native_k = native.twins(TOPK)
    lib = native.library("pair_sort")
    checked = 0
    for dtype in (np.float32, np.float64):
        for n in (1, 2, 3, 5, 16, 17, 64, 65, 130, 1000):
            a = _rows(n, n, dtype)
            for k in _ks(n):
                for largest in (True, False):
                    for srt in (True, False):
                        p = dict(k=k, dim=1, largest=largest, in_shape=a.shape, sorted=srt)
                        want = numpy_k(a, **p)
                        for t in (1, 2):
                            with threads(t):
                                got = native_k(lib, a, **p)
                            assert_bits(got[0], want[0])
                            np.testing.assert_array_equal(got[1], want[1])
                            checked += 1
    assert checked > 500


def test_other_dims_and_layouts_keep_numpys_results():
    numpy_k, native_k = native.twins(TOPK)
    lib = native.library("pair_sort")
    base = _rows(70, 5, np.float32).reshape(3, 7, 10)
    for name, a in layouts(base).items():
        for dim in (0, 1, 2, -1):
            for k in (1, 3):
                p = dict(k=k, dim=dim, largest=True, in_shape=a.shape, sorted=True)
                want, got = numpy_k(a, **p), native_k(lib, a, **p)
                assert_bits(got[0], want[0])
                np.testing.assert_array_equal(got[1], want[1], err_msg=f"{name} dim {dim}")
                assert got[0].flags.c_contiguous and got[1].flags.c_contiguous


def test_public_topk_as_torch():
    """Through `topk` on a many-row tensor (the pool shares its rows out): torch's values,
    indices and strides."""
    x = np.random.default_rng(1).integers(0, 4, (300, 200)).astype(np.float32)
    x[::7, ::5] = np.nan
    for k, dim, largest, srt in [(3, 1, True, True), (150, 1, False, False), (5, 0, True, False)]:
        a = ember.tensor(x).topk(k, dim, largest, srt)
        b = torch.tensor(x).topk(k, dim, largest, srt)
        np.testing.assert_array_equal(a.indices.numpy(), b.indices.numpy())
        np.testing.assert_array_equal(a.values.numpy(), b.values.numpy())
        assert a.values.stride() == b.values.stride()


def test_other_dtypes_stay_with_numpy():
    _, native_k = native.twins(TOPK)
    lib = native.library("pair_sort")
    for a in (np.arange(6, dtype=np.int64), np.ones(6, np.float16), np.ones((), np.float32)):
        p = dict(k=1, dim=0, largest=True, in_shape=a.shape)
        assert native_k(lib, a, **p) is NotImplemented


def _replayed(row, descending: bool) -> list[int]:
    """`std::sort`'s order of one row by the Python replay, ATen's comparator."""
    isnan = np.isnan
    if descending:
        def lt(x, y):
            return (isnan(x[0]) and not isnan(y[0])) or x[0] > y[0]
    else:
        def lt(x, y):
            return (not isnan(x[0]) and isnan(y[0])) or x[0] < y[0]
    q = [(float(v), j) for j, v in enumerate(row)]
    _stl_sort.sort(q, 0, len(q), lt)
    return [j for _, j in q]


def test_sort_rows_are_std_sorts_order():
    pipe = (np.r_[np.arange(150), np.arange(150)[::-1]] // 3).astype(np.float64)
    for dtype in (np.float32, np.float64):
        for n in (2, 16, 17, 40, 300):
            rows = _rows(n, 100 + n, dtype)
            for desc in (False, True):
                for t in (1, 2):
                    with threads(t):
                        got = sort_rows(rows, desc)
                    for r in range(len(rows)):
                        assert got[r].tolist() == _replayed(rows[r], desc), (dtype, n, desc)
        for desc in (False, True):  # (organ pipes spend median-of-3's depth budget)
            assert sort_rows(pipe[None].astype(dtype), desc)[0].tolist() == \
                _replayed(pipe, desc)
    keys = np.random.default_rng(2).integers(0, 5, (4, 200))
    with native.use("numpy"):
        want = _stl_sort.sort_rows(keys)
    np.testing.assert_array_equal(_stl_sort.sort_rows(keys), want)


def test_unstable_sort_with_ties_as_torch():
    rng = np.random.default_rng(3)
    for x in (rng.integers(0, 4, (50, 90)).astype(np.float32), rng.integers(-3, 3, (40, 70)),
              np.where(rng.random((30, 60)) < 0.2, np.nan, rng.integers(0, 3, (30, 60)))):
        for dim, desc in ((1, False), (0, True), (1, True)):
            a, b = ember.tensor(x).sort(dim, desc), torch.tensor(x).sort(dim, desc)
            np.testing.assert_array_equal(a.indices.numpy(), b.indices.numpy())
            np.testing.assert_array_equal(a.values.numpy(), b.values.numpy())
