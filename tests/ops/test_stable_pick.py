"""ops/_stable_pick.py: median / nanmedian along a dim pick their index by selection
(`stable_pick`, linear time) instead of a stable argsort of every slice; the index must be
the one the sort gave, bit for bit, on ties, signed zeros, NaN and every dtype."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import torch

import ember
from ember.ops.stats import _all_nan_pick, _median_index


def _sorted_index(a: np.ndarray, axis: int, ignore_nan: bool) -> np.ndarray:
    """The former rule: position (n - 1) // 2 of a stable argsort (NaN last), NaN slices
    answering their first NaN (median) or the median of the rest (nanmedian)."""
    w = a.astype(np.float32) if a.dtype in (np.float16, ml_dtypes.bfloat16) else a
    n = a.shape[axis]
    order = np.argsort(w, axis=axis, kind="stable")
    if w.dtype.kind != "f":
        return np.take(order, [(n - 1) // 2], axis=axis)
    nan = np.isnan(w)
    if ignore_nan:
        nans = nan.sum(axis, keepdims=True)
        k = np.maximum((n - nans - 1) // 2, 0)
        return np.where(nans == n, _all_nan_pick(n), np.take_along_axis(order, k, axis=axis))
    idx = np.take(order, [(n - 1) // 2], axis=axis)
    return np.where(nan.any(axis, keepdims=True), np.argmax(nan, axis, keepdims=True), idx)


def _cases():
    rng = np.random.default_rng(7)
    # (slices of more than 32 are selected, shorter ones sorted: both lengths along the dims)
    few = rng.integers(-3, 4, (6, 40, 37)).astype(np.float64)  # many ties
    few[0, :30] = -0.0
    few[1, ::2] = 0.0
    with_nan = rng.standard_normal((5, 40, 36))
    with_nan[0, 1] = np.nan
    with_nan[1] = np.nan  # all-NaN slices along dim 1
    with_nan[2, :30, 0] = np.nan  # mostly NaN
    with_nan[3, 1::3] = np.inf
    with_nan[4, ::5] = -np.inf
    distinct = rng.standard_normal((3, 50, 70))
    distinct[0, 7, :] = distinct[0, 8, :]  # one tie in a slice
    yield few
    yield few.astype(np.float32).transpose(2, 0, 1)  # (not contiguous)
    yield few.astype(np.int64)
    yield few.astype(np.int8)[:, ::2]
    yield few > 0
    yield few.astype(np.float16)
    yield few.astype(ml_dtypes.bfloat16)
    yield with_nan
    yield with_nan.astype(np.float32)
    yield distinct
    yield distinct.astype(np.float32)[:, ::-1]
    yield rng.standard_normal((3, 1, 2))  # a slice of one
    yield rng.standard_normal((2, 2, 2))  # even lengths: the lower median


def test_selection_picks_the_index_the_stable_sort_picked():
    for a in _cases():
        for axis in range(a.ndim):
            for ignore_nan in (False, True):
                got = _median_index(a, axis, ignore_nan)
                want = _sorted_index(a, axis, ignore_nan)
                assert got.shape == want.shape, (a.dtype, axis)
                np.testing.assert_array_equal(got, want, err_msg=f"{a.dtype} {axis} {ignore_nan}")


def test_median_dim_against_torch_values_indices_and_gradients():
    """Distinct values (no tie to choose between): the same values, indices and gradient
    as PyTorch's nth_element kernel, for float32 / float64 / int64 and NaN rows."""
    rng = np.random.default_rng(3)
    x = rng.permutation(64 * 33).reshape(64, 33).astype(np.float64)
    x[5, 3] = np.nan
    for arr in (x, x.astype(np.float32), x[:, :32], x[6:].astype(np.int64)):
        for name in ("median", "nanmedian"):
            for dim in (0, 1):
                e = ember.tensor(arr)
                t = torch.tensor(arr)
                ge, gt = getattr(e, name)(dim), getattr(t, name)(dim)
                np.testing.assert_array_equal(ge.values.numpy(), gt.values.numpy())
                np.testing.assert_array_equal(ge.indices.numpy(), gt.indices.numpy())
    e = ember.tensor(x[:, :7], requires_grad=True)
    t = torch.tensor(x[:, :7], requires_grad=True)
    e.nanmedian(1).values.sum().backward()
    t.nanmedian(1).values.sum().backward()
    np.testing.assert_array_equal(e.grad.numpy(), t.grad.numpy())
