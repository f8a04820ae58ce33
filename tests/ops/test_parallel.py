"""ops/_parallel.py's products: a large matrix product shared out to the native pool by
blocks of rows (one BLAS call per thread) gives NumPy's product, for every layout BLAS reads
in place and for the others (which stay NumPy's own call)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember import native
from ember.ops import _parallel

from helpers import rand_array


def _layouts(a: np.ndarray) -> dict:
    return {"c": a, "f": np.asfortranarray(a), "rows-strided": np.repeat(a, 2, 0)[::2],
            "negative": a[::-1].copy()[::-1], "cols-strided": np.repeat(a, 2, 1)[:, ::2]}


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_large_products_match_numpy(dtype, n_threads):
    a0 = rand_array((203, 150), dtype)
    b0 = rand_array((150, 171), dtype, seed=1)
    flops = 2 * _parallel.SMALL_PRODUCT  # (sizes here are small: the path is forced)
    old = ember.get_num_threads()
    ember.set_num_threads(n_threads)
    try:
        for la, a in _layouts(a0).items():
            for lb, b in _layouts(b0).items():
                got = _parallel.blas(np.matmul, a, b, flops)
                # BLAS's sums of 150 products, blocked differently by row count: a few ulps
                # of the sum of the products' magnitudes
                bound = 4 * 150 * np.finfo(dtype).eps * (np.abs(a0) @ np.abs(b0))
                assert got.dtype == dtype and got.shape == (203, 171), (la, lb)
                assert (np.abs(got - a0 @ b0) <= bound).all(), (la, lb)
    finally:
        ember.set_num_threads(old)


@pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
def test_pool_product_takes_what_blas_reads_in_place():
    a = rand_array((40, 30))
    assert _parallel._pool_product(a, rand_array((30, 20))) is not None
    assert _parallel._pool_product(a, np.asfortranarray(rand_array((30, 20)))) is not None
    assert _parallel._pool_product(a, rand_array((30, 20))[:, ::-1]) is None  # negative
    assert _parallel._pool_product(a, rand_array((30, 20), np.float64)) is None  # mixed
    with native.use("numpy"):
        assert _parallel._pool_product(a, rand_array((30, 20))) is None
