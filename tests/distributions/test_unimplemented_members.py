"""What a distribution leaves unimplemented raises as in torch: the base class's bare
NotImplementedError (only `mode` carries a message), for the base class and for every
subclass that inherits it (TransformedDistribution's mean, RelaxedBernoulli's variance...)."""

import warnings

import pytest
import torch

import ember

MAKERS = {
    "Distribution": lambda L: L.distributions.Distribution(validate_args=False),
    "TransformedDistribution": lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(0.0, 1.0), [L.distributions.transforms.SigmoidTransform()]),
    "TransformedDistribution(no transforms)": lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(0.0, 1.0), []),
    "RelaxedBernoulli": lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5), L.tensor(0.3)),
    "RelaxedOneHotCategorical": lambda L: L.distributions.RelaxedOneHotCategorical(
        L.tensor(0.5), L.tensor([0.2, 0.8])),
    "Independent(Categorical)": lambda L: L.distributions.Independent(
        L.distributions.Categorical(L.ones(2, 3)), 1),
    "Categorical": lambda L: L.distributions.Categorical(L.tensor([0.2, 0.8])),
    "Normal": lambda L: L.distributions.Normal(L.tensor(0.0), L.tensor(1.0)),
    "Cauchy": lambda L: L.distributions.Cauchy(L.tensor(0.0), L.tensor(1.0)),
    "Binomial": lambda L: L.distributions.Binomial(5, L.tensor(0.3)),
}
MEMBERS = {
    "mean": lambda d, L: d.mean,
    "mode": lambda d, L: d.mode,
    "variance": lambda d, L: d.variance,
    "stddev": lambda d, L: d.stddev,
    "support": lambda d, L: d.support,
    "arg_constraints": lambda d, L: d.arg_constraints,
    "entropy": lambda d, L: d.entropy(),
    "perplexity": lambda d, L: d.perplexity(),
    "cdf": lambda d, L: d.cdf(L.tensor(0.5)),
    "icdf": lambda d, L: d.icdf(L.tensor(0.5)),
    "enumerate_support": lambda d, L: d.enumerate_support(),
    "rsample": lambda d, L: d.rsample(),
    "sample": lambda d, L: d.sample(),
    "log_prob": lambda d, L: d.log_prob(L.tensor(0.5)),
    "expand": lambda d, L: d.expand((3,)),
}


def _outcome(L, make, member):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            member(make(L), L)
        except Exception as exc:  # noqa: BLE001 - the exception is what is compared
            return type(exc), str(exc).replace(L.__name__ + ".", "<lib>.")
    return None


@pytest.mark.parametrize("member", list(MEMBERS))
@pytest.mark.parametrize("name", list(MAKERS))
def test_unimplemented_members_raise_as_torch(name, member):
    want = _outcome(torch, MAKERS[name], MEMBERS[member])
    got = _outcome(ember, MAKERS[name], MEMBERS[member])
    assert got == want


def test_transformed_mean_is_a_bare_not_implemented_error():
    d = ember.distributions.TransformedDistribution(
        ember.distributions.Normal(0.0, 1.0), [ember.distributions.transforms.SigmoidTransform()])
    with pytest.raises(NotImplementedError) as info:
        _ = d.mean
    assert repr(info.value) == "NotImplementedError()"


def test_sample_n_warns_as_torch():
    for L in (torch, ember):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert tuple(L.distributions.Normal(0.0, 1.0).sample_n(2).shape) == (2,)
        assert [(w.category, str(w.message)) for w in caught] == [
            (FutureWarning, "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.")]
        assert caught[0].filename == __file__


def test_transformed_support_is_a_dependent_property():
    for L in (torch, ember):
        support = L.distributions.TransformedDistribution.support
        assert L.distributions.constraints.is_dependent(support)
        assert support.is_discrete is False
