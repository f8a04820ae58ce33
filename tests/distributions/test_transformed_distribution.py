"""TransformedDistribution against torch's: shapes, support, samples from the same seed,
log_prob / cdf / icdf with gradients, and the usual squashed-Gaussian and log-normal uses."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import Normal, TransformedDistribution

from helpers import assert_same, check_dist, rand_array

LOC = rand_array((3,), np.float32)
SCALE = rand_array((3,), np.float32, low=0.5, high=1.5, seed=1)
UNIT = rand_array((2, 3), np.float32, low=0.05, high=0.95, seed=2)
POS = rand_array((2, 3), np.float32, low=0.1, high=4.0, seed=3)


def _log_normal(D, loc, scale):
    return D.TransformedDistribution(D.Normal(loc, scale), [D.ExpTransform()])


def _squashed(D, loc, scale):
    # a tanh-squashed Gaussian moved onto (0, 1): a policy head's action distribution
    return D.TransformedDistribution(D.Normal(loc, scale), [
        D.TanhTransform(), D.AffineTransform(0.5, 0.5)])


def _logistic_decreasing(D, loc, scale):
    return D.TransformedDistribution(D.Normal(loc, scale), [
        D.AffineTransform(0.0, -1.0), D.SigmoidTransform()])


def test_log_normal_scores_and_samples():
    check_dist(_log_normal, [("log_prob", POS), ("cdf", POS), ("rsample", (4,))], LOC, SCALE)
    check_dist(_log_normal, [("icdf", UNIT)], LOC, SCALE, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", [_squashed, _logistic_decreasing])
def test_squashed_distributions_match_torch(make):
    check_dist(make, [("log_prob", UNIT), ("rsample", (2,)), ("sample", (5,))], LOC, SCALE,
               rtol=1e-5, atol=1e-5)
    check_dist(make, [("cdf", UNIT)], LOC, SCALE, rtol=1e-5, atol=1e-5)


def test_shapes_support_and_expand():
    base = Normal(ember.zeros(2, 3), ember.ones(2, 3))
    T = ember.distributions
    d = TransformedDistribution(base, T.SigmoidTransform())
    assert d.batch_shape == (2, 3) and d.event_shape == ()
    assert repr(d.support) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert d.has_rsample and d.sample((4,)).shape == (4, 2, 3)
    e = d.expand((5, 2, 3))
    assert e.batch_shape == (5, 2, 3) and e.rsample().shape == (5, 2, 3)
    # an event-dim transform moves a batch dim into the event, as in torch
    v = TransformedDistribution(base, T.AffineTransform(ember.zeros(3), 2.0, event_dim=1))
    tv = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.zeros(2, 3), torch.ones(2, 3)),
        torch.distributions.AffineTransform(torch.zeros(3), 2.0, event_dim=1))
    assert (v.batch_shape, v.event_shape) == (tv.batch_shape, tv.event_shape) == ((2,), (3,))
    x = rand_array((2, 3), np.float32)
    assert_same(v.log_prob(ember.tensor(x)), tv.log_prob(torch.tensor(x)))


def test_errors_match_torch():
    base = Normal(0.0, 1.0)
    with pytest.raises(ValueError, match="transforms must be a Transform or a list"):
        TransformedDistribution(base, [1])
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        TransformedDistribution(base, (ember.distributions.ExpTransform(),))
    d = TransformedDistribution(base, ember.distributions.ExpTransform(), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        d.log_prob(ember.tensor(-1.0))
