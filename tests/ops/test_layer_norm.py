"""The fused layer-norm kernels' own derivatives (the public layer_norm is tested with
nn.functional; its forward-mode and vmap rules in tests/core/test_rules_nn.py and against
torch.func in tests/func/test_sweep_nn.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.ops.layer_norm import layer_norm_backward_p
from ember.ops.registry import bind

from helpers import check_grads


def _weighted_sum(outs, seed: int):
    """One number from several outputs, each weighted elementwise at random."""
    r = np.random.default_rng(seed)
    return sum((o * ember.tensor(r.standard_normal(tuple(o.shape)))).sum() for o in outs)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("k", [1, 2])
def test_the_fused_backward_kernel_has_a_gradient_in_each_input(affine, k):
    # forward over reverse (jvp(grad(f))) runs the fused kernel, so it has derivatives
    rng = np.random.default_rng(k)
    shape = (2, 3, 4)
    stat = shape[:3 - k] + (1,) * k
    arrays = [rng.standard_normal(shape), rng.standard_normal(shape),
              rng.uniform(0.5, 2, stat)] + ([rng.standard_normal(shape[3 - k:])] if affine else [])
    check_grads(lambda g, x, r, *w: _weighted_sum(
        bind(layer_norm_backward_p, g, x, r, w[0] if w else None, k=k), k), *arrays)


def test_forward_over_reverse_through_the_fused_kernel_matches_torch():
    import torch

    rng = np.random.default_rng(0)
    x, w, b, tx = (rng.standard_normal(s) for s in ((3, 4), (4,), (4,), (3, 4)))

    def run(m):
        f = lambda a: (m.nn.functional.layer_norm(a, (4,), m.tensor(w), m.tensor(b)) ** 2).sum()  # noqa: E731
        return m.func.jvp(m.func.grad(f), (m.tensor(x),), (m.tensor(tx),))[1].numpy()

    np.testing.assert_allclose(run(ember), run(torch), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape,weight,bias", [
    ((4, 4), (16,), None),      # as many elements, but flat: refused
    ((4, 4), None, (4,)),       # a bias of the last dim only
    ((4,), (1,), None),         # a weight that would broadcast
    ((4,), (1, 4), None),
    ((4,), (4,), (3,)),
    ((4,), (), None),
])
def test_affine_of_another_shape_is_refused_as_torch(shape, weight, bias):
    import torch

    res = []
    for lib in (torch, ember):
        x = lib.zeros(2, 3, 4, 4)
        w = None if weight is None else lib.ones(weight)
        b = None if bias is None else lib.ones(bias)
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.layer_norm(x, shape, w, b)
        res.append(str(info.value))
    assert res[1] == res[0]


def test_affine_of_the_normalised_shape_is_accepted():
    x = ember.randn(2, 3, 4)
    out = ember.nn.functional.layer_norm(x, (3, 4), ember.ones(3, 4), ember.zeros(3, 4))
    assert out.shape == x.shape
