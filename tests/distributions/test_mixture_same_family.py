"""MixtureSameFamily against torch: mean / variance / log_prob / cdf with gradients for
scalar, vector and batched-mixture components, seeded samples (the mixture's draw, then the
components', then a gather), expand, support checks and constructor errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch

from helpers import assert_same, check_dist, rand_array

W = rand_array((3,), np.float64, seed=1)
WB = rand_array((2, 3), np.float64, seed=2)
LOC = rand_array((2, 3), np.float64, seed=3)
LOC2 = rand_array((2, 3, 2), np.float64, seed=4)
X = rand_array((4, 2), np.float64, seed=5)
X2 = rand_array((4, 2, 2), np.float64, seed=6)

MAKERS = {
    "normal": (lambda D, w, m: D.MixtureSameFamily(D.Categorical(logits=w),
                                                   D.Normal(m, (m * 0.5).exp())), W, LOC[0], X),
    "batched_mixture": (lambda D, w, m: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Normal(m, (m * 0.5).exp())), WB, LOC, X),
    "independent": (lambda D, w, m: D.MixtureSameFamily(
        D.Categorical(logits=w), D.Independent(D.Normal(m, (m * 0.3).exp()), 1)), WB, LOC2, X2),
    "mvn": (lambda D, w, m: D.MixtureSameFamily(
        D.Categorical(logits=w), D.MultivariateNormal(m, scale_tril=(
            m.unsqueeze(-1) * 0 + torch_or_ember(m).eye(2, dtype=m.dtype)))), WB, LOC2, X2),
}


def torch_or_ember(t):
    return torch if isinstance(t, torch.Tensor) else ember


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_statistics_and_scores(name):
    make, w, m, x = MAKERS[name]
    attrs = ["mean", "variance", ("log_prob", x), ("sample", (5,)), ("sample", ())]
    if name in ("normal", "batched_mixture"):
        attrs.append(("cdf", x))
    check_dist(make, attrs, w, m)


@pytest.mark.parametrize("seed", [0, 3])
def test_sample_reproduces_torch_stream(seed):
    for L in (ember, torch):
        L.manual_seed(seed)
    E, T = ember.distributions, torch.distributions
    make = MAKERS["independent"][0]
    s = make(E, ember.tensor(WB), ember.tensor(LOC2)).sample((6,))
    t = make(T, torch.tensor(WB), torch.tensor(LOC2)).sample((6,))
    assert_same(s, t)
    assert_same(ember.randn(2), torch.randn(2), rtol=0, atol=0)


def test_expand_shapes_and_repr():
    for L, D in ((ember, ember.distributions), (torch, torch.distributions)):
        d = D.MixtureSameFamily(D.Categorical(logits=L.zeros(3)), D.Normal(L.zeros(3), 1.0))
        e = d.expand((2, 4))
        assert d.batch_shape == () and e.batch_shape == (2, 4)
        assert e.sample((5,)).shape == (5, 2, 4) and e.log_prob(L.zeros(2, 4)).shape == (2, 4)
        assert e.mixture_distribution.batch_shape == (2, 4)
        assert e.component_distribution.batch_shape == (2, 4, 3)
    d = ember.distributions.MixtureSameFamily(ember.distributions.Categorical(
        logits=ember.zeros(3)), ember.distributions.Normal(ember.zeros(3), 1.0))
    t = torch.distributions.MixtureSameFamily(torch.distributions.Categorical(
        logits=torch.zeros(3)), torch.distributions.Normal(torch.zeros(3), 1.0))
    assert repr(d) == repr(t).replace("torch.", "ember.")
    assert repr(d.support) == repr(t.support) and not d.has_rsample


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Normal(0.0, 1.0),
                                                L.distributions.Normal(L.zeros(3), 1.0)),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(3)), 3),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(2, 3)),
                                                L.distributions.Normal(L.zeros(4, 3), 1.0)),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(2)),
                                                L.distributions.Normal(L.zeros(3), 1.0)),
    lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(2)),
        L.distributions.Uniform(L.zeros(2), L.ones(2))).log_prob(L.tensor(2.0)),
    lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(2)),
        L.distributions.Normal(L.zeros(2), 1.0)).log_prob(L.tensor(float("nan"))),
    # (torch's gather cannot sample an unbatched mixture over batched components)
    lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(3)),
        L.distributions.Normal(L.zeros(2, 3), 1.0)).sample((5,)),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
