"""LowRankMultivariateNormal against torch.distributions.LowRankMultivariateNormal: the
statistics and matrices, log_prob and entropy with gradients for loc, factor and diagonal
(with batch broadcasting among them), draws from the same seed, expand, repr, errors, and
the low-rank pairs of kl_divergence.

Products with the factor go through a matrix multiply whose summation order is BLAS's in
torch, so values are compared to 1e-12 relative in float64, not bitwise; draws with a
rank-1 factor involve no sum and are compared exactly."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, check_kl, raises_like_torch, seeded_samples
from ember.distributions import LowRankMultivariateNormal

from helpers import assert_same, assert_ulp, check_dist, rand_array

N, R = 4, 2
LOC = rand_array((3, N), np.float64)
W = rand_array((N, R), np.float64, seed=1)
DIAG = rand_array((3, N), np.float64, low=0.5, high=2.0, seed=2)
VALUE = rand_array((5, 3, N), np.float64, seed=3)
TOL = dict(rtol=1e-11, atol=1e-12)


def _make(D, loc, w, diag):
    return D.LowRankMultivariateNormal(loc, w, diag)


def test_statistics_matrices_and_scores():
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy", "scale_tril",
                       "covariance_matrix", "precision_matrix", ("log_prob", VALUE)],
               LOC, W, DIAG, **TOL)


def test_float32():
    check_dist(_make, ["variance", "entropy", "scale_tril", ("log_prob", VALUE.astype(np.float32))],
               LOC.astype(np.float32), W.astype(np.float32), DIAG.astype(np.float32),
               rtol=1e-5, atol=1e-5)


def test_batched_factor_broadcasts_against_loc():
    w = rand_array((3, 1, N, R), np.float64, seed=4)
    d = ember.distributions.LowRankMultivariateNormal(ember.tensor(LOC), ember.tensor(w),
                                                      ember.tensor(DIAG))
    assert d.batch_shape == (3, 3) and d.event_shape == (N,)
    check_dist(_make, ["entropy", "covariance_matrix", ("log_prob", VALUE[:, None])],
               LOC, w, DIAG, **TOL)


@pytest.mark.parametrize("shape", [(), (5,)], ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape)], LOC, W, DIAG, **TOL)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rank_one_draws_follow_torchs_stream(dtype):
    loc, w, diag = LOC.astype(dtype), W[:, :1].astype(dtype), DIAG.astype(dtype)
    e, t = seeded_samples(_make, (loc, w, diag), (7,), seed=3)
    if dtype == "float64":
        assert_same(e, t, rtol=0, atol=0)
    else:  # (the same draws; where the sum cancels, its last float32 bits move)
        assert_ulp(e, t, 4, "float32: loc + W @ eps_W + sqrt(D) * eps_D, whose product adds in "
                   "another order than torch's on some CPUs",
                   scale=np.abs(t.numpy()).max(axis=-1, keepdims=True))
    assert_in_step("randn")


def test_shapes_expand_and_repr():
    d = LowRankMultivariateNormal(ember.zeros(N), ember.ones(N, 1), ember.ones(N))
    assert d.batch_shape == () and d.event_shape == (N,)
    assert d.sample((2,)).shape == (2, N)
    e = d.expand((5,))
    assert e.batch_shape == (5,) and e.rsample((2,)).shape == (2, 5, N)
    assert e.cov_factor.shape == (5, N, 1) and e.log_prob(ember.zeros(N)).shape == (5,)
    t = torch.distributions.LowRankMultivariateNormal(torch.zeros(N), torch.ones(N, 1),
                                                      torch.ones(N))
    assert repr(d) == repr(t).replace("torch", "ember")


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.LowRankMultivariateNormal(L.tensor(0.0), L.ones(1, 1),
                                                        L.ones(1)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2), L.ones(2)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(3)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2, 2), L.ones(3, 2, 1),
                                                        L.ones(2)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1),
                                                        L.tensor([1.0, 0.0])),
    lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2), L.ones(2, 1), L.ones(2)).log_prob(L.zeros(3)),
    lambda L: L.distributions.kl_divergence(
        L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), L.ones(2)),
        L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3))),
    lambda L: L.distributions.kl_divergence(
        L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)),
        L.distributions.LowRankMultivariateNormal(L.zeros(3), L.ones(3, 1), L.ones(3))),
], ids=["loc-0d", "factor-1d", "factor-rows", "diag", "batch", "diag-positive", "value",
        "kl-shapes", "kl-mvn-shapes"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


def _tril(m, d):
    return m.tril(-1) + (m.diagonal(dim1=-2, dim2=-1).exp() + d).diag_embed()


KL_PAIRS = {
    "lowrank-lowrank": lambda L, a, b: (
        L.LowRankMultivariateNormal(a[..., 0], a[..., 1:3], a[..., 3].exp()),
        L.LowRankMultivariateNormal(b[..., 0], b[..., 1:2], b[..., 3].exp() + 0.5)),
    "mvn-lowrank": lambda L, a, b: (
        L.MultivariateNormal(a[..., 0], scale_tril=_tril(a, 1.0)),
        L.LowRankMultivariateNormal(b[..., 0], b[..., 1:3], b[..., 3].exp())),
    "lowrank-mvn": lambda L, a, b: (
        L.LowRankMultivariateNormal(a[..., 0], a[..., 1:3], a[..., 3].exp()),
        L.MultivariateNormal(b[..., 0], scale_tril=_tril(b, 1.0))),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], rand_array((2, N, N), np.float64),
             rand_array((N, N), np.float64, seed=1), **TOL)
