"""Gamma against torch.distributions.Gamma: statistics and scores with gradients, samples
drawn from the same seeded stream bit for bit, and implicit reparameterised gradients, bit
for bit PyTorch's fitted approximations (tests/distributions/test_implicit_grads.py)."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES
from ember.distributions import Gamma

from helpers import assert_same, check_dist, rand_array

CONC = rand_array((3, 4), np.float32, low=0.2, high=5.0)
RATE = rand_array((4,), np.float32, low=0.5, high=2.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float32, low=0.1, high=4.0, seed=2)
# The implicit gradient itself is PyTorch's bit for bit (test_implicit_grads.py); the
# chain round it (a division by the rate, sums over sample dims) rounds a last bit apart.
IMPLICIT = dict(rtol=0, atol=0, grad_rtol=1e-6, grad_atol=1e-7)


def _make(D, conc, rate):
    return D.Gamma(conc, rate)


def test_statistics_and_scores():
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy", ("log_prob", VALUE)],
               CONC, RATE)
    check_dist(_make, [("cdf", VALUE)], CONC, RATE, grad=False)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    check_dist(_make, [("rsample", shape)], CONC, RATE, **IMPLICIT)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_samples_follow_torchs_stream_for_small_and_large_concentrations(dtype):
    conc = np.array([0.01, 0.3, 0.999, 1.0, 1.7, 12.0, 250.0] * 8, dtype)
    ember.manual_seed(7)
    torch.manual_seed(7)
    s = Gamma(ember.tensor(conc), 1.0).sample((3,))
    t = torch.distributions.Gamma(torch.tensor(conc), 1.0).sample((3,))
    assert_same(s, t, rtol=0, atol=0)
    assert_same(ember.rand(4), torch.rand(4), rtol=0, atol=0)  # (the streams stay in step)


def test_sample_statistics():
    ember.manual_seed(0)
    s = Gamma(ember.tensor([0.5, 4.0]), ember.tensor([2.0, 0.5])).sample((20000,))
    # means 0.25 and 8, standard errors ~0.0025 and ~0.04: 5 standard errors of slack
    np.testing.assert_allclose(s.mean(0).numpy(), [0.25, 8.0], rtol=0.03)


def test_shapes_expand_and_validation():
    d = Gamma(ember.ones(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    assert d.expand((5, 3, 4)).rsample().shape == (5, 3, 4)
    assert Gamma(1.0, 2.0).batch_shape == ()
    with pytest.raises(ValueError, match="concentration"):
        Gamma(ember.tensor([-1.0]), 1.0, validate_args=True)
    with pytest.raises(ValueError, match="support"):
        Gamma(1.0, 1.0, validate_args=True).log_prob(ember.tensor(-0.5))
