"""Wishart against torch.distributions.Wishart: Bartlett draws from the same seeded stream
(torch's extra resampling and warning included), implicit gradients, log_prob, moments,
entropy (closed form and Bregman), the Bregman KL, the three scale parameterisations, shapes,
expand, validation and repr."""

import warnings

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, check_kl, raises_like_torch

from helpers import assert_same, check_dist, check_op

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])
DF = np.array([4.0, 6.5])
PARAMS = ("covariance_matrix", "precision_matrix", "scale_tril")


def _scale(which, cov):
    return {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
            "scale_tril": np.linalg.cholesky(cov)}[which]


def _make(which):
    return lambda D, df, m: D.Wishart(df, **{which: m})


def _quiet(fn):
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return run


@pytest.mark.parametrize("which", PARAMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_moments_entropy_and_log_prob(which, dtype):
    value = np.stack([COV * 3 + np.eye(3), COV * 5])
    m = _scale(which, COV).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-4, grad_rtol=1e-3, grad_atol=1e-4) if dtype == np.float32 \
        else dict(rtol=1e-11, atol=1e-11, grad_rtol=1e-8, grad_atol=1e-9)
    attrs = ["mean", "variance", "entropy", "covariance_matrix", "precision_matrix",
             "scale_tril", ("log_prob", value.astype(dtype))]
    check_dist(_make(which), attrs, DF.astype(dtype), m, **tol)
    check_dist(_make(which), ["mode"], np.array([4.0, 6.5], dtype), m, grad=False, **tol)


def test_bregman_entropy_and_kl_equal_torchs():
    def bregman(D, df, m):
        return D.ExponentialFamily.entropy(D.Wishart(df, covariance_matrix=m))
    check_op(lambda *p: bregman(ember.distributions, *p),
             lambda *p: bregman(torch.distributions, *p), DF, COV, rtol=1e-11, atol=1e-11,
             grad_rtol=1e-8, grad_atol=1e-9)
    check_kl(lambda D, df, m: (D.Wishart(df, covariance_matrix=m),
                               D.Wishart(df + 1.5, covariance_matrix=m * 2)),
             DF, COV, rtol=1e-11, atol=1e-11, grad_rtol=1e-8, grad_atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)], ids=str)
def test_draws_follow_torchs_stream(shape, dtype):
    """Chi2 (gamma) draws are exact; the two matmuls sum in other orders: a few ulps."""
    for L in (ember, torch):
        L.manual_seed(11)
    with pytest.warns(UserWarning, match="Singular sample detected"):
        e = ember.distributions.Wishart(ember.tensor(DF.astype(dtype)),
                                        covariance_matrix=ember.tensor(COV.astype(dtype)))
        e = e.sample(shape)
    t = _quiet(lambda: torch.distributions.Wishart(
        torch.tensor(DF.astype(dtype)),
        covariance_matrix=torch.tensor(COV.astype(dtype))).sample(shape))()
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    assert_same(e, t, rtol=rtol, atol=rtol)
    assert_in_step("randn")


def test_rsample_gradient_agrees_with_torch():
    # (Chi2's implicit gradient: see test_gamma.py; torch's own backward fails once the
    # sample shape is not empty, so the draw is a single one per batch element)
    check_op(_quiet(lambda df, m: _seeded(ember, df, m)), _quiet(lambda df, m: _seeded(
        torch, df, m)), DF, COV, rtol=1e-12, atol=1e-12, grad_rtol=2e-3, grad_atol=1e-4)


def _seeded(L, df, m):
    L.manual_seed(5)
    return L.distributions.Wishart(df, covariance_matrix=m).rsample()


def test_shapes_expand_repr_and_validation():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ember.distributions.Wishart(ember.tensor(DF), covariance_matrix=ember.tensor(COV))
        t = torch.distributions.Wishart(torch.tensor(DF), covariance_matrix=torch.tensor(COV))
        assert e.batch_shape == t.batch_shape == (2,)
        assert e.event_shape == t.event_shape == (3, 3)
        x = e.expand((4, 2))
        assert x.sample().shape == (4, 2, 3, 3) and x.covariance_matrix.shape == (4, 2, 3, 3)
        assert x._dist_chi2.batch_shape == (4, 2, 3)
        assert repr(e).replace("ember", "torch") == repr(t)
        assert repr(e.support) == repr(t.support)
        assert repr(e.arg_constraints) == repr(t.arg_constraints)
        s = ember.distributions.Wishart(5.0, scale_tril=ember.eye(2))
        assert s.df.shape == () and s.batch_shape == ()
    raises_like_torch(lambda L: L.distributions.Wishart(L.tensor(4.0)), AssertionError)
    raises_like_torch(lambda L: L.distributions.Wishart(
        L.tensor(4.0), covariance_matrix=L.eye(2), scale_tril=L.eye(2)), AssertionError)
    raises_like_torch(lambda L: L.distributions.Wishart(
        4.0, covariance_matrix=L.ones(3)), ValueError)
    raises_like_torch(lambda L: L.distributions.Wishart(
        L.tensor([1.0, 3.0]), covariance_matrix=L.eye(3)), ValueError)
    raises_like_torch(lambda L: L.distributions.Wishart(
        4.0, covariance_matrix=L.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True),
        ValueError)
    raises_like_torch(lambda L: L.distributions.Wishart(
        4.0, covariance_matrix=L.eye(2), validate_args=True).log_prob(-L.eye(2)), ValueError)
    for L in (ember, torch):
        with pytest.warns(UserWarning, match="Low df values detected"):
            L.distributions.Wishart(L.tensor(2.5), covariance_matrix=L.eye(3))
