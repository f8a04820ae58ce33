"""Chi2 against torch.distributions.Chi2: a Gamma(df / 2, 1 / 2), so statistics and scores
with gradients, draws from the same seed bit for bit (Gamma's sampler), the implicit
reparameterised gradient (see test_gamma.py: ember's and torch's agree to ~1e-4 relative),
expand, repr and validation errors."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import assert_in_step, raises_like_torch, seeded_samples
from ember.distributions import Chi2, Gamma

from helpers import assert_same, check_dist, rand_array

DF = rand_array((3, 4), np.float64, low=0.3, high=10.0)
VALUE = rand_array((2, 3, 4), np.float64, low=0.05, high=12.0, seed=2)
# NOTE: torch's float64 trigamma (the derivative of digamma, in the entropy's and
# log_prob's gradients) is off by up to ~5e-10 relative; ember's is within 4e-16
TRIGAMMA = dict(grad_rtol=1e-8)
IMPLICIT = dict(rtol=0, atol=0, grad_rtol=1e-3, grad_atol=1e-5)


def _make(D, df):
    return D.Chi2(df)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_statistics_and_scores(dtype):
    check_dist(_make, ["df", "mean", "mode", "variance", "stddev", "entropy",
                       ("log_prob", VALUE.astype(dtype))], DF.astype(dtype),
               **(TRIGAMMA if dtype == np.float64 else {}))
    check_dist(_make, [("cdf", VALUE.astype(dtype))], DF.astype(dtype), grad=False)


def test_edge_values():
    check_dist(_make, [("log_prob", np.array([1e-300, 1.0, 1e3]))], np.array([0.5, 2.0, 7.0]),
               **TRIGAMMA)
    check_dist(_make, [("log_prob", np.array([0.0, 0.0, 0.0])),
                       ("cdf", np.array([0.0, 1e-300, np.inf]))],
               np.array([0.5, 2.0, 7.0]), grad=False)


@pytest.mark.parametrize("shape", [(), (5,)], ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    check_dist(_make, [("rsample", shape)], DF, **IMPLICIT)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_follow_torchs_stream_exactly(dtype):
    df = np.array([0.02, 0.6, 1.0, 2.0, 3.4, 24.0, 500.0] * 6, dtype)
    assert_same(*seeded_samples(_make, (df,), (3,), seed=5), rtol=0, atol=0)
    assert_in_step()


def test_is_a_gamma_with_expand_and_repr():
    d = Chi2(ember.tensor([1.0, 3.0]))
    assert isinstance(d, Gamma) and d.rate.tolist() == [0.5, 0.5]
    e = d.expand((4, 2))
    assert type(e) is Chi2 and e.batch_shape == (4, 2) and e.df.shape == (4, 2)
    assert e.sample((3,)).shape == (3, 4, 2)
    assert Chi2(3.0).batch_shape == ()
    assert repr(Chi2(3.0)) == repr(torch.distributions.Chi2(3.0))


@pytest.mark.parametrize("call", [
    lambda L: L.distributions.Chi2(L.tensor([1.0, 0.0])),
    lambda L: L.distributions.Chi2(L.tensor(2.0)).log_prob(L.tensor(-1.0)),
], ids=["df", "support"])
def test_errors_match_torch(call):
    raises_like_torch(call, ValueError)
