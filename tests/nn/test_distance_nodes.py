"""F.pairwise_distance against PyTorch: the graph node users see as grad_fn (PyTorch runs
at::norm, NormBackward1), the values and the gradients, over p and broadcast shapes."""

import math

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF


@pytest.mark.parametrize("p", [2.0, 1.0, math.inf, 0.5], ids=str)
@pytest.mark.parametrize("shapes,keepdim", [(((4, 3), (4, 3)), False), (((4, 3), (3,)), True)],
                         ids=str)
def test_pairwise_distance_node_and_gradient(p, shapes, keepdim):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    rt = torch.nn.functional.pairwise_distance(ta, tb, p=p, keepdim=keepdim)
    re = EF.pairwise_distance(ea, eb, p=p, keepdim=keepdim)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__ == "NormBackward1"
    rt.sum().backward()
    re.sum().backward()
    # (a vectorised reduction and pow: a few float32 ulps, not bit for bit)
    np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_pairwise_distance_without_grad_has_no_node():
    out = EF.pairwise_distance(ember.ones(2, 3), ember.zeros(2, 3))
    assert out.grad_fn is None
    ref = torch.nn.functional.pairwise_distance(torch.ones(2, 3), torch.zeros(2, 3))
    assert ref.grad_fn is None
