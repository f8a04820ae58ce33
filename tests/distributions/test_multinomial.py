"""Multinomial against torch.distributions.Multinomial: statistics, log_prob of count
vectors (zero-probability classes included), entropy, gradients, samples draw for draw (the
Categorical draws counted per class), expand and errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    assert_in_step,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import Multinomial

from helpers import assert_same, check_dist, rand_array

PROBS = rand_array((2, 3), np.float64, low=0.1, high=1.0)
LOGITS = rand_array((2, 3), np.float64, seed=1)
VALUE = np.array([[[2.0, 1.0, 1.0], [0.0, 0.0, 4.0]], [[4.0, 0.0, 0.0], [1.0, 2.0, 1.0]]])


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_statistics_scores_and_gradients(param):
    arr = PROBS if param == "probs" else LOGITS
    check_dist(lambda D, x: D.Multinomial(4, **{param: x}),
               ["mean", "variance", "entropy", "probs", "logits", "param_shape",
                ("log_prob", VALUE), ("sample", (3,))], arr)


def test_zero_probability_class():
    check_dist(lambda D, x: D.Multinomial(4, x), [("log_prob", VALUE), "entropy"],
               np.array([0.5, 0.0, 0.5]))
    check_dist(lambda D: D.Multinomial(4, logits=(torch if D is torch.distributions else
                                                   ember).tensor([0.0, -float("inf"), 1.0])),
               [("log_prob", VALUE[:, :1] * np.array([1.0, 0.0, 1.0]))])


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_sample_reproduces_torch_stream(shape):
    assert_same(*seeded_samples(lambda D, x: D.Multinomial(10, logits=x), (LOGITS,), shape,
                                seed=4), rtol=0, atol=0)
    assert_in_step(n=2)


def test_expand_and_repr():
    d = Multinomial(3, ember.ones(3)).expand((2,))
    assert d.batch_shape == (2,) and d.event_shape == (3,) and d.sample((4,)).shape == (4, 2, 3)
    assert repr(Multinomial(3, ember.ones(3))) == repr(
        torch.distributions.Multinomial(3, torch.ones(3)))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Multinomial(L.tensor(3), L.ones(3)),
    lambda L: L.distributions.Multinomial(3, L.tensor([0.5, -0.5, 1.0])),
    lambda L: L.distributions.Multinomial(3, L.ones(3)).log_prob(L.tensor([2.0, 2.0, 0.0])),
    lambda L: L.distributions.Multinomial(3, L.ones(3)).log_prob(L.tensor([2.0, 1.0])),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
