"""FisherSnedecor against torch.distributions.FisherSnedecor: draws from the same seeded
stream (two Gamma draws per sample, in torch's order), their implicit gradients, scores,
moments (NaN where they do not exist), shapes, validation errors and repr."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES, assert_in_step, raises_like_torch

from helpers import assert_same, check_dist, rand_array

DF1 = rand_array((3, 4), np.float32, low=0.5, high=12.0)
DF2 = rand_array((4,), np.float32, low=1.0, high=15.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float32, low=0.05, high=5.0, seed=2)
# (the gradients are Gamma's implicit ones: see test_gamma.py's docstring)
IMPLICIT = dict(rtol=0, atol=0, grad_rtol=1e-3, grad_atol=1e-5)


def _make(D, df1, df2):
    return D.FisherSnedecor(df1, df2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_prob_and_moments(dtype):
    df1, df2 = DF1.astype(dtype), DF2.astype(dtype)
    df2[0] = 1.5  # (no mean: NaN) and 3.0 (a mean, no variance)
    df2[1] = 3.0
    df1[0, 0] = 1.0  # (no mode)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    check_dist(_make, ["mean", "mode", "variance", ("log_prob", VALUE.astype(dtype))],
               df1, df2, **tol)


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], DF1, DF2, **IMPLICIT)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_draws_follow_torchs_stream_bit_for_bit(dtype):
    df1 = np.array([0.3, 1.0, 2.5, 40.0], dtype)
    df2 = np.array([[0.7], [5.0], [300.0]], dtype)
    for L in (ember, torch):
        L.manual_seed(3)
    e = ember.distributions.FisherSnedecor(ember.tensor(df1), ember.tensor(df2)).sample((4,))
    t = torch.distributions.FisherSnedecor(torch.tensor(df1), torch.tensor(df2)).sample((4,))
    assert_same(e, t, rtol=0, atol=0)
    assert_in_step()


def test_rsample_keeps_torchs_clamp_in_the_graph():
    for L in (ember, torch):
        L.manual_seed(0)
    e = ember.distributions.FisherSnedecor(ember.tensor(2.0, requires_grad=True), 3.0).rsample()
    t = torch.distributions.FisherSnedecor(torch.tensor(2.0, requires_grad=True), 3.0).rsample()
    assert e.grad_fn.name() == t.grad_fn.name()


def test_shapes_expand_repr_and_constraints():
    for L in (ember, torch):
        d = L.distributions.FisherSnedecor(L.ones(3, 1), L.ones(4))
        assert d.batch_shape == (3, 4) and d.event_shape == ()
        assert tuple(d.expand((2, 3, 4)).rsample((5,)).shape) == (5, 2, 3, 4)
        assert L.distributions.FisherSnedecor(1.0, 2.0).batch_shape == ()
    e = ember.distributions.FisherSnedecor(ember.tensor([1.0, 2.0]), 3.0)
    t = torch.distributions.FisherSnedecor(torch.tensor([1.0, 2.0]), 3.0)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(ember.distributions.FisherSnedecor(1.0, 2.0)) == repr(
        torch.distributions.FisherSnedecor(1.0, 2.0))
    assert repr(e.support) == repr(t.support)
    assert repr(e.arg_constraints) == repr(t.arg_constraints)
    assert e.has_rsample and e.expand((4, 2)).df1.shape == (4, 2)


def test_validation_errors_read_as_torchs():
    raises_like_torch(lambda L: L.distributions.FisherSnedecor(
        L.tensor([-1.0, 2.0]), 1.0, validate_args=True), ValueError)
    raises_like_torch(lambda L: L.distributions.FisherSnedecor(
        1.0, L.tensor(0.0), validate_args=True), ValueError)
    raises_like_torch(lambda L: L.distributions.FisherSnedecor(
        2.0, 3.0, validate_args=True).log_prob(L.tensor([-0.5, 1.0])), ValueError)
