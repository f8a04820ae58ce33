"""RelaxedOneHotCategorical, RelaxedBernoulli and their bases (ExpRelaxedCategorical,
LogitRelaxedBernoulli) against torch: seeded reparameterised samples draw for draw, scores,
gradients through samples and scores, expand, and validation errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember.distributions import RelaxedBernoulli, RelaxedOneHotCategorical

from helpers import assert_same, check_dist, rand_array

LOGITS = rand_array((2, 4), np.float64, seed=1)
PROBS = rand_array((2, 4), np.float64, low=0.1, high=1.0, seed=2)
P = rand_array((3,), np.float64, low=0.05, high=0.95, seed=3)
TEMP = np.array(0.7)
SIMPLEX = rand_array((5, 2, 4), np.float64, low=0.1, high=1.0, seed=4)
SIMPLEX = SIMPLEX / SIMPLEX.sum(-1, keepdims=True)
UNIT = rand_array((5, 3), np.float64, low=0.01, high=0.99, seed=5)

CATEGORICAL = {
    "relaxed_logits": lambda D, t, x: D.RelaxedOneHotCategorical(t, logits=x),
    "relaxed_probs": lambda D, t, x: D.RelaxedOneHotCategorical(t, probs=x),
    "exp_relaxed": lambda D, t, x: D.relaxed_categorical.ExpRelaxedCategorical(t, logits=x),
}
BERNOULLI = {
    "relaxed_logits": lambda D, t, x: D.RelaxedBernoulli(t, logits=x),
    "relaxed_probs": lambda D, t, x: D.RelaxedBernoulli(t, probs=x),
    "logit_relaxed": lambda D, t, x: D.relaxed_bernoulli.LogitRelaxedBernoulli(t, probs=x),
}


@pytest.mark.parametrize("name", sorted(CATEGORICAL))
def test_relaxed_categorical_matches_torch(name):
    make = CATEGORICAL[name]
    arr = PROBS if name == "relaxed_probs" else LOGITS
    value = np.log(SIMPLEX) if name == "exp_relaxed" else SIMPLEX
    check_dist(make, ["probs", "logits", "temperature", ("rsample", (3,)), ("sample", (2,)),
                      ("log_prob", value)], TEMP, arr)
    if name.startswith(("exp", "logit")):
        check_dist(make, ["param_shape"], TEMP, arr)


@pytest.mark.parametrize("name", sorted(BERNOULLI))
def test_relaxed_bernoulli_matches_torch(name):
    make = BERNOULLI[name]
    arr = LOGITS[0, :3] if name == "relaxed_logits" else P
    value = np.log(UNIT / (1 - UNIT)) if name == "logit_relaxed" else UNIT
    check_dist(make, ["probs", "logits", "temperature", ("rsample", (4,)), ("sample", ()),
                      ("log_prob", value)], TEMP, arr)
    if name.startswith(("exp", "logit")):
        check_dist(make, ["param_shape"], TEMP, arr)


@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3])
def test_samples_draw_for_draw_in_float32(seed):
    for L in (ember, torch):
        L.manual_seed(seed)
    logits = LOGITS.astype(np.float32)
    s1 = RelaxedOneHotCategorical(ember.tensor(0.3), logits=ember.tensor(logits)).sample((50,))
    s2 = RelaxedBernoulli(ember.tensor(2.0), probs=ember.tensor(P.astype(np.float32))).sample(
        (9,))
    s3 = ember.rand(3)  # the generator ends in the same state
    T = torch.distributions
    t1 = T.RelaxedOneHotCategorical(torch.tensor(0.3), logits=torch.tensor(logits)).sample((50,))
    t2 = T.RelaxedBernoulli(torch.tensor(2.0), probs=torch.tensor(P.astype(np.float32))).sample(
        (9,))
    assert_same(s1, t1)
    assert_same(s2, t2)
    assert_same(s3, torch.rand(3), rtol=0, atol=0)


def test_extreme_uniforms_stay_finite():
    # the clamped uniforms keep the Gumbel noise finite even at the lowest temperature
    d = RelaxedBernoulli(ember.tensor(1e-3), logits=ember.tensor([-30.0, 0.0, 30.0]))
    ember.manual_seed(0)
    s = d.sample((1000,))
    assert np.isfinite(s.numpy()).all() and (s.numpy() >= 0).all() and (s.numpy() <= 1).all()


def test_expand_and_support():
    T = torch.distributions
    for L, D in ((ember, ember.distributions), (torch, T)):
        d = D.RelaxedOneHotCategorical(L.tensor(0.5), logits=L.zeros(4)).expand((2, 3))
        assert d.batch_shape == (2, 3) and d.event_shape == (4,)
        assert d.rsample((5,)).shape == (5, 2, 3, 4)
        b = D.RelaxedBernoulli(L.tensor(0.5), probs=0.3).expand((2,))
        assert b.batch_shape == (2,) and b.sample().shape == (2,)
        assert D.RelaxedBernoulli(L.tensor(0.5), probs=0.3).batch_shape == ()
    assert repr(RelaxedBernoulli(ember.tensor(0.5), probs=0.3).support) == "Interval(" \
        "lower_bound=0.0, upper_bound=1.0)"
    assert repr(RelaxedOneHotCategorical(ember.tensor(0.5), logits=ember.zeros(3)).support) \
        == "Simplex()"


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.RelaxedOneHotCategorical(L.tensor(0.5), L.tensor([0.5, -0.1])),
    lambda L: L.distributions.RelaxedOneHotCategorical(L.tensor(0.5), L.tensor([0.5, 0.5]))
    .log_prob(L.tensor([0.5, 0.6])),
    lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.5, 1.5])),
    lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5), L.tensor([0.5]))
    .log_prob(L.tensor([1.5])),
    lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5)),
    lambda L: L.distributions.RelaxedOneHotCategorical(L.tensor(0.5)),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)
