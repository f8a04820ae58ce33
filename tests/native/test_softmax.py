"""csrc/softmax.c against the NumPy kernels of ops/softmax.py, and cross_entropy (log_softmax
then nll_loss) through the public API against torch, native and NumPy.

The C kernels take exp and log from ember_math.h (float32 exp within 1 ulp; NumPy's own
within about as much) and sum in double where NumPy sums in the dtype, so results agree to
a few ulps of the dtype, not to the bit. log_softmax is (x - max) - lse in both, so given
the C kernel's own lse (minus its output at the row's max) NumPy's formula reproduces the
C output bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import ember
from ember import native
from ember.ops import softmax as softmax_ops
from ember.ops.softmax import softmax_backward_p, softmax_p
from native._differential import DTYPES, assert_bits, layouts, threads, with_specials

from helpers import rand_array

needs_native = pytest.mark.skipif(not native.available(), reason="native kernels unavailable")
FORWARD = native.twins(softmax_p)
BACKWARD = native.twins(softmax_backward_p)
# (0 and 1 sized dims; odd lengths and lengths that are not multiples of the 16 lanes)
CASES = [((1,), 0), ((5,), 0), ((3, 1), 1), ((1, 17), 1), ((7, 33), 1), ((7, 33), 0),
         ((4, 5, 6), 1), ((2, 3, 300), 2), ((3, 1000), 1), ((2, 600, 3), 1), ((0, 4), 1),
         ((4, 0), 1), ((2, 0, 3), 0)]


@pytest.fixture(autouse=True)
def _small_arrays_native_too(monkeypatch):
    """Here the C kernel takes every size, whatever eager's size gate (`_NATIVE_MIN`) is,
    so that small and odd shapes test it."""
    monkeypatch.setattr(softmax_ops, "_NATIVE_MIN", 1)


def _tol(dtype):
    # a few ulps: exp within an ulp in each kernel, sums in different precisions
    return {np.float32: 4e-6, np.float64: 1e-14}.get(dtype, 1e-2)


def _fwd(which, x, dim, log):
    numpy_k, native_k = FORWARD
    if which == "numpy":
        return numpy_k(x, dim=dim, log=log)
    out = native_k(native.library("softmax"), x, dim=dim, log=log)
    return numpy_k(x, dim=dim, log=log) if out is NotImplemented else out


def _bwd(which, g, y, dim, log):
    numpy_k, native_k = BACKWARD
    if which == "numpy":
        return numpy_k(g, y, dim=dim, log=log)
    out = native_k(native.library("softmax"), g, y, dim=dim, log=log)
    return numpy_k(g, y, dim=dim, log=log) if out is NotImplemented else out


def _close(got, want, dtype, name, scale=1.0):
    assert got.dtype == want.dtype and got.shape == want.shape, name
    tol = _tol(dtype)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol * scale, err_msg=name)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,dim", CASES, ids=str)
def test_forward_matches_numpy(shape, dim, dtype, log, n_threads):
    x0 = (rand_array(shape, np.float64, low=-4, high=4) * 3).astype(dtype)
    want = _fwd("numpy", x0, dim, log)
    for name, x in layouts(x0).items():
        with threads(n_threads):
            got = _fwd("native", x, dim, log)
        _close(got, want, dtype, name, scale=30.0 if log else 1.0)
        if log and dtype in (np.float32, np.float64) and x.size:
            m = np.max(x, axis=dim, keepdims=True)
            at = np.argmax(x, axis=dim)
            lse = -np.take_along_axis(got, np.expand_dims(at, dim), dim)
            assert_bits(got, (x - m) - lse)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,dim", CASES, ids=str)
def test_backward_matches_numpy(shape, dim, dtype, log, n_threads):
    x = (rand_array(shape, np.float64, low=-4, high=4)).astype(dtype)
    y = _fwd("numpy", x, dim, log)
    g0 = rand_array(shape, np.float64, seed=3).astype(dtype)
    want = _bwd("numpy", g0, y, dim, log)
    n = max(shape[dim], 1) if shape else 1
    for name, g in layouts(g0).items():
        with threads(n_threads):
            got = _bwd("native", g, y, dim, log)
        _close(got, want, dtype, name, scale=float(n) if log else 1.0)


@needs_native
@pytest.mark.filterwarnings("ignore:invalid value encountered")
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_special_values_as_numpy(dtype, log):
    """NaN, +-inf and -0.0 in a row: the same NaN pattern and values as NumPy (a NaN or
    +inf poisons its row; -inf is a zero weight); an all -inf row is NaN in both."""
    x = with_specials(rand_array((6, 9), np.float64).astype(dtype))
    x[4] = -np.inf
    x[5, 2] = -np.inf
    for dim in (0, 1):
        got, want = _fwd("native", x, dim, log), _fwd("numpy", x, dim, log)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=_tol(dtype), atol=_tol(dtype))
        g = with_specials(rand_array((6, 9), np.float64, seed=2).astype(dtype))
        y = _fwd("numpy", rand_array((6, 9), np.float64).astype(dtype), dim, log)
        got, want = _bwd("native", g, y, dim, log), _bwd("numpy", g, y, dim, log)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@needs_native
def test_sums_are_double_sums():
    """float32 softmax: each row sums to 1 within 2 ulps of the largest entry's rounding
    (the sum is taken in double, rounded once)."""
    x = (rand_array((64, 4099), np.float64, low=-3, high=3) * 5).astype(np.float32)
    out = _fwd("native", x, 1, False)
    assert np.all(np.abs(out.astype(np.float64).sum(1) - 1) < 4099 * 2 ** -24)


@needs_native
@pytest.mark.parametrize("dim", [0, 1])
def test_log_softmax_of_a_sum_that_rounds_to_one_is_zero_as_torch(dim):
    """A row whose exp-sum is 1 + 1e-14 (one entry dominates): its sum rounds to 1 in
    float32 before the log, as PyTorch's float sum does, so the top entry is exactly 0, not
    -1e-14 (a log of the unrounded double sum)."""
    x = np.full((3, 2048), -30.0, np.float32)
    x[:, 5] = 10.0
    x = np.ascontiguousarray(x if dim == 1 else x.T)
    got = _fwd("native", x, dim, True)
    want = TF.log_softmax(torch.tensor(x), dim).numpy()
    top = (slice(None), 5) if dim == 1 else (5, slice(None))
    assert np.all(got[top] == 0.0) and np.all(want[top] == 0.0)
    np.testing.assert_allclose(got, want, rtol=2e-6)


@needs_native
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 10, 15])
def test_short_rows_are_the_row_kernels_bits(n, dtype, n_threads):
    """Rows shorter than the 16 lanes run sixteen at a time across the rows; each must be
    what the row kernel gives the same row padded to 16 with -inf (log-probability) and 0
    (gradient), whose padding adds exact zeros to the lanes: bit for bit, forward and
    backward, softmax and log_softmax, and cross_entropy's fused backward."""
    from ember.ops.nll_softmax import nll_log_softmax_backward_p

    rng = np.random.default_rng(n)
    rows = 37  # (two whole blocks of sixteen and a part)
    x = (rng.standard_normal((rows, n)) * 5).astype(dtype)
    x[3, 0], x[5, -1] = np.inf, np.nan
    g = rng.standard_normal((rows, n)).astype(dtype)
    pad = lambda a, v: np.concatenate([a, np.full((rows, 16 - n), v, dtype)], 1)
    lib = native.library("softmax")
    with threads(n_threads), np.errstate(all="ignore"):
        for log in (False, True):
            short = FORWARD[1](lib, x, dim=1, log=log)
            assert_bits(short, FORWARD[1](lib, pad(x, -np.inf), dim=1, log=log)[:, :n])
            got = BACKWARD[1](lib, g, short, dim=1, log=log)
            want = BACKWARD[1](lib, pad(g, 0.0), pad(short, -np.inf if log else 0.0), dim=1,
                               log=log)
            assert_bits(got, want[:, :n])
        k = native.twins(nll_log_softmax_backward_p)[1]
        nll_lib = native.library("nll_softmax")
        t = rng.integers(0, n, rows)
        one = np.asarray(0.3, dtype)
        for logits in (False, True):
            src = x if logits else FORWARD[1](lib, x, dim=1, log=True)
            got = k(nll_lib, one, t, None, src, reduction="mean", ignore_index=-100,
                    logits=logits)
            want = k(nll_lib, one, t, None, pad(src, -np.inf), reduction="mean",
                     ignore_index=-100, logits=logits)
            assert_bits(got, want[:, :n])


TDT = {ember.float32: torch.float32, ember.float64: torch.float64,
       ember.bfloat16: torch.bfloat16, ember.float16: torch.float16}


@pytest.mark.parametrize("mode", ["native", "numpy"])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16])
@pytest.mark.parametrize("shape", [(64, 10), (33, 1000), (4, 7, 5)], ids=str)
def test_cross_entropy_as_torch(shape, dtype, mode):
    """cross_entropy's loss and its gradient through the public API (log_softmax + nll_loss
    forward and backward) against torch, with native kernels on and off."""
    tol = {ember.float32: 2e-6, ember.float64: 1e-12, ember.bfloat16: 2e-2}[dtype]
    x = rand_array(shape, low=-6, high=6)
    t = np.random.default_rng(1).integers(0, shape[1], (shape[0],) + shape[2:])
    xt = torch.tensor(x).to(TDT[dtype]).requires_grad_()
    lt = TF.cross_entropy(xt, torch.tensor(t))
    lt.backward()
    with native.use(mode):
        xe = ember.tensor(x).to(dtype).requires_grad_()
        le = ember.nn.functional.cross_entropy(xe, ember.tensor(t))
        le.backward()
    for e, w in ((le, lt), (xe.grad, xt.grad)):
        np.testing.assert_allclose(e.detach().double().numpy(), w.detach().double().numpy(),
                                   rtol=tol, atol=tol * 0.1)


@pytest.mark.parametrize("mode", ["native", "numpy"])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_softmax_values_and_grads_as_torch(dim, log, mode):
    x = rand_array((5, 6, 7), low=-5, high=5)
    w = rand_array((5, 6, 7), seed=4)
    fn = "log_softmax" if log else "softmax"
    xt = torch.tensor(x, requires_grad=True)
    yt = getattr(torch, fn)(xt, dim)
    (yt * torch.tensor(w)).sum().backward()
    with native.use(mode):
        xe = ember.tensor(x, requires_grad=True)
        ye = getattr(ember, fn)(xe, dim)
        (ye * ember.tensor(w)).sum().backward()
    # float32 transcendentals on both sides: a few ulps
    for e, t in ((ye, yt), (xe.grad, xt.grad)):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                   atol=2e-6)
