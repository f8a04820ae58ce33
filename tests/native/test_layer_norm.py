"""csrc/layer_norm.c against the NumPy kernels of ops/layer_norm.py, and layer_norm through
the public API against torch, native and NumPy.

The C kernel sums in double (NumPy: BLAS row sums in the dtype), so 1/std and the outputs
agree to a few ulps of the dtype; the statistics are checked against exact sums.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import native
from ember.ops._fma import fma
from ember.ops.layer_norm import layer_norm_backward_p, layer_norm_p
from native._differential import assert_bits, broadcast_rows, layouts, threads, with_specials

from helpers import rand_array

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
FORWARD = native.twins(layer_norm_p)
BACKWARD = native.twins(layer_norm_backward_p)
# (shape, k): rows of 1, odd lengths, lengths that are not multiples of the 16 lanes
CASES = [((1, 1), 1), ((3, 1), 1), ((5, 17), 1), ((4, 33), 1), ((2, 3, 5), 2),
         ((64, 128), 1), ((7, 300), 1), ((3, 4, 1000), 1)]
DTYPES = [np.float32, np.float64]


def _tol(dtype):
    return {np.float32: 2e-5, np.float64: 1e-12}[dtype]


def _params(shape, k, dtype, affine):
    tail = shape[len(shape) - k:]
    if not affine:
        return None, None
    return (rand_array(tail, np.float64, low=0.5, high=1.5, seed=1).astype(dtype),
            rand_array(tail, np.float64, seed=2).astype(dtype))


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,k", CASES, ids=str)
def test_forward_matches_numpy(shape, k, dtype, affine, n_threads):
    x0 = rand_array(shape, np.float64, low=-3, high=5).astype(dtype)
    w, b = _params(shape, k, dtype, True)
    w = w if affine in ("both", "weight") else None
    b = b if affine in ("both", "bias") else None
    numpy_k, native_k = FORWARD
    cases = list(layouts(x0).items()) + [("broadcast", v) for n, v in
                                         layouts(broadcast_rows(x0)).items() if n == "broadcast"]
    for name, x in cases:
        ref = numpy_k(x, w, b, k=k, eps=1e-5)
        with threads(n_threads):
            got = native_k(native.library("layer_norm"), x, w, b, k=k, eps=1e-5)
        for g, r in zip(got, ref):
            assert g.dtype == r.dtype and g.shape == r.shape, name
            np.testing.assert_allclose(g, r, rtol=_tol(dtype), atol=_tol(dtype), err_msg=name)
        out, xhat, _ = got
        wv = 1 if w is None else w
        assert_bits(out, fma(xhat, w, b) if w is not None and b is not None else
                    (xhat * wv if b is None else xhat + b) if w is not None or b is not None
                    else xhat)


@needs_native
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_statistics_are_those_of_double_sums(dtype):
    """1/std within 2 ulps of the value from exact sums (float32: of the rounded mean)."""
    x = (rand_array((16, 333), np.float64, low=-1, high=1) + 100.0).astype(dtype)
    _, _, rstd = FORWARD[1](native.library("layer_norm"), x, None, None, k=1, eps=1e-5)
    for row, r in zip(x.astype(np.float64), rstd[:, 0]):
        mean = dtype(math.fsum(row) / row.size)
        var = dtype(math.fsum((row - float(mean)) ** 2) / row.size)
        exact = 1 / math.sqrt(float(var + dtype(1e-5)))
        assert abs(float(r) - exact) <= 2 * np.spacing(dtype(exact))


@needs_native
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_special_values_poison_their_row_as_numpy(dtype):
    x = with_specials(rand_array((3, 9), np.float64).astype(dtype))
    numpy_k, native_k = FORWARD
    with np.errstate(invalid="ignore"):
        want = numpy_k(x, None, None, k=1, eps=1e-5)
    got = native_k(native.library("layer_norm"), x, None, None, k=1, eps=1e-5)
    for a, r in zip(got, want):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(r))
        ok = np.isfinite(r)
        np.testing.assert_allclose(a[ok], r[ok], rtol=_tol(dtype), atol=_tol(dtype))


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,k", CASES, ids=str)
def test_backward_matches_numpy(shape, k, dtype, affine, n_threads):
    x = rand_array(shape, np.float64, low=-3, high=5).astype(dtype)
    _, xhat, rstd = FORWARD[0](x, None, None, k=k, eps=1e-5)
    w, _ = _params(shape, k, dtype, affine)
    g0 = rand_array(shape, np.float64, seed=3).astype(dtype)
    numpy_k, native_k = BACKWARD
    want = numpy_k(g0, xhat, rstd, w, k=k)
    rows = max(1, x.size // max(1, math.prod(shape[len(shape) - k:])))
    for name, g in layouts(g0).items():
        with threads(n_threads):
            got = native_k(native.library("layer_norm"), g, xhat, rstd, w, k=k)
        for a, r, scale in zip(got, want, (8.0, 8.0 * rows, 8.0 * rows)):
            assert a.dtype == r.dtype and a.shape == r.shape, name
            np.testing.assert_allclose(a, r, rtol=_tol(dtype), atol=_tol(dtype) * scale,
                                       err_msg=name)


@needs_native
def test_weight_and_bias_gradients_are_exact_column_sums():
    """dweight and dbias: each column's sum in double, in row order, rounded once."""
    x = rand_array((257, 40), np.float64, low=-3, high=3).astype(np.float32)
    _, xhat, rstd = FORWARD[0](x, None, None, k=1, eps=1e-5)
    g = rand_array((257, 40), np.float64, seed=5).astype(np.float32)
    _, dw, db = BACKWARD[1](native.library("layer_norm"), g, xhat, rstd, None, k=1)
    gx = (g * xhat).astype(np.float64)
    exact_w = np.array([math.fsum(c) for c in gx.T]).astype(np.float32)
    exact_b = np.array([math.fsum(c) for c in g.astype(np.float64).T]).astype(np.float32)
    np.testing.assert_allclose(dw, exact_w, rtol=2e-7, atol=1e-6)
    np.testing.assert_allclose(db, exact_b, rtol=2e-7, atol=1e-6)


@pytest.mark.parametrize("mode", ["native", "numpy"])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16])
@pytest.mark.parametrize("shape,k", [((8, 64), 1), ((4, 5, 33), 2)], ids=str)
def test_layer_norm_trains_as_torch(shape, k, dtype, mode):
    tol = {ember.float32: 2e-5, ember.float64: 1e-10, ember.bfloat16: 3e-2}[dtype]
    tdt = {ember.float32: torch.float32, ember.float64: torch.float64,
           ember.bfloat16: torch.bfloat16}[dtype]
    tail = shape[len(shape) - k:]
    x, w, b = rand_array(shape), rand_array(tail, seed=1), rand_array(tail, seed=2)
    ts = [torch.tensor(a).to(tdt).requires_grad_() for a in (x, w, b)]
    yt = TF.layer_norm(ts[0], tail, ts[1], ts[2])
    (yt * yt).sum().backward()
    with native.use(mode):
        es = [ember.tensor(a).to(dtype).requires_grad_() for a in (x, w, b)]
        ye = ember.nn.functional.layer_norm(es[0], tail, es[1], es[2])
        (ye * ye).sum().backward()
    for e, t in zip([ye] + [a.grad for a in es], [yt] + [a.grad for a in ts]):
        np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(),
                                   rtol=tol, atol=tol * 10)
