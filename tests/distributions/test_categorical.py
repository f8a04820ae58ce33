"""Categorical against torch.distributions.Categorical: probs / logits, log_prob of batched
values, entropy, gradients, and samples drawn from the same seeded multinomial stream."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import Categorical

from helpers import assert_same, check_dist, rand_array

PROBS = rand_array((2, 5), np.float64, low=0.1, high=1.0)
LOGITS = rand_array((2, 5), np.float64, seed=1)
VALUE = np.array([[0, 4], [3, 1], [2, 2]])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = PROBS if param == "probs" else LOGITS
    make = lambda D, x: D.Categorical(**{param: x})  # noqa: E731
    check_dist(make, ["probs", "logits", "entropy", "mean", "variance", "mode",
                      ("log_prob", VALUE), "enumerate_support", "param_shape"], arr)


def test_entropy_with_a_zero_probability():
    p = np.array([0.0, 0.3, 0.7])
    check_dist(lambda D, x: D.Categorical(x), ["entropy"], p)


@pytest.mark.parametrize("shape", [(), (7,), (3, 4)], ids=str)
def test_sample_reproduces_torch_stream(shape):
    for L in (ember, torch):
        L.manual_seed(5)
    s = Categorical(logits=ember.tensor(LOGITS)).sample(shape)
    t = torch.distributions.Categorical(logits=torch.tensor(LOGITS)).sample(shape)
    assert_same(s, t)


def test_sample_frequencies():
    ember.manual_seed(0)
    p = np.array([0.1, 0.2, 0.7])
    s = Categorical(ember.tensor(p)).sample((4000,)).numpy()
    np.testing.assert_allclose(np.bincount(s, minlength=3) / 4000, p, atol=0.03)


def test_expand():
    d = Categorical(logits=ember.zeros(4)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.sample((5,)).shape == (5, 2, 3)
