"""The autograd graph ember.linalg.matrix_norm builds, against PyTorch: the node that
produced the result (users print grad_fn) and the gradient through it, for every order."""

import math

import numpy as np
import pytest
import torch

import ember
from ember import linalg as L

ORDS = ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]


@pytest.mark.parametrize("ord", ORDS, ids=str)
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)],
                         ids=str)
def test_matrix_norm_grad_fn_and_gradient(ord, dim, keepdim):
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    t = torch.tensor(a, requires_grad=True)
    e = ember.tensor(a, requires_grad=True)
    rt = torch.linalg.matrix_norm(t, ord, dim, keepdim)
    re = L.matrix_norm(e, ord, dim, keepdim)
    assert type(re.grad_fn).__name__ == type(rt.grad_fn).__name__
    assert tuple(re.shape) == tuple(rt.shape)
    rt.sum().backward()
    re.sum().backward()
    # (the SVD-based orders and the sums run through LAPACK and vectorised reductions:
    # compare to a few float32 ulps, not bit for bit)
    np.testing.assert_allclose(re.detach().numpy(), rt.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
