"""svd_lowrank and pca_lowrank against torch: the same seed draws the same random test matrix,
so the factors agree (up to the rounding of the products and QR steps they are built from)."""

import numpy as np
import pytest
import torch

import ember

from helpers import rand_array, same_message


def _both(fn_name, a, seed=0, **kw):
    """(ember result, torch result) of fn(a, **kw) with the default generator seeded alike."""
    out = []
    for lib in (ember, torch):
        lib.manual_seed(seed)
        args = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        out.append(getattr(lib, fn_name)(lib.tensor(a), **args))
    return out


def _sign_fixed(u, v):
    """u and v with each singular pair flipped so that v's largest entry is positive,
    stacked as one array."""
    idx = np.abs(v).argmax(-2)[..., None, :]
    sign = np.sign(np.take_along_axis(v, idx, -2))
    return np.concatenate([(u * sign).reshape(-1), (v * sign).reshape(-1)])


@pytest.mark.parametrize("fn_name, shape, kw", [
    ("svd_lowrank", (7, 5), dict(q=3)),
    ("svd_lowrank", (5, 7), dict(q=3, niter=0)),  # wide: works on A^H, swaps U and V
    ("svd_lowrank", (2, 6, 4), dict(q=2, niter=3)),
    ("svd_lowrank", (6, 4), dict(q=2, M=rand_array((4,), np.float64, seed=5))),
    ("pca_lowrank", (9, 4), dict()),  # q defaults to min(6, m, n)
    ("pca_lowrank", (9, 4), dict(q=2, center=False)),
    ("pca_lowrank", (3, 8, 5), dict(q=3)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lowrank_matches_torch(fn_name, shape, kw, dtype):
    a = rand_array(shape, dtype, seed=1)
    kw = {k: v.astype(dtype) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    (ue, se, ve), (ut, st, vt) = _both(fn_name, a, **kw)
    assert ue.shape == tuple(ut.shape) and se.shape == tuple(st.shape)
    assert ve.shape == tuple(vt.shape)
    assert ue.dtype == (ember.float32 if dtype == np.float32 else ember.float64)
    # products and LAPACK QR/SVD steps (their last bits are the CPU's): agreement to a few
    # ulps of the working precision; each singular pair only up to a joint sign, which
    # LAPACK builds may choose differently, since the random draws are equal
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(se.numpy(), st.numpy(), **tol)
    np.testing.assert_allclose(_sign_fixed(ue.numpy(), ve.numpy()),
                               _sign_fixed(ut.numpy(), vt.numpy()), **tol)


def test_lowrank_consumes_the_generator_like_torch():
    # one draw of n x q normals: the next random number agrees afterwards
    a = rand_array((6, 4), np.float32, seed=2)
    _both("svd_lowrank", a, seed=3, q=2)
    assert ember.rand(()).item() == torch.rand(()).item()


def test_pca_lowrank_integer_input_and_bad_arguments():
    same_message(lambda L: L.pca_lowrank(L.ones(4, 3, dtype=L.int64), q=2))
    a = rand_array((5, 3), np.float32)
    for kw in (dict(q=4), dict(q=-1), dict(niter=-1)):
        same_message(lambda L, kw=kw: L.pca_lowrank(L.tensor(a), **kw), ValueError)


def test_pca_lowrank_of_a_sparse_matrix():
    a = np.maximum(rand_array((6, 4), np.float64, seed=4), 0)
    out = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        out.append(lib.pca_lowrank(lib.tensor(a).to_sparse(), q=2)[1].numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10)


def test_svd_lowrank_gradient_flows_to_the_input():
    a = rand_array((6, 4), np.float64, seed=6)
    grads = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        x = lib.tensor(a, requires_grad=True)
        lib.svd_lowrank(x, q=2)[1].sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8, atol=1e-10)
