"""LogisticNormal against torch.distributions.LogisticNormal: draws (normals, stick-broken)
and their gradients, log_prob on the simplex, shapes (a scalar base widened to (1,)), expand,
validation and repr."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES, assert_in_step, raises_like_torch

from helpers import assert_same, check_dist, rand_array

LOC = rand_array((2, 3), np.float32, low=-1.0, high=1.0)
SCALE = rand_array((3,), np.float32, low=0.3, high=2.0, seed=1)
VALUE = np.array([[0.2, 0.3, 0.1, 0.4], [0.7, 0.1, 0.05, 0.15]], np.float32)
# NOTE: exp / log1p / cumprod come from different libms and orders: a few float32 ulps
TOL = dict(rtol=1e-5, atol=1e-6, grad_rtol=1e-4, grad_atol=1e-5)


def _make(D, loc, scale):
    return D.LogisticNormal(loc, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_and_log_prob(shape, dtype):
    tol = TOL if dtype == np.float32 else dict(rtol=1e-13, atol=1e-14, grad_rtol=1e-11,
                                                grad_atol=1e-12)
    check_dist(_make, [("rsample", shape), ("sample", shape), ("log_prob", VALUE.astype(dtype))],
               LOC.astype(dtype), SCALE.astype(dtype), **tol)


def test_scalar_parameters_and_draws_follow_torchs_stream():
    for L in (ember, torch):
        L.manual_seed(6)
    e = ember.distributions.LogisticNormal(0.5, 2.0)
    t = torch.distributions.LogisticNormal(0.5, 2.0)
    assert e.batch_shape == t.batch_shape == () and e.event_shape == t.event_shape == (2,)
    assert_same(e.sample((7,)), t.sample((7,)), rtol=1e-6, atol=1e-7)
    assert_in_step("randn")
    assert repr(e).replace("ember", "torch") == repr(t)


def test_shapes_expand_repr_and_validation():
    e = ember.distributions.LogisticNormal(ember.tensor(LOC), ember.tensor(SCALE))
    t = torch.distributions.LogisticNormal(torch.tensor(LOC), torch.tensor(SCALE))
    assert e.batch_shape == t.batch_shape == (2,) and e.event_shape == t.event_shape == (4,)
    x = e.expand((5, 2))
    assert type(x) is ember.distributions.LogisticNormal and x.sample().shape == (5, 2, 4)
    assert x.loc.shape == (5, 2, 3)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(e.support) == repr(t.support)
    assert repr(e.arg_constraints) == repr(t.arg_constraints)
    raises_like_torch(lambda L: L.distributions.LogisticNormal(
        L.zeros(3), L.tensor([1.0, -1.0, 1.0]), validate_args=True), ValueError)
    raises_like_torch(lambda L: L.distributions.LogisticNormal(
        L.zeros(2), L.ones(2), validate_args=True).log_prob(L.tensor([0.5, 0.6, 0.1])),
        ValueError)
