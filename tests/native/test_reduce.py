"""csrc/reduce.c's column sums (a sum over the leading dims of a C-order array: a bias's
gradient) against NumPy's reduction: each column from +0.0 in row order, NumPy's order for
that layout, so bit for bit (special values, sizes that split over threads), and
the layouts it does not take left to NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from ember import native
from ember.ops import reduce as reduce_ops
from native._differential import assert_bits, threads, with_specials

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
CASES = [((2, 2), (0,)), ((7, 3), (0,)), ((1, 9), (0,)), ((300, 257), (0,)),
         ((1024, 512), (0,)), ((16, 64, 384), (0, 1)), ((4, 5, 6, 7), (0, 1, 2)),
         ((6, 5, 4), (0,))]


def _native(a, dims, keepdim=False):
    return reduce_ops._column_sums_native(native.library("reduce"), a, dims=dims,
                                          keepdim=keepdim)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dims", CASES, ids=str)
@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_column_sums_are_numpys_bit_for_bit(shape, dims, dtype, n_threads):
    rng = np.random.default_rng(0)
    # magnitudes over six decades, so that the order of the additions shows in the bits
    a = (rng.standard_normal(shape) * 10 ** rng.uniform(-3, 3, shape)).astype(dtype)
    a = with_specials(a.reshape(-1)).reshape(shape)
    a[:, -1] = -0.0  # (a column of -0.0 sums to +0.0: NumPy starts from add's identity)
    for keepdim in (False, True):
        want = np.asarray(np.add.reduce(a, axis=dims, keepdims=keepdim, dtype=dtype))
        with threads(n_threads):
            got = _native(a, dims, keepdim)
        assert got.shape == want.shape
        assert_bits(got, want)


@pytest.mark.parametrize("shape,dims,why", [
    ((100, 1), (0,), "one column: NumPy sums it pairwise"),
    ((5, 6), (1,), "not the leading dims"),
    ((5, 6), (0, 1), "every dim"),
    ((0, 6), (0,), "no rows"),
])
def test_other_reductions_stay_numpys(shape, dims, why):
    a = np.ones(shape, np.float32)
    assert _native(a, dims) is NotImplemented, why
    assert _native(np.ones((6, 5), np.float32).T, (0,)) is NotImplemented  # (not C-order)
