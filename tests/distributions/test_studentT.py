"""StudentT against torch.distributions.StudentT: statistics (NaN / inf where the moments do
not exist) and scores with gradients, draws from the same seed bit for bit (a normal_ draw,
then Chi2's gamma draws, in torch's order), reparameterised gradients (the Chi2's implicit
one agrees with torch's to ~1e-4 relative, see test_gamma.py), expand, repr and errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, raises_like_torch, seeded_samples
from ember.distributions import StudentT

from helpers import assert_same, check_dist, rand_array

DF = np.array([[0.5, 1.0, 1.5, 2.0], [2.5, 3.0, 7.0, 30.0], [0.9, 1.2, 2.2, 100.0]])
LOC = rand_array((4,), np.float64, seed=1)
SCALE = rand_array((3, 1), np.float64, low=0.5, high=2.0, seed=2)
VALUE = rand_array((2, 3, 4), np.float64, low=-6, high=6, seed=3)
# NOTE: torch's float64 trigamma (the derivative of digamma, in the entropy's and
# log_prob's gradients) is off by up to ~5e-10 relative; ember's is within 4e-16
TRIGAMMA = dict(grad_rtol=1e-8)
IMPLICIT = dict(rtol=0, atol=0, grad_rtol=1e-3, grad_atol=1e-5)


def _make(D, df, loc, scale):
    return D.StudentT(df, loc, scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    arrays = DF.astype(dtype), LOC.astype(dtype), SCALE.astype(dtype)
    check_dist(_make, ["mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype))], *arrays,
               **(TRIGAMMA if dtype == np.float64 else {}))


def test_default_loc_and_scale_and_edge_values():
    check_dist(lambda D, df: D.StudentT(df), ["mean", "variance", "entropy",
                                              ("log_prob", np.array([-1e30, 0.0, 1e30]))],
               np.array([1.0, 2.0, 5.0]), **TRIGAMMA)


@pytest.mark.parametrize("shape", [(), (5,)], ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    check_dist(_make, [("rsample", shape)], DF, LOC, SCALE, **IMPLICIT)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 5, 40])
def test_draws_follow_torchs_stream_exactly(dtype, n):
    # n = 1 and 5 draw the normals by the serial kernel (its cached second normal then
    # feeds the gamma sampler), 40 by the vectorised one
    df = np.array([0.3, 1.0, 4.0, 60.0], dtype)
    assert_same(*seeded_samples(_make, (df, 1.0, 2.0), (n,), seed=11), rtol=0, atol=0)
    assert_in_step("randn")


def test_shapes_expand_and_repr():
    d = StudentT(ember.ones(3, 1), ember.zeros(4))
    assert d.batch_shape == (3, 4) and d.event_shape == ()
    assert d.sample((2,)).shape == (2, 3, 4)
    e = d.expand((5, 3, 4))
    assert e.batch_shape == (5, 3, 4) and e.rsample().shape == (5, 3, 4)
    assert e._chi2.batch_shape == (5, 3, 4)
    assert StudentT(3.0).batch_shape == ()
    assert repr(StudentT(3.0)).replace("ember", "torch") == \
        repr(torch.distributions.StudentT(3.0))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.StudentT(L.tensor([1.0, 0.0])),
    lambda L: L.distributions.StudentT(2.0, 0.0, -1.0),
    lambda L: L.distributions.StudentT(2.0, float("nan")),
    lambda L: L.distributions.StudentT(2.0).log_prob(L.tensor(float("nan"))),
], ids=["df", "scale", "loc", "support"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)
