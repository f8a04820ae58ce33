"""The layer functions PyTorch exposes at the top level under their ATen signatures
(`torch.embedding(weight, indices)`, `torch.dropout(input, p, train)`, ...) against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, rand_array, same_message


def _both(call):
    return call(ember), call(torch)


def test_embedding_takes_the_weight_first():
    w = rand_array((6, 3))

    def call(L):
        weight = L.tensor(w, requires_grad=True)
        out = L.embedding(weight, L.tensor([[0, 5], [2, 2]]), 2, True)  # padding 2, by freq
        out.sum().backward()
        return out, weight.grad
    (oe, ge), (ot, gt) = _both(call)
    assert_same(oe, ot)
    assert_same(ge, gt)


def test_embedding_renorm_returns_its_input():
    w = np.array([[3.0, 4.0], [0.5, 0.5]], dtype=np.float32)
    (we, wt) = _both(lambda L: L.embedding_renorm_(L.tensor(w), L.tensor([0, 1]), 1.0, 2.0))
    np.testing.assert_allclose(we.numpy(), wt.numpy(), rtol=1e-6)  # (a norm's last bit)


def test_norms_distances_and_bilinear():
    x, y = rand_array((4, 6), seed=1), rand_array((4, 6), seed=2)
    w = rand_array((3, 6, 6), seed=3)
    # (float32 reductions and a BLAS product: their last bits depend on the CPU's kernels)
    for call in (lambda L: L.layer_norm(L.tensor(x), [6], None, None, 1e-5, False),
                 lambda L: L.group_norm(L.tensor(x), 2, None, None, 1e-5, True),
                 lambda L: L.rms_norm(L.tensor(x), [6]),
                 lambda L: L.cosine_similarity(L.tensor(x), L.tensor(y)),
                 lambda L: L.pairwise_distance(L.tensor(x), L.tensor(y), 1.0),
                 lambda L: L.bilinear(L.tensor(x), L.tensor(y), L.tensor(w))):
        e, t = _both(call)
        assert_same(e, t, rtol=1e-5, atol=1e-6)


def test_dropout_draws_as_torch_and_needs_train():
    x = rand_array((50,))

    def call(L):
        L.manual_seed(3)
        return L.dropout(L.tensor(x), 0.3, True)
    assert_same(*_both(call))
    assert_same(*_both(lambda L: L.dropout(L.tensor(x), 0.3, False)))
    with pytest.raises(TypeError):
        ember.dropout(ember.tensor(x), 0.3)


def test_bilinear_checks_as_functional():
    same_message(lambda L: L.bilinear(L.ones(2, 3), L.ones(2, 4), L.ones(5, 3, 3)))
