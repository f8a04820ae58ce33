"""ops/_fma.py: NumPy's fused multiply-add, x * y + z rounded once, against the exact value
(Python's Fraction, rounded by hand) and against the C library's `fma` / `fmaf` (IEEE's
fused multiply-add, correctly rounded with or without the instruction). Each test runs the
NumPy emulation and, where native kernels are on, the C pass `fma` takes then
(`_fma_native`)."""

from __future__ import annotations

import ctypes
import ctypes.util
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from ember import native
from ember.ops._fma import fma

_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
for _name, _t in (("fma", ctypes.c_double), ("fmaf", ctypes.c_float)):
    getattr(_LIBM, _name).argtypes = [_t] * 3
    getattr(_LIBM, _name).restype = _t


@pytest.fixture(autouse=True, params=["numpy", "native"])
def _kernels(request):
    if request.param == "native" and not native.available():
        pytest.skip("native kernels unavailable")
    with native.use(request.param):
        yield request.param


def _libm_fma(x, y, z) -> np.ndarray:
    """C's fma of each element (fmaf for float32)."""
    f = _LIBM.fmaf if x.dtype == np.float32 else _LIBM.fma
    return np.array([f(*t) for t in zip(x.tolist(), y.tolist(), z.tolist())], x.dtype)


def _nearest32(exact: Fraction) -> np.float32:
    """The float32 nearest `exact`, ties to even (by comparing the candidates)."""
    f = np.float32(float(exact))
    candidates = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact),
                                          int(c.view(np.uint32)) & 1))


def _exact(x, y, z) -> Fraction:
    return Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))


def _cancelling(n: int, dtype, scale: float, seed: int):
    """Random x, y and z, half of the z near -x y (cancellation: the product's low bits
    decide the result)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * scale).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    z = (-(x.astype(np.float64) * y) * (1 + rng.standard_normal(n) * 1e-6)).astype(dtype)
    z[::2] = (rng.standard_normal(n // 2) * scale).astype(dtype)
    return x, y, z


@pytest.mark.parametrize("scale", [1.0, 1e-20, 1e30])
def test_float32_is_the_correctly_rounded_value(scale):
    x, y, z = _cancelling(3000, np.float32, scale, seed=1)
    want = np.array([_nearest32(_exact(*t)) for t in zip(x, y, z)], np.float32)
    np.testing.assert_array_equal(fma(x, y, z), want)


@pytest.mark.parametrize("scale", [1.0, 1e-20, 1e30])
def test_float64_is_the_correctly_rounded_value(scale):
    x, y, z = _cancelling(3000, np.float64, scale, seed=2)
    # (Fraction -> float is correctly rounded: an integer ratio divided exactly)
    want = np.array([float(_exact(*t)) for t in zip(x, y, z)])
    np.testing.assert_array_equal(fma(x, y, z), want)


def test_float32_sums_that_land_halfway_between_two_float32s():
    """x y a hair more or less than half an ulp of z: the float64 sum is exactly halfway
    between two float32 numbers, and rounding it again would pick the even one."""
    rng = np.random.default_rng(3)
    n = 50_000
    e = rng.integers(-20, 20, n)
    z = (np.ldexp(1.0, e) * (1 + rng.integers(0, 1 << 23, n) * 2.0**-23)).astype(np.float32)
    x = (1 + rng.random(n)).astype(np.float32)
    y = (np.ldexp(1.0, e - 24) / x.astype(np.float64)).astype(np.float32)
    y *= rng.choice([-1, 1], n).astype(np.float32)
    twice = (x.astype(np.float64) * y + z).astype(np.float32)
    want = _libm_fma(x, y, z)
    assert (twice != want).sum() > 500  # (the cases are there: two roundings miss them)
    np.testing.assert_array_equal(fma(x, y, z), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_infinities_nans_and_signed_zeros_are_ieee(dtype):
    big = np.finfo(dtype).max
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, big], dtype)
    x, y, z = (a.ravel() for a in np.meshgrid(v, v, v, indexing="ij"))
    got = fma(x, y, z)
    want = _libm_fma(x, y, z)
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | np.isnan(got) & np.isnan(want)
    assert same.all(), list(zip(x[~same], y[~same], z[~same], got[~same], want[~same]))[:4]


def test_float64_product_past_the_range_beside_an_infinity():
    # the exact product 1e616 is finite: -inf wins, as in hardware (two roundings: NaN)
    assert fma(np.array([1e308]), np.array([1e308]), np.array([-np.inf]))[0] == -np.inf


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_16_bit_floats_round_through_float32(dtype):
    x, y, z = _cancelling(2000, np.float32, 1.0, seed=4)
    x, y, z = x.astype(dtype), y.astype(dtype), z.astype(dtype)
    want = np.array([_nearest32(_exact(*t)) for t in zip(x, y, z)], np.float32).astype(dtype)
    got = fma(x, y, z)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


def test_numbers_are_read_at_the_arrays_dtype_and_broadcast():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    z = np.float32([0.5, 1.5, -2.5, 3.5])
    got = fma(x, 0.1, z)  # 0.1 read as float32, as PyTorch reads alpha
    want = np.array([[_nearest32(_exact(a, np.float32(0.1), c)) for a, c in zip(row, z)]
                     for row in x], np.float32)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float32 and got.shape == (3, 4)


def test_integers_have_no_fused_form():
    with pytest.raises(TypeError, match="no fused multiply-add for int64"):
        fma(np.arange(3), 2, np.arange(3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_every_broadcast_pattern_is_the_same_bits(dtype, _kernels):
    """Each operand the result's shape or one number (the C pass's eight loops), and layouts
    it does not take (a transposed or broadcast row operand: copied to the result's shape
    natively, emulated otherwise), alike."""
    x, y, z = _cancelling(1000, dtype, 1.0, seed=5)
    want_full = _libm_fma(x, y, z)
    for pattern in range(8):
        ops = [v if pattern >> (2 - k) & 1 else v[:1] for k, v in enumerate((x, y, z))]
        want = _libm_fma(*np.broadcast_arrays(*ops))
        np.testing.assert_array_equal(fma(*ops), want)
    m = np.stack([x, y]).T  # (1000, 2), strided columns
    np.testing.assert_array_equal(fma(m[:, 0], m[:, 1], z), want_full)
    np.testing.assert_array_equal(fma(x.reshape(8, 125), y[:125], z.reshape(8, 125)).ravel(),
                                  _libm_fma(x, np.tile(y[:125], 8), z))
    # (no operand the result's shape: a column times a row plus a row)
    got = fma(x[:8].reshape(8, 1), y[:125], z[:125])
    want = _libm_fma(np.repeat(x[:8], 125), np.tile(y[:125], 8), np.tile(z[:125], 8))
    np.testing.assert_array_equal(got.ravel(), want)
    assert got.shape == (8, 125)
