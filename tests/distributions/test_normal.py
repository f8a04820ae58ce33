"""Normal against torch.distributions.Normal: statistics, log_prob / cdf / icdf with
gradients, reparameterised and plain samples from the same seeded stream."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES
from ember.distributions import Normal

from helpers import assert_same, check_dist, rand_array

LOC = rand_array((3, 4), np.float32)
SCALE = rand_array((4,), np.float32, low=0.5, high=2.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float32, seed=2)
PROB = rand_array((3, 4), np.float32, low=0.05, high=0.95, seed=3)


def test_statistics_and_scores():
    make = lambda D, loc, scale: D.Normal(loc, scale)  # noqa: E731
    check_dist(make, ["mean", "mode", "variance", "stddev", "entropy", ("log_prob", VALUE),
                      ("cdf", VALUE)], LOC, SCALE)
    check_dist(make, [("icdf", PROB)], LOC, SCALE, rtol=1e-4, atol=1e-5)


def test_log_prob_gradient_with_respect_to_value():
    check_dist(lambda D, loc, scale: D.Normal(loc, scale), [("log_prob", VALUE)],
               LOC.astype(np.float64), SCALE.astype(np.float64))


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_and_gradients(shape):
    check_dist(lambda D, loc, scale: D.Normal(loc, scale), [("rsample", shape)], LOC, SCALE)


def test_sample_reproduces_torch_stream():
    ember.manual_seed(0)
    torch.manual_seed(0)
    assert_same(Normal(0.0, 1.0).sample((5,)), torch.distributions.Normal(0.0, 1.0).sample((5,)),
                rtol=0, atol=0)
    s = Normal(ember.tensor(LOC), ember.tensor(SCALE)).sample((20,))
    t = torch.distributions.Normal(torch.tensor(LOC), torch.tensor(SCALE)).sample((20,))
    assert_same(s, t, rtol=0, atol=0)
    assert not s.requires_grad


def test_shapes_and_expand():
    d = Normal(ember.zeros(3, 1), ember.ones(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    assert Normal(0.0, 1.0).batch_shape == ()
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)


def test_scalar_parameters_take_the_default_dtype():
    assert_same(Normal(0.5, 2.0).log_prob(ember.tensor(1.0)),
                torch.distributions.Normal(0.5, 2.0).log_prob(torch.tensor(1.0)))
    d = Normal(ember.tensor([0.0], dtype=ember.float64), 1.0)
    assert d.scale.dtype is ember.float64


@pytest.mark.parametrize("make", [
    lambda D: D.Normal(0.0, 1.0), lambda D: D.Cauchy(0.0, 1.0), lambda D: D.Exponential(1.0),
    lambda D: D.HalfNormal(1.0), lambda D: D.LogNormal(0.0, 1.0),
])
@pytest.mark.parametrize("value", [0.5, 1])
def test_icdf_of_a_python_number_is_refused_as_torch(make, value):
    # torch's icdf calls the function form (torch.erfinv / tan / log1p) on the number
    msgs = []
    for L in (ember, torch):
        with pytest.raises(TypeError) as e:
            make(L.distributions).icdf(value)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
