"""Gumbel against torch.distributions.Gumbel: statistics and scores with gradients (edge
values included), draws from the same seed, expand, repr and validation errors.

A draw is loc - scale * log(-log(u)) for a uniform u in (tiny, 1 - eps) (bit-identical to
torch's). In float64 the logs agree bit for bit; in float32 torch's log is its vectorised
(SLEEF) kernel, up to 3 ulps from ember's (measured on 1e5 points), and the inner one's error
is carried through the outer log: 4 ulps of |loc| + scale * max(1, |z|) (z the standard
Gumbel draw) bound what 8000 draws showed (3)."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    KL_ARRAYS,
    LIBM_DRAWS,
    TRIGAMMA,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import Gumbel

from helpers import assert_ulp, check_dist, rand_array

LOC = rand_array((3, 4), np.float64)
SCALE = rand_array((4,), np.float64, low=0.5, high=2.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float64, low=-4, high=8, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, loc, scale):
    return D.Gumbel(loc, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    loc, scale = LOC.astype(dtype), SCALE.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype)),
                       ("icdf", PROB.astype(dtype))], loc, scale,
               **({"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {}))


def test_edge_values():
    check_dist(_make, [("log_prob", np.array([-5.0, 0.5, 30.0])),
                       ("cdf", np.array([-5.0, 0.5, 30.0])),
                       ("icdf", np.array([1e-12, 0.5, 1 - 1e-12]))],
               np.float64(0.5), np.float64(2.0), rtol=1e-9)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], LOC, SCALE, **LIBM_DRAWS)


@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream(seed):
    loc = np.array([-3.0, 0.0, 0.5, 100.0])
    scale = np.array([0.1, 1.0, 2.5, 3.0])
    for dtype in ("float64", "float32"):
        args = loc.astype(dtype), scale.astype(dtype)
        e, t = seeded_samples(_make, args, (500,), seed)
        if dtype == "float64":
            z = np.abs(t.numpy() - args[0]) / args[1]
            assert_ulp(e, t, 4, "a float64 log, twice: torch's vectorised (SLEEF) kernel "
                       "against NumPy's, a last bit apart on some CPUs",
                       scale=np.abs(loc) + scale * np.maximum(1, z))
        else:
            z = np.abs(t.numpy() - args[0]) / args[1]
            assert_ulp(e, t, 4, "torch's vectorised (SLEEF) float32 log against ember's, twice",
                       scale=np.abs(loc) + scale * np.maximum(1, z))
        assert_in_step()
    e, t = seeded_samples(_make, (1.0, 2.0), (40,), seed)
    assert_ulp(e, t, 4, "torch's vectorised (SLEEF) float32 log against ember's, twice",
               scale=1.0 + 2.0 * np.maximum(1, np.abs(t.numpy() - 1.0) / 2.0))


def test_shapes_expand_and_repr():
    d = Gumbel(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is Gumbel and e.batch_shape == (5, 3, 4) and e.loc.shape == (5, 3, 4)
    assert e.rsample().shape == (5, 3, 4)
    assert repr(Gumbel(0.5, 2.0)) == repr(torch.distributions.Gumbel(0.5, 2.0))
    assert Gumbel(0.5, 2.0).has_rsample


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Gumbel(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Gumbel(0.0, 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.Gumbel(L.zeros(3), 1.0).log_prob(L.ones(4)),
], ids=["scale", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


# KL(p || q) for the pairs torch registers with a Gumbel (a, b in (-2, 2) make them;
# exponential-gumbel is in test_exponential.py)
KL_PAIRS = {
    "gumbel-gumbel": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Gumbel(b, a.exp())),
    "gumbel-normal": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Normal(b, a.exp())),
    "normal-gumbel": lambda L, a, b: (L.Normal(a, b.exp()), L.Gumbel(b, a.exp())),
    "gamma-gumbel": lambda L, a, b: (L.Gamma(a.exp(), b.exp()), L.Gumbel(b, a.exp())),
    "uniform-gumbel": lambda L, a, b: (L.Uniform(a, a + b.exp()), L.Gumbel(b, a.exp())),
    "gumbel-beta": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Beta(a.exp(), b.exp())),
    "gumbel-exponential": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Exponential(a.exp())),
    "gumbel-gamma": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Gamma(a.exp(), b.exp())),
    "gumbel-pareto": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Pareto(a.exp(), b.exp())),
    "gumbel-uniform": lambda L, a, b: (L.Gumbel(a, b.exp()), L.Uniform(a, a + 1)),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS,
             **(TRIGAMMA if pair.startswith("gamma") else {}))
