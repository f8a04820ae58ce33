"""Cauchy against torch.distributions.Cauchy: statistics (NaN mean, infinite variance) and
scores with gradients (edge values included), draws from the same seed (bit for bit:
`cauchy_` is tan of a double uniform through libm, then one multiply-add in the dtype),
expand, repr and validation errors."""

import numpy as np
import pytest
import torch

import ember
from ember.distributions import Cauchy

from helpers import assert_same, check_dist, check_op, rand_array

LOC = rand_array((3, 4), np.float64)
SCALE = rand_array((4,), np.float64, low=0.5, high=2.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float64, low=-6, high=6, seed=2)
PROB = rand_array((3, 4), np.float64, low=0.01, high=0.99, seed=3)


def _make(D, loc, scale):
    return D.Cauchy(loc, scale)


def _same_message(call):
    with pytest.raises(ValueError) as t_info:
        call(torch)
    with pytest.raises(ValueError) as e_info:
        call(ember)
    assert str(e_info.value) == str(t_info.value).replace("torch.", "ember.")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    loc, scale = LOC.astype(dtype), SCALE.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype)), ("cdf", VALUE.astype(dtype))],
               loc, scale)
    # float32 tan: torch's vectorised (SLEEF) tan and ember's differ by up to 3 ulps
    check_dist(_make, [("icdf", PROB.astype(dtype))], loc, scale,
               **({"rtol": 2e-6, "atol": 1e-6} if dtype == np.float32 else {}))


def test_edge_values():
    edge = np.array([-np.inf, -1e30, 0.0, 0.5, 1e30, np.inf])
    check_dist(_make, [("cdf", edge), ("log_prob", edge[1:-1])], np.float64(0.5),
               np.float64(2.0))
    check_dist(_make, [("icdf", np.array([0.0, 1e-12, 0.5, 1 - 1e-12]))], np.float64(0.5),
               np.float64(2.0), grad=False, rtol=1e-9)


@pytest.mark.parametrize("shape", [(), (5,), (2, 3)], ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], LOC, SCALE, rtol=0, atol=0,
               grad_rtol=1e-13, grad_atol=1e-15)  # (gradients: summed in another order)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 7])
def test_draws_follow_torchs_stream_exactly(dtype, seed):
    loc = np.array([-3.0, 0.0, 0.5, 100.0], dtype)
    scale = np.array([0.1, 1.0, 2.5, 3.0], dtype)
    ember.manual_seed(seed)
    torch.manual_seed(seed)
    e = Cauchy(ember.tensor(loc), ember.tensor(scale)).sample((400,))
    t = torch.distributions.Cauchy(torch.tensor(loc), torch.tensor(scale)).sample((400,))
    assert_same(e, t, rtol=0, atol=0)
    assert ember.rand(3).tolist() == torch.rand(3).tolist()  # (the streams stay in step)


def test_shapes_expand_and_repr():
    d = Cauchy(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    assert d.mean.shape == (3, 4) and d.variance.shape == (3, 4)
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert repr(Cauchy(0.5, 2.0)) == repr(torch.distributions.Cauchy(0.5, 2.0))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Cauchy(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])),
    lambda L: L.distributions.Cauchy(float("inf"), 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.Cauchy(0.0, 1.0).log_prob(L.tensor(float("nan"))),
    lambda L: L.distributions.Cauchy(L.zeros(3), 1.0).log_prob(L.zeros(4)),
], ids=["scale", "inf-loc", "support", "shape"])
def test_errors_match_torch(call):
    _same_message(call)


KL_PAIRS = {
    "cauchy-cauchy": lambda L, a, b: (L.Cauchy(a, b.exp()), L.Cauchy(b, a.exp())),
}


@pytest.mark.parametrize("pair", sorted(KL_PAIRS))
def test_kl_divergence_values_and_gradients(pair):
    make = KL_PAIRS[pair]
    check_op(lambda a, b: ember.distributions.kl_divergence(*make(ember.distributions, a, b)),
             lambda a, b: torch.distributions.kl_divergence(*make(torch.distributions, a, b)),
             rand_array((6,), np.float64), rand_array((6,), np.float64, seed=1))
