"""NegativeBinomial against torch.distributions.NegativeBinomial: probs / logits,
statistics, log_prob on a grid (total_count 0 included), gradients, samples draw for draw
(gamma rates, then Poisson counts), expand and errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, raises_like_torch, seeded_samples
from ember.distributions import NegativeBinomial

from helpers import assert_same, check_dist, rand_array

P = rand_array((2, 3), np.float64, low=0.05, high=0.9)
LOGITS = rand_array((2, 3), np.float64, seed=1)
N = rand_array((2, 3), np.float64, low=0.5, high=8.0, seed=2)
COUNTS = np.arange(0, 20, 2, dtype=np.float64).reshape(-1, 1, 1)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = P if param == "probs" else LOGITS
    check_dist(lambda D, n, x: D.NegativeBinomial(n, **{param: x}),
               ["mean", "mode", "variance", "probs", "logits", "param_shape",
                ("log_prob", COUNTS)], N, arr)


def test_zero_total_count():
    check_dist(lambda D, x: D.NegativeBinomial(0.0, x), [("log_prob", COUNTS[:3])], P)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_reproduces_torch_stream(dtype):
    assert_same(*seeded_samples(lambda D, n, p: D.NegativeBinomial(n, p),
                                (N.astype(dtype), P.astype(dtype)), (7,), seed=2),
                rtol=0, atol=0)
    assert_in_step(n=2)


def test_expand_and_repr():
    d = NegativeBinomial(ember.tensor(3.0), logits=ember.zeros(3)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.sample((4,)).shape == (4, 2, 3)
    assert repr(NegativeBinomial(2.0, 0.25)) == repr(
        torch.distributions.NegativeBinomial(2.0, 0.25))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.NegativeBinomial(L.tensor([-1.0]), L.tensor([0.5])),
    lambda L: L.distributions.NegativeBinomial(2.0, L.tensor([1.0])),
    lambda L: L.distributions.NegativeBinomial(2.0, L.tensor([0.5])).log_prob(
        L.tensor([0.5])),
    lambda L: L.distributions.NegativeBinomial(2.0),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
