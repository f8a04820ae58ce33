"""Weibull against torch.distributions.Weibull: statistics and scores with gradients (edge
values included), draws from the same seed, expand, repr and validation errors.

A draw is scale * E ** (1 / concentration) for an `exponential_` draw E (bit-identical to
torch's). torch's pow of two tensors is its vectorised (SLEEF) kernel, 1 ulp from ember's
in float32 and float64 alike (measured on 1e5 points), and the product with the scale
rounds once more: 2 ulps."""

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
from ember.distributions import Weibull

from helpers import assert_ulp, check_dist, rand_array

SCALE = rand_array((3, 4), np.float64, low=0.5, high=2.0)
CONC = np.array([0.5, 1.0, 2.5, 6.0])
VALUE = rand_array((2, 3, 4), np.float64, low=0.05, high=4.0, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)
POW_ULPS = "torch's vectorised (SLEEF) pow against ember's (1 ulp), then the scale's product"


def _make(D, scale, conc):
    return D.Weibull(scale, conc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    scale, conc = SCALE.astype(dtype), CONC.astype(dtype)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-9}
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       "concentration_reciprocal", ("log_prob", VALUE.astype(dtype)),
                       ("cdf", VALUE.astype(dtype)), ("icdf", PROB.astype(dtype))],
               scale, conc, **tol)


def test_edge_values():
    check_dist(_make, [("log_prob", np.array([1e-300, 1.0, 30.0])),
                       ("cdf", np.array([1e-300, 1.0, 30.0, np.inf])),
                       ("icdf", np.array([1e-12, 0.5, 1 - 1e-12]))],
               np.float64(2.0), np.float64(1.5), rtol=1e-9)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], SCALE, CONC, rtol=1e-15,
               atol=0, grad_rtol=1e-13, grad_atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream(dtype, seed):
    scale = np.array([0.1, 1.0, 2.5, 3.0], dtype)
    conc = np.array([0.3, 1.0, 2.0, 8.0], dtype)
    assert_ulp(*seeded_samples(_make, (scale, conc), (500,), seed), 2, POW_ULPS)
    assert_in_step()


def test_shapes_expand_and_repr():
    d = Weibull(ember.ones(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is Weibull and e.batch_shape == (5, 3, 4)
    assert e.concentration_reciprocal.shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert repr(Weibull(0.5, 2.0)) == repr(torch.distributions.Weibull(0.5, 2.0))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Weibull(L.tensor([1.0, -1.0]), L.tensor([1.0, 1.0])),
    lambda L: L.distributions.Weibull(1.0, 0.0),
    lambda L: L.distributions.Weibull(1.0, 2.0).log_prob(L.tensor(-1.0)),
    lambda L: L.distributions.Weibull(L.ones(3), 1.0).log_prob(L.ones(4)),
], ids=["scale", "concentration", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)
