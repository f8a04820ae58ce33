"""Kumaraswamy against torch.distributions.Kumaraswamy: draws (a uniform through three
transforms) and their gradients, scores, moments, mode, entropy, shapes, validation, repr."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES, assert_in_step, raises_like_torch

from helpers import assert_same, check_dist, rand_array

A = rand_array((3, 4), np.float32, low=0.4, high=5.0)
B = rand_array((4,), np.float32, low=0.4, high=5.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float32, low=0.02, high=0.98, seed=2)
# NOTE: pow / lgamma / digamma come from different libms: a few float32 ulps
TOL = dict(rtol=1e-5, atol=1e-6, grad_rtol=1e-4, grad_atol=1e-5)


def _make(D, a, b):
    return D.Kumaraswamy(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scores_moments_mode_and_entropy(dtype):
    tol = TOL if dtype == np.float32 else dict(rtol=1e-11, atol=1e-12, grad_rtol=1e-8,
                                                grad_atol=1e-9)
    check_dist(_make, ["mean", "mode", "variance", "entropy", ("log_prob", VALUE.astype(dtype))],
               A.astype(dtype), B.astype(dtype), **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape, dtype):
    tol = TOL if dtype == np.float32 else dict(rtol=1e-13, atol=1e-14, grad_rtol=1e-11,
                                                grad_atol=1e-12)
    check_dist(_make, [("rsample", shape), ("sample", shape)], A.astype(dtype),
               B.astype(dtype), **tol)


def test_draws_follow_torchs_stream():
    for L in (ember, torch):
        L.manual_seed(8)
    e = ember.distributions.Kumaraswamy(ember.tensor(A), ember.tensor(B)).sample((20,))
    t = torch.distributions.Kumaraswamy(torch.tensor(A), torch.tensor(B)).sample((20,))
    assert_same(e, t, rtol=1e-5, atol=1e-7)
    assert_in_step()


def test_entropy_uses_torchs_euler_constant():
    assert ember.distributions.utils.euler_constant == torch.distributions.utils.euler_constant
    # H(Kumaraswamy(1, 1)) = 0: the uniform distribution (worked by hand)
    h = ember.distributions.Kumaraswamy(ember.tensor(1.0, dtype=ember.float64), 1.0).entropy()
    assert abs(h.item()) < 1e-15


def test_shapes_expand_repr_and_validation():
    e = ember.distributions.Kumaraswamy(ember.tensor(A), ember.tensor(B))
    t = torch.distributions.Kumaraswamy(torch.tensor(A), torch.tensor(B))
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    x = e.expand((2, 3, 4))
    assert type(x) is ember.distributions.Kumaraswamy and x.concentration1.shape == (2, 3, 4)
    assert x.rsample((5,)).shape == (5, 2, 3, 4)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(e.support) == repr(t.support)
    assert repr(e.arg_constraints) == repr(t.arg_constraints)
    raises_like_torch(lambda L: L.distributions.Kumaraswamy(
        L.tensor([0.0]), 1.0, validate_args=True), ValueError)
    raises_like_torch(lambda L: L.distributions.Kumaraswamy(
        2.0, 3.0, validate_args=True).log_prob(L.tensor(1.5)), ValueError)
