"""LogNormal against torch.distributions.LogNormal: statistics and scores with gradients
(edge values included), draws from the same seed, expand, repr and validation errors.

A draw is exp of a normal draw (bit-identical to torch's). In float64 exp agrees bit for
bit; in float32 torch's exp is its vectorised (SLEEF) kernel, which differs from ember's by
up to 2 ulps (measured on 1e5 points), hence a 2 ulp tolerance there."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    DRAW_SHAPES,
    KL_ARRAYS,
    LIBM_DRAWS,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import LogNormal

from helpers import assert_ulp, check_dist, rand_array

LOC = rand_array((3, 4), np.float64)
SCALE = rand_array((4,), np.float64, low=0.3, high=1.5, seed=1)
VALUE = rand_array((2, 3, 4), np.float64, low=0.01, high=8.0, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, loc, scale):
    return D.LogNormal(loc, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    loc, scale = LOC.astype(dtype), SCALE.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype))],
               loc, scale)
    check_dist(_make, [("icdf", PROB.astype(dtype))], loc, scale, rtol=1e-4 if
               dtype == np.float32 else 1e-9, atol=1e-5 if dtype == np.float32 else 1e-12)


def test_edge_values():
    check_dist(_make, [("cdf", np.array([1e-300, 1.0, 1e300, np.inf])),
                       ("log_prob", np.array([1e-300, 1.0, 1e300]))],
               np.float64(0.5), np.float64(2.0))
    check_dist(_make, [("icdf", np.array([0.0, 0.5, 1.0]))], np.float64(0.5), np.float64(2.0),
               grad=False)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], LOC, SCALE, **LIBM_DRAWS)


@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream(seed):
    loc = np.array([-3.0, 0.0, 0.5, 4.0])
    scale = np.array([0.1, 1.0, 2.5, 3.0])
    for dtype in ("float64", "float32"):
        e, t = seeded_samples(_make, (loc.astype(dtype), scale.astype(dtype)), (300,), seed)
        if dtype == "float64":
            assert_ulp(e, t, 3, "a float64 log / exp: torch's vectorised (SLEEF) kernel "
                       "against NumPy's, a last bit apart on some CPUs")
        else:
            assert_ulp(e, t, 2, "torch's vectorised (SLEEF) float32 exp against ember's")
        assert_in_step()


def test_shapes_expand_and_repr():
    d = LogNormal(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is LogNormal and e.batch_shape == (5, 3, 4) and e.loc.shape == (5, 3, 4)
    assert e.rsample().shape == (5, 3, 4)
    assert repr(LogNormal(0.5, 2.0)) == repr(torch.distributions.LogNormal(0.5, 2.0))
    assert repr(LogNormal.support) == "GreaterThan(lower_bound=0.0)"


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.LogNormal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.LogNormal(0.0, 1.0, validate_args=True).log_prob(L.tensor(0.0)),
    lambda L: L.distributions.LogNormal(L.zeros(3), 1.0).log_prob(L.ones(4)),
], ids=["scale", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


# KL between log-normals: TransformedDistribution's pair (same transforms) on the Normals
KL_PAIRS = {
    "lognormal-lognormal": lambda L, a, b: (L.LogNormal(a, b.exp()), L.LogNormal(b, a.exp())),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS)
