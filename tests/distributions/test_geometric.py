"""Geometric against torch.distributions.Geometric: probs / logits, statistics, log_prob on
a grid (probs = 1 included), entropy, gradients, samples draw for draw, errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember.distributions import Geometric

from helpers import assert_same, check_dist, rand_array

P = rand_array((2, 3), np.float64, low=0.05, high=0.95)
LOGITS = rand_array((2, 3), np.float64, seed=1)
COUNTS = np.arange(0, 12, dtype=np.float64).reshape(-1, 1, 1)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = P if param == "probs" else LOGITS
    check_dist(lambda D, x: D.Geometric(**{param: x}),
               ["mean", "mode", "variance", "entropy", "probs", "logits",
                ("log_prob", COUNTS), ("sample", (5,))], arr)


def test_certain_success():
    for L in (ember, torch):
        d = L.distributions.Geometric(L.tensor([1.0, 1.0]))
        assert d.log_prob(L.tensor([0.0, 2.0])).tolist() == [0.0, -float("inf")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_reproduces_torch_stream(dtype):
    for L in (ember, torch):
        L.manual_seed(9)
    p = np.array([1e-6, 0.01, 0.3, 0.999])
    s = Geometric(ember.tensor(p, dtype=getattr(ember, dtype))).sample((50,))
    t = torch.distributions.Geometric(torch.tensor(p, dtype=getattr(torch, dtype))).sample(
        (50,))
    # NOTE: the uniforms are torch's bit for bit, but ember's float32 log is up to 3 ulp from
    # torch's vectorised one, so the floor of a huge float32 ratio can land one apart
    exact = dtype == "float64"
    assert_same(s, t, rtol=0 if exact else 1e-6, atol=0)
    assert_same(ember.rand(2), torch.rand(2), rtol=0, atol=0)


def test_expand_and_repr():
    d = Geometric(logits=ember.zeros(3)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.logits.shape == (2, 3) and d.sample().shape == (2, 3)
    assert repr(Geometric(0.25)) == repr(torch.distributions.Geometric(0.25))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Geometric(L.tensor([0.5, 0.0])),
    lambda L: L.distributions.Geometric(L.tensor([0.5, 1.5])),
    lambda L: L.distributions.Geometric(L.tensor([0.5])).log_prob(L.tensor([-1.0])),
    lambda L: L.distributions.Geometric(),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
