"""OneHotCategorical (and its straight-through variant) against torch: statistics, scores
of one-hot values, gradients, seeded samples, enumerate_support, expand and errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember.distributions import OneHotCategorical, OneHotCategoricalStraightThrough

from helpers import assert_same, check_dist, rand_array

PROBS = rand_array((2, 4), np.float64, low=0.1, high=1.0)
LOGITS = rand_array((2, 4), np.float64, seed=1)
VALUE = np.eye(4)[[[0, 3], [2, 1], [1, 1]]]  # (3, 2, 4) one-hot


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = PROBS if param == "probs" else LOGITS
    make = lambda D, x: D.OneHotCategorical(**{param: x})  # noqa: E731
    check_dist(make, ["probs", "logits", "mean", "variance", "mode", "entropy",
                      ("log_prob", VALUE), "enumerate_support", "param_shape",
                      ("sample", (3,)), ("enumerate_support", False)], arr)


@pytest.mark.parametrize("shape", [(), (7,), (3, 2)], ids=str)
def test_sample_reproduces_torch_stream(shape):
    for L in (ember, torch):
        L.manual_seed(11)
    s = OneHotCategorical(logits=ember.tensor(LOGITS)).sample(shape)
    t = torch.distributions.OneHotCategorical(logits=torch.tensor(LOGITS)).sample(shape)
    assert_same(s, t)
    assert s.shape == tuple(shape) + (2, 4)


def test_straight_through_rsample_carries_gradients():
    check_dist(lambda D, x: D.OneHotCategoricalStraightThrough(logits=x),
               [("rsample", (5,))], LOGITS)
    d = OneHotCategoricalStraightThrough(ember.tensor(PROBS))
    assert d.has_rsample and not OneHotCategorical(ember.tensor(PROBS)).has_rsample


def test_expand_and_shapes():
    d = OneHotCategorical(logits=ember.zeros(4)).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.event_shape == (4,)
    assert d.sample((5,)).shape == (5, 2, 3, 4) and d.logits.shape == (2, 3, 4)
    assert repr(d) == "OneHotCategorical()"


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.OneHotCategorical(L.tensor([0.5, -0.1])),
    lambda L: L.distributions.OneHotCategorical(L.tensor([0.5, 0.5])).log_prob(
        L.tensor([0.5, 0.5])),
    lambda L: L.distributions.OneHotCategorical(L.tensor([0.5, 0.5])).log_prob(
        L.tensor([1.0, 0.0, 0.0])),
    lambda L: L.distributions.OneHotCategorical(),
], ids=lambda f: None)
def test_invalid_arguments(call):
    same_message(call)


def same_message(call):
    # (test_distribution.py's check: the same type and message, up to the library's name)
    raises_like_torch(call)
