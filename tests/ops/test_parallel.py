"""ops/_parallel.py's products: a large matrix product, or a batch of them, shared out to
the native pool by blocks of rows or whole matrices (one BLAS call per thread) gives NumPy's
product, for every layout BLAS reads in place and for the others (which stay NumPy's own
call)."""

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


def _matrices(batch: tuple, rows: int, cols: int, dtype, seed: int) -> dict:
    """A batch of matrices in layouts BLAS reads in place: C order, each matrix transposed,
    every other matrix of a larger batch, and one matrix broadcast over the batch."""
    a = rand_array(batch + (rows, cols), dtype, seed=seed)
    return {"c": a, "t": np.swapaxes(np.swapaxes(a, -1, -2).copy(), -1, -2),
            "every-other": np.repeat(a, 2, axis=len(batch) - 1)[..., ::2, :, :],
            "broadcast": np.broadcast_to(a[(0,) * len(batch)], a.shape)}


@pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("batch", [(3,), (8,), (2, 3)], ids=["3", "8", "2x3"])
def test_batches_of_products_on_the_pool_match_numpy(batch, dtype, n_threads):
    # 3 matrices over two threads split by rows inside them, 8 by whole matrices
    old = ember.get_num_threads()
    ember.set_num_threads(n_threads)
    try:
        for la, a in _matrices(batch, 37, 20, dtype, 0).items():
            for lb, b in _matrices(batch, 20, 45, dtype, 1).items():
                got = _parallel._pool_product(a, b)
                want = np.matmul(a, b)
                bound = 4 * 20 * np.finfo(dtype).eps * np.matmul(np.abs(a), np.abs(b))
                assert got is not None, (la, lb)
                assert got.shape == want.shape and got.dtype == dtype, (la, lb)
                assert (np.abs(got - want) <= bound).all(), (la, lb)
    finally:
        ember.set_num_threads(old)


@pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
def test_pool_batches_broadcast_as_matmul_and_refuse_what_they_cannot_walk():
    a, b = rand_array((1, 40, 30)), rand_array((5, 30, 20), seed=1)
    got = _parallel._pool_product(a, b)
    assert got.shape == (5, 40, 20)
    assert np.allclose(got, np.matmul(a, b), rtol=1e-5, atol=1e-5)
    assert _parallel._pool_product(rand_array((4, 40, 30)), rand_array((30, 20))).shape \
        == (4, 40, 20)
    # broadcast in one batch dim and not the next: no single batch stride walks it
    assert _parallel._pool_product(rand_array((2, 1, 40, 30)), rand_array((1, 3, 30, 20))) \
        is None
    assert _parallel._pool_product(rand_array((3, 0, 30)), rand_array((3, 30, 20))) is None
    m = rand_array((3, 40, 30))
    assert _parallel._pool_product(m, np.swapaxes(m, -1, -2)) is None  # NumPy's syrk


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_large_batched_product_and_its_gradients_match_torch(n_threads):
    torch = pytest.importorskip("torch")
    a0, b0 = rand_array((8, 128, 64)), rand_array((8, 64, 96), seed=1)
    g0 = rand_array((8, 128, 96), seed=2)
    assert 2 * 128 * 64 * 96 * 8 >= _parallel.POOL_BATCH  # the pool's path
    old = ember.get_num_threads()
    ember.set_num_threads(n_threads)
    try:
        a, b = (ember.tensor(x, requires_grad=True) for x in (a0, b0))
        out = a @ b
        out.backward(ember.tensor(g0))
    finally:
        ember.set_num_threads(old)
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a0, b0))
    tout = ta @ tb
    tout.backward(torch.tensor(g0))
    # BLAS sums of 64 (forward), 96 and 128 (gradients) products: each library's kernels
    # block them differently
    for mine, theirs in ((out, tout), (a.grad, ta.grad), (b.grad, tb.grad)):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                   rtol=1e-4, atol=1e-4)
