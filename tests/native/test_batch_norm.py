"""csrc/batch_norm.c against the NumPy kernels of ops/batch_norm.py.

The statistics are sums in double in C (PyTorch's CPU kernel also accumulates in double) and
pairwise float32 sums in NumPy, so mean, var and 1/std agree to a few float32 ulps, not to
the bit. Everything after the statistics is the same arithmetic in the same order, so given
the C kernel's own statistics, NumPy's formula reproduces its outputs bit for bit.
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
from ember.ops.batch_norm import batch_norm_backward_p, batch_norm_p
from native._differential import DTYPES, assert_bits, layouts, threads, with_specials

from helpers import rand_array

pytestmark = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
FORWARD = native.twins(batch_norm_p)
BACKWARD = native.twins(batch_norm_backward_p)
# (empty inputs never reach the kernels: F.batch_norm answers them first; see the last test)
SHAPES = [(1, 1), (1, 1, 1), (3, 5), (5, 7, 3, 3), (3, 4, 17),
          (2, 3, 2, 3, 5), (64, 8, 9, 9), (3, 70, 1), (2, 37, 5, 5)]
# Shapes whose small planes the C kernels read in blocks of adjacent channels (up to 32 of
# them, each sample's block one run): channels one more than a block, blocks of one and of
# several channels, planes of one element, an odd batch, a plane at the run length.
BLOCKED = [(3, 33, 1), (1, 70, 1), (5, 37, 3, 3), (2, 65, 4, 4), (7, 9, 11), (2, 3, 1024),
           (1, 1, 1)]


def _forward(x, w, b, which):
    numpy_k, native_k = FORWARD
    if which == "numpy":
        return numpy_k(x, w, b, eps=1e-5)
    return native_k(native.library("batch_norm"), x, w, b, eps=1e-5)


def _stat_tol(dtype):
    # a few ulps of the dtype: the two kernels sum in different orders and precisions
    return {np.float32: 4e-6, np.float64: 1e-13}.get(dtype, 8e-3)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_forward_matches_numpy(shape, dtype, affine, n_threads):
    c = shape[1]
    x0 = rand_array(shape, np.float64, low=-3, high=5).astype(dtype)
    w = rand_array((c,), np.float64, seed=1).astype(dtype) if affine else None
    b = rand_array((c,), np.float64, seed=2).astype(dtype) if affine else None
    if dtype not in (np.float32, np.float64):
        # 16-bit inputs: PyTorch rounds their statistics in float; the NumPy kernel does that
        assert _forward(x0, w, b, "native") is NotImplemented
        return
    want = _forward(x0, w, b, "numpy")
    tol = _stat_tol(dtype)
    for name, x in layouts(x0).items():
        with threads(n_threads):
            got = _forward(x, w, b, "native")
        for g, r in zip(got, want):
            assert g.dtype == r.dtype and g.shape == r.shape, name
            np.testing.assert_allclose(g.astype(np.float64), r.astype(np.float64), rtol=tol,
                                       atol=tol * 8, err_msg=name)
        if dtype in (np.float32, np.float64):
            out, xhat, mean, _, rstd = got
            view = (1, c) + (1,) * (x.ndim - 2)
            m, r = mean.reshape(view), rstd.reshape(view)
            s = (rstd if w is None else rstd * w).reshape(view)
            shift = fma(-m, s, b.reshape(view) if b is not None else dtype(0))
            assert_bits(xhat, (x - m) * r)
            assert_bits(out, fma(x, s, shift))  # (PyTorch's fused multiply-adds)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_statistics_are_those_of_double_sums(dtype):
    """float32: mean and variance within one ulp of the exact values (double sums of float32
    data, rounded once); float64: within a few ulps (a double sum of 2,112 terms)."""
    x = (rand_array((16, 4, 33), np.float64, low=-1, high=1) + 1000.0).astype(dtype)
    _, _, mean, var_sum, _ = _forward(x, None, None, "native")
    var = var_sum / (16 * 33)
    planes = [x[:, ch].astype(np.float64).reshape(-1) for ch in range(4)]
    m = np.array([math.fsum(p) / p.size for p in planes])
    v = np.array([math.fsum((p - float(mu)) ** 2) / p.size for p, mu in zip(planes, mean)])
    ulps = 1 if dtype == np.float32 else 8
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(mean, m, rtol=ulps * eps, atol=0)
    np.testing.assert_allclose(var, v, rtol=2 * ulps * eps, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_special_values_poison_their_channel_as_numpy(dtype):
    x = with_specials(rand_array((3, 4, 5), np.float64).astype(dtype))
    for got, want in zip(_forward(x, None, None, "native"), _forward(x, None, None, "numpy")):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=_stat_tol(dtype))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_backward_matches_numpy(shape, dtype, affine, n_threads):
    c = shape[1]
    x = rand_array(shape, np.float64, low=-3, high=5).astype(dtype)
    _, xhat, mean, _, rstd = _forward(x, None, None, "numpy")
    w = rand_array((c,), np.float64, seed=1).astype(dtype) if affine else None
    g0 = rand_array(shape, np.float64, seed=3).astype(dtype)
    numpy_k, native_k = BACKWARD
    with threads(n_threads):  # (the rows kernel's sums go by thread chunks)
        want = numpy_k(g0, xhat, rstd, w, x, mean)
    if dtype not in (np.float32, np.float64):
        assert native_k(native.library("batch_norm"), g0, xhat, rstd, w, x, mean) \
            is NotImplemented  # (16-bit: the NumPy kernel, in float)
        return
    for name, g in layouts(g0).items():
        with threads(n_threads):
            got = native_k(native.library("batch_norm"), g, xhat, rstd, w, x, mean)
        # the same order of operations in C and NumPy (PyTorch's): the same bits
        for a, r in zip(got, want):
            assert a.dtype == r.dtype and a.shape == r.shape, name
            assert_bits(a, r)
        if x.size and x.size > x.shape[0] * c:
            dx, dweight, dbias = got
            count = x.size // c
            view = (1, c) + (1,) * (x.ndim - 2)
            d = dweight.astype(np.float64) / rstd.astype(np.float64)  # ~ sum((x - mean) g)
            k = (d.astype(dtype) * rstd * rstd / dtype(count)).reshape(view)
            gm = (dbias.astype(np.float64) / count).astype(dtype).reshape(view)
            xm = x - mean.reshape(view)
            want_dx = fma(-xm, k, g - gm) * rstd.reshape(view)
            if w is not None:
                want_dx = want_dx * w.reshape(view)
            # dweight = D rstd rounded hides D's last bits: a few ulps, not the bit
            np.testing.assert_allclose(dx, want_dx, rtol=_stat_tol(dtype),
                                       atol=_stat_tol(dtype) * 8, err_msg=name)


def _one_channel_at_a_time(fn, *arrays):
    """`fn` called on each channel alone (a (n, 1, ...) slice: a block of one channel), its
    per-channel outputs put back together."""
    c = arrays[0].shape[1]
    parts = [fn(*(a if a.ndim < 2 else np.ascontiguousarray(a[:, ch:ch + 1])
                  for a in arrays), ch) for ch in range(c)]
    return [np.concatenate([p[k] for p in parts], axis=1 if parts[0][k].ndim >= 2 else 0)
            for k in range(len(parts[0]))]


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", BLOCKED, ids=str)
def test_channel_blocks_are_each_channel_alone_bit_for_bit(shape, dtype, affine, n_threads):
    """Reading a block of channels sample by sample keeps each channel's own sums in their
    order: forward and backward give the bits of a call per channel (NaN, inf and -0.0
    planted in the first channels poison those alone)."""
    c = shape[1]
    lib = native.library("batch_norm")
    x = with_specials(rand_array(shape, np.float64, low=-3, high=5).astype(dtype))
    w = rand_array((c,), np.float64, seed=1).astype(dtype) if affine else None
    b = rand_array((c,), np.float64, seed=2).astype(dtype) if affine else None
    g = with_specials(rand_array(shape, np.float64, seed=3).astype(dtype)[:, ::-1])
    g = g[:, ::-1]  # (a non-contiguous gradient: the wrapper copies it)
    fwd, bwd = FORWARD[1], BACKWARD[1]

    def forward_one(xc, ch):
        return fwd(lib, xc, None if w is None else w[ch:ch + 1],
                   None if b is None else b[ch:ch + 1], eps=1e-5)

    with threads(n_threads):
        got = fwd(lib, x, w, b, eps=1e-5)
        want = _one_channel_at_a_time(forward_one, x)
        for a, r in zip(got, want):
            assert_bits(a, r)
        if x.size == shape[0] * c:
            return  # (the rows backward fuses by whole vectors of channels: not per channel)
        _, xhat, mean, _, rstd = got
        got = bwd(lib, g, xhat, rstd, w, x, mean)

        def backward_one(gc, hc, xc, ch):
            return bwd(lib, gc, hc, rstd[ch:ch + 1], None if w is None else w[ch:ch + 1], xc,
                       mean[ch:ch + 1])

        want = _one_channel_at_a_time(backward_one, g, xhat, x)
    for a, r in zip(got, want):
        assert_bits(a, r)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16])
def test_module_trains_as_torch_either_way(dtype):
    """BatchNorm2d forward and gradients through the public API, native and NumPy, against
    torch (whose CPU kernel also sums in double)."""
    x = rand_array((8, 6, 7, 7), low=-2, high=3)
    tol = {ember.float32: 2e-5, ember.float64: 1e-10, ember.bfloat16: 3e-2}[dtype]
    tdtype = {ember.float32: torch.float32, ember.float64: torch.float64,
              ember.bfloat16: torch.bfloat16}[dtype]
    xt = torch.tensor(x).to(tdtype).requires_grad_()
    w = rand_array((6,), low=0.5, high=1.5, seed=5)
    wt = torch.tensor(w).to(tdtype).requires_grad_()
    yt = TF.batch_norm(xt, None, None, wt, None, training=True)
    (yt * yt).sum().backward()
    for m in ("native", "numpy"):
        with native.use(m):
            xe = ember.tensor(x).to(dtype).requires_grad_()
            we = ember.tensor(w).to(dtype).requires_grad_()
            ye = ember.nn.functional.batch_norm(xe, None, None, we, None, training=True)
            (ye * ye).sum().backward()
        for e, t in ((ye, yt), (xe.grad, xt.grad), (we.grad, wt.grad)):
            np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(),
                                       rtol=tol, atol=tol * 10, err_msg=m)


@pytest.mark.parametrize("shape", [(0, 3, 4), (2, 0, 3)], ids=str)
def test_empty_inputs_as_torch(shape):
    for m in ("native", "numpy"):
        with native.use(m):
            out = ember.nn.functional.batch_norm(ember.zeros(shape), None, None, training=True)
        assert tuple(out.shape) == tuple(TF.batch_norm(torch.zeros(shape), None, None,
                                                       training=True).shape)
