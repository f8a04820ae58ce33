"""ContinuousBernoulli against torch.distributions.ContinuousBernoulli, by probs and by
logits, on both sides of the Taylor region about 1/2: statistics and scores with gradients
(edge values included), draws from the same seed, expand, repr, errors and the
ContinuousBernoulli pairs of kl_divergence.

A draw is the inverse CDF at a uniform (bit-identical to torch's), a difference of log1p
terms over a difference of logs. torch's log and log1p are its vectorised (SLEEF) kernels
(float64 log1p included), a few ulps from ember's, and the numerator cancels, so draws are
compared in ulps of 1 (the width of the support): 4, where 3500 draws showed at most 1.5."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import (
    KL_ARRAYS,
    TRIGAMMA,
    assert_in_step,
    check_kl,
    raises_like_torch,
    seeded_samples,
)
from ember.distributions import ContinuousBernoulli

from helpers import assert_ulp, check_dist, rand_array

PROBS = np.array([[0.01, 0.2, 0.4995, 0.5], [0.5008, 0.7, 0.99, 0.3]])
LOGITS = np.array([[-4.0, -1.0, -0.002, 0.0], [0.003, 0.8, 4.0, 2.0]])
VALUE = rand_array((3, 2, 4), np.float64, low=0.0, high=1.0, seed=2)
PROB = rand_array((2, 4), np.float64, low=0.01, high=0.99, seed=3)
ATTRS = ["mean", "variance", "stddev", "entropy", "probs", "logits", ("log_prob", VALUE),
         ("cdf", VALUE), ("icdf", PROB)]


@pytest.mark.parametrize("by", ["probs", "logits"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(by, dtype):
    param = (PROBS if by == "probs" else LOGITS).astype(dtype)
    tol = {"rtol": 2e-5, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-11}
    attrs = [(a[0], a[1].astype(dtype)) if isinstance(a, tuple) else a for a in ATTRS]
    check_dist(lambda D, x: D.ContinuousBernoulli(**{by: x}), attrs, param, **tol)


def test_edge_values():
    make = lambda D, p: D.ContinuousBernoulli(p)  # noqa: E731
    edge = np.array([0.0, 1e-300, 0.5, 1.0])
    check_dist(make, [("log_prob", edge), ("cdf", edge), ("icdf", edge)],
               np.array([0.2, 0.5, 0.9, 0.4999]), rtol=1e-9, atol=1e-12)
    check_dist(make, ["mean", "variance", "entropy"], np.array([0.0, 1.0, 0.499, 0.501]),
               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("shape", [(), (5,)], ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(lambda D, p: D.ContinuousBernoulli(p), [("rsample", shape), ("sample", shape)],
               PROBS, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_follow_torchs_stream(dtype):
    p = np.array([0.01, 0.2, 0.4995, 0.5, 0.5008, 0.7, 0.99], dtype)
    e, t = seeded_samples(lambda D, p: D.ContinuousBernoulli(p), (p,), (500,), seed=0)
    assert_ulp(e, t, 4, "torch's vectorised (SLEEF) log / log1p against ember's, in a "
               "difference that cancels", scale=1.0)
    assert_in_step()


def test_shapes_expand_and_repr():
    d = ContinuousBernoulli(ember.full((3, 4), 0.3))
    assert d.batch_shape == (3, 4) and d.param_shape == (3, 4)
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert ContinuousBernoulli(logits=1.0).expand((2,)).logits.shape == (2,)
    assert ContinuousBernoulli(0.3).batch_shape == ()
    t = torch.distributions.ContinuousBernoulli(0.3)
    assert repr(ContinuousBernoulli(0.3)) == repr(t)
    assert repr(ContinuousBernoulli(logits=ember.zeros(3))) == \
        repr(torch.distributions.ContinuousBernoulli(logits=torch.zeros(3))).replace(
            "torch", "ember")


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.ContinuousBernoulli(),
    lambda L: L.distributions.ContinuousBernoulli(0.5, 0.0),
    lambda L: L.distributions.ContinuousBernoulli(L.tensor([0.5, 1.5]), validate_args=False),
    lambda L: L.distributions.ContinuousBernoulli(L.tensor([0.5, -0.5]), validate_args=True),
    lambda L: L.distributions.ContinuousBernoulli(logits=float("nan")),
    lambda L: L.distributions.ContinuousBernoulli(0.3).log_prob(L.tensor(1.5)),
    lambda L: L.distributions.ContinuousBernoulli(L.full((3,), 0.3)).log_prob(L.zeros(4)),
], ids=["none", "both", "probs-no-validation", "probs", "logits", "support", "shape"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)


def test_unvalidated_probs_out_of_range_are_clamped_like_torchs():
    e = ContinuousBernoulli(ember.tensor([1.5, -0.5]))
    t = torch.distributions.ContinuousBernoulli(torch.tensor([1.5, -0.5]))
    assert e.probs.tolist() == t.probs.tolist()


# KL(p || q) for the pairs torch registers with a ContinuousBernoulli (a, b in (-2, 2))
KL_PAIRS = {
    "cb-cb": lambda L, a, b: (L.ContinuousBernoulli(logits=a),
                              L.ContinuousBernoulli(logits=b)),
    "beta-cb": lambda L, a, b: (L.Beta(a.exp(), b.exp()), L.ContinuousBernoulli(logits=b)),
    "cb-pareto": lambda L, a, b: (L.ContinuousBernoulli(logits=a), L.Pareto(a.exp(), b.exp())),
    "cb-exponential": lambda L, a, b: (L.ContinuousBernoulli(logits=a),
                                       L.Exponential(b.exp())),
    "cb-normal": lambda L, a, b: (L.ContinuousBernoulli(logits=a), L.Normal(b, a.exp())),
    "cb-uniform": lambda L, a, b: (L.ContinuousBernoulli(logits=a),
                                   L.Uniform(a / 4 - 0.1, b / 4 + 1.1)),
    "uniform-cb": lambda L, a, b: (L.Uniform(a.sigmoid() / 2 - 0.1,
                                             a.sigmoid() / 2 + b.exp() / 8),
                                   L.ContinuousBernoulli(logits=b)),
    "exponential-cb": lambda L, a, b: (L.Exponential(a.exp()), L.ContinuousBernoulli(logits=b)),
    "gamma-cb": lambda L, a, b: (L.Gamma(a.exp(), b.exp()), L.ContinuousBernoulli(logits=b)),
    "gumbel-cb": lambda L, a, b: (L.Gumbel(a, b.exp()), L.ContinuousBernoulli(logits=b)),
    "laplace-cb": lambda L, a, b: (L.Laplace(a, b.exp()), L.ContinuousBernoulli(logits=b)),
    "normal-cb": lambda L, a, b: (L.Normal(a, b.exp()), L.ContinuousBernoulli(logits=b)),
    "pareto-cb": lambda L, a, b: (L.Pareto(a.exp(), b.exp()), L.ContinuousBernoulli(logits=b)),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    check_kl(KL_PAIRS[pair], *KL_ARRAYS, rtol=1e-9,
             atol=1e-12, **(TRIGAMMA if pair.startswith("beta") else {}))
