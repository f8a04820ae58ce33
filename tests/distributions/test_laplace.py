"""Laplace against torch.distributions.Laplace: statistics and scores with gradients (edge
values included), draws from the same seed, expand, repr and validation errors.

Draws are `uniform_(eps - 1, 1)` (bit-identical to torch's) pushed through log1p. torch's
float32 and float64 log1p are its vectorised (SLEEF) kernels and ember's are not, so a draw
may differ from torch's by a few ulps of the log1p term (at most 2 ulps of log1p measured on
1e5 points, so 4 ulps of |loc| + |scale * log1p| after the multiply-add)."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    KL_ARRAYS,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import Laplace

from helpers import assert_ulp, check_dist, rand_array

LOC = rand_array((3, 4), np.float64)
SCALE = rand_array((4,), np.float64, low=0.5, high=2.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float64, low=-4, high=4, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)
LOG1P_ULPS = "torch's vectorised (SLEEF) log1p against ember's libm log1p: <= 2 ulps apart"


def _make(D, loc, scale):
    return D.Laplace(loc, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    loc, scale = LOC.astype(dtype), SCALE.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype)),
                       ("icdf", PROB.astype(dtype))], loc, scale)


def test_edge_values():
    edge = np.array([-np.inf, -50.0, 0.0, 0.5, 50.0, np.inf])
    check_dist(_make, [("cdf", edge), ("log_prob", edge[1:-1])], np.float64(0.5), np.float64(2.0))
    check_dist(_make, [("icdf", np.array([0.0, 1e-300, 0.25, 0.5, 0.75, 1.0]))],
               np.float64(0.5), np.float64(2.0), grad=False)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], LOC, SCALE, rtol=1e-14,
               atol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream(dtype, seed):
    loc = np.array([-3.0, 0.0, 0.5, 100.0], dtype)
    scale = np.array([0.1, 1.0, 2.5, 3.0], dtype)
    e, t = seeded_samples(_make, (loc, scale), (500,), seed)
    assert_ulp(e, t, 4, LOG1P_ULPS, scale=np.abs(loc) + np.abs(t.numpy() - loc))
    assert_in_step()


def test_shapes_expand_and_repr():
    d = Laplace(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert Laplace(0.0, 1.0).batch_shape == ()
    assert repr(Laplace(0.5, 2.0)) == repr(torch.distributions.Laplace(0.5, 2.0))
    assert Laplace.has_rsample and repr(Laplace.support) == "Real()"


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Laplace(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Laplace(float("nan"), 1.0),
    lambda L: L.distributions.Laplace(0.0, 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.Laplace(L.zeros(3), 1.0).log_prob(L.zeros(4)),
], ids=["scale", "loc", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


# KL(p || q) for the pairs torch registers with a Laplace (a, b in (-2, 2) make them)
KL_PAIRS = {
    "laplace-laplace": lambda L, a, b: (L.Laplace(a, b.exp()), L.Laplace(b, a.exp())),
    "laplace-normal": lambda L, a, b: (L.Laplace(a, b.exp()), L.Normal(b, a.exp())),
    "normal-laplace": lambda L, a, b: (L.Normal(a, b.exp()), L.Laplace(b, a.exp())),
    "laplace-beta": lambda L, a, b: (L.Laplace(a, b.exp()), L.Beta(a.exp(), b.exp())),
    "laplace-exponential": lambda L, a, b: (L.Laplace(a, b.exp()), L.Exponential(a.exp())),
    "laplace-gamma": lambda L, a, b: (L.Laplace(a, b.exp()), L.Gamma(a.exp(), b.exp())),
    "laplace-pareto": lambda L, a, b: (L.Laplace(a, b.exp()), L.Pareto(a.exp(), b.exp())),
    "laplace-uniform": lambda L, a, b: (L.Laplace(a, b.exp()), L.Uniform(a, a + 1)),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS)
