"""kl_divergence against torch.distributions.kl_divergence: values and gradients for each
registered pair, infinite where the support of p leaves that of q, and register_kl
dispatching to the most specific registered pair."""

import numpy as np
import pytest

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
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)
