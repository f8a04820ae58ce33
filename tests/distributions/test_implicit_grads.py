"""The reparameterised gradients of gamma and Dirichlet samples against PyTorch's own
`_standard_gamma_grad` / `_dirichlet_grad`, bit for bit (every operation is IEEE or a call
of the C library's log / exp / pow, which both sides make per element in this process), on
samples reaching every branch of the approximations; and against the exact implicit
derivative (mpmath at 30 digits), which the fitted approximations follow to ~1e-3."""

import numpy as np
import pytest
import torch

from ember.distributions import _implicit_grads as G

DTYPES = [np.float32, np.float64]


def _gamma_case(dtype, seed=0, n=20000):
    rng = np.random.default_rng(seed)
    alpha = np.exp(rng.uniform(-4, 5, n)).astype(dtype)
    torch.manual_seed(seed)
    x = torch._standard_gamma(torch.tensor(alpha)).numpy()
    return np.maximum(x, np.finfo(dtype).tiny), alpha


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_gamma_gradient_is_torchs_on_every_branch(dtype):
    x, alpha = _gamma_case(dtype)
    small = x < np.float32(0.8)
    large = ~small & (alpha > 8)
    assert small.sum() > 1000 and large.sum() > 1000 and (~small & ~large).sum() > 1000
    near_mean = large & (np.float32(0.9) * alpha <= x) & (x <= np.float32(1.1) * alpha)
    assert near_mean.sum() > 100  # (the saddle point's polynomial branch too)
    got = G.standard_gamma_grad(x, alpha)
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_gamma_gradient_edges_are_torchs():
    # x at the smallest float (a tiny concentration's sample): the series' NaN becomes 0
    alpha = np.array([0.01, 0.05, 1e-3, 3.0, 50.0, 50.0], np.float32)
    x = np.array([np.finfo(np.float32).tiny, 1e-30, 0.0, 0.7999, 45.0, 50.0], np.float32)
    got = G.standard_gamma_grad(x, alpha)
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_array_equal(got, want)


def _dirichlet_case(dtype, seed=1, rows=6000, k=4):
    rng = np.random.default_rng(seed)
    conc = np.exp(rng.uniform(-3, 3, (rows, k))).astype(dtype)
    torch.manual_seed(seed)
    x = torch._sample_dirichlet(torch.tensor(conc)).numpy()
    total = np.broadcast_to(conc.sum(-1, keepdims=True), conc.shape).copy()
    return x, conc, total


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_dirichlet_gradient_is_torchs_on_every_branch(dtype):
    x, conc, total = _dirichlet_case(dtype)
    one = dtype(1)
    boundary = total * x * (one - x)
    near_0 = (x <= 0.5) & (boundary < 2.5)
    near_1 = ~near_0 & (x >= 0.5) & (boundary < 0.75)
    large = ~near_0 & ~near_1 & (conc > 6) & (total - conc > 6)
    rational = ~near_0 & ~near_1 & ~large
    assert min(near_0.sum(), near_1.sum(), large.sum(), rational.sum()) > 1000
    got = G.dirichlet_grad(x, conc, total)
    want = torch._dirichlet_grad(torch.tensor(x), torch.tensor(conc),
                                 torch.tensor(total)).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_digamma_steps_match_torchs_digamma():
    """The Cephes-style digamma the approximations use: within a few ulps of torch.digamma
    (another implementation; both within an ulp or two of the true value), and exactly
    digamma(10) at 10, where the recurrence stops."""
    v = np.concatenate([np.exp(np.linspace(-8, 12, 2001)), [10.0, 9.0, 1.0]])
    got = G.digamma(v)
    want = torch.digamma(torch.tensor(v)).numpy()
    np.testing.assert_allclose(got, want, rtol=4e-15, atol=1e-15)
    assert G.digamma(np.array([10.0]))[0] == 2.25175258906672110764
    assert G.digamma(np.array([0.0]))[0] == np.inf
    # float32: each recurrence step's 1 / x and x + 1 round in float32 (PyTorch's
    # digamma_one<float> does the same), a few ulps from torch.digamma's float kernel
    f32 = G.digamma(np.array([0.5, 3.25, 40.0], np.float32))
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32, torch.digamma(torch.tensor([0.5, 3.25, 40.0])).numpy(),
                               rtol=1e-6)


def test_approximations_follow_the_exact_implicit_derivative():
    """-(dF/dalpha) / pdf at the sample by mpmath (30 digits): PyTorch's fitted formulas,
    and so ember's, are within 2e-3 relative of it (Jankowiak & Obermeyer's stated
    accuracy), on points of each branch."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    # gamma: small x, large alpha (near and away from the mean), the rational fit
    alpha = np.array([0.3, 2.0, 20.0, 20.0, 3.0, 0.7])
    x = np.array([0.1, 0.5, 20.5, 14.0, 2.5, 1.3])
    exact = []
    for a, v in zip(alpha, x):
        d_cdf = mpmath.diff(lambda t, v=v: mpmath.gammainc(t, 0, v, regularized=True), a)
        pdf = mpmath.exp((a - 1) * mpmath.log(v) - v - mpmath.loggamma(a))
        exact.append(float(-d_cdf / pdf))
    np.testing.assert_allclose(G.standard_gamma_grad(x, alpha), exact, rtol=2e-3)
    # Dirichlet's marginal Beta(a, total - a), over 1 - x: each of the four branches
    xs = np.array([0.05, 0.97, 0.45, 0.3])
    a = np.array([0.5, 3.0, 9.0, 1.5])
    total = np.array([3.0, 3.4, 20.0, 4.0])
    exact = []
    for v, ai, ti in zip(xs, a, total):
        bi = ti - ai
        d_cdf = mpmath.diff(lambda t, bi=bi, v=v: mpmath.betainc(t, bi, 0, v, regularized=True),
                            ai)
        pdf = v ** (ai - 1) * (1 - v) ** (bi - 1) / mpmath.beta(ai, bi)
        exact.append(float(-d_cdf / pdf / (1 - v)))
    np.testing.assert_allclose(G.dirichlet_grad(xs, a, total), exact, rtol=2e-3)
