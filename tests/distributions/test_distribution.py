"""Distribution's validation against PyTorch: bad parameters and values raise ValueError
with PyTorch's messages; validate_args=False and set_default_validate_args switch it off."""

import pytest
import torch

import ember
from distributions._dist_helpers import raises_like_torch
from ember import distributions as D

from helpers import same_error


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
