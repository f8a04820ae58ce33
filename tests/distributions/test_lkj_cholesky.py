"""LKJCholesky against torch.distributions.LKJCholesky: onion-method draws from the same
seeded stream (Betas, then normals), log_prob with its gradient, the corr_cholesky support,
shapes, expand, validation (dim and concentration) and repr."""

import math

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, raises_like_torch

from helpers import assert_same, check_dist

ETA = np.array([0.5, 1.0, 3.0], np.float32)


def _make3(D, eta):
    # (a float32 draw cast to float64 fails corr_cholesky's row-norm check: not validated)
    return D.LKJCholesky(3, eta, validate_args=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [2, 4])
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)], ids=str)
def test_draws_follow_torchs_stream(shape, dim, dtype):
    for L in (ember, torch):
        L.manual_seed(2)
    e = ember.distributions.LKJCholesky(dim, ember.tensor(ETA.astype(dtype))).sample(shape)
    t = torch.distributions.LKJCholesky(dim, torch.tensor(ETA.astype(dtype))).sample(shape)
    # NOTE: the Beta draws are exact; norm and sum run in other orders (a few ulps), and the
    # diagonal's sqrt(1 - sum w^2) cancels, so a small one keeps fewer correct digits
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    assert_same(e, t, rtol=rtol, atol=rtol / 10)
    assert_in_step("randn")
    # every draw is the Cholesky factor of a correlation matrix
    assert bool(ember.distributions.constraints.corr_cholesky.check(e).all())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_prob_and_its_gradient(dtype):
    ember.manual_seed(1)
    value = ember.distributions.LKJCholesky(3, 1.0).sample((2, 3)).numpy().astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    check_dist(_make3, [("log_prob", value)], ETA.astype(dtype), **tol)


def test_log_prob_normalises_for_dim_2():
    """For dim 2 the factor is [[1, 0], [r, sqrt(1 - r^2)]] and log_prob is the density of
    the correlation r, proportional to (1 - r^2)^(eta - 1): it integrates to 1 over (-1, 1)."""
    r = np.linspace(-1, 1, 200001)[1:-1]
    value = np.zeros((r.size, 2, 2))
    value[:, 0, 0] = 1.0
    value[:, 1, 0] = r
    value[:, 1, 1] = np.sqrt(1 - r ** 2)
    for eta in (1.0, 2.5):
        lp = ember.distributions.LKJCholesky(2, ember.tensor(eta, dtype=ember.float64)) \
            .log_prob(ember.tensor(value)).numpy()
        total = np.trapezoid(np.exp(lp), r)
        assert math.isclose(total, 1.0, rel_tol=1e-3), (eta, total)


def test_shapes_expand_repr_and_validation():
    e = ember.distributions.LKJCholesky(3, ember.tensor(ETA))
    t = torch.distributions.LKJCholesky(3, torch.tensor(ETA))
    assert e.batch_shape == t.batch_shape == (3,) and e.event_shape == t.event_shape == (3, 3)
    x = e.expand((2, 3))
    assert x.dim == 3 and x.sample((4,)).shape == (4, 2, 3, 3, 3)
    assert x._beta.batch_shape == (2, 3, 3)
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(ember.distributions.LKJCholesky(2)) == repr(torch.distributions.LKJCholesky(2))
    assert repr(e.support) == repr(t.support)
    assert repr(e.arg_constraints) == repr(t.arg_constraints)
    assert e.has_rsample is t.has_rsample is False
    raises_like_torch(lambda L: L.distributions.LKJCholesky(1, 1.0), ValueError)
    raises_like_torch(lambda L: L.distributions.LKJCholesky(
        3, L.tensor([1.0, -0.5]), validate_args=True), ValueError)
    raises_like_torch(lambda L: L.distributions.LKJCholesky(2, validate_args=True).log_prob(
        L.tensor([[1.0, 0.0], [0.6, 0.6]])), ValueError)
