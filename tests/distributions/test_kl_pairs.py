"""The KL pairs PyTorch registers among Beta, Dirichlet, Gamma, Normal, Uniform,
OneHotCategorical, TransformedDistribution, Binomial, Geometric, Poisson and Bernoulli,
against torch.distributions.kl_divergence: values and gradients (test_kl.py covers the
original same-family pairs), infinities where p's support leaves q's, and the registry
holding every such torch pair."""

import numpy as np
import pytest
import torch

import ember
from ember import distributions as D

from helpers import check_op, rand_array

A = rand_array((3,), np.float64, seed=1)
B = rand_array((3,), np.float64, seed=2)


def beta(L, a):
    return L.Beta(a.exp() + 0.5, (-a).exp() + 0.3)


def gamma(L, a):
    return L.Gamma(a.exp() + 0.5, (0.5 * a).exp())


def normal(L, a):
    return L.Normal(a, (0.3 * a).exp())


def uniform_in_unit(L, a):  # inside (0, 1): finite against a Beta
    return L.Uniform(a.sigmoid() * 0.4, a.sigmoid() * 0.4 + 0.5)


def uniform_positive(L, a):  # inside (0, inf): finite against a Gamma
    return L.Uniform(a.exp(), a.exp() + 2)


def uniform(L, a):
    return L.Uniform(a - 3, a + 2)


def dirichlet(L, a):
    return L.Dirichlet(a.reshape(-1, 3).exp() + 0.2)


def one_hot(L, a):
    return L.OneHotCategorical(logits=a.reshape(-1, 3))


def transformed(L, a):
    return L.TransformedDistribution(L.Normal(a, a.exp()), [L.ExpTransform()])


def binomial(L, a):
    return L.Binomial(6, logits=a)


def binomial_more(L, a):
    return L.Binomial(a.new_tensor([6.0, 9.0, 6.0]), logits=a)


def geometric(L, a):
    return L.Geometric(logits=a)


def poisson(L, a):
    return L.Poisson(a.exp())


def bernoulli(L, a):
    return L.Bernoulli(logits=a)


PAIRS = {
    "beta_beta": (beta, beta), "gamma_gamma": (gamma, gamma),
    "dirichlet_dirichlet": (dirichlet, dirichlet), "onehot_onehot": (one_hot, one_hot),
    "transformed_transformed": (transformed, transformed),
    "beta_gamma": (beta, gamma), "beta_normal": (beta, normal), "beta_uniform": (beta, uniform),
    "gamma_normal": (gamma, normal), "uniform_beta": (uniform_in_unit, beta),
    "uniform_gamma": (uniform_positive, gamma), "uniform_normal": (uniform, normal),
    # support mismatches: infinite throughout (or where it leaves)
    "gamma_beta": (gamma, beta), "gamma_uniform": (gamma, uniform),
    "normal_beta": (normal, beta), "normal_gamma": (normal, gamma),
    "normal_uniform": (normal, uniform), "beta_uniform_inf": (beta, uniform_in_unit),
    "uniform_beta_inf": (uniform, beta), "uniform_gamma_inf": (uniform, gamma),
    "binomial_binomial": (binomial, binomial), "binomial_fewer": (binomial_more, binomial),
    "geometric_geometric": (geometric, geometric), "poisson_poisson": (poisson, poisson),
    "bernoulli_poisson": (bernoulli, poisson), "poisson_bernoulli": (poisson, bernoulli),
    "poisson_binomial": (poisson, binomial),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_kl_values_and_gradients(pair):
    make_p, make_q = PAIRS[pair]

    def kl(L):
        return lambda a, b: L.kl_divergence(make_p(L, a), make_q(L, b))

    arrays = (A, B) if pair != "dirichlet_dirichlet" else (rand_array((2, 3), np.float64),
                                                           rand_array((2, 3), np.float64, seed=3))
    # NOTE: gradients through digamma use ember's trigamma, ~1e-9 relative from torch's
    check_op(kl(D), kl(torch.distributions), *arrays, grad_rtol=1e-7)


def test_binomial_pairs_need_enough_trials_in_p():
    for L in (D, torch.distributions):
        lib = torch if L is torch.distributions else ember
        with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
            L.kl_divergence(L.Binomial(3, lib.tensor([0.5])), L.Binomial(4, lib.tensor([0.5])))


def test_transformed_pairs_need_equal_transforms():
    for L in (D, torch.distributions):
        lib = torch if L is torch.distributions else ember
        p = L.TransformedDistribution(L.Normal(lib.zeros(2), 1.0), [L.ExpTransform()])
        q = L.TransformedDistribution(L.Normal(lib.zeros(2), 1.0), [L.SigmoidTransform()])
        with pytest.raises(NotImplementedError):
            L.kl_divergence(p, q)


def test_registry_has_every_torch_pair_among_ember_families():
    from torch.distributions.kl import _KL_REGISTRY as torch_registry

    from ember.distributions.kl import _KL_REGISTRY as ember_registry

    ours = {(p.__name__, q.__name__) for p, q in ember_registry}
    names = {"Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Gamma", "Geometric",
             "Independent", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
             "NegativeBinomial", "Normal", "OneHotCategorical", "Poisson", "RelaxedBernoulli",
             "RelaxedOneHotCategorical", "TransformedDistribution", "Uniform"}
    expected = {(p.__name__, q.__name__) for p, q in torch_registry
                if p.__name__ in names and q.__name__ in names}
    assert expected <= ours, sorted(expected - ours)
