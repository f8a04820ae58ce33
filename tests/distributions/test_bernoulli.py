"""Bernoulli against torch.distributions.Bernoulli, parameterised by probs and by logits."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import Bernoulli

from helpers import assert_same, check_dist, rand_array

P = rand_array((2, 3), np.float64, low=0.05, high=0.95)
LOGITS = rand_array((2, 3), np.float64, seed=1)
VALUE = (rand_array((4, 2, 3), np.float64, seed=2) > 0).astype(np.float64)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = P if param == "probs" else LOGITS
    make = lambda D, x: D.Bernoulli(**{param: x})  # noqa: E731
    check_dist(make, ["mean", "variance", "stddev", "entropy", "probs", "logits",
                      ("log_prob", VALUE), "enumerate_support", "param_shape"], arr)


def test_mode_marks_the_tie():
    p = np.array([0.2, 0.5, 0.8])
    check_dist(lambda D, x: D.Bernoulli(x), ["mode"], p)


def test_sample_reproduces_torch_stream():
    for L in (ember, torch):
        L.manual_seed(3)
    s = Bernoulli(ember.tensor(P)).sample((50,))
    t = torch.distributions.Bernoulli(torch.tensor(P)).sample((50,))
    assert_same(s, t)
    assert s.shape == (50, 2, 3) and Bernoulli(0.3).sample().shape == ()


def test_expand():
    d = Bernoulli(logits=ember.zeros(3)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.logits.shape == (2, 3)
