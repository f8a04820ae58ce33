"""Complex `*` and `/` rounded as PyTorch's CPU kernels round them (ops/_complex_math.py
`mul_kernel` / `div_kernel`, wired in ops/binary.py): every form (operators, functions,
in place, out=, a number operand, broadcasting, views, autograd) bit for bit against
torch 2.13 on random values, and at inf / nan / signed-zero edge values.

Which elements PyTorch's AVX2 build rounds with fused multiply-adds depends on where they
fall in its loop (vectorized blocks, scalar remainder, thread chunks), so the shapes here
cover short rows, long rows, broadcast numbers and thread-split sizes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import ember
from ember.ops import _complex_math as cm
from ember.random import get_kernel_profile, set_kernel_profile

DTYPES = ["complex64", "complex128"]
SHAPES = [(), (1,), (3,), (7,), (11,), (13,), (37,), (5, 7), (4, 9, 3)]


def _rand(rng, shape, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _bits(t) -> np.ndarray:
    """The raw bytes of a tensor's values, one row per element (NaN payloads included)."""
    a = np.ascontiguousarray(t.detach().numpy() if hasattr(t, "detach") else t)
    return a.view(np.uint8).reshape(max(a.size, 1), -1)


def assert_bits(got, want) -> None:
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    bad = (_bits(got) != _bits(want)).any(axis=1)
    assert not bad.any(), (np.flatnonzero(bad)[:8], got.reshape(-1)[:8], want.reshape(-1)[:8])


def assert_bits_nan(got, want) -> None:
    """Bit for bit, except that any NaN matches any NaN (neither library promises a NaN's
    sign or payload: PyTorch's come from the x86 default NaN, NumPy's fma from another)."""
    g = np.ascontiguousarray(got.numpy()).reshape(-1)
    w = np.ascontiguousarray(want.numpy()).reshape(-1)
    for part in ("real", "imag"):
        gp, wp = getattr(g, part).copy(), getattr(w, part).copy()
        np.testing.assert_array_equal(np.isnan(gp), np.isnan(wp))
        ok = ~np.isnan(wp)
        bad = gp[ok].view(np.uint8).reshape(-1, gp.itemsize) != \
            wp[ok].view(np.uint8).reshape(-1, wp.itemsize)
        assert not bad.any(axis=1).any(), (part, g[ok][bad.any(axis=1)], w[ok][bad.any(axis=1)])


@pytest.fixture(autouse=True)
def _avx2_profile():
    """These compare against the installed (AVX2-dispatching) torch build."""
    old = get_kernel_profile()
    set_kernel_profile("avx2")
    yield
    set_kernel_profile(old)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_operators_and_functions(dtype, shape):
    rng = np.random.default_rng(len(shape) * 31 + sum(shape))
    x, y = _rand(rng, shape, dtype), _rand(rng, shape, dtype)
    ex, ey, tx, ty = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
    assert_bits(ex * ey, tx * ty)
    assert_bits(ex / ey, tx / ty)
    assert_bits(ember.mul(ex, ey), torch.mul(tx, ty))
    assert_bits(ember.div(ex, ey), torch.div(tx, ty))
    assert_bits(ex.multiply(ey), tx.multiply(ty))
    assert_bits(ember.true_divide(ex, ey), torch.true_divide(tx, ty))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 5, 6, 7, 11, 13, 21, 37])
def test_number_operand(dtype, n):
    rng = np.random.default_rng(n)
    x = _rand(rng, (n,), dtype)
    ex, tx = ember.tensor(x), torch.tensor(x)
    for c in (1.3 - 0.7j, complex(rng.standard_normal(), rng.standard_normal()), 2.5):
        assert_bits(ex * c, tx * c)
        assert_bits(c * ex, c * tx)
        assert_bits(ember.mul(ex, c), torch.mul(tx, c))
        assert_bits(ex / c, tx / c)
        assert_bits(c / ex, c / tx)  # (reciprocal times the number, as PyTorch)
        z = _rand(rng, (), dtype)
        assert_bits(ex * ember.tensor(z), tx * torch.tensor(z))
        assert_bits(ember.tensor(z) / ex, torch.tensor(z) / tx)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 5, 7, 13, 35])
def test_in_place_and_out(dtype, n):
    rng = np.random.default_rng(100 + n)
    x, y = _rand(rng, (n,), dtype), _rand(rng, (n,), dtype)
    ex, ey, tx, ty = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
    for op in ("mul_", "div_"):
        a, b = ex.clone(), tx.clone()
        getattr(a, op)(ey)
        getattr(b, op)(ty)
        assert_bits(a, b)
        a, b = ex.clone(), tx.clone()
        getattr(a, op)(0.3 - 2j)
        getattr(b, op)(0.3 - 2j)
        assert_bits(a, b)
    a, b = ex.clone(), tx.clone()
    a *= ey
    b *= ty
    assert_bits(a, b)
    a, b = ex.clone(), tx.clone()
    a /= ey
    b /= ty
    assert_bits(a, b)
    for fe, ft in ((ember.mul, torch.mul), (ember.div, torch.div)):
        oe = ember.empty(n, dtype=getattr(ember, dtype))
        ot = torch.empty(n, dtype=getattr(torch, dtype))
        fe(ex, ey, out=oe)
        ft(tx, ty, out=ot)
        assert_bits(oe, ot)


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcasting_and_views(dtype):
    rng = np.random.default_rng(7)
    base = _rand(rng, (6, 11), dtype)
    other = _rand(rng, (11, 6), dtype)
    pairs = [
        (lambda t: t, lambda t: t[0]),                 # a row broadcast down
        (lambda t: t[:, 1:2], lambda t: t),            # a column broadcast across
        (lambda t: t[:, :1], lambda t: t[:1, :]),      # outer product
        (lambda t: t.T, lambda t: t.T),                # both transposed
        (lambda t: t[:, :10:2], lambda t: t[:, 1::2]),  # strided rows
        (lambda t: t.reshape(3, 2, 11), lambda t: t[:1].reshape(1, 1, 11)),
    ]
    for f, g in pairs:
        ea, eb = f(ember.tensor(base)), g(ember.tensor(base))
        ta, tb = f(torch.tensor(base)), g(torch.tensor(base))
        assert_bits(ea * eb, ta * tb)
        assert_bits(ea / eb, ta / tb)
    eo, to = ember.tensor(other), torch.tensor(other)
    assert_bits(ember.tensor(base).T * eo, torch.tensor(base).T * to)
    assert_bits(eo / ember.tensor(base).T, to / torch.tensor(base).T)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mixed_real_complex(dtype):
    rng = np.random.default_rng(8)
    real = "float32" if dtype == "complex64" else "float64"
    r, z = rng.standard_normal(13).astype(real), _rand(rng, (13,), dtype)
    assert_bits(ember.tensor(r) * ember.tensor(z), torch.tensor(r) * torch.tensor(z))
    assert_bits(ember.tensor(r) / ember.tensor(z), torch.tensor(r) / torch.tensor(z))
    assert_bits(ember.tensor(z) / ember.tensor(r), torch.tensor(z) / torch.tensor(r))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [40000, 70001])
def test_thread_chunks(dtype, n):
    """Above ATen's grain size (32768) PyTorch splits the loop over its threads, each chunk
    with its own scalar remainder: ember stands its kernel thread count for torch's."""
    old_e, old_t = ember.get_num_threads(), torch.get_num_threads()
    ember.set_num_threads(2)
    torch.set_num_threads(2)
    try:
        rng = np.random.default_rng(n)
        x, y = _rand(rng, (n,), dtype), _rand(rng, (n,), dtype)
        ex, ey, tx, ty = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
        assert_bits(ex * ey, tx * ty)
        assert_bits(ex / ey, tx / ty)
        assert_bits(ex * (0.5 + 1j), tx * (0.5 + 1j))
    finally:
        ember.set_num_threads(old_e)
        torch.set_num_threads(old_t)


EDGE = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 1e-30, 3e38]


@pytest.mark.parametrize("dtype", DTYPES)
def test_edge_values(dtype):
    """Every pair of edge values, three elements at a time (so each is in PyTorch's scalar
    remainder: a larger tensor puts some in its vectorized body, where the NaN signs of
    inf * 0 may differ), and as one tensor."""
    z = [complex(a, b) for a, b in itertools.product(EDGE, EDGE)]
    x, y = (np.array(p, dtype) for p in zip(*itertools.product(z, z)))
    ex, ey, tx, ty = ember.tensor(x), ember.tensor(y), torch.tensor(x), torch.tensor(y)
    assert_bits_nan(ex * ey, tx * ty)
    assert_bits_nan(ex / ey, tx / ty)
    for i in range(0, len(x), 3 * 37):
        s = slice(i, i + 3)
        assert_bits_nan(ex[s] * ey[s], tx[s] * ty[s])
        assert_bits_nan(ex[s] / ey[s], tx[s] / ty[s])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients(dtype):
    rng = np.random.default_rng(9)
    x, y, g = (_rand(rng, (5, 7), dtype) for _ in range(3))
    for op in ("mul", "div"):
        ex, ey = ember.tensor(x, requires_grad=True), ember.tensor(y, requires_grad=True)
        tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
        oe, ot = getattr(ember, op)(ex, ey), getattr(torch, op)(tx, ty)
        assert type(oe.grad_fn).__name__ == type(ot.grad_fn).__name__
        oe.backward(ember.tensor(g))
        ot.backward(torch.tensor(g))
        assert_bits(ex.grad, tx.grad)
        assert_bits(ey.grad, ty.grad)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_div_other_gradient_real(dtype):
    """div's gradient for its divisor is -g * ((a / b) / b), as PyTorch rounds it (not
    a / (b * b)); the same rule serves real and complex dtypes."""
    rng = np.random.default_rng(12)
    x, y, g = (rng.standard_normal((5, 7)).astype(dtype) for _ in range(3))
    ex, ey = ember.tensor(x, requires_grad=True), ember.tensor(y, requires_grad=True)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    (ex / ey).backward(ember.tensor(g))
    (tx / ty).backward(torch.tensor(g))
    assert_bits(ey.grad, ty.grad)


def test_default_profile_rounds_every_product():
    """PyTorch's scalar build (ATEN_CPU_CAPABILITY=default) fuses no multiply-add: each
    part of the product is (ac - bd), (ad + bc) with every product rounded."""
    set_kernel_profile("default")
    rng = np.random.default_rng(10)
    x, y = _rand(rng, (37,), "complex64"), _rand(rng, (37,), "complex64")
    got = (ember.tensor(x) * ember.tensor(y)).numpy()
    a, b, c, d = x.real, x.imag, y.real, y.imag
    np.testing.assert_array_equal(got.real, a * c - b * d)
    np.testing.assert_array_equal(got.imag, a * d + b * c)
    assert_bits(ember.tensor(x) / ember.tensor(y), cm.divide(x, y, fused=False))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 5, 7, 13, 37])
def test_addcmul_addcdiv(dtype, n):
    """x + value * t1 * t2 (and / t2): the value times t1 first, as PyTorch's kernels."""
    rng = np.random.default_rng(200 + n)
    x, a, b = (_rand(rng, (n,), dtype) for _ in range(3))
    ex, ea, eb = (ember.tensor(v) for v in (x, a, b))
    tx, ta, tb = (torch.tensor(v) for v in (x, a, b))
    for value in (1, 0.5 - 1j, -2.0):
        assert_bits(ember.addcmul(ex, ea, eb, value=value), torch.addcmul(tx, ta, tb, value=value))
        assert_bits(ember.addcdiv(ex, ea, eb, value=value), torch.addcdiv(tx, ta, tb, value=value))
        e, t = ex.clone(), tx.clone()
        e.addcmul_(ea, eb, value=value)
        t.addcmul_(ta, tb, value=value)
        assert_bits(e, t)
