"""Pareto against torch.distributions.Pareto: statistics (clamped where the moments do not
exist) and scores with gradients (edge values included), draws from the same seed, expand,
repr and validation errors.

A draw is scale * exp(E) for an `exponential_` draw E over alpha (bit-identical to torch's).
In float64 exp agrees bit for bit; in float32 torch's exp is its vectorised (SLEEF) kernel,
up to 2 ulps from ember's (measured on 1e5 points), and the product with the
scale rounds once more: 3 ulps there."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    KL_ARRAYS,
    LIBM_DRAWS,
    LIBM_F32,
    TRIGAMMA,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import Pareto

from helpers import assert_ulp, check_dist, rand_array

SCALE = rand_array((3, 4), np.float64, low=0.5, high=2.0)
ALPHA = np.array([0.5, 1.5, 2.5, 6.0])
VALUE = rand_array((2, 3, 4), np.float64, low=2.0, high=9.0, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, scale, alpha):
    return D.Pareto(scale, alpha)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    scale, alpha = SCALE.astype(dtype), ALPHA.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype)),
                       ("icdf", PROB.astype(dtype))], scale, alpha)


def test_edge_values():
    check_dist(_make, [("log_prob", np.array([2.0, 2.5, 1e300])),
                       ("cdf", np.array([2.0, 2.5, 1e300, np.inf])),
                       ("icdf", np.array([0.0, 0.5, 1 - 1e-16]))],
               np.float64(2.0), np.float64(1.5), **LIBM_F32)  # (logs of float32 parameters)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], SCALE, ALPHA, **LIBM_DRAWS)


@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream(seed):
    scale = np.array([0.1, 1.0, 2.5, 3.0])
    alpha = np.array([0.5, 1.0, 3.0, 50.0])
    for dtype in ("float64", "float32"):
        e, t = seeded_samples(_make, (scale.astype(dtype), alpha.astype(dtype)), (500,), seed)
        if dtype == "float64":
            assert_ulp(e, t, 3, "a float64 log / exp: torch's vectorised (SLEEF) kernel "
                       "against NumPy's, a last bit apart on some CPUs")
        else:
            assert_ulp(e, t, 3, "torch's vectorised (SLEEF) float32 exp against ember's (2 "
                       "ulps), then the product with the scale rounded")
        assert_in_step()


def test_shapes_support_expand_and_repr():
    d = Pareto(ember.ones(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is Pareto and e.batch_shape == (5, 3, 4) and e.alpha.shape == (5, 3, 4)
    assert e.rsample().shape == (5, 3, 4)
    assert repr(Pareto(0.5, 2.0)) == repr(torch.distributions.Pareto(0.5, 2.0))
    assert repr(Pareto(0.5, 2.0).support) == repr(torch.distributions.Pareto(0.5, 2.0).support)


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Pareto(L.tensor([1.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Pareto(0.0, 1.0),
    lambda L: L.distributions.Pareto(L.tensor(2.0), L.tensor(1.0)).log_prob(L.tensor(1.5)),
    lambda L: L.distributions.Pareto(L.ones(3), 1.0).log_prob(L.ones(4)),
], ids=["alpha", "scale", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


# KL(p || q) for the pairs torch registers with a Pareto (a, b in (-2, 2) make them, so
# shapes <= 1 or <= 2 and supports not covered meet their inf; exponential-pareto is in
# test_exponential.py)
KL_PAIRS = {
    "pareto-pareto": lambda L, a, b: (L.Pareto(a.exp(), b.exp()), L.Pareto(b.exp(), a.exp())),
    "pareto-exponential": lambda L, a, b: (L.Pareto(a.exp(), b.exp()), L.Exponential(a.exp())),
    "pareto-gamma": lambda L, a, b: (L.Pareto(a.exp(), b.exp()), L.Gamma(a.exp(), b.exp())),
    "pareto-normal": lambda L, a, b: (L.Pareto(a.exp(), 2 * b.exp()), L.Normal(b, a.exp())),
    "pareto-beta": lambda L, a, b: (L.Pareto(a.exp(), b.exp()), L.Beta(a.exp(), b.exp())),
    "pareto-uniform": lambda L, a, b: (L.Pareto(a.exp(), b.exp()), L.Uniform(a, a + 1)),
    "uniform-pareto": lambda L, a, b: (L.Uniform(a.exp(), a.exp() + b.exp()),
                                       L.Pareto(a.exp() * (0.5 + b.sigmoid()), b.exp())),
    "beta-pareto": lambda L, a, b: (L.Beta(a.exp(), b.exp()), L.Pareto(a.exp(), b.exp())),
    "gamma-pareto": lambda L, a, b: (L.Gamma(a.exp(), b.exp()), L.Pareto(a.exp(), b.exp())),
    "normal-pareto": lambda L, a, b: (L.Normal(a, b.exp()), L.Pareto(a.exp(), b.exp())),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS,
             **(TRIGAMMA if "gamma" in pair else {}))
