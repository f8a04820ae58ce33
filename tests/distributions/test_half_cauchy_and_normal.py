"""HalfCauchy and HalfNormal (|X| * scale, X a standard Cauchy or Normal) against torch's:
statistics (HalfCauchy's mean infinite) and scores with gradients (edge values included:
-inf log density below 0), draws from the same seed bit for bit (|cauchy_ or normal draw *
scale|), expand, repr, validation errors and the HalfNormal pair of kl_divergence."""

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

from helpers import assert_same, check_dist, rand_array

SCALE = rand_array((3, 4), np.float64, low=0.3, high=2.5)
VALUE = rand_array((2, 3, 4), np.float64, low=0.0, high=5.0, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)
FAMILIES = ["HalfCauchy", "HalfNormal"]
# float32 icdf: torch's vectorised (SLEEF) tan and ember's differ by up to 3 ulps (HalfCauchy)
ICDF32_TOL = {"HalfCauchy": {"rtol": 4e-6, "atol": 1e-6}, "HalfNormal": {"rtol": 1e-4,
                                                                         "atol": 1e-5}}
# (HalfNormal: logs of the float32 scale, 1 float32 ulp apart on some CPUs)
EDGE_TOL = {"HalfCauchy": {"rtol": 1e-9}, "HalfNormal": {"rtol": 1.2e-7, "atol": 1e-12}}
BASE_DRAW = {"HalfCauchy": "rand", "HalfNormal": "randn"}  # what the base sampler consumes


def _maker(family, **kwargs):
    return lambda D, scale: getattr(D, family)(scale, **kwargs)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype, family):
    check_dist(_maker(family), ["scale", "mean", "mode", "variance", "stddev", "entropy",
                                ("log_prob", VALUE.astype(dtype)),
                                ("cdf", VALUE.astype(dtype))], SCALE.astype(dtype))
    check_dist(_maker(family), [("icdf", PROB.astype(dtype))], SCALE.astype(dtype),
               **(ICDF32_TOL[family] if dtype == np.float32 else {}))


@pytest.mark.parametrize("family", FAMILIES)
def test_edge_values(family):
    scale = np.float64(1.5)
    check_dist(_maker(family), [("log_prob", np.array([0.0, 1e-300, 40.0])),
                                ("cdf", np.array([0.0, 1e-300, 40.0, np.inf])),
                                ("icdf", np.array([0.0, 0.5, 0.9]))], scale, **EDGE_TOL[family])
    check_dist(_maker(family, validate_args=False),
               [("log_prob", np.array([-1.0, -0.0, 1.0]))], scale, **EDGE_TOL[family])
    check_dist(_maker(family), [("icdf", np.array([1.0]))], scale, grad=False)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape, family):
    check_dist(_maker(family), [("rsample", shape), ("sample", shape)], SCALE, **EXACT_DRAWS)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 50])
def test_draws_follow_torchs_stream_exactly(dtype, n, family):
    scale = np.array([0.1, 1.0, 2.5, 3.0], dtype)
    make = _maker(family)
    assert_same(*seeded_samples(make, [scale], (n,), seed=2), rtol=0, atol=0)
    # (a float scale, after the tensor's draws: the generators continue from where they were)
    assert_same(make(ember.distributions, 2.0).sample((n,)),
                make(torch.distributions, 2.0).sample((n,)), rtol=0, atol=0)
    assert_in_step(BASE_DRAW[family])


@pytest.mark.parametrize("family", FAMILIES)
def test_shapes_expand_and_repr(family):
    E, T = getattr(ember.distributions, family), getattr(torch.distributions, family)
    d = E(ember.ones(3, 4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is E and e.batch_shape == (5, 3, 4) and e.scale.shape == (5, 3, 4)
    assert repr(E(2.0)) == repr(T(2.0))
    assert repr(E.support) == "GreaterThanEq(lower_bound=0.0)"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("call", [
    lambda D, L: D(L.tensor([1.0, -1.0])),
    lambda D, L: D(1.0).log_prob(L.tensor(-0.5)),
    lambda D, L: D(L.ones(3)).log_prob(L.ones(4)),
], ids=["scale", "support", "shape"])
def test_errors_match_torch(call, family):
    raises_like_torch(lambda L: call(getattr(L.distributions, family), L), ValueError)


def test_half_normal_kl_divergence_values_and_gradients():
    check_kl(lambda D, a, b: (D.HalfNormal(a.exp()), D.HalfNormal(b.exp())), *KL_ARRAYS)
