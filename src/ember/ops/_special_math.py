"""Special functions in float64: the kernels of `special_ops.py`.

NumPy has none of these, so each kernel is built here from the math, in float64 (float32
rounds once at the end; float16 / bfloat16 go through float32 as the other unary ops do):

- Hurwitz zeta: direct sum until the shift passes a threshold, then the Euler-Maclaurin
  tail with Bernoulli numbers; negative q by a reflection onto (0, 1). It gives lgamma's
  series coefficients; the zeta and polygamma ops use PyTorch's own (`_cephes_zeta.py`).
- lgamma: the Taylor series of lgamma(1+z) (coefficients zeta(k)/k) on [0.5, 2.5), which
  keeps the roots at 1 and 2 exact in relative terms; upward recurrence below, downward
  products up to 10, Stirling's series beyond; reflection for negative x.
- digamma: PyTorch's Cephes steps in the input's dtype (`_special_float32.py`).

The Bessel functions, Airy Ai, ndtri, erfcx, log_ndtr and gammainc follow PyTorch's
algorithms in the input's dtype instead (`_cephes_*.py`).
"""

from __future__ import annotations

import math

import numpy as np

from ._cephes_bessel import libm
from ._cephes_zeta import polygamma_high
from ._rounding import in_16
from ._special_float32 import digamma32, entr32, trigamma32

_F64 = np.dtype(np.float64)
_SQRTPI, _LOG2PI = math.sqrt(math.pi), math.log(2 * math.pi)
_EULER = 0.5772156649015329
# Bernoulli numbers B_2, B_4, ..., B_28 (exact fractions).
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
        43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730, 8553103 / 6,
        -23749461029 / 870]
_B2K_FACT = [b / math.factorial(2 * k + 2) for k, b in enumerate(_B2K)]  # B_2k / (2k)!


def _zeta_direct(s, q):
    """zeta(s, q) for s > 1 and finite q (negative q only with s an integer, and then not far
    below 0): direct terms until q + k passes a threshold, then the Euler-Maclaurin tail."""
    a = q.copy()
    total = np.zeros(a.shape)
    # (past 200, a^-s underflows for every s that would need more direct terms)
    limit = np.clip(s, 20.0, 200.0)
    while True:
        m = a < limit
        if not m.any():
            break
        total[m] += a[m] ** -s[m]
        a[m] += 1
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        p = a ** -s
        tail = a ** (1 - s) / (s - 1) + p / 2
        term = s * p / a  # B_2k/(2k)! * s(s+1)...(s+2k-2) a^(-s-2k+1), k = 1, 2 ...
        for k, c in enumerate(_B2K_FACT):
            tail += c * term
            term = term * (s + 2 * k + 1) * (s + 2 * k + 2) / (a * a)
    return total + tail


def _zeta64(s, q):
    """zeta(s, q) = sum_{k>=0} (q + k)^-s, with PyTorch's domain: nan for s < 1, inf at
    s = 1 and at non-positive integer q, nan for other negative q unless s is an integer."""
    s, q = np.broadcast_arrays(np.asarray(s, _F64), np.asarray(q, _F64))
    out = np.zeros(s.shape)
    # The domain checks in PyTorch's order: s = 1, s < 1, a pole in q, then negative q
    # with a non-integer s (so a NaN s at a pole in q gives inf, as PyTorch's does).
    q_pole = (q <= 0) & (q == np.floor(q))
    pole = (s == 1) | (q_pole & ~(s < 1))
    bad = ~pole & ((s < 1) | ((q < 0) & (s != np.floor(s))) | np.isnan(s) | np.isnan(q))
    ok = ~pole & ~bad & np.isfinite(q)
    s_inf = ok & np.isposinf(s)
    ok &= ~s_inf
    near = ok & (q > -100)
    out[near] = _zeta_direct(s[near], q[near])
    # far below 0 (s an integer): with M = ceil(-q) and r = q + M in (0, 1) (exact),
    # zeta(s, q) = zeta(s, r) + (-1)^s (zeta(s, 1 - r) - zeta(s, M + 1 - r)).
    neg = ok & (q <= -100)
    sn, qn = s[neg], q[neg]
    big_m = np.ceil(-qn)
    r = qn + big_m
    sign = np.where(sn % 2 == 0, 1.0, -1.0)
    out[neg] = _zeta_direct(sn, r) + sign * (_zeta_direct(sn, 1 - r)
                                             - _zeta_direct(sn, big_m + 1 - r))
    # s = +inf: q^-inf is inf below 1 and 1 at 1; past 1 PyTorch gives NaN (not the limit 0)
    out[s_inf] = np.where(q[s_inf] < 1, np.inf, np.where(q[s_inf] == 1, 1.0, np.nan))
    out[pole] = np.inf
    out[bad] = np.nan
    out[~pole & ~bad & np.isposinf(q)] = np.nan  # (as PyTorch gives)
    return out


# lgamma(1 + z) = -gamma z + sum_{k>=2} (-1)^k zeta(k) / k z^k, for |z| <= 0.5.
_LG1 = [0.0, -_EULER] + [(-1) ** k * float(v) / k for k, v in
                         zip(range(2, 60), _zeta64(np.arange(2.0, 60.0), np.ones(58)))]


def _lgamma1p(z):
    """lgamma(1 + z) for |z| <= 0.5 (Taylor series, Horner)."""
    acc = np.zeros_like(z)
    for c in reversed(_LG1[1:]):
        acc = (acc + c) * z
    return acc


def _stirling(x):
    """lgamma(x) for x >= 10 by Stirling's series."""
    inv, inv2 = 1 / x, 1 / (x * x)
    acc = np.zeros_like(x)
    for k in range(8, 0, -1):
        acc = acc * inv2 + _B2K[k - 1] / (2 * k * (2 * k - 1))
    with np.errstate(over="ignore", invalid="ignore"):
        return (x - 0.5) * np.log(x) - x + 0.5 * _LOG2PI + acc * inv


def _lgamma_pos(x):
    """lgamma for x > 0 (float64 array)."""
    out = np.empty_like(x)
    r = x < 0.5
    out[r] = _lgamma1p(x[r]) - np.log(x[r])
    r = (x >= 0.5) & (x < 1.5)
    out[r] = _lgamma1p(x[r] - 1)
    r = (x >= 1.5) & (x < 10)
    xr = x[r]
    n = np.floor(xr - 1.5)  # steps down to y in [1.5, 2.5): lgamma(x) = lgamma(y) + log(prod)
    y = xr - n
    prod = np.ones_like(xr)
    for k in range(1, 9):
        prod = np.where(n >= k, prod * (xr - k), prod)
    out[r] = _lgamma1p(y - 2) + np.log1p(y - 2) + np.log(prod)
    r = x >= 10
    out[r] = _stirling(x[r])
    return out


def _sinpi_abs(x):
    """|sin(pi x)| with the argument reduced exactly first."""
    return np.abs(np.sin(math.pi * (x - np.round(x))))


def _lgamma64(x):
    out = np.full(x.shape, np.inf)
    pos = x > 0
    out[pos] = _lgamma_pos(x[pos])
    neg = (x < 0) & (x != np.floor(x))
    xn = x[neg]
    with np.errstate(divide="ignore"):
        out[neg] = np.log(math.pi / _sinpi_abs(xn)) - _lgamma_pos(1 - xn)
    out[np.isposinf(x)] = np.inf
    out[np.isnan(x)] = np.nan
    return out + 0.0  # (lgamma(1) and lgamma(2) are +0, as PyTorch's)


def _digamma64(x):
    """PyTorch's calc_digamma(double), step for step (`_special_float32.digamma32`)."""
    return digamma32(x)


def _trigamma64(x: np.ndarray) -> np.ndarray:
    """PyTorch's float64 trigamma kernel, step for step: reflection below 1/2 (through
    sin(pi x), so a pole is a huge finite value, not inf), six recurrence steps, then a
    short asymptotic series, contracted to FMAs as its AVX2 build does.

    NOTE: that series is PyTorch's own accuracy (~1e-10 relative: trigamma(1/2) is
    4.934802202073678 where pi^2/2 is 4.934802200544679), which ember replays rather than
    the correctly rounded zeta value, so that printed results agree."""
    from ._fma import fma
    from ._rng_kernels import avx2

    x = np.array(x, np.float64)
    sign = np.ones_like(x)
    result = np.zeros_like(x)
    small = x < 0.5
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if small.any():
            s = np.sin(math.pi * x[small])
            sign[small] = -1.0
            result[small] -= (math.pi * math.pi) / (s * s)
            x[small] = 1.0 - x[small]
        for _ in range(6):
            result += 1.0 / (x * x)
            x += 1.0
        ixx = 1.0 / (x * x)
        head = 1.0 + 1.0 / (2.0 * x)
        if avx2():  # each `a - b * c` and `a + b * c` of the series fused
            inner = fma(-ixx, fma(-ixx, np.full_like(x, 1 / 42), np.full_like(x, 1 / 30)),
                        np.full_like(x, 1 / 6))
            series = fma(ixx, inner, head)
        else:
            inner = 1 / 6 - ixx * (1 / 30 - ixx * (1 / 42))
            series = head + ixx * inner
        result += series / x
        return sign * result


def _polygamma64(x, n=0):
    if n == 0:
        return _digamma64(x)
    if n == 1:
        return _trigamma64(x)
    return polygamma_high(x, n)


def _polygamma32(x, n=0, dtype=None):
    """PyTorch's float32 kernels: n = 0 (digamma), n = 1 (trigamma), higher orders through
    its zeta (`_cephes_zeta`)."""
    if n == 0:
        return digamma32(x)
    if n == 1:
        return trigamma32(x)
    return polygamma_high(x, n)


_digamma64.float32 = digamma32  # (picked by `_via64` for float32 / float16 / bfloat16)
_polygamma64.float32 = _polygamma32


def _mvlgamma64(x, p=1):
    acc = np.full(x.shape, p * (p - 1) / 4 * math.log(math.pi))
    for i in range(p):
        acc += _lgamma64(x - i / 2)
    return acc


def _mvlgamma32(x, dtype, p=1):
    """mvlgamma for float32 / float16 / bfloat16 inputs (`x` in float32). PyTorch composes
    it in the input's dtype: x + arange(-(p - 1) / 2, 1 / 2, 1 / 2), lgamma, a sum over
    those p terms, then the constant added; for 16-bit inputs each step rounds to the dtype
    (ember's float64 sum, rounded once, differed in a fifth of bfloat16 results for p = 3).
    float32 keeps the float64 computation, rounded once by the caller."""
    if dtype == np.float32:
        return _mvlgamma64(x.astype(np.float64), p)
    f32 = np.float32
    acc = np.zeros(x.shape, f32)
    for i in range(p):
        arg = in_16(x + f32(-(p - 1) / 2 + i / 2), dtype)
        acc = acc + in_16(_lgamma64(arg.astype(np.float64)), dtype)
    return in_16(acc, dtype) + in_16((p * (p - 1)) * math.log(math.pi) * 0.25, dtype)


_mvlgamma64.float32 = _mvlgamma32


def _entr64(x):
    """-x log(x) with the C library's log, as PyTorch's scalar kernel (NumPy's log differs
    from it in the last bit of some values)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -x * libm("log", x)
    out[x == 0] = 0.0
    out[x < 0] = -np.inf
    return out


_entr64.float32 = entr32


def _xlog1py64(x, y, dtype=None):
    """x * log1p(y) in the operands' dtype (float32 with the C library's log1pf, as
    PyTorch's scalar kernel), 0 where x is 0 unless y is NaN."""
    x, y = np.broadcast_arrays(x, y)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * libm("log1p", np.ascontiguousarray(y))
    return np.where((x == 0) & ~np.isnan(y), x.dtype.type(0), out)


_xlog1py64.float32 = _xlog1py64
