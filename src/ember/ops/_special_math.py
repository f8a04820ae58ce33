"""Special functions in float64: the kernels of `special_ops.py`.

NumPy has none of these, so each kernel is built here from the math, in float64 (float32
rounds once at the end; float16 / bfloat16 go through float32 as the other unary ops do):

- Hurwitz zeta: direct sum until the shift passes a threshold, then the Euler-Maclaurin
  tail with Bernoulli numbers; negative q by a reflection onto (0, 1). polygamma(n >= 1)
  is (-1)^(n+1) n! zeta(n+1, x).
- lgamma: the Taylor series of lgamma(1+z) (coefficients zeta(k)/k) on [0.5, 2.5), which
  keeps the roots at 1 and 2 exact in relative terms; upward recurrence below, downward
  products up to 10, Stirling's series beyond; reflection for negative x.
- digamma: recurrence up to 10 and the asymptotic series; reflection for negative x.
- I0/I1: the power series (all terms positive) up to 20, Hankel's asymptotic series beyond.
- J0/J1: the power series below 2, Miller's backward recurrence up to 25, Hankel's
  expansion beyond with the phase taken from cos x and sin x (no rounded shift).
- ndtri: erfinv in the middle, Newton steps on log_ndtr in the tails.
- gammainc: the power series below x = a + 1, Legendre's continued fraction above.
"""

from __future__ import annotations

import math

import numpy as np

from ._rounding import in_16
from ._special_float32 import digamma32, entr32, trigamma32
from .unary_math import _ERFCX, _erfc64, _erfinv64, _ev

_F64 = np.dtype(np.float64)
_SQRT2, _SQRTPI, _LOG2PI = math.sqrt(2.0), math.sqrt(math.pi), math.log(2 * math.pi)
_SQRT1_2 = math.sqrt(0.5)  # x * sqrt(1/2) rounds as PyTorch's x / sqrt(2) does
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
    out = np.empty_like(x)
    refl = x < 0
    xr = x[refl]
    # psi(x) = psi(1 - x) - pi / tan(pi x); the tangent has period 1, so reduce first.
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = math.pi / np.tan(math.pi * (xr - np.round(xr)))
    y = np.where(refl, 1 - x, x)
    acc = np.zeros_like(x)
    for _ in range(10):  # psi(y) = psi(y + 1) - 1 / y, up to y >= 10
        m = y < 10
        if not m.any():
            break
        acc[m] -= 1 / y[m]
        y[m] += 1
    inv2 = 1 / (y * y)
    ser = np.zeros_like(y)
    for k in range(10, 0, -1):
        ser = ser * inv2 + _B2K[k - 1] / (2 * k)
    with np.errstate(invalid="ignore"):
        out = acc + np.log(y) - 0.5 / y - ser * inv2
        out[refl] -= corr
    out[(x == np.floor(x)) & (x < 0)] = np.nan  # poles at negative integers; -inf too
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    out[np.isposinf(x)] = np.inf
    out[np.isnan(x)] = np.nan
    return out


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
    with np.errstate(over="ignore", invalid="ignore"):
        return (-1.0) ** (n + 1) * math.factorial(n) * _zeta64(n + 1.0, x)


def _polygamma32(x, n=0, dtype=None):
    """PyTorch's float32 kernels for n = 0 (digamma) and n = 1 (trigamma); higher orders
    through float64 (PyTorch's float32 Hurwitz zeta is close to the rounded float64 one)."""
    if n == 0:
        return digamma32(x)
    if n == 1:
        return trigamma32(x)
    return _polygamma64(x.astype(np.float64), n).astype(np.float32)


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


def _bessel_i(x, nu: int, scaled: bool):
    """I_nu(x) (nu = 0 or 1), times exp(-|x|) when `scaled`."""
    ax = np.abs(x)
    out = np.empty_like(x)
    small = ax <= 20
    xs = ax[small]
    t = xs * xs / 4
    term = np.ones_like(xs) if nu == 0 else xs / 2
    acc = term.copy()
    for k in range(1, 50):  # sum (x/2)^(2k + nu) / (k! (k + nu)!)
        term = term * t / (k * (k + nu))
        acc += term
    out[small] = acc * np.exp(-xs) if scaled else acc
    big = ~small & ~np.isnan(x)
    xb = ax[big]
    mu = 4.0 * nu * nu
    term = np.ones_like(xb)
    acc = term.copy()
    for k in range(1, 30):  # Hankel: prod_j (mu - (2j-1)^2) / (k! (8x)^k), alternating
        term = -term * (mu - (2 * k - 1) ** 2) / (8 * k * xb)
        acc += term
    with np.errstate(over="ignore", invalid="ignore"):
        root = np.sqrt(2 * math.pi * xb)
        if scaled:
            out[big] = acc / root
        else:  # exp(x/2) twice, so the result overflows only where I_nu itself does
            h = np.exp(xb / 2)
            out[big] = h * (h * acc / root)
            out[np.isinf(x)] = np.nan  # (PyTorch's value at +-inf)
    out[np.isnan(x)] = np.nan
    # (I1 is odd; at -0 it is +0, as PyTorch's sign test x < 0 leaves it)
    return np.where(x < 0, -out, out) if nu == 1 else out


def _i0(x):
    return _bessel_i(x, 0, False)


def _i0e(x):
    return _bessel_i(x, 0, True)


def _i1(x):
    return _bessel_i(x, 1, False)


def _i1e(x):
    return _bessel_i(x, 1, True)


def _bessel_j(x, nu: int):
    """J_nu(x) for nu = 0 or 1: power series below 2, Miller's backward recurrence
    (normalised by J0 + 2 J2 + 2 J4 + ... = 1) up to 25, Hankel's expansion beyond."""
    ax = np.abs(x)
    out = np.empty_like(x)
    r = ax < 2
    xs = ax[r]
    t = -xs * xs / 4
    term = np.ones_like(xs) if nu == 0 else xs / 2
    acc = term.copy()
    for k in range(1, 25):  # sum (-1)^k (x/2)^(2k + nu) / (k! (k + nu)!), terms below 1
        term = term * t / (k * (k + nu))
        acc += term
    out[r] = acc
    r = (ax >= 2) & (ax < 25)
    xm = ax[r]
    nxt, cur = np.zeros_like(xm), np.full_like(xm, 1e-30)
    norm, j1 = np.zeros_like(xm), None
    top = 80  # J_80(25) ~ 1e-32: far below round-off
    for n in range(top, 0, -1):  # J_{n-1} = (2n / x) J_n - J_{n+1}
        prev = 2 * n / xm * cur - nxt
        nxt, cur = cur, prev
        if (n - 1) % 2 == 0 and n - 1 > 0:
            norm += 2 * cur
        if n - 1 == 1:
            j1 = cur
    j0 = cur
    norm += j0
    out[r] = (j0 if nu == 0 else j1) / norm
    r = ax >= 25
    xb = ax[r]
    mu = 4.0 * nu * nu
    p_, q_ = np.ones_like(xb), np.zeros_like(xb)
    term = np.ones_like(xb)
    for k in range(1, 40):  # a_k(nu) / x^k: even k to P, odd k to Q, alternating in pairs
        term = term * (mu - (2 * k - 1) ** 2) / (8 * k * xb)
        if k % 2:
            q_ += term if k % 4 == 1 else -term
        else:
            p_ += -term if k % 4 == 2 else term
    c, sn = np.cos(xb), np.sin(xb)
    # cos / sin of x - (2 nu + 1) pi / 4 from those of x (no rounding of the shift)
    if nu == 0:
        cs, ss = (c + sn), (sn - c)
    else:
        cs, ss = (sn - c), -(sn + c)
    with np.errstate(invalid="ignore"):
        out[r] = np.sqrt(1 / (math.pi * xb)) * (p_ * cs - q_ * ss)
    out[np.isinf(x)] = np.nan  # (PyTorch's value at +-inf)
    out[np.isnan(x)] = np.nan
    return np.where(x < 0, -out, out) if nu == 1 else out  # (J1 is odd)


def _j0(x):
    return _bessel_j(x, 0)


def _j1(x):
    return _bessel_j(x, 1)


def _spherical_j0(x):
    small = np.abs(x) < 0.5
    with np.errstate(invalid="ignore"):
        xs = np.where(small, 1.0, x)
        out = np.sin(xs) / xs
    x2 = np.where(small, x * x, 0.0)  # sin(x)/x = 1 - x^2/3! + x^4/5! - ... for |x| < 0.5
    term, acc = np.ones_like(x), np.ones_like(x)
    for k in range(1, 10):
        term = -term * x2 / ((2 * k) * (2 * k + 1))
        acc += term
    out = np.where(small, acc, out)
    return np.where(np.isinf(x), 0.0, out)


def _exp_sq(x):
    """exp(x*x) with x*x split exactly, so its rounding is not magnified by exp."""
    t = x * 134217729.0
    hi = t - (t - x)
    lo = x - hi
    with np.errstate(over="ignore"):
        return np.exp(hi * hi) * np.exp(lo * (x + hi))


def _erfcx_pos(x):
    """exp(x^2) erfc(x) for x >= 0.5: the Chebyshev fits, then the asymptotic series."""
    out = np.empty_like(x)
    for f in _ERFCX:
        m = (x >= f[1]) & (x < f[2])
        out[m] = _ev(f, x[m])
    m = x >= 8.0
    big = x[m]
    with np.errstate(over="ignore"):
        z = 1 / (2 * big * big)
    s = np.ones_like(big)
    for n in range(22, 0, -1):  # sum (-1)^n (2n-1)!! z^n
        s = 1 - (2 * n - 1) * z * s
    out[m] = s / (big * _SQRTPI)
    return out


def _erfcx64(x):
    out = np.empty_like(x)
    pos = x >= 0.5
    out[pos] = _erfcx_pos(x[pos])
    mid = (x > -0.5) & (x < 0.5)
    out[mid] = np.exp(x[mid] * x[mid]) * _erfc64(x[mid])
    neg = x <= -0.5
    xn = x[neg]
    with np.errstate(over="ignore", invalid="ignore"):
        out[neg] = np.where(xn < -26.7, np.inf, 2 * _exp_sq(xn) - _erfcx_pos(-xn))
    out[np.isnan(x)] = np.nan
    return out


def _ndtr64(x):
    return 0.5 * _erfc64(-x * _SQRT1_2)


def _log_ndtr64(x):
    t = x * _SQRT1_2
    out = np.empty_like(x)
    low = x < -1
    with np.errstate(divide="ignore", over="ignore"):
        out[low] = np.log(_erfcx64(-t[low]) / 2) - t[low] * t[low]
    out[~low] = np.log1p(-0.5 * _erfc64(t[~low]))
    out[np.isneginf(x)] = -np.inf
    return out


def _ndtri64(p):
    out = np.full(p.shape, np.nan)
    mid = (p >= 0.25) & (p <= 0.75)
    out[mid] = _SQRT2 * _erfinv64(2 * p[mid] - 1)
    tail = ((p > 0) & (p < 0.25)) | ((p > 0.75) & (p < 1))
    pt = p[tail]
    q = np.where(pt < 0.5, pt, 1 - pt)  # exact: 1 - p for p > 0.75
    lq = np.log(q)
    # start from the tail asymptote log q ~ -x^2/2 - log|x| - log(2 pi)/2; Newton on the
    # concave, increasing log_ndtr converges from either side (from the right it steps left)
    t2 = -2 * lq
    x = -np.sqrt(np.maximum(t2 - np.log(t2) - _LOG2PI, 0.25 * t2))
    live = np.arange(x.size)  # the elements still moving
    for _ in range(10):
        xl, ql = x[live], lq[live]
        ln = _log_ndtr64(xl)
        step = (ln - ql) / np.exp(-xl * xl / 2 - ln - 0.5 * _LOG2PI)
        x[live] = xl - step
        live = live[np.abs(step) > 1e-15 * np.abs(xl)]
        if live.size == 0:
            break
    out[tail] = np.where(pt < 0.5, x, -x)
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    return out


def _entr64(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -x * np.log(x)
    out[x == 0] = 0.0
    out[x < 0] = -np.inf
    return out


_entr64.float32 = entr32


def _xlog1py64(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log1p(y)
    return np.where((x == 0) & ~np.isnan(y), 0.0, out)


def _igam_prefix(a, x):
    """x^a e^-x / Gamma(a), through logs."""
    with np.errstate(divide="ignore"):
        return np.exp(a * np.log(x) - x - _lgamma64(a))


def _igam64(a, x, upper: bool = False):
    """P(a, x) (or Q = 1 - P when `upper`), with PyTorch's domain rules."""
    a, x = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(x, _F64))
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    av, xv = a[ok], x[ok]
    ser = xv < av + 1
    p = np.empty_like(av)
    # Series: P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)).
    sa, sx = av[ser], xv[ser]
    term = np.ones_like(sa)
    acc = term.copy()
    for n in range(1, 2000):
        term = term * sx / (sa + n)
        acc += term
        if np.all(term < acc * 1e-17):
            break
    p_ser = _igam_prefix(sa, sx) / sa * acc
    # Continued fraction (modified Lentz): Q = x^a e^-x / Gamma(a) / (x + 1 - a - ...).
    ca, cx = av[~ser], xv[~ser]
    tiny = 1e-300
    b = cx + 1 - ca
    c = np.full_like(ca, 1 / tiny)
    d = 1 / b
    h = d.copy()
    for i in range(1, 2000):
        an = -i * (i - ca)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1) < 1e-16):
            break
    q_cf = _igam_prefix(ca, cx) * h
    if upper:
        p[ser], p[~ser] = 1 - p_ser, q_cf
    else:
        p[ser], p[~ser] = p_ser, 1 - q_cf
    out[ok] = p
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    # (PyTorch decides x = 0 and x = inf before it looks at a NaN a)
    zero_x = (x == 0) & ((a > 0) | np.isnan(a))
    out[zero_x] = lo
    out[(a == 0) & (x > 0)] = hi
    out[np.isposinf(x) & (((a >= 0) & np.isfinite(a)) | np.isnan(a))] = hi
    out[np.isposinf(a) & ~(x < 0) & ~np.isinf(x)] = lo  # (a NaN x too, as PyTorch)
    return out


def _igamc64(a, x):
    return _igam64(a, x, upper=True)
