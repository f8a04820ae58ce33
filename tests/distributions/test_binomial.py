"""Binomial against torch.distributions.Binomial: probs / logits, statistics, log_prob on
the whole support (edges included), entropy and enumerate_support, gradients, samples draw
for draw (inversion and BTRS, float32 and float64), errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember.distributions import Binomial

from helpers import assert_same, check_dist, rand_array

P = rand_array((2, 3), np.float64, low=0.05, high=0.95)
LOGITS = rand_array((2, 3), np.float64, seed=1)
N = np.array(7.0)
COUNTS = np.arange(0, 8, dtype=np.float64).reshape(-1, 1, 1)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = P if param == "probs" else LOGITS
    check_dist(lambda D, x: D.Binomial(7, **{param: x}),
               ["mean", "mode", "variance", "entropy", "probs", "logits", "param_shape",
                ("log_prob", COUNTS), "enumerate_support", ("enumerate_support", False)], arr)


def test_tensor_total_count_and_edges():
    counts = np.array([[0.0], [3.0], [5.0]])
    check_dist(lambda D, n, p: D.Binomial(n, p), ["mean", ("log_prob", counts)],
               np.array([5.0, 5.0, 5.0]), np.array([0.0, 0.5, 1.0]))
    check_dist(lambda D, n, x: D.Binomial(n, logits=x), ["mode", ("log_prob", counts)],
               np.array([5.0, 6.0, 9.0]), LOGITS[0])


def test_inhomogeneous_counts_cannot_enumerate():
    for L in (ember, torch):
        d = L.distributions.Binomial(L.tensor([3.0, 4.0]), L.tensor([0.2, 0.9]))
        with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
            d.entropy()
        with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
            d.enumerate_support()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 3])
def test_sample_reproduces_torch_stream(dtype, seed):
    # inversion (count * p < 10), BTRS, p above 1/2 (sampled as count - draw), the edges
    n = np.array([0, 1, 5, 10, 20, 37, 100, 1000, 1e5, 3e6, 7, 50, 200, 12])
    p = np.array([0.3, 0.5, 0.02, 0.9, 0.5, 0.35, 0.01, 0.7, 0.2, 0.999, 0.0, 1.0, 0.55, 1e-5])
    for L in (ember, torch):
        L.manual_seed(seed)
    s = Binomial(ember.tensor(n, dtype=getattr(ember, dtype)),
                 ember.tensor(p, dtype=getattr(ember, dtype))).sample((20,))
    t = torch.distributions.Binomial(torch.tensor(n, dtype=getattr(torch, dtype)),
                                     torch.tensor(p, dtype=getattr(torch, dtype))).sample((20,))
    assert_same(s, t, rtol=0, atol=0)
    assert_same(ember.rand(2), torch.rand(2), rtol=0, atol=0)


def test_sample_broadcasts_and_has_no_gradient():
    p = ember.tensor([0.2, 0.7], requires_grad=True)
    s = Binomial(ember.tensor([[3.0], [40.0]]), p).sample((4,))
    assert s.shape == (4, 2, 2) and not s.requires_grad


def test_expand_support_and_repr():
    d = Binomial(ember.tensor(4.0), logits=ember.zeros(3)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.total_count.shape == (2, 3)
    t = torch.distributions.Binomial(3, torch.ones(3) * 0.2)
    assert repr(Binomial(3, ember.ones(3) * 0.2)) == repr(t).replace("torch.", "ember.")
    assert Binomial(3, ember.ones(3) * 0.2).support.upper_bound.tolist() == [3.0] * 3


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Binomial(L.tensor([2.5]), L.tensor([0.5])),
    lambda L: L.distributions.Binomial(L.tensor([-1.0]), L.tensor([0.5])),
    lambda L: L.distributions.Binomial(3, L.tensor([1.5])),
    lambda L: L.distributions.Binomial(3, L.tensor([0.5])).log_prob(L.tensor([4.0])),
    lambda L: L.distributions.Binomial(3),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
