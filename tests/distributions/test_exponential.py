"""Exponential against torch.distributions.Exponential: statistics and scores with gradients
(edge values included), draws from the same seed (bit for bit: `exponential_` computes
-log1p(-u) in double with libm, as torch's kernel does, then one division), expand, repr and
validation errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    EXACT_DRAWS,
    KL_ARRAYS,
    LIBM_F32,
    TRIGAMMA,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import Exponential

from helpers import assert_same, check_dist, rand_array

RATE = rand_array((3, 4), np.float64, low=0.2, high=3.0)
VALUE = rand_array((2, 3, 4), np.float64, low=0.0, high=5.0, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, rate):
    return D.Exponential(rate)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype)),
                       ("icdf", PROB.astype(dtype))], RATE.astype(dtype))


def test_edge_values():
    check_dist(_make, [("log_prob", np.array([0.0, 1e-300, 1e3])),
                       ("cdf", np.array([0.0, 1e-300, 1e3, np.inf])),
                       ("icdf", np.array([0.0, 1e-300, 0.5, 1 - 1e-16]))], np.float64(1.5),
               **LIBM_F32)  # (log of the float32 rate)
    check_dist(_make, [("icdf", np.array([1.0]))], np.float64(1.5), grad=False)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], RATE, **EXACT_DRAWS)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream_exactly(dtype, seed):
    rate = np.array([0.01, 0.5, 1.0, 3.0, 1e4], dtype)
    assert_same(*seeded_samples(_make, (rate,), (400,), seed), rtol=0, atol=0)
    assert_same(Exponential(2.0).sample((3,)), torch.distributions.Exponential(2.0).sample((3,)),
                rtol=0, atol=0)
    assert_in_step()


def test_shapes_expand_and_repr():
    d = Exponential(ember.ones(3, 4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert Exponential(1.0).batch_shape == ()
    assert repr(Exponential(2.0)) == repr(torch.distributions.Exponential(2.0))
    assert repr(Exponential.support) == "GreaterThanEq(lower_bound=0.0)"


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Exponential(L.tensor([1.0, 0.0])),
    lambda L: L.distributions.Exponential(-1.0),
    lambda L: L.distributions.Exponential(1.0).log_prob(L.tensor(-0.5)),
    lambda L: L.distributions.Exponential(L.ones(3)).log_prob(L.zeros(4)),
], ids=["rate", "negative-rate", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


# KL(p || q) for the pairs torch registers with an Exponential; a and b (in (-2, 2)) make
# the parameters, so that uniforms reaching below 0 and Pareto shapes <= 1 meet their inf
KL_PAIRS = {
    "exponential-exponential": lambda L, a, b: (L.Exponential(a.exp()), L.Exponential(b.exp())),
    "exponential-gamma": lambda L, a, b: (L.Exponential(a.exp()), L.Gamma(b.exp(), a.exp())),
    "exponential-gumbel": lambda L, a, b: (L.Exponential(a.exp()), L.Gumbel(b, a.exp())),
    "exponential-normal": lambda L, a, b: (L.Exponential(a.exp()), L.Normal(b, a.exp())),
    "exponential-beta": lambda L, a, b: (L.Exponential(a.exp()), L.Beta(a.exp(), b.exp())),
    "exponential-pareto": lambda L, a, b: (L.Exponential(a.exp()), L.Pareto(a.exp(), b.exp())),
    "exponential-uniform": lambda L, a, b: (L.Exponential(a.exp()), L.Uniform(a, a + 1)),
    "beta-exponential": lambda L, a, b: (L.Beta(a.exp(), b.exp()), L.Exponential(b.exp())),
    "gamma-exponential": lambda L, a, b: (L.Gamma(a.exp(), b.exp()), L.Exponential(b.exp())),
    "uniform-exponential": lambda L, a, b: (L.Uniform(a, a + b.exp()), L.Exponential(b.exp())),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS,
             **(TRIGAMMA if pair.startswith(("beta", "gamma")) else {}))
