"""PyTorch's float32 algorithms for digamma, trigamma and entr, replayed in float32.

Most special functions in ember are computed in float64 and rounded once (`_in_float64`).
For digamma and trigamma that is more exact than PyTorch, whose CPU kernels run a Cephes
recurrence and series in float32 (ATen's `calc_digamma(float)` and `trigamma(float)`): its
results sit up to thousands of ulps from the true value near digamma's root (x ~ 1.4616) and
a few ulps elsewhere; its entr multiplies in float32 by the C library's logf, one rounding
more than ember's float64 pass. Losses built from them (a Dirichlet's entropy and KL,
evidential learning, predictive entropy) then print other last digits than PyTorch's.
These kernels take the same float32 steps in the same order, so float32 (and float16 /
bfloat16, which PyTorch computes in float32) results match PyTorch's bit for bit. Each one
is attached to its float64 kernel as `.float32`, which `_via64` prefers for those dtypes.
digamma's kernel runs the same steps in float64 for float64 (PyTorch's calc_digamma(double):
its cancellation near the root is thousands of ulps from the true value too).

PyTorch's AVX2 and AVX512 builds contract the series' multiply-adds into FMAs (its scalar
'default' build does not): `ember.random.get_kernel_profile()` picks which to reproduce.
PyTorch calls the C library's logf and sinf, which glibc rounds to within 0.82 ulp, not
always correctly (logf(10.064683) is one ulp off), so these kernels call them too, one
element at a time (the float64 value rounded to float32 where no C library is found).
"""

from __future__ import annotations

import math

import numpy as np

from ._cephes_bessel import libm
from ._fma import fma
from ._rng_kernels import avx2

_F32 = np.float32
_PSI_10 = 2.25175258906672110764  # digamma(10)
# Cephes' asymptotic series coefficients, highest power first
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3,
              -8.33333333333333333333e-3, 8.33333333333333333333e-2)
_PI_F = _F32(math.pi)


def _logf(x: np.ndarray) -> np.ndarray:
    """logf, looped in C (csrc/libm_maps.c) where native kernels run."""
    return libm("log", x)


def _sinf(x: np.ndarray) -> np.ndarray:
    """sinf; NaN for +-inf (as sinf gives) without asking the fallback's math.sin."""
    out = np.full(x.shape, np.nan, _F32)
    ok = np.isfinite(x)
    out[ok] = libm("sin", x[ok])
    return out


def _digamma_nonneg(x: np.ndarray) -> np.ndarray:
    """calc_digamma for x > 0 (and +inf, NaN), in x's dtype: recurrence up to 10, then the
    series."""
    t = x.dtype.type
    x = x.copy()
    result = np.zeros_like(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(12):  # x in (0, 10) reaches 10 within 10 steps (rounded sums)
            m = x < 10
            if not m.any():
                break
            result[m] -= t(1) / x[m]
            x[m] += t(1)
        z = t(1) / (x * x)
        poly = np.zeros_like(x)
        fused = avx2()
        for a in _DIGAMMA_A:
            poly = fma(poly, z, np.full_like(z, t(a))) if fused else poly * z + t(a)
        y = np.where(x < t(1e17), z * poly, t(0))
        out = result + libm("log", x) - t(0.5) / x - y
    ten = x == 10
    out[ten] = result[ten] + t(_PSI_10)
    return out


def digamma32(x: np.ndarray, dtype=None) -> np.ndarray:
    """PyTorch's digamma (calc_digamma) in x's dtype, float32 or float64: reflection below 0,
    poles at 0 and the negative integers."""
    x = np.asarray(x)
    if x.dtype != np.float64:
        x = x.astype(_F32)
    t = x.dtype.type
    neg = x < 0
    out = _digamma_nonneg(np.where(neg, t(1) - x, x))
    if neg.any():
        xn = x[neg].astype(np.float64)
        r = xn - np.trunc(xn)  # std::modf's fraction, exact
        with np.errstate(divide="ignore", invalid="ignore"):
            # (in float64 with the C library's tan, as PyTorch; 0 at the poles)
            corr = np.pi / libm("tan", np.pi * r)
            out[neg] = out[neg] - corr.astype(t)
        out[neg & (x == np.trunc(x))] = np.nan
    zero = x == 0
    out[zero] = np.copysign(t(np.inf), -x[zero])
    return out


def trigamma32(x: np.ndarray, dtype=None) -> np.ndarray:
    """PyTorch's float32 trigamma: reflection below 1/2, six recurrence steps, a short series."""
    x = np.asarray(x, _F32).copy()
    sign = np.ones_like(x)
    result = np.zeros_like(x)
    small = x < _F32(0.5)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if small.any():
            s = _sinf(_PI_F * x[small])
            sign[small] = -1
            result[small] -= (_PI_F * _PI_F) / (s * s)
            x[small] = _F32(1) - x[small]
        for _ in range(6):
            result += _F32(1) / (x * x)
            x += _F32(1)
        ixx = _F32(1) / (x * x)
        head = _F32(1) + _F32(1) / (_F32(2) * x)
        if avx2():  # each `a - b * c` and `a + b * c` of the series fused
            inner = fma(-ixx, fma(-ixx, np.full_like(x, 1 / 42), np.full_like(x, 1 / 30)),
                        np.full_like(x, 1 / 6))
            series = fma(ixx, inner, head)
        else:
            inner = _F32(1 / 6) - ixx * (_F32(1 / 30) - ixx * _F32(1 / 42))
            series = head + ixx * inner
        result += series / x
        return sign * result


def entr32(x: np.ndarray, dtype=None) -> np.ndarray:
    """PyTorch's float32 entr: -x * logf(x) for x > 0, 0 at 0, -inf below, NaN kept. For
    float16 / bfloat16 (`dtype`) the logarithm is rounded to that dtype before the product,
    as c10's 16-bit `log` returns."""
    x = np.asarray(x, _F32)
    pos = x > 0
    out = np.where(x == 0, _F32(0), _F32(-np.inf)).astype(_F32)
    logs = _logf(x[pos])
    if dtype is not None and np.dtype(dtype).itemsize == 2:
        logs = logs.astype(dtype).astype(_F32)
    out[pos] = -x[pos] * logs
    nan = np.isnan(x)
    out[nan] = x[nan]
    return out
