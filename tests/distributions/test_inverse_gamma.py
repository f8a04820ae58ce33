"""InverseGamma against torch.distributions.InverseGamma: draws (Gamma's, inverted), implicit
gradients, scores, moments (inf where they do not exist), entropy, shapes, validation, repr."""

import numpy as np
import pytest
import torch

import ember
from distributions._dist_helpers import DRAW_SHAPES, assert_in_step, raises_like_torch

from helpers import assert_ulp, check_dist, rand_array

CONC = rand_array((3, 4), np.float32, low=0.3, high=6.0)
RATE = rand_array((4,), np.float32, low=0.5, high=3.0, seed=1)
VALUE = rand_array((2, 3, 4), np.float32, low=0.05, high=5.0, seed=2)
IMPLICIT = dict(rtol=1e-6, atol=0, grad_rtol=1e-3, grad_atol=1e-5)  # (see test_gamma.py)
# (the Gamma draw is exact; 1/x through pow(x, -1) is ember's one correctly rounded op and
# torch's vectorised pow: the same on the AVX-512 machines, an ulp off now and then in its
# AVX2 build, as on an AMD EPYC Zen 3)


def _make(D, c, r):
    return D.InverseGamma(c, r)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scores_moments_and_entropy(dtype):
    conc = CONC.astype(dtype)
    conc[0, :2] = [0.7, 1.5]  # (no mean; no variance)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    tol.update(grad_rtol=1e-5 if dtype == np.float32 else 1e-8, grad_atol=1e-6)  # (digamma)
    check_dist(_make, ["mean", "mode", "variance", "entropy",
                       ("log_prob", VALUE.astype(dtype))], conc, RATE.astype(dtype), **tol)
    # (igamma has no derivative in its first argument in torch either)
    check_dist(_make, [("cdf", VALUE.astype(dtype))], conc, RATE.astype(dtype), grad=False,
               rtol=tol["rtol"], atol=tol["atol"])


@pytest.mark.parametrize("shape", DRAW_SHAPES, ids=str)
def test_rsample_values_equal_torchs_and_gradients_agree(shape):
    check_dist(_make, [("rsample", shape), ("sample", shape)], CONC, RATE, **IMPLICIT)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_draws_follow_torchs_stream(dtype):
    conc = np.array([0.2, 1.0, 3.0, 50.0], dtype)
    for L in (ember, torch):
        L.manual_seed(9)
    e = ember.distributions.InverseGamma(ember.tensor(conc), 2.0).sample((5,))
    t = torch.distributions.InverseGamma(torch.tensor(conc), 2.0).sample((5,))
    assert_ulp(e, t, 1, "torch's pow(x, -1) through its vectorised pow (see above)")
    assert_in_step()


def test_shapes_expand_repr_and_validation():
    e = ember.distributions.InverseGamma(ember.ones(3, 1), ember.ones(4))
    t = torch.distributions.InverseGamma(torch.ones(3, 1), torch.ones(4))
    assert e.batch_shape == t.batch_shape == (3, 4) and e.event_shape == ()
    assert e.expand((2, 3, 4)).sample().shape == (2, 3, 4)
    assert type(e.expand((2, 3, 4))) is ember.distributions.InverseGamma
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(e.support) == repr(t.support) and e.has_rsample
    assert repr(e.arg_constraints) == repr(t.arg_constraints)
    raises_like_torch(lambda L: L.distributions.InverseGamma(
        L.tensor([-1.0]), 1.0, validate_args=True), ValueError)
    raises_like_torch(lambda L: L.distributions.InverseGamma(
        1.0, 1.0, validate_args=True).log_prob(L.tensor(-0.5)), ValueError)
