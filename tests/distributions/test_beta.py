"""Beta against torch.distributions.Beta (a two-coordinate Dirichlet): statistics, scores,
PyTorch's samples from the same seed, and reparameterised gradients in both concentrations,
bit for bit PyTorch's fitted approximations (tests/distributions/test_implicit_grads.py)."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import Beta

from helpers import assert_same, check_dist, rand_array

C1 = rand_array((3,), np.float32, low=0.3, high=4.0)
C0 = rand_array((2, 3), np.float32, low=0.3, high=4.0, seed=1)
VALUE = rand_array((2, 3), np.float32, low=0.05, high=0.95, seed=2)


def _make(D, c1, c0):
    return D.Beta(c1, c0)


def test_statistics_and_scores():
    check_dist(_make, ["mean", "variance", "entropy", "concentration1", "concentration0",
                       ("log_prob", VALUE)], C1, C0)
    check_dist(_make, ["mode"], np.array([0.5, 2.0, 3.0], np.float32),
               np.array([0.7, 0.5, 3.0], np.float32), grad=False)  # (see test_dirichlet.py)
    check_dist(_make, ["mode"], np.array([1.5, 2.0, 3.0], np.float32),
               np.array([1.7, 1.5, 3.0], np.float32))


@pytest.mark.parametrize("shape", [(), (5,)], ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    # (the implicit gradient is PyTorch's bit for bit, test_implicit_grads.py; the chain
    # round it, a stack and sums over sample dims, rounds a last bit apart)
    check_dist(_make, [("rsample", shape)], C1, C0, rtol=0, atol=0, grad_rtol=1e-6,
               grad_atol=1e-7)


def test_number_parameters_and_shapes():
    ember.manual_seed(3)
    torch.manual_seed(3)
    assert_same(Beta(2.0, 3.0).sample((6,)), torch.distributions.Beta(2.0, 3.0).sample((6,)),
                rtol=0, atol=0)
    d = Beta(ember.ones(3), ember.ones(2, 1))
    assert d.batch_shape == (2, 3) and d.event_shape == ()
    assert d.expand((4, 2, 3)).sample().shape == (4, 2, 3)
    assert repr(Beta(2.0, 3.0)) == repr(torch.distributions.Beta(2.0, 3.0)) == "Beta()"


def test_validation_errors():
    with pytest.raises(ValueError, match="concentration"):
        Beta(ember.tensor([1.0]), ember.tensor([-1.0]), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        Beta(2.0, 2.0, validate_args=True).log_prob(ember.tensor(1.5))
