"""Distribution's validation against PyTorch: bad parameters and values raise ValueError
with PyTorch's messages; validate_args=False and set_default_validate_args switch it off."""

import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember import distributions as D

from helpers import assert_same, same_error


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, -1.0])),
    lambda L: L.distributions.Normal(0.0, 0.0),
    lambda L: L.distributions.Normal(float("nan"), 1.0),
    lambda L: L.distributions.Normal(0.0, 1.0).log_prob(1.0),
    lambda L: L.distributions.Normal(L.zeros(3), 1.0).log_prob(L.zeros(4)),
    lambda L: L.distributions.Bernoulli(L.tensor([0.5, 1.5])),
    lambda L: L.distributions.Bernoulli(L.tensor([0.5, 1.0])).log_prob(L.tensor([0.5, 1.0])),
    lambda L: L.distributions.Bernoulli(),
    lambda L: L.distributions.Categorical(L.tensor([0.5, -0.1])),
    lambda L: L.distributions.Categorical(probs=L.tensor(1.0)),
    lambda L: L.distributions.Categorical(L.tensor([0.5, 0.5])).log_prob(L.tensor(2)),
    lambda L: L.distributions.Categorical(L.ones(2), logits=L.ones(2)),
    lambda L: L.distributions.Uniform(1.0, 0.0),
    lambda L: L.distributions.Uniform(0.0, 1.0).log_prob(L.tensor(2.0)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2)),
    lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2], [2, 1]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=L.ones(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=-L.eye(2)),
    lambda L: L.distributions.Independent(L.distributions.Normal(L.zeros(3), 1.0), 2),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(L.zeros(3)),
], ids=lambda f: None)
def test_invalid_arguments(call):
    raises_like_torch(call)


def test_validation_can_be_switched_off():
    d = D.Normal(0.0, -1.0, validate_args=False)
    assert d.scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_missing_kl_and_rsample():
    same_error(lambda L: L.distributions.kl_divergence(L.distributions.Normal(0.0, 1.0),
                                                       L.distributions.Bernoulli(0.5)))
    same_error(lambda L: L.distributions.Categorical(L.ones(2)).rsample())


def test_repr():
    assert repr(D.Normal(0.0, 1.0)) == repr(torch.distributions.Normal(0.0, 1.0))
    assert repr(D.Categorical(logits=ember.zeros(2, 3))) == \
        repr(torch.distributions.Categorical(logits=torch.zeros(2, 3))).replace("torch", "ember")
    interval = D.constraints.interval(0, 1)
    assert repr(interval) == repr(torch.distributions.constraints.interval(0, 1))


def test_validation_runs_under_vmap():
    # the parameter and support checks branch on a whole batch's truth (_is_all_true), so
    # building and scoring a distribution inside vmap works as in PyTorch
    def run(L):
        D = L.distributions
        mus = L.tensor([[0.0, 0.5], [1.0, -0.5], [0.25, 0.25]])
        normal = L.vmap(lambda m: D.Independent(D.Normal(m, 0.5), 1).log_prob(0 * m))(mus)
        cat = L.vmap(lambda lg: D.Categorical(logits=lg).log_prob(L.tensor(1)))(mus)
        return normal, cat

    for got, want in zip(run(ember), run(torch)):
        # (log and log-sum-exp of float32: a last-bit difference is allowed)
        assert_same(got, want, rtol=1e-6, atol=1e-7)


def test_invalid_values_under_vmap_raise_like_torch():
    # an out-of-support value fails the whole batch's check; the message's repr of a
    # batched tensor then raises as PyTorch's does
    same_error(lambda L: L.vmap(lambda m: L.distributions.Normal(0.0, m))(L.tensor([1.0, -1.0])))
    same_error(lambda L: L.vmap(lambda v: L.distributions.Categorical(logits=L.zeros(2))
                                .log_prob(v))(L.tensor([0, 5])))
