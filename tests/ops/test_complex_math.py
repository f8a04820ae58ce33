"""Complex kernels that follow PyTorch's CPU algorithms rather than NumPy's (ops/_complex_math.py):
reciprocal and division (Smith's algorithm), scalar powers (PyTorch's shortcuts, then cpow),
sgn, abs, sigmoid, exp2, log2 / log10, log1p and expm1, at edge values (signed zeros,
infinities, branch cuts) and at random values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import ember

INF, NAN = math.inf, math.nan
EDGES = [1 + 0j, -1 + 0j, 0j, complex(0, -0.0), 1j, -1j, complex(-2, 0), complex(-2, -0.0),
         complex(2, 0), 0.5 + 0.5j, 3 + 4j, -2 + 0.5j, complex(-1.5, -0.0), complex(INF, 0),
         complex(-INF, 0), complex(0, INF), complex(NAN, 1), complex(1e30, 1e30)]


def _parts(t) -> np.ndarray:
    """A complex tensor's values as float64 pairs (the same for an ember or a torch tensor)."""
    return np.array([(z.real, z.imag) for z in t.reshape(-1).tolist()], dtype=np.float64)


def assert_same_complex(got, want, rtol: float = 0.0) -> None:
    """Equal values (each within `rtol` of |want|: a product's parts may cancel, so one
    part alone has no relative bound), NaN where torch has NaN, infinities equal, and the
    same sign on every zero (not on a NaN: neither library promises one)."""
    g, w = _parts(got), _parts(want)
    assert got.dtype.__repr__().split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    np.testing.assert_array_equal(g[np.isinf(w)], w[np.isinf(w)])
    finite = np.isfinite(w).all(axis=1)
    mag = np.hypot(w[finite, 0], w[finite, 1])[:, None]
    assert (np.abs(g[finite] - w[finite]) <= rtol * mag).all(), (g[finite], w[finite])
    zero = ok & (w == 0)
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(w[zero]))


def _both(dtype_name: str, values=EDGES):
    return (ember.tensor(values, dtype=getattr(ember, dtype_name)),
            torch.tensor(values, dtype=getattr(torch, dtype_name)))


DTYPES = ["complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [
    lambda t: t.reciprocal(), lambda t: 1 / t, lambda t: t ** -1, lambda t: t ** -2,
    lambda t: t ** 2, lambda t: t ** 3, lambda t: t ** 0.5, lambda t: t ** -0.5,
    lambda t: t ** 1, lambda t: t ** 0, lambda t: t ** 4, lambda t: t ** 2.5,
    lambda t: t ** -3, lambda t: t ** 1j, lambda t: t.sgn(), lambda t: t.exp2(),
    lambda t: t.log2(), lambda t: t.log10(), lambda t: t.log1p(), lambda t: t.expm1(),
], ids=["reciprocal", "rdiv", "pow_m1", "pow_m2", "pow2", "pow3", "pow_half", "pow_mhalf",
        "pow1", "pow0", "pow4", "pow2_5", "pow_m3", "pow_1j", "sgn", "exp2", "log2", "log10",
        "log1p", "expm1"])
def test_edge_values_match_torch_with_the_signs_of_zeros(dtype, f):
    # Three values a tensor: PyTorch's scalar loop (its AVX2 body starts at 16 complex64 /
    # 4 complex128 elements and fuses no products, so a few signs and last bits differ).
    # NOTE: the transcendental values (cpow through exp and log, log1p, expm1) may differ by
    # an ulp from the C library's, whose float functions are not all correctly rounded.
    for k in range(0, len(EDGES), 3):
        e, t = _both(dtype, EDGES[k:k + 3])
        assert_same_complex(f(e), f(t), rtol=4e-7 if dtype == "complex64" else 1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [lambda t: t.reciprocal(), lambda t: t ** 2, lambda t: t ** -2,
                               lambda t: t ** 4, lambda t: t ** 2.5, lambda t: t ** (2 + 1j)],
                         ids=["reciprocal", "pow2", "pow_m2", "pow4", "pow2_5", "pow_complex"])
def test_random_values_match_torch(dtype, f):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(512) + 1j * rng.standard_normal(512)) * 3
    e, t = _both(dtype, z.tolist())
    # NOTE: Smith's division and the powers' products are exact replays of PyTorch's kernels
    # (with the fused multiply-adds of its AVX2 build), but cpow's exp and log come from
    # NumPy here and from the C library there, which may round an ulp apart.
    assert_same_complex(f(e), f(t), rtol=2.5e-7 if dtype == "complex64" else 5e-16)


def test_reciprocal_of_one_keeps_a_positive_zero_and_of_zero_is_inf_nan():
    got = ember.tensor([1 + 0j, 0j]).reciprocal().tolist()
    assert math.copysign(1, got[0].imag) == 1.0  # (NumPy: 1-0j)
    assert got[1].real == INF and math.isnan(got[1].imag)


def test_integer_power_goes_through_cpow_as_torch():
    # NOTE: (-1) ** 4 in complex64 is exp(4 log(-1)), not 1: PyTorch calls std::pow.
    got = (ember.tensor([-1 + 0j]) ** 4).tolist()[0]
    want = (torch.tensor([-1 + 0j]) ** 4).tolist()[0]
    assert got.real == want.real and got.imag == pytest.approx(want.imag, rel=1e-6)
    assert got.imag != 0


def test_tensor_to_tensor_power_matches_torch():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    b = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    for name in DTYPES:
        (ea, ta), (eb, tb) = _both(name, a.tolist()), _both(name, b.tolist())
        # NOTE: exp and log as above: an ulp apart at most.
        assert_same_complex(ea ** eb, ta ** tb, rtol=5e-7 if name == "complex64" else 1e-15)


def test_sgn_divides_by_the_magnitude_as_a_complex_number():
    got = ember.tensor([complex(-2, -0.0), complex(3, 4), 0j], dtype=ember.complex128)
    got = got.sgn().tolist()
    assert got[0] == -1 and math.copysign(1, got[0].imag) == 1.0  # (Smith: -0 - -0 is +0)
    want = torch.tensor([3 + 4j], dtype=torch.complex128).sgn().tolist()[0]
    assert got[1] == want and got[2] == 0  # (0.6000000000000001: Smith's 1 / 5, fused)


def test_log1p_keeps_the_branch_cut_side_of_a_negative_zero():
    got = ember.tensor([complex(-2, -0.0), complex(-2, 0.0)], dtype=ember.complex128)
    got = got.log1p().tolist()
    assert got[0].imag == -math.pi and got[1].imag == math.pi


def test_log1p_is_accurate_near_zero():
    z = 1e-10 + 1e-10j
    got = ember.tensor([z], dtype=ember.complex128).log1p().tolist()[0]
    want = z - z * z / 2 + z ** 3 / 3  # (the series; NumPy's log1p is off in the 8th digit)
    assert abs(got - want) <= 4e-16 * abs(want)
    assert got == (torch.tensor([z], dtype=torch.complex128).log1p().tolist()[0])


def test_gradients_through_the_new_kernels_match_torch():
    rng = np.random.default_rng(2)
    z = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).tolist()
    for f in (lambda t: (t ** 3).abs().sum(), lambda t: t.reciprocal().real.sum(),
              lambda t: t.log1p().imag.sum(), lambda t: t.expm1().real.sum(),
              lambda t: t.exp2().abs().sum(), lambda t: t.sgn().imag.sum()):
        grads = []
        for m in (ember, torch):
            x = m.tensor(z, dtype=m.complex128, requires_grad=True)
            f(x).backward()
            grads.append(_parts(x.grad))
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("f", [lambda t: t.abs(), lambda t: t.sigmoid()], ids=["abs", "sigmoid"])
def test_abs_and_sigmoid_take_torchs_route(dtype, f):
    # abs is C's hypot(re, im) and sigmoid 1 / (1 + exp(-z)) by Smith's division. NumPy's
    # own complex absolute and division are an ulp away in a third of the elements.
    # NOTE: compared three values a tensor (PyTorch's scalar loop calls glibc; its AVX2
    # body's hypot is SLEEF's, an ulp away in ~0.5% of complex128 elements): the C library
    # may differ by an ulp elsewhere, so 99% exact and the rest within an ulp.
    rng = np.random.default_rng(3)
    z = ((rng.standard_normal(600) + 1j * rng.standard_normal(600)) * 3).tolist()
    got, want = [], []
    for k in range(0, 600, 3):
        e, t = _both(dtype, z[k:k + 3])
        got.append(_parts(f(e).to(e.dtype)))
        want.append(_parts(f(t).to(t.dtype)))
    g, w = np.concatenate(got), np.concatenate(want)
    assert (g == w).mean() >= 0.99
    eps = np.finfo(np.float32 if dtype == "complex64" else np.float64).eps
    np.testing.assert_allclose(g, w, rtol=eps, atol=0)
