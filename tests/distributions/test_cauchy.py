"""Cauchy against torch.distributions.Cauchy: statistics (NaN mean, infinite variance) and
scores with gradients (edge values included), draws from the same seed (bit for bit:
`cauchy_` is tan of a double uniform through libm, then one multiply-add in the dtype),
expand, repr and validation errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    EXACT_DRAWS,
    KL_ARRAYS,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import Cauchy

from helpers import assert_same, check_dist, rand_array

LOC = rand_array((3, 4), np.float64)
SCALE = rand_array((4,), np.float64, low=0.5, high=2.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float64, low=-6, high=6, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, loc, scale):
    return D.Cauchy(loc, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    loc, scale = LOC.astype(dtype), SCALE.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype))],
               loc, scale)
    # float32 tan: torch's vectorised (SLEEF) tan and ember's differ by up to 3 ulps
    check_dist(_make, [("icdf", PROB.astype(dtype))], loc, scale,
               **({"rtol": 2e-6, "atol": 1e-6} if dtype == np.float32 else {}))


def test_edge_values():
    edge = np.array([-np.inf, -1e30, 0.0, 0.5, 1e30, np.inf])
    check_dist(_make, [("cdf", edge), ("log_prob", edge[1:-1])], np.float64(0.5),
               np.float64(2.0))
    check_dist(_make, [("icdf", np.array([0.0, 1e-12, 0.5, 1 - 1e-12]))], np.float64(0.5),
               np.float64(2.0), grad=False, rtol=1e-9)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], LOC, SCALE, **EXACT_DRAWS)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream_exactly(dtype, seed):
    loc = np.array([-3.0, 0.0, 0.5, 100.0], dtype)
    scale = np.array([0.1, 1.0, 2.5, 3.0], dtype)
    assert_same(*seeded_samples(_make, (loc, scale), (400,), seed), rtol=0, atol=0)
    assert_in_step()


def test_shapes_expand_and_repr():
    d = Cauchy(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    assert d.mean.shape == (3, 4) and d.variance.shape == (3, 4)
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert repr(Cauchy(0.5, 2.0)) == repr(torch.distributions.Cauchy(0.5, 2.0))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Cauchy(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])),
    lambda L: L.distributions.Cauchy(float("inf"), 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.Cauchy(0.0, 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.Cauchy(L.zeros(3), 1.0).log_prob(L.zeros(4)),
], ids=["scale", "inf-loc", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


KL_PAIRS = {
    "cauchy-cauchy": lambda L, a, b: (L.Cauchy(a, b.exp()), L.Cauchy(b, a.exp())),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS)
