"""Dirichlet against torch.distributions.Dirichlet: statistics, scores, PyTorch's samples
bit for bit from the same seed, and its reparameterised gradient (each coordinate's marginal
Beta gradient, PyTorch's fitted approximation: tests/distributions/test_implicit_grads.py),
bit for bit too."""

import numpy as np
import pytest

import ember
from ember.distributions import Dirichlet

from helpers import check_dist, rand_array

CONC = rand_array((2, 3), np.float32, low=0.3, high=4.0)
VALUE = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], np.float32)
# The implicit gradient itself is PyTorch's bit for bit (test_implicit_grads.py); the
# chain round it (a division by the rate, sums over sample dims) rounds a last bit apart.
IMPLICIT = dict(rtol=0, atol=0, grad_rtol=1e-6, grad_atol=1e-7)


def _make(D, conc):
    return D.Dirichlet(conc)


def test_statistics_and_scores():
    check_dist(_make, ["mean", "variance", "entropy", ("log_prob", VALUE)], CONC)
    # (a row of concentrations all below 1 takes a corner; no gradients: its 0/0 reaches a
    # clamp whose VJP in ember multiplies by the mask, giving NaN where PyTorch's gives 0)
    check_dist(_make, ["mode"], np.array([[0.5, 0.7, 0.2], [2.0, 3.0, 1.5]], np.float32),
               grad=False)
    check_dist(_make, ["mode"], np.array([[1.5, 2.0, 3.0], [2.0, 3.0, 1.5]], np.float32))


@pytest.mark.parametrize("shape", [(), (4,)], ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    check_dist(_make, [("rsample", shape)], CONC, **IMPLICIT)


def test_shapes_and_errors():
    d = Dirichlet(ember.ones(2, 3))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    assert d.sample((5,)).shape == (5, 2, 3)
    assert d.expand((4, 2)).sample().shape == (4, 2, 3)
    np.testing.assert_allclose(d.sample((10,)).sum(-1).numpy(), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="must be at least one-dimensional"):
        Dirichlet(ember.tensor(1.0))
    with pytest.raises(ValueError, match="concentration"):
        Dirichlet(ember.tensor([1.0, 0.0]), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        Dirichlet(ember.ones(3), validate_args=True).log_prob(ember.tensor([0.5, 0.4, 0.4]))


def test_sample_statistics():
    ember.manual_seed(0)
    s = Dirichlet(ember.tensor([1.0, 2.0, 7.0])).sample((10000,))
    # means 0.1, 0.2, 0.7; standard errors below 0.0013: 3% is many of them
    np.testing.assert_allclose(s.mean(0).numpy(), [0.1, 0.2, 0.7], rtol=0.03)
