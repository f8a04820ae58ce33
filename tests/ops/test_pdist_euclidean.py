"""ops/pdist_euclidean.py: pdist for p = 2 as one node. Its forward is the composite's bits
(vector_norm of the row differences); its gradient, given the same distances, is PyTorch's
bit for bit (float32 and float64, zero distances, NaN and inf); the node is PyTorch's, keeps
the input (an in-place write refuses backward), and create_graph still differentiates."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
from ember import native
from ember.ops import pdist_euclidean as P


def _inputs(dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((23, 37)).astype(dtype)
    x[7] = x[3]  # a zero distance
    yield x
    y = x.copy()
    y[1, 2], y[4, 0], y[5, 5] = np.nan, np.inf, -np.inf
    yield y
    yield rng.standard_normal((2, 1)).astype(dtype)
    yield rng.standard_normal((12, 1)).astype(dtype)  # (one column: still in pair order)
    yield np.ascontiguousarray(x.T).T  # (not contiguous: read through its strides)


@pytest.mark.parametrize("mode", ["numpy", "native"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_gradient_is_pytorchs_bits_and_forward_the_composites(dtype, mode):
    if mode == "native" and not native.available():
        pytest.skip("native kernels unavailable")
    with native.use(mode):
        for x in _inputs(dtype):
            t = torch.tensor(x, requires_grad=True)
            dist = torch.pdist(t)
            g = np.random.default_rng(1).standard_normal(dist.shape[0]).astype(dtype)
            (want,) = torch.autograd.grad(dist, t, torch.tensor(g))
            got = P.backward(x, g, dist.detach().numpy())
            np.testing.assert_array_equal(got, want.numpy())
            e = ember.tensor(x, requires_grad=True)
            out = ember.pdist(e)
            assert type(out.grad_fn).__name__ == "PdistBackward0"
            with ember.no_grad():
                ref = P.composite(ember.tensor(x))
            np.testing.assert_array_equal(out.detach().numpy(), ref.numpy())
            np.testing.assert_array_equal(ember.pdist(ember.tensor(x)).numpy(), ref.numpy())
            out.backward(ember.tensor(g))
            np.testing.assert_array_equal(e.grad.numpy(), P.backward(x, g, ref.numpy()))
            # (against torch's own forward too: its distances differ by an ulp or so)
            np.testing.assert_allclose(e.grad.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_forward_by_blocks_is_the_composites_bits():
    """Larger inputs reduce their differences a block of pairs at a time (and through the
    native reduction where it is on): each norm is still the composite's."""
    rng = np.random.default_rng(5)
    for shape in ((70, 300), (3, 40000), (150, 2)):
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal(shape).astype(dtype)
            with ember.no_grad():
                want = P.composite(ember.tensor(x)).numpy()
            np.testing.assert_array_equal(ember.pdist(ember.tensor(x)).numpy(), want)


def test_edges_inplace_and_double_backward():
    for shape in ((1, 4), (0, 3), (3, 0)):  # (the composite: no pair, or no coordinate)
        t, e = torch.ones(shape, requires_grad=True), ember.ones(shape, requires_grad=True)
        assert tuple(ember.pdist(e).shape) == tuple(torch.pdist(t).shape)
    e = ember.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    x = e * 1
    out = ember.pdist(x)
    with ember.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    # create_graph: the composite's gradient, differentiable again (finite differences)
    a = np.random.default_rng(2).standard_normal((5, 3))
    xe = ember.tensor(a, requires_grad=True)
    (gx,) = ember.autograd.grad(ember.pdist(xe).pow(2).sum(), xe, create_graph=True)
    (gg,) = ember.autograd.grad(gx.pow(2).sum(), xe)
    xt = torch.tensor(a, requires_grad=True)
    # (torch's pdist has no double backward: the same function through cdist's rows)
    i, j = torch.triu_indices(5, 5, 1)
    (gt,) = torch.autograd.grad((xt[i] - xt[j]).norm(dim=-1).pow(2).sum(), xt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.pow(2).sum(), xt)
    np.testing.assert_allclose(gx.detach().numpy(), gt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), ggt.numpy(), rtol=1e-10)
