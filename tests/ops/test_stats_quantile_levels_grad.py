"""A linear quantile is differentiable in its levels q, as PyTorch's: the weight between
the two order statistics is q times the slice's count less one, so d/dq is that count less
one times (above - below); NaN slices of quantile and empty ones of nanquantile have a fixed
rank (no gradient), and the other interpolations are step functions of q (none)."""

import math

import numpy as np
import pytest
import torch

import ember

NAN = math.nan
DATA = np.array([[3.0, 1.0, 4.0, 1.5, 9.0, 2.6],
                 [0.5, NAN, 2.0, 7.0, NAN, -1.0],
                 [NAN, NAN, NAN, NAN, NAN, NAN]])

CASES = {
    "flat": dict(rows=slice(0, 1), dim=None, keepdim=False),
    "dim 1": dict(rows=slice(0, 2), dim=1, keepdim=False),
    "dim 0 keepdim": dict(rows=slice(0, 1), dim=0, keepdim=True),
    "dim -1 keepdim nan rows": dict(rows=slice(0, 3), dim=-1, keepdim=True),
    "flat keepdim": dict(rows=slice(0, 2), dim=None, keepdim=True),
}


def _run(L, fn, case, levels, interpolation, x_grad):
    c = CASES[case]
    x = L.tensor(DATA[c["rows"]], dtype=L.float64, requires_grad=x_grad)
    q = L.tensor(levels, dtype=L.float64, requires_grad=True)
    r = getattr(L, fn)(x, q, dim=c["dim"], keepdim=c["keepdim"], interpolation=interpolation)
    if not r.requires_grad:
        return r, None
    g = L.autograd.grad(r.sum(), q, allow_unused=True)[0]
    return r, g


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("levels", [[0.3, 0.75, 1.0], 0.4])
@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "nearest"])
@pytest.mark.parametrize("x_grad", [False, True])
def test_gradient_in_q_matches_torch(fn, case, levels, interpolation, x_grad):
    got_r, got_g = _run(ember, fn, case, levels, interpolation, x_grad)
    want_r, want_g = _run(torch, fn, case, levels, interpolation, x_grad)
    np.testing.assert_array_equal(got_r.detach().numpy(), want_r.detach().numpy())
    assert got_r.requires_grad == want_r.requires_grad
    assert (got_g is None) == (want_g is None)
    if want_g is not None:
        # NOTE: a few products and sums of exactly represented float64 differences
        np.testing.assert_allclose(got_g.numpy(), want_g.numpy(), rtol=1e-15, atol=0)


def test_slope_equals_finite_differences():
    x = ember.tensor(DATA[0], dtype=ember.float64)
    q = ember.tensor([0.33], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(ember.quantile(x, q).sum(), q)
    h = 1e-6
    fd = (ember.quantile(x, ember.tensor([0.33 + h], dtype=ember.float64))
          - ember.quantile(x, ember.tensor([0.33 - h], dtype=ember.float64))) / (2 * h)
    np.testing.assert_allclose(g.numpy(), fd.numpy(), rtol=1e-8)
