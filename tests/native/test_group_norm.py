"""csrc/group_norm.c against the NumPy kernels of ops/group_norm.py.

Both sum in double in reduce.h's order (16 lanes, totalled pairwise: ops/group_norm.py's
`_lane_sums` does the same in NumPy), and both compute the small per-(sample, channel)
coefficients with the same NumPy code, so every output is compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from ember import native
from ember.ops.group_norm import group_norm_backward_p, group_norm_p
from native._differential import assert_bits, threads, with_specials

from helpers import rand_array

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
FORWARD = native.twins(group_norm_p)
BACKWARD = native.twins(group_norm_backward_p)
# (shape, groups): group sizes of 1, odd, not multiples of the 16 lanes, 2-d and 5-d inputs
CASES = [((1, 1), 1), ((3, 4), 4), ((2, 6, 5), 3), ((4, 6, 7), 2), ((2, 8, 3, 5), 4),
         ((3, 32, 17), 8), ((2, 6, 2, 3, 5), 3), ((8, 64, 16, 16), 8), ((64, 96), 32)]
DTYPES = [np.float32, np.float64]


def _operands(shape, dtype, affine, specials=False):
    x = rand_array(shape, np.float64, low=-3, high=5).astype(dtype)
    if specials:
        x = with_specials(x)
    c = shape[1]
    w = rand_array((c,), np.float64, low=0.5, high=1.5, seed=1).astype(dtype)
    b = rand_array((c,), np.float64, seed=2).astype(dtype)
    return x, (w if affine in ("both", "weight") else None), \
        (b if affine in ("both", "bias") else None)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,groups", CASES, ids=str)
def test_forward_matches_numpy(shape, groups, dtype, affine, n_threads):
    x, w, b = _operands(shape, dtype, affine)
    numpy_k, native_k = FORWARD
    ref = numpy_k(x, w, b, groups=groups, eps=1e-5)
    with threads(n_threads):
        got = native_k(native.library("group_norm"), x, w, b, groups=groups, eps=1e-5)
    for g, r in zip(got, ref):
        assert_bits(g, r)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,groups", CASES, ids=str)
def test_backward_matches_numpy(shape, groups, dtype, weighted, n_threads):
    x, w, b = _operands(shape, dtype, "both" if weighted else "none")
    g = rand_array(shape, np.float64, seed=3).astype(dtype)
    _, mean, rstd = FORWARD[0](x, w, b, groups=groups, eps=1e-5)
    numpy_k, native_k = BACKWARD
    ref = numpy_k(g, x, mean, rstd, w, groups=groups)
    with threads(n_threads):
        got = native_k(native.library("group_norm"), g, x, mean, rstd, w, groups=groups)
    for a, r in zip(got, ref):
        assert_bits(a, r)


@needs_native
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_specials_match_numpy(dtype):
    """NaN, inf and -0.0 in the input: the same NaNs (a group's statistics) both ways."""
    shape, groups = (3, 6, 9), 3
    x, w, b = _operands(shape, dtype, "both", specials=True)
    ref = FORWARD[0](x, w, b, groups=groups, eps=1e-5)
    got = FORWARD[1](native.library("group_norm"), x, w, b, groups=groups, eps=1e-5)
    for a, r in zip(got, ref):
        assert_bits(a, r)
    assert np.isnan(got[0][0, :2]).all() and np.isfinite(got[0][0, 2:]).all()  # (group 0)
    assert np.isfinite(got[0][1:]).all()
    g = with_specials(rand_array(shape, np.float64, seed=3).astype(dtype))
    xs = rand_array(shape, np.float64, seed=4).astype(dtype)
    _, mean, rstd = FORWARD[0](xs, w, b, groups=groups, eps=1e-5)
    ref = BACKWARD[0](g, xs, mean, rstd, w, groups=groups)
    got = BACKWARD[1](native.library("group_norm"), g, xs, mean, rstd, w, groups=groups)
    for a, r in zip(got, ref):
        assert_bits(a, r)


@needs_native
def test_statistics_are_double_sums():
    """mean and 1/std as sums in double rounded once (float32 input)."""
    x = rand_array((4, 12, 37), np.float64, low=-3, high=5).astype(np.float32)
    _, mean, rstd = FORWARD[1](native.library("group_norm"), x, None, None, groups=4, eps=1e-5)
    rows = x.astype(np.float64).reshape(16, -1)
    exact = rows.mean(1)
    np.testing.assert_array_equal(mean.reshape(-1), exact.astype(np.float32))
    var = ((rows - mean.reshape(-1, 1).astype(np.float64)) ** 2).mean(1).astype(np.float32)
    np.testing.assert_allclose(rstd.reshape(-1), 1 / np.sqrt(var + np.float32(1e-5)),
                               rtol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_empty_batch(dtype):
    """No samples: empty results, zero dweight and dbias, native declining to NumPy."""
    x = np.zeros((0, 4, 3), dtype)
    out, mean, rstd = FORWARD[0](x, None, None, groups=2, eps=1e-5)
    assert out.shape == x.shape and mean.shape == (0, 2) == rstd.shape
    if native.available():
        assert FORWARD[1](native.library("group_norm"), x, None, None, groups=2,
                          eps=1e-5) is NotImplemented
    dx, dw, db = BACKWARD[0](x, x, mean, rstd, None, groups=2)
    assert dx.shape == x.shape and not dw.any() and not db.any()
