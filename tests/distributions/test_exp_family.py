"""ExponentialFamily against torch.distributions.ExponentialFamily: which classes derive from
it, the Bregman entropy from the log normaliser (with gradients), the same-family KL that
kl_divergence falls back to, and what the abstract base raises."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import check_kl, raises_like_torch

from helpers import check_op, rand_array

FAMILY_CLASSES = ["Bernoulli", "Beta", "Chi2", "ContinuousBernoulli", "Dirichlet",
                  "Exponential", "Gamma", "Normal", "Poisson", "Wishart"]
POS = rand_array((4,), np.float64, low=0.3, high=3.0)
POS2 = rand_array((4,), np.float64, low=0.3, high=3.0, seed=1)
PROB = rand_array((4,), np.float64, low=0.05, high=0.95, seed=2)


@pytest.mark.parametrize("name", FAMILY_CLASSES + ["Categorical", "Uniform", "Laplace"])
def test_the_same_classes_derive_from_exponential_family(name):
    def derives(L):
        return issubclass(getattr(L.distributions, name), L.distributions.ExponentialFamily)
    assert derives(ember) == derives(torch)


# (distribution maker, its parameters): each family's natural parameters and log normaliser
BREGMAN = {
    "Normal": (lambda D, a, b: D.Normal(a, b), (POS2 - 1, POS)),
    "Gamma": (lambda D, a, b: D.Gamma(a, b), (POS, POS2)),
    "Exponential": (lambda D, a: D.Exponential(a), (POS,)),
    "Bernoulli": (lambda D, p: D.Bernoulli(p), (PROB,)),
    "ContinuousBernoulli": (lambda D, p: D.ContinuousBernoulli(p), (PROB,)),
}


@pytest.mark.parametrize("name", list(BREGMAN))
def test_bregman_entropy_matches_torch_and_the_closed_form(name):
    make, params = BREGMAN[name]

    def bregman(D, *p):
        return D.ExponentialFamily.entropy(make(D, *p))

    # (a second derivative of the log normaliser, summed in another order: ulps)
    check_op(lambda *p: bregman(ember.distributions, *p),
             lambda *p: bregman(torch.distributions, *p), *params, rtol=1e-12, atol=1e-12,
             grad_rtol=1e-10, grad_atol=1e-10)
    d = make(ember.distributions, *[ember.tensor(p) for p in params])
    np.testing.assert_allclose(ember.distributions.ExponentialFamily.entropy(d).detach().numpy(),
                               d.entropy().numpy(), rtol=1e-10, atol=1e-12)


def test_natural_parameters_and_log_normalizers_match_torch():
    for name, (make, params) in BREGMAN.items():
        e = make(ember.distributions, *[ember.tensor(p) for p in params])
        t = make(torch.distributions, *[torch.tensor(p) for p in params])
        for a, b in zip(e._natural_params, t._natural_params):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-15, err_msg=name)
        np.testing.assert_allclose(e._log_normalizer(*e._natural_params).numpy(),
                                   t._log_normalizer(*t._natural_params).numpy(),
                                   rtol=1e-14, err_msg=name)


def test_same_family_kl_falls_back_to_the_bregman_divergence():
    # Poisson and ContinuousBernoulli have no closed-form pair registered: the fallback runs
    check_kl(lambda D, a, b: (D.Poisson(a), D.Poisson(b)), POS, POS2,
             rtol=1e-13, atol=1e-14, grad_rtol=1e-10, grad_atol=1e-12)
    check_kl(lambda D, a, b: (D.ContinuousBernoulli(a), D.ContinuousBernoulli(b)),
             PROB, PROB[::-1].copy(), rtol=1e-10, atol=1e-12, grad_rtol=1e-8, grad_atol=1e-10)
    rate = ember.tensor([2.0, 3.0], dtype=ember.float64)
    other = ember.tensor([1.0, 5.0], dtype=ember.float64)
    kl = ember.distributions.kl_divergence(ember.distributions.Poisson(rate),
                                           ember.distributions.Poisson(other))
    want = rate * (rate / other).log() - rate + other  # (worked by hand)
    np.testing.assert_allclose(kl.detach().numpy(), want.numpy(), rtol=1e-14)


def test_cross_family_kl_and_missing_members_raise_as_torch():
    raises_like_torch(lambda L: L.distributions.kl_divergence(
        L.distributions.Exponential(L.tensor(2.0)), L.distributions.Poisson(L.tensor(2.0))),
        NotImplementedError)
    raises_like_torch(lambda L: L.distributions.Poisson(L.tensor(2.0)).entropy(),
                      NotImplementedError)
    raises_like_torch(lambda L: L.distributions.ExponentialFamily(validate_args=False)
                      ._log_normalizer(L.tensor(1.0)), NotImplementedError)
    raises_like_torch(lambda L: L.distributions.ExponentialFamily(validate_args=False)
                      ._natural_params, NotImplementedError)
    raises_like_torch(lambda L: L.distributions.ExponentialFamily.entropy(
        L.distributions.Dirichlet(L.ones(3))), NotImplementedError)


@pytest.mark.parametrize("module", ["exp_family", "fishersnedecor", "generalized_pareto",
                                    "inverse_gamma", "kumaraswamy", "lkj_cholesky",
                                    "logistic_normal", "wishart"])
def test_modules_import_by_torchs_names(module):
    import importlib

    e = importlib.import_module(f"ember.distributions.{module}")
    t = importlib.import_module(f"torch.distributions.{module}")
    assert e.__all__ == t.__all__
    for name in e.__all__:
        assert getattr(e, name) is getattr(ember.distributions, name)
