"""GeneralizedPareto against torch.distributions.GeneralizedPareto: draws (one uniform each,
through icdf) and their gradients, scores, cdf/icdf, moments, entropy, the dependent support
(bounded above for a negative concentration), shapes, validation and repr."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES, assert_in_step, raises_like_torch

from helpers import assert_same, check_dist

LOC = np.array([0.1, -1.0, 0.5, 0.0], np.float32)
SCALE = np.array([2.0, 1.0, 0.5, 1.5], np.float32)
CONC = np.array([0.4, 0.0, -0.3, 0.7], np.float32)  # (heavy, exponential, bounded, no variance)
VALUE = np.array([[0.5, 0.2, 0.9, 3.0], [4.0, -0.5, 1.2, 0.1]], np.float32)
U = np.array([[0.01, 0.5, 0.9, 0.999], [0.3, 0.0, 0.7, 0.25]], np.float32)
# NOTE: log1p / expm1 / log come from different libms: a few float32 ulps
TOL = dict(rtol=2e-6, atol=1e-6, grad_rtol=1e-5, grad_atol=1e-6)


def _make(D, loc, scale, conc):
    return D.GeneralizedPareto(loc, scale, conc)


def test_scores_cdf_icdf_moments_and_entropy():
    check_dist(_make, ["mean", "mode", "variance", "entropy", ("log_prob", VALUE),
                       ("log_survival_function", VALUE), ("log_cdf", VALUE), ("cdf", VALUE),
                       ("icdf", U)], LOC, SCALE, CONC, **TOL)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], LOC, SCALE, CONC, **TOL)


def test_float64_draws_and_icdf_and_torchs_isclose_error():
    args = [a.astype(np.float64) for a in (LOC, SCALE, CONC)]
    check_dist(_make, [("rsample", (3,)), ("icdf", U.astype(np.float64)), "mean", "entropy"],
               *args, rtol=1e-14, atol=1e-14, grad_rtol=1e-13, grad_atol=1e-14)
    # NOTE: torch compares the concentration with a float32 zero: float64 log_prob raises
    raises_like_torch(lambda L: L.distributions.GeneralizedPareto(
        *[L.tensor(a) for a in args]).log_prob(L.tensor(VALUE.astype(np.float64))),
        RuntimeError)


def test_draws_follow_torchs_stream():
    for L in (ember, torch):
        L.manual_seed(4)
    e = ember.distributions.GeneralizedPareto(*map(ember.tensor, (LOC, SCALE, CONC))).sample((50,))
    t = torch.distributions.GeneralizedPareto(*map(torch.tensor, (LOC, SCALE, CONC))).sample((50,))
    assert_same(e, t, rtol=2e-6, atol=1e-6)
    assert_in_step()


def test_support_shapes_expand_repr_and_validation():
    e = ember.distributions.GeneralizedPareto(*map(ember.tensor, (LOC, SCALE, CONC)))
    t = torch.distributions.GeneralizedPareto(*map(torch.tensor, (LOC, SCALE, CONC)))
    assert repr(e.support).replace("ember", "torch") == repr(t.support)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(ember.distributions.GeneralizedPareto(0.0, 1.0, -0.5).support) == \
        repr(torch.distributions.GeneralizedPareto(0.0, 1.0, -0.5).support)
    assert repr(e.arg_constraints) == repr(t.arg_constraints)
    assert e.expand((3, 4)).rsample((2,)).shape == (2, 3, 4)
    assert ember.distributions.GeneralizedPareto(0.0, 1.0, 0.5).batch_shape == ()
    # the upper end of a bounded tail is outside the support's check only beyond it
    raises_like_torch(lambda L: L.distributions.GeneralizedPareto(
        0.0, 1.0, -0.5, validate_args=True).log_prob(L.tensor(2.5)), ValueError)
    raises_like_torch(lambda L: L.distributions.GeneralizedPareto(
        0.0, 1.0, 0.5, validate_args=True).log_prob(L.tensor(-0.1)), ValueError)
    raises_like_torch(lambda L: L.distributions.GeneralizedPareto(
        0.0, L.tensor([1.0, -1.0]), 0.5, validate_args=True), ValueError)
