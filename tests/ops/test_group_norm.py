"""F.group_norm's fused node (ops/group_norm.py) against torch: forward, backward (dx,
dweight, dbias), with and without the affine, channels-last, 2-d to 5-d inputs, double
backward, forward over reverse, vmap, and finite differences in float64.

Tolerances: torch sums with vectorised float accumulators and ember in double over 16
lanes, so the statistics differ in their last bits; the results are compared with a few
float32 ulps' relative error (1e-5 of the output's scale) and 1e-10 in float64.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import func

from helpers import rand_array

CASES = [((4, 6), 3), ((3, 6, 5), 3), ((2, 8, 4, 4), 4), ((2, 6, 2, 3, 5), 2),
         ((5, 12, 7, 3), 12), ((2, 4, 3, 3), 1), ((0, 4, 3), 2)]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-10)}


def _run(lib, x, w, b, g, groups, channels_last=False):
    xt = lib.tensor(x, requires_grad=True)
    if channels_last:
        xt = xt.detach().to(memory_format=lib.channels_last).requires_grad_()
    wt = None if w is None else lib.tensor(w, requires_grad=True)
    bt = None if b is None else lib.tensor(b, requires_grad=True)
    if lib is torch and w is None and b is not None:
        # (torch's own backward fails for a bias without a weight on CPU, "tensor does not
        # have a device": a weight of ones that wants no gradient gives the same values)
        out = lib.nn.functional.group_norm(xt, groups, lib.ones(x.shape[1], dtype=bt.dtype),
                                           bt, 1e-5)
    else:
        out = lib.nn.functional.group_norm(xt, groups, wt, bt, 1e-5)
    out.backward(lib.tensor(g))
    grads = [None if t is None else t.grad.numpy() for t in (xt, wt, bt)]
    grads[1] = None if w is None else grads[1]
    return out, [out.detach().numpy()] + grads


@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,groups", CASES, ids=str)
def test_forward_backward_match_torch(shape, groups, dtype, affine):
    x = rand_array(shape, np.float64, low=-3, high=5).astype(dtype)
    g = rand_array(shape, np.float64, seed=3).astype(dtype)
    w = rand_array(shape[1:2], np.float64, low=0.5, high=1.5, seed=1).astype(dtype)
    b = rand_array(shape[1:2], np.float64, seed=2).astype(dtype)
    w = w if affine in ("both", "weight") else None
    b = b if affine in ("both", "bias") else None
    out, got = _run(ember, x, w, b, g, groups)
    _, ref = _run(torch, x, w, b, g, groups)
    assert out.grad_fn.name() == "NativeGroupNormBackward0"
    for i, (a, r) in enumerate(zip(got, ref)):
        assert (a is None) == (r is None)
        if a is not None:
            assert a.dtype == r.dtype and a.shape == r.shape
            atol = _dx_atol(x, w, g, groups, dtype) if i == 1 else TOL[dtype]["atol"]
            np.testing.assert_allclose(a, r, rtol=TOL[dtype]["rtol"], atol=atol)


def _dx_atol(x, w, g, groups, dtype):
    """dx is c1 g + c2 x + c3 per (sample, channel), a difference of terms of about
    rstd |w| |g| that cancel (in groups of two to nothing but eps's share): both libraries
    round those terms, so dx agrees to the dtype's resolution of their size."""
    if not x.size:
        return 0.0
    rows = x.astype(np.float64).reshape(x.shape[0] * groups, -1)
    rstd = 1 / np.sqrt(rows.var(1) + 1e-5)
    scale = rstd.max() * np.abs(g).max() * (1 if w is None else np.abs(w).max())
    return TOL[dtype]["atol"] + 8 * np.finfo(dtype).eps * scale * (1 + np.abs(x).max())


def test_channels_last_input_keeps_its_layout():
    shape = (2, 8, 5, 3)
    x = rand_array(shape, np.float64, low=-3, high=5).astype(np.float32)
    g = rand_array(shape, np.float64, seed=3).astype(np.float32)
    w, b = np.linspace(0.5, 1.5, 8, dtype=np.float32), np.linspace(-1, 1, 8, dtype=np.float32)
    out, got = _run(ember, x, w, b, g, 4, channels_last=True)
    ref_out, ref = _run(torch, x, w, b, g, 4, channels_last=True)
    assert out.is_contiguous(memory_format=ember.channels_last) == \
        ref_out.is_contiguous(memory_format=torch.channels_last)
    for a, r in zip(got, ref):
        np.testing.assert_allclose(a, r, **TOL[np.float32])


def _double(lib, x, w, b):
    xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, w, b))
    out = lib.nn.functional.group_norm(xt, 3, wt, bt)
    gx, gw = lib.autograd.grad((out * out * out).sum(), (xt, wt), create_graph=True)
    return [a.detach().numpy() for a in
            lib.autograd.grad((gx * gx).sum() + (gw * gw).sum(), (xt, wt, bt))]


def test_double_backward_matches_torch():
    x = rand_array((3, 6, 4, 2), np.float64)
    w, b = rand_array((6,), np.float64, seed=1), rand_array((6,), np.float64, seed=2)
    for a, r in zip(_double(ember, x, w, b), _double(torch, x, w, b)):
        np.testing.assert_allclose(a, r, rtol=1e-9, atol=1e-9)


def test_forward_over_reverse_jvp_and_vmap_match_torch():
    x = rand_array((3, 6, 4), np.float64)
    w, b = rand_array((6,), np.float64, seed=1), rand_array((6,), np.float64, seed=2)
    t = rand_array((3, 6, 4), np.float64, seed=5)

    def make(lib):
        return lambda v: lib.nn.functional.group_norm(v, 3, lib.tensor(w), lib.tensor(b))

    fe, ft = make(ember), make(torch)
    xe, xt, te, tt = ember.tensor(x), torch.tensor(x), ember.tensor(t), torch.tensor(t)
    np.testing.assert_allclose(func.jvp(fe, (xe,), (te,))[1].numpy(),
                               torch.func.jvp(ft, (xt,), (tt,))[1].numpy(), rtol=1e-10,
                               atol=1e-10)
    he = func.jvp(func.grad(lambda v: (fe(v) ** 3).sum()), (xe,), (te,))[1]
    ht = torch.func.jvp(torch.func.grad(lambda v: (ft(v) ** 3).sum()), (xt,), (tt,))[1]
    np.testing.assert_allclose(he.numpy(), ht.numpy(), rtol=1e-9, atol=1e-9)
    xs = np.stack([x, 2 * x + 1])
    np.testing.assert_allclose(func.vmap(fe)(ember.tensor(xs)).numpy(),
                               torch.func.vmap(ft)(torch.tensor(xs)).numpy(), rtol=1e-10,
                               atol=1e-10)
    ge = func.vmap(func.grad(lambda v: (fe(v) ** 2 * te).sum()))(ember.tensor(xs))
    gt = torch.func.vmap(torch.func.grad(lambda v: (ft(v) ** 2 * tt).sum()))(torch.tensor(xs))
    np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-9, atol=1e-9)


def test_gradcheck_float64():
    """Finite differences of the fused node and of its backward (double backward)."""
    x = ember.tensor(rand_array((2, 4, 3), np.float64), requires_grad=True)
    w = ember.tensor(rand_array((4,), np.float64, seed=1), requires_grad=True)
    b = ember.tensor(rand_array((4,), np.float64, seed=2), requires_grad=True)

    def f(x, w, b):
        return ember.nn.functional.group_norm(x, 2, w, b)

    assert ember.autograd.gradcheck(f, (x, w, b))
    assert ember.autograd.gradgradcheck(f, (x, w, b))
