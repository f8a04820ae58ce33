"""kl_divergence against torch.distributions.kl_divergence: values and gradients for each
registered pair, infinite where the support of p leaves that of q, and register_kl
dispatching to the most specific registered pair (ambiguous pairs resolved and warned about
as torch does)."""

import warnings

import numpy as np
import pytest
import torch

import ember
from ember import distributions as D

from helpers import check_op, rand_array


def _tril(m, d):
    """A lower-triangular factor with a positive diagonal, made from m."""
    return m.tril(-1) + (m.diagonal().exp() + d).diag()


PAIRS = {
    "normal": (lambda L, a, b: (L.Normal(a[0], a[1].exp()), L.Normal(b[0], b[1].exp())),
               (2, 3)),
    "categorical": (lambda L, a, b: (L.Categorical(logits=a), L.Categorical(logits=b)), (2, 4)),
    "bernoulli": (lambda L, a, b: (L.Bernoulli(logits=a), L.Bernoulli(logits=b)), (3,)),
    "uniform": (lambda L, a, b: (L.Uniform(a - 3, a.exp() + 1), L.Uniform(b - 5, b.exp() + 3)),
                (3,)),
    "mvn": (lambda L, a, b: (L.MultivariateNormal(a[0], scale_tril=_tril(a, 3)),
                             L.MultivariateNormal(b[0], scale_tril=_tril(b, 4))), (3, 3)),
    "independent": (lambda L, a, b: (L.Independent(L.Normal(a, 1.0), 1),
                                     L.Independent(L.Normal(b, 2.0), 1)), (2, 3)),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_kl_values_and_gradients(pair):
    import torch

    make, shape = PAIRS[pair]

    def kl(L):
        return lambda a, b: L.kl_divergence(*make(L, a, b))

    check_op(kl(D), kl(torch.distributions), rand_array(shape, np.float64),
             rand_array(shape, np.float64, seed=1))


def test_infinite_where_supports_differ():
    import torch

    for L in (D, torch.distributions):
        lib = torch if L is torch.distributions else __import__("ember")
        p = L.Categorical(lib.tensor([0.5, 0.5, 0.0]))
        q = L.Categorical(lib.tensor([1.0, 0.0, 0.0]))
        assert L.kl_divergence(p, q).item() == float("inf")
        assert L.kl_divergence(q, p).item() == pytest.approx(np.log(2))


def test_register_kl_dispatches_to_the_most_specific_pair():
    class Wide(D.Normal):
        pass

    @D.register_kl(Wide, D.Normal)
    def _kl_wide(p, q):
        return p.loc * 0 + 42.0

    p, q = Wide(0.0, 1.0), D.Normal(1.0, 1.0)
    assert D.kl_divergence(p, q).item() == 42.0
    assert D.kl_divergence(q, p).item() == pytest.approx(0.5)


@pytest.mark.parametrize("args", [(3, "Normal"), ("Normal", None)])
def test_register_kl_refuses_a_non_class_as_torch_does(args):
    def call(L):
        return L.distributions.register_kl(
            *(getattr(L.distributions, a) if isinstance(a, str) else a for a in args))
    with pytest.raises(TypeError) as t_info:
        call(torch)
    with pytest.raises(TypeError) as e_info:
        call(ember)
    assert str(e_info.value) == str(t_info.value)


def test_an_ambiguous_pair_resolves_and_warns_as_in_torch():
    # (Sub, Distribution) and (Distribution, Sub) both match KL(Sub || Sub), more
    # specifically than (Normal, Normal): torch takes the left-most specific one and warns
    results = []
    for L in (torch, ember):
        class Sub(L.distributions.Normal):
            pass

        L.distributions.register_kl(Sub, L.distributions.Distribution)(
            lambda p, q, L=L: L.tensor(1.0))
        L.distributions.register_kl(L.distributions.Distribution, Sub)(
            lambda p, q, L=L: L.tensor(2.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = L.distributions.kl_divergence(Sub(0.0, 1.0), Sub(1.0, 1.0)).item()
        results.append((value, [(w.category, str(w.message)) for w in caught]))
        # a subclass's own pair breaks the tie, silently
        L.distributions.register_kl(Sub, Sub)(lambda p, q, L=L: L.tensor(3.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = L.distributions.kl_divergence(Sub(0.0, 1.0), Sub(1.0, 1.0)).item()
        results.append((value, len(caught)))
    assert results[2:] == results[:2]
    assert results[0] == (1.0, [(RuntimeWarning, "Ambiguous kl_divergence(Sub, Sub). "
                                                 "Please register_kl(Sub, Sub)")])
