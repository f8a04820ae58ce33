"""VonMises against torch.distributions.VonMises: log_prob and the circular variance with
gradients (for small and large concentrations, on both sides of the Bessel approximation's
switch at 3.75), draws from the same seed, expand, repr and errors.

Draws come from the same rejection rounds as torch's (three double uniforms per element per
round, bit-identical). A float32 draw equals torch's. In float64 torch's cos is its
vectorised (SLEEF) kernel, 1 ulp from ember's on ~0.2% of inputs, and acos near +-1
magnifies that, so float64 draws are compared to 1e-12 absolute (angles lie in [-pi, pi));
an accept test could flip only for a uniform within an ulp of its threshold."""

import math

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, raises_like_torch, seeded_samples
from ember.distributions import VonMises

from helpers import assert_same, check_dist, rand_array

LOC = rand_array((3, 4), np.float64, low=-4, high=4)
CONC = np.array([1e-3, 0.5, 3.7, 3.8, 10.0, 60.0, 2.0, 1.0, 0.1, 5.0, 25.0, 3.75]).reshape(3, 4)
VALUE = rand_array((2, 3, 4), np.float64, low=-7, high=7, seed=2)


def _make(D, loc, conc):
    return D.VonMises(loc, conc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {}
    check_dist(_make, ["mean", "mode", "variance", "stddev", ("log_prob", VALUE.astype(dtype))],
               LOC.astype(dtype), CONC.astype(dtype), **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1, 5])
def test_draws_follow_torchs_stream(dtype, seed):
    loc = np.array([-3.0, 0.0, 1.0, 3.1, 2.0], dtype)
    conc = np.array([1e-6, 0.3, 2.0, 50.0, 4.0], dtype)
    e, t = seeded_samples(_make, (loc, conc), (300,), seed)
    assert_same(e, t, rtol=0, atol=0 if dtype == "float32" else 1e-12)
    assert e.min().item() >= -math.pi and e.max().item() < math.pi
    assert_in_step()  # (the same number of rounds)


def test_sample_statistics():
    ember.manual_seed(0)
    x = VonMises(ember.tensor([0.5]), ember.tensor([4.0])).sample((20000,))
    # the circular mean and variance: standard errors ~0.004
    c, s = x.cos().mean().item(), x.sin().mean().item()
    assert abs(math.atan2(s, c) - 0.5) < 0.02
    expected = VonMises(ember.tensor([0.5]), ember.tensor([4.0])).variance.item()
    assert abs(1 - math.hypot(c, s) - expected) < 0.01


def test_shapes_expand_and_repr():
    d = VonMises(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert not d.has_rsample and d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is VonMises and e.batch_shape == (5, 3, 4) and e.sample().shape == (5, 3, 4)
    assert VonMises(0.0, 1.0).batch_shape == ()
    assert repr(VonMises(0.5, 2.0)) == repr(torch.distributions.VonMises(0.5, 2.0))
    s = VonMises(ember.tensor([0.0]), ember.tensor([1.0])).sample((2,))
    assert s.dtype is ember.float32 and not s.requires_grad


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.VonMises(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])),
    lambda L: L.distributions.VonMises(float("nan"), 1.0),
    lambda L: L.distributions.VonMises(0.0, 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.VonMises(L.zeros(3), 1.0).log_prob(L.zeros(4)),
], ids=["concentration", "loc", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)
