"""Layer norm of float16 / bfloat16 inputs (the native_layer_norm primitive's kernels in
ops/layer_norm_low.py) against torch's CPU kernel run on one thread: the forward, the node,
and the backward's low-precision sums."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember.ops.layer_norm import layer_norm_p, layer_norm_prim
from ember.ops.registry import bind


def layer_norm_low(x, weight, bias, k, eps):
    return layer_norm_prim(x, weight, bias, k, eps)


def _run(m, dtype, wdtype, shape, k, affine, seed=0):
    r = np.random.default_rng(seed)
    X = (r.standard_normal(shape) * 3 + 1).astype(np.float32)
    G = r.standard_normal(shape).astype(np.float32)
    W, B = (r.standard_normal(shape[-k:]).astype(np.float32) for _ in range(2))
    x = m.tensor(X).to(getattr(m, dtype)).requires_grad_()
    w, b = ((m.tensor(v).to(getattr(m, wdtype)).requires_grad_() if affine else None)
            for v in (W, B))
    if m is torch:
        y = torch.nn.functional.layer_norm(x, shape[-k:], w, b)
    else:
        y = layer_norm_low(x, w, b, k, 1e-5)
    y.backward(m.tensor(G).to(y.dtype))
    got = [y, x.grad] + ([w.grad, b.grad] if affine else [])
    return ([str(t.dtype).split(".")[1] for t in got], type(y.grad_fn).__name__,
            [t.detach().float().numpy() for t in got])


CASES = [((64, 16), 1, True), ((5, 7, 40), 2, True), ((33, 100), 1, False), ((3, 70), 1, True)]


@pytest.fixture
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)  # torch's sums of dweight / dbias split by thread otherwise
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("wdtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("shape,k,affine", CASES)
def test_bfloat16_matches_torch_bit_for_bit(one_thread, shape, k, affine, wdtype):
    # exact: every float32 step is a single rounding of bfloat16 products (8-bit mantissas),
    # and the row-by-row bfloat16 sums round as torch's do
    want = _run(torch, "bfloat16", wdtype, shape, k, affine)
    got = _run(ember, "bfloat16", wdtype, shape, k, affine)
    assert got[:2] == want[:2]
    for a, b in zip(got[2], want[2]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("wdtype", ["float16", "float32"])
@pytest.mark.parametrize("shape,k,affine", CASES)
def test_float16_matches_torch_to_one_ulp(one_thread, shape, k, affine, wdtype):
    # float16 products of 11-bit mantissas are not exact in float32, and torch's vectorised
    # row sums add them in another order: a result may land one float16 ulp away
    want = _run(torch, "float16", wdtype, shape, k, affine)
    got = _run(ember, "float16", wdtype, shape, k, affine)
    assert got[:2] == want[:2]
    for a, b in zip(got[2], want[2]):
        np.testing.assert_allclose(a, b, rtol=2 ** -10, atol=2 ** -24)


def _double(m, f):
    m.manual_seed(0)
    x = m.randn(4, 8).bfloat16().requires_grad_()
    w = m.randn(8).bfloat16().requires_grad_()
    gx, gw = m.autograd.grad((f(x, w).float() ** 2).sum(), (x, w), create_graph=True)
    (gx.float() ** 2).sum().backward()
    return [gx.float().numpy(force=True), gw.float().numpy(force=True),
            x.grad.float().numpy(), w.grad.float().numpy()]


def test_create_graph_keeps_the_kernels_values_and_differentiates():
    want = _double(torch, lambda x, w: torch.nn.functional.layer_norm(x, (8,), w, w))
    got = _double(ember, lambda x, w: layer_norm_low(x, w, w, 1, 1e-5))
    for a, b in zip(got[:2], want[:2]):  # the first derivative: the kernel's, exactly
        np.testing.assert_array_equal(a, b)
    for a, b in zip(got[2:], want[2:]):
        # the second: ember's float32 formula against torch's double backward, a chain of
        # bfloat16 ops each rounding by up to 2**-9: a few percent of the largest entry
        np.testing.assert_allclose(a, b, rtol=0, atol=0.02 * np.abs(b).max())


def test_statistics_take_the_weights_dtype():
    x = ember.randn(4, 8).bfloat16()
    for w, want in ((None, ember.bfloat16), (ember.ones(8), ember.float32),
                    (ember.ones(8).bfloat16(), ember.bfloat16)):
        out, _, rstd = bind(layer_norm_p, x, w, None, k=1, eps=1e-5)
        trstd = torch.native_layer_norm(torch.tensor(x.float().numpy()).bfloat16(), (8,),
                                        None if w is None else torch.tensor(
                                            w.float().numpy()).to(getattr(torch, str(
                                                w.dtype).split(".")[1])), None, 1e-5)[2]
        assert out.dtype is ember.bfloat16 and rstd.dtype is want
        assert str(trstd.dtype).split(".")[1] == str(want).split(".")[1]
        # a float32 1/std may sit an ulp or two from torch's (its row sums add in another
        # order, and the square root and reciprocal round again)
        np.testing.assert_allclose(rstd.float().numpy(), trstd.float().numpy(), rtol=2 ** -21)


def test_vmap_and_forward_mode():
    xs = ember.randn(3, 4, 8).bfloat16()
    w = ember.randn(8).bfloat16()
    out = ember.vmap(lambda t: layer_norm_low(t, w, w, 1, 1e-5))(xs)
    for i in range(3):
        assert ember.equal(out[i], layer_norm_low(xs[i], w, w, 1, 1e-5))
    # vmap of the backward runs the kernel once per batch element
    grads = ember.vmap(ember.func.grad(
        lambda t: layer_norm_low(t, w, w, 1, 1e-5).float().square().sum()))(xs)
    for i in range(3):
        want = ember.func.grad(lambda t: layer_norm_low(t, w, w, 1, 1e-5).float().square()
                               .sum())(xs[i])
        assert ember.equal(grads[i], want)
    # forward mode: the generic rule in bfloat16 ops, a few bfloat16 ulps from torch's
    tx = ember.randn(4, 8).bfloat16()
    got = ember.func.jvp(lambda t: layer_norm_low(t, w, w, 1, 1e-5), (xs[0],), (tx,))[1]
    tw = torch.tensor(w.float().numpy()).bfloat16()
    want = torch.func.jvp(lambda t: torch.nn.functional.layer_norm(t, (8,), tw, tw),
                          (torch.tensor(xs[0].float().numpy()).bfloat16(),),
                          (torch.tensor(tx.float().numpy()).bfloat16(),))[1]
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=0,
                               atol=0.03 * float(want.float().abs().max()))
