"""The orthogonal polynomials of torch.special (ops/orthogonal_polynomials.py) against torch:
values on a grid of x (endpoints, 0, outside [-1, 1], +-inf) times degrees (negative, the
recurrence's range, the trigonometric range, non-integer and non-finite), dtypes, broadcasting,
scalar x or n, no autograd graph, and the refusals."""

import numpy as np
import pytest
import torch

import ember

from helpers import assert_same, assert_ulp, same_message

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
X = np.array([-3.0, -1.5, -1.0, -0.7, -0.5, -1e-3, 0.0, 0.25, 0.3, 0.9, 1.0, 1.0001, 2.5,
              np.inf, -np.inf])
# (600: past Hermite's degree limit in float32 and float64; 2.7 truncates, NaN / inf count
# as negative)
N = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 9.0, 15.0, 40.0, 600.0, 2.7, -0.5,
              np.nan, np.inf])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grid_matches_torch(name, dtype):
    x, n = (a.astype(dtype) for a in np.meshgrid(X, N))
    e = getattr(ember.special, name)(ember.tensor(x), ember.tensor(n))
    t = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    if "chebyshev" in name:
        # high degrees inside (-1, 1) take cos(n acos x) and the like: an ulp of acos (libm
        # vs torch's vectorised one) becomes n ulps of the result, near a zero relative to
        # the polynomial's scale (1)
        scale = np.maximum(np.nan_to_num(n, nan=1.0, posinf=1.0), 1.0)
        assert_ulp(e, t, 64 if dtype == np.float64 else 2, "libm cos/sin/acos", scale=scale)
    else:
        # the recurrence contracts a * q - b * p into one fma, as torch's compiled kernel
        # does: exact
        assert_same(e, t, rtol=0, atol=0)


def test_dtypes_broadcast_and_scalars():
    x = np.array([[-0.5], [0.25], [2.0]])
    for call in (lambda L: L.special.hermite_polynomial_h(L.tensor(x), L.arange(4)),
                 lambda L: L.special.legendre_polynomial_p(L.tensor([0, 1, 2]), L.tensor(2)),
                 lambda L: L.special.laguerre_polynomial_l(0.35, L.tensor([-1, 0, 3, 9])),
                 lambda L: L.special.chebyshev_polynomial_u(L.tensor([0.3, 0.6]), 12),
                 lambda L: L.special.chebyshev_polynomial_t(L.tensor([0.3]), True),
                 lambda L: L.special.chebyshev_polynomial_w(L.tensor([0.3], dtype=L.float32),
                                                            L.tensor([2.0], dtype=L.float64))):
        assert_same(call(ember), call(torch), rtol=0, atol=0)


def test_no_graph_and_out():
    x = ember.tensor([0.5, 2.0], requires_grad=True)
    y = ember.special.legendre_polynomial_p(x, 3)
    assert not y.requires_grad and y.grad_fn is None
    out = ember.empty(2)
    ember.special.hermite_polynomial_he(x.detach(), 3, out=out)
    assert_same(out, torch.special.hermite_polynomial_he(torch.tensor([0.5, 2.0]), 3))


@pytest.mark.parametrize("make", [
    lambda L: L.special.chebyshev_polynomial_t(L.ones(2, dtype=L.float16), 2),
    lambda L: L.special.legendre_polynomial_p(L.ones(2), L.tensor([1j])),
    lambda L: L.special.hermite_polynomial_h(L.ones(2, dtype=L.bfloat16), L.tensor(2)),
])
def test_unsupported_dtypes(make):
    same_message(make, NotImplementedError)


def test_two_numbers_refused():
    same_message(lambda L: L.special.chebyshev_polynomial_t(2, 3), TypeError)
