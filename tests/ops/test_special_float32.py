"""PyTorch's float32 digamma and trigamma replayed in float32 (ops/_special_float32.py): bit
for bit against torch on the same machine, for float32, float16 and bfloat16, the function,
method, in-place and gradient forms, and both of PyTorch's CPU builds (FMA or not).

Bitwise is sound here: both sides run the same float32 steps and call the same C library's
logf and sinf; the only build difference (PyTorch's AVX2/AVX512 kernels fuse the series'
multiply-adds) is followed by `ember.random.get_kernel_profile()`, as torch follows
ATEN_CPU_CAPABILITY."""

import numpy as np
import pytest
import torch

import ember
from ember.random import get_kernel_profile, set_kernel_profile

from helpers import TORCH_VECTOR_KERNELS


def _inputs() -> np.ndarray:
    """Positive, tiny, huge and negative non-integer x, the poles, digamma's root and 10."""
    g = np.random.default_rng(7)
    parts = [g.normal(0, 5, 4000), g.random(1000) * 1e-3, np.exp(g.normal(0, 8, 2000)),
             -np.exp(g.normal(0, 3, 1000)), np.linspace(1.40, 1.52, 400),
             [0.0, -0.0, np.inf, -np.inf, np.nan, -3.0, -1.0, 1.0, 2.0, 10.0, 9.9999995, 1e17,
              1e30, 1e-38, 1e-45, -1e-30, 1.4616321, -0.5, 0.5, 1.5018821]]
    with np.errstate(over="ignore"):
        return np.concatenate([np.asarray(p, np.float64) for p in parts]).astype(np.float32)


X = _inputs()


def _same_bits(e: ember.Tensor, t: torch.Tensor) -> None:
    a = e.detach().float().numpy() if e.dtype != ember.float32 else e.detach().numpy()
    b = t.detach().float().numpy()
    same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    bad = np.nonzero(~same)[0]
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: {a[bad[0]]!r} vs {b[bad[0]]!r}"


@pytest.fixture(autouse=True)
def _torch_build_profile():
    """Reproduce the build torch runs here (AVX2/AVX512 fuse, the scalar build does not)."""
    before = get_kernel_profile()
    set_kernel_profile("avx2" if TORCH_VECTOR_KERNELS else "default")
    yield
    set_kernel_profile(before)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_digamma_bits(dtype):
    e = ember.tensor(X).to(getattr(ember, dtype))
    t = torch.tensor(X).to(getattr(torch, dtype))
    _same_bits(ember.digamma(e), torch.digamma(t))
    _same_bits(ember.special.psi(e), torch.special.psi(t))
    _same_bits(e.digamma(), t.digamma())


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_trigamma_bits(dtype):
    e = ember.tensor(X).to(getattr(ember, dtype))
    t = torch.tensor(X).to(getattr(torch, dtype))
    _same_bits(ember.polygamma(1, e), torch.polygamma(1, t))
    _same_bits(ember.special.polygamma(1, e), torch.special.polygamma(1, t))


def test_in_place_strided_and_0d():
    e, t = ember.tensor(X[:4000].reshape(40, 100)), torch.tensor(X[:4000].reshape(40, 100))
    _same_bits(e[:, ::3].t().digamma().reshape(-1), t[:, ::3].t().digamma().reshape(-1))
    e2, t2 = e.clone(), t.clone()
    e2.digamma_()
    t2.digamma_()
    _same_bits(e2.reshape(-1), t2.reshape(-1))
    e3, t3 = e.clone(), t.clone()
    e3.polygamma_(1)
    t3.polygamma_(1)
    _same_bits(e3.reshape(-1), t3.reshape(-1))
    _same_bits(ember.digamma(ember.tensor(1.5)).reshape(1),
               torch.digamma(torch.tensor(1.5)).reshape(1))


def test_gradient_is_torch_trigamma():
    pos = np.abs(X[:3000]) + np.float32(0.1)
    xe = ember.tensor(pos, requires_grad=True)
    xt = torch.tensor(pos, requires_grad=True)
    (ge,) = ember.autograd.grad(ember.digamma(xe).sum(), xe)
    (gt,) = torch.autograd.grad(torch.digamma(xt).sum(), xt)
    _same_bits(ge, gt)


def test_dirichlet_entropy_and_kl_bits():
    """The Dirichlet formulas that motivated this: same float32 steps, same bits."""
    conc = np.abs(np.random.default_rng(1).normal(2, 1.5, (64, 3))).astype(np.float32) + 0.05
    de = ember.distributions.Dirichlet(ember.tensor(conc))
    dt_ = torch.distributions.Dirichlet(torch.tensor(conc))
    flat_e = ember.distributions.Dirichlet(ember.ones(3))
    flat_t = torch.distributions.Dirichlet(torch.ones(3))
    # NOTE: lgamma stays within ulps only (torch's AVX kernels use SLEEF's lgammaf, its
    # scalar tail glibc's), so compare the digamma-only pieces bitwise and the rest closely
    _same_bits(de.concentration.sum(-1).digamma(), dt_.concentration.sum(-1).digamma())
    np.testing.assert_allclose(ember.distributions.kl_divergence(de, flat_e).numpy(),
                               torch.distributions.kl_divergence(dt_, flat_t).numpy(),
                               rtol=2e-6, atol=2e-6)  # lgamma's last bits (see NOTE)


def test_both_builds_by_hand():
    """trigamma(1.5018821f): torch's scalar build gives 0.93324488, its AVX2/AVX512 build
    (fused series) 0.93324482 (read from torch with ATEN_CPU_CAPABILITY=default / avx512)."""
    x = ember.tensor([1.5018821])
    set_kernel_profile("default")
    assert ember.polygamma(1, x).item() == 0.9332448840141296
    set_kernel_profile("avx2")
    assert ember.polygamma(1, x).item() == 0.9332448244094849


def test_float64_trigamma_is_torchs_series_bit_for_bit():
    # torch's float64 trigamma is its own short series (~1e-10 relative: 4.934802202073678
    # at 1/2, not pi^2/2), and its reflection makes a pole a huge finite value (-1 ->
    # 6.58e32); ember replays it, FMAs as the build under test contracts them
    x = np.concatenate([X.astype(np.float64), [0.5, -1.0, 1e-300, 1e17, -2.5]])
    for e, t in ((ember.polygamma(1, ember.tensor(x)), torch.polygamma(1, torch.tensor(x))),
                 (ember.special.polygamma(1, ember.tensor(x[:50])),
                  torch.special.polygamma(1, torch.tensor(x[:50])))):
        a, b = e.numpy(), t.numpy()
        assert ((a.view(np.uint64) == b.view(np.uint64)) | (np.isnan(a) & np.isnan(b))).all()
    pos = np.abs(x[:500]) + 0.1  # digamma's gradient is trigamma
    xe, xt = ember.tensor(pos, requires_grad=True), torch.tensor(pos, requires_grad=True)
    (ge,) = ember.autograd.grad(ember.digamma(xe).sum(), xe)
    (gt,) = torch.autograd.grad(torch.digamma(xt).sum(), xt)
    assert ge.numpy().tobytes() == gt.numpy().tobytes()


def test_float64_unchanged_path():
    """float64 still goes through the float64 kernels (within an ulp of torch's)."""
    x = X.astype(np.float64)
    ok = np.isfinite(x) & (x > 0)
    a = ember.digamma(ember.tensor(x[ok])).numpy()
    b = torch.digamma(torch.tensor(x[ok])).numpy()
    # NOTE: torch's float64 digamma is its Cephes series; ember's float64 kernel is its own,
    # close to correctly rounded: a few ulps apart near the root at 1.4616 (cancellation)
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_entr_bits(dtype):
    """-x logf(x) rounded in float32, as torch.special.entr computes it (16-bit dtypes round
    the logarithm to their dtype first)."""
    e = ember.tensor(X).to(getattr(ember, dtype))
    t = torch.tensor(X).to(getattr(torch, dtype))
    _same_bits(ember.special.entr(e), torch.special.entr(t))
    probs = np.random.default_rng(2).dirichlet(np.ones(5), 200).astype(np.float32)
    pe, pt = ember.tensor(probs), torch.tensor(probs)
    _same_bits(ember.special.entr(pe).reshape(-1), torch.special.entr(pt).reshape(-1))


def test_digamma_float64_bits():
    # PyTorch's calc_digamma(double) is a scalar loop (Vectorized<double>::digamma maps it)
    # calling glibc's log and tan, as ember's kernel does: bitwise, including the thousands
    # of ulps its cancellation near the root (1.4616) costs
    x = np.concatenate([X.astype(np.float64), np.linspace(1.45, 1.47, 201),
                        -np.linspace(0.01, 30.5, 300)])
    e, t = ember.digamma(ember.tensor(x)).numpy(), torch.digamma(torch.tensor(x)).numpy()
    same = (e == t) | (np.isnan(e) & np.isnan(t))
    assert same.all(), f"{(~same).sum()} differ, first at x={x[~same][0]!r}"
    _same_bits(ember.polygamma(0, ember.tensor(x)).float(),
               torch.polygamma(0, torch.tensor(x)).float())
