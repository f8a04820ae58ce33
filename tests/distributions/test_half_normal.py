"""HalfNormal against torch.distributions.HalfNormal: statistics and scores with gradients
(edge values included: -inf log density below 0), draws from the same seed bit for bit
(|normal draw * scale|), expand, repr, validation errors and the HalfNormal pair of
kl_divergence."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import HalfNormal

from helpers import assert_same, check_dist, check_op, rand_array

SCALE = rand_array((3, 4), np.float64, low=0.3, high=2.5)
VALUE = rand_array((2, 3, 4), np.float64, low=0.0, high=5.0, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, scale):
    return D.HalfNormal(scale)


def _same_message(call):
    with pytest.raises(ValueError) as t_info:
        call(torch)
    with pytest.raises(ValueError) as e_info:
        call(ember)
    assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    check_dist(_make, ["scale", "mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype))],
               SCALE.astype(dtype))
    check_dist(_make, [("icdf", PROB.astype(dtype))], SCALE.astype(dtype),
               **({"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {}))


def test_edge_values():
    scale = np.float64(1.5)
    check_dist(_make, [("log_prob", np.array([0.0, 1e-300, 40.0])),
                       ("cdf", np.array([0.0, 1e-300, 40.0, np.inf])),
                       ("icdf", np.array([0.0, 0.5, 0.9]))], scale)
    check_dist(lambda D, s: D.HalfNormal(s, validate_args=False),
               [("log_prob", np.array([-1.0, -0.0, 1.0]))], scale)
    check_dist(_make, [("icdf", np.array([1.0]))], scale, grad=False)


@pytest.mark.parametrize("shape", [(), (5,), (2, 3)], ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], SCALE, rtol=0, atol=0,
               grad_rtol=1e-13, grad_atol=1e-15)  # (gradients: summed in another order)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 50])
def test_draws_follow_torchs_stream_exactly(dtype, n):
    scale = np.array([0.1, 1.0, 2.5, 3.0], dtype)
    ember.manual_seed(2)
    torch.manual_seed(2)
    assert_same(HalfNormal(ember.tensor(scale)).sample((n,)),
                torch.distributions.HalfNormal(torch.tensor(scale)).sample((n,)),
                rtol=0, atol=0)
    assert_same(HalfNormal(2.0).sample((n,)), torch.distributions.HalfNormal(2.0).sample((n,)),
                rtol=0, atol=0)
    assert ember.randn(3).tolist() == torch.randn(3).tolist()  # (the streams stay in step)


def test_shapes_expand_and_repr():
    d = HalfNormal(ember.ones(3, 4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert type(e) is HalfNormal and e.batch_shape == (5, 3, 4) and e.scale.shape == (5, 3, 4)
    assert repr(HalfNormal(2.0)) == repr(torch.distributions.HalfNormal(2.0))
    assert repr(HalfNormal.support) == "GreaterThanEq(lower_bound=0.0)"


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.HalfNormal(L.tensor([1.0, -1.0])),
    lambda L: L.distributions.HalfNormal(1.0).log_prob(L.tensor(-0.5)),
    lambda L: L.distributions.HalfNormal(L.ones(3)).log_prob(L.ones(4)),
], ids=["scale", "support", "shape"])
def test_errors_match_torch(call):
    _same_message(call)


def test_kl_divergence_values_and_gradients():
    def kl(D):
        return lambda a, b: D.kl_divergence(D.HalfNormal(a.exp()), D.HalfNormal(b.exp()))

    check_op(kl(ember.distributions), kl(torch.distributions), rand_array((6,), np.float64),
             rand_array((6,), np.float64, seed=1))
