"""Poisson against torch.distributions.Poisson: statistics, log_prob on a grid of counts
(rate 0 included), gradients, samples draw for draw after the same seed, expand and
validation errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember.distributions import Poisson

from helpers import assert_same, check_dist, rand_array

RATE = rand_array((2, 3), np.float64, low=0.1, high=30.0)
COUNTS = np.arange(0, 40, 3, dtype=np.float64).reshape(-1, 1, 1)


def test_statistics_scores_and_gradients():
    check_dist(lambda D, r: D.Poisson(r), ["mean", "mode", "variance", "stddev",
                                           ("log_prob", COUNTS), ("sample", (4,))], RATE)


def test_rate_zero_scores_zero_counts():
    for L in (ember, torch):
        d = L.distributions.Poisson(L.tensor([0.0, 0.0, 2.0]))
        out = d.log_prob(L.tensor([0.0, 1.0, 0.0]))
        assert out.tolist()[:2] == [0.0, -float("inf")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 5])
def test_sample_reproduces_torch_stream(dtype, seed):
    rate = np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 1e4])
    for L in (ember, torch):
        L.manual_seed(seed)
    s = Poisson(ember.tensor(rate, dtype=getattr(ember, dtype))).sample((20,))
    t = torch.distributions.Poisson(torch.tensor(rate, dtype=getattr(torch, dtype))).sample(
        (20,))
    assert_same(s, t, rtol=0, atol=0)
    assert_same(ember.rand(3), torch.rand(3), rtol=0, atol=0)


def test_expand_scalar_and_repr():
    for L in (ember, torch):
        d = L.distributions.Poisson(2.0)
        assert d.batch_shape == () and d.expand((3,)).sample((2,)).shape == (2, 3)
    assert repr(Poisson(2.0)) == repr(torch.distributions.Poisson(2.0))
    with pytest.raises(NotImplementedError):
        Poisson(2.0).entropy()


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Poisson(L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Poisson(L.tensor([1.0])).log_prob(L.tensor([1.5])),
    lambda L: L.distributions.Poisson(L.tensor([1.0])).log_prob(L.tensor([-1.0])),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
