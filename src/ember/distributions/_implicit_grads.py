"""Reparameterised gradients of gamma and Dirichlet samples, as PyTorch's CPU kernels give them.

A sample x drawn by inverting its CDF F(x; alpha) = u moves with its parameter as
dx/dalpha = -(dF/dalpha) / pdf(x). PyTorch does not differentiate the CDF exactly: it
evaluates the fitted approximations of Jankowiak & Obermeyer, "Pathwise derivatives beyond
the reparameterization trick" (ICML 2018): Taylor series near zero, Rice saddle-point
expansions for large parameters, and bivariate rational fits elsewhere. They are within
about 1e-3 relative of the exact derivative, and a program's printed gradients follow them,
so ember evaluates the same formulas in the same precisions (the gamma's in double; the
Beta series in the sample's own dtype, as PyTorch's templates do) and rounds once to the
sample's dtype.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

from ..ops._cephes_bessel import libm

_PSI_10 = 2.25175258906672110764  # digamma(10)
# digamma's asymptotic series in z = 1 / x^2, highest power first
_DIGAMMA_SERIES = (8.33333333333333333333e-2, -2.10927960927960927961e-2,
                   7.57575757575757575758e-3, -4.16666666666666666667e-3,
                   3.96825396825396825397e-3, -8.33333333333333333333e-3,
                   8.33333333333333333333e-2)
_F32 = np.float32


def _c_log(v: float) -> float:
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan)


def _c_exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _c_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf
    except ValueError:  # (C's pow: a zero base to a negative power is inf, else NaN)
        return math.inf if a == 0 else math.nan


def _float_libm(name: str, nargs: int):
    """The C library's float function `name` (logf, powf, ...) through ctypes, or None."""
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float] * nargs
    return fn


def _libm(fn, name: str, nargs: int):
    """The C library's function elementwise, as PyTorch's kernels call it per element:
    `fn` (std::log, std::pow, ... of double, through Python's math module) for float64,
    the float version (logf, powf, ...) for float32, where NumPy's vectorised loops round
    some last bits differently (and a double result rounded to float32 is not logf's
    either: 0.1% of them differ). Where the float version cannot be reached, the double
    one rounded to float32."""
    wide = np.frompyfunc(fn, nargs, 1)
    f32 = _float_libm(name + "f", nargs)
    narrow = None if f32 is None else np.frompyfunc(f32, nargs, 1)

    def apply(*args: np.ndarray) -> np.ndarray:
        dtype = np.result_type(*args)
        if dtype in _LOOPED:  # (the same C functions, looped in C where native kernels run)
            return libm(name, *np.broadcast_arrays(*(np.asarray(a, dtype) for a in args)))
        if dtype == np.float32 and narrow is not None:
            return narrow(*(np.asarray(a, np.float32) for a in args)).astype(np.float32)
        return wide(*(np.asarray(a, np.float64) for a in args)).astype(np.float64) \
            .astype(dtype)

    return apply


_LOOPED = (np.dtype(np.float32), np.dtype(np.float64))
_log, _exp, _pow = _libm(_c_log, "log", 1), _libm(_c_exp, "exp", 1), _libm(_c_pow, "pow", 2)


def _f(value: float) -> float:
    """A float32 literal (`0.8f`) as the double it becomes in a comparison."""
    return float(_F32(value))


def digamma(x: np.ndarray) -> np.ndarray:
    """digamma of non-negative `x` in its own dtype's steps (the recurrence up to 10 and the
    asymptotic series), summed in double and rounded to that dtype once."""
    kind = x.dtype.type
    zero = x == 0
    x = np.where(zero, kind(1), x)
    total = np.zeros(x.shape)
    low = x < 10
    while low.any():
        total[low] -= (kind(1) / x[low]).astype(np.float64)
        x[low] += kind(1)
        low = x < 10
    z = 1.0 / (x * x).astype(np.float64)
    series = np.zeros(x.shape)
    for coef in _DIGAMMA_SERIES:
        series = series * z + coef
    series = np.where(x < _f(1e17), z * series, 0.0)
    with np.errstate(divide="ignore"):
        tail = (total + _log(x).astype(np.float64)) - (kind(0.5) / x).astype(np.float64)
    out = np.where(x == 10, total + _PSI_10, tail - series)
    return np.where(zero, np.inf, out).astype(x.dtype)  # (PyTorch's digamma_one at 0)


def _by_branch(shape, branches, dtype) -> np.ndarray:
    """Fill an array of `shape` from (mask, fn) pairs, each fn taking the masked indices
    (masks are disjoint; evaluating each branch on its own elements only keeps a branch's
    overflow and NaN out of the others)."""
    out = np.zeros(shape, dtype)
    for mask, fn in branches:
        if mask.any():
            out[mask] = fn(mask)
    return out


# --- Gamma(alpha, 1): d x / d alpha, in double ------------------------------------------

_GAMMA_RATIONAL = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _gamma_small_x(x, a):
    """x below 0.8: the CDF's Taylor series and its alpha derivative, six terms."""
    numer, denom = np.ones_like(x), a.copy()
    s1, s2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        s1 = s1 + numer / denom
        s2 = s2 + numer / (denom * denom)
    with np.errstate(all="ignore"):
        pow_xa = _pow(x, a)
        pdf = _pow(x, a - 1) * _exp(-x)
        cdf = pow_xa * s1
        cdf_a = (_log(x) - digamma(a)) * cdf - pow_xa * s2
        out = -cdf_a / pdf
    return np.where(np.isnan(out), 0.0, out)


def _gamma_large_alpha(x, a):
    """alpha above 8: the Rice saddle-point expansion (a polynomial near the mean)."""
    near = (_f(0.9) * a <= x) & (x <= _f(1.1) * a)

    def at_mean(m):
        xm, am = x[m], a[m]
        n1 = 1 + 24 * am * (1 + 12 * am)
        n2 = 1440 * (am * am) + 6 * xm * (53 - 120 * xm) - 65 * xm * xm / am \
            + am * (107 + 3600 * xm)
        return n1 * n2 / (1244160 * (am * am) * (am * am))

    def away(m):
        xm, am = x[m], a[m]
        denom = np.sqrt(8 * am)
        with np.errstate(all="ignore"):
            term2 = denom / (am - xm)
            term3 = _pow(xm - am - am * _log(xm / am), -1.5)
            term23 = np.where(xm < am, term2 - term3, term2 + term3)
            term1 = _log(xm / am) * term23 - np.sqrt(2 / am) * (am + xm) / ((am - xm) * (am - xm))
        stirling = 1 + 1 / (12 * am) * (1 + 1 / (24 * am))
        return -stirling * (xm * term1) / denom

    return _by_branch(x.shape, ((near, at_mean), (~near, away)), np.float64)


def _gamma_rational(x, a):
    u, v = _log(x / a), _log(a)
    c = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_RATIONAL)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return _exp(p / q)


def standard_gamma_grad(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """d x / d alpha of Gamma(alpha, 1) samples `x` (same shapes), in their dtype."""
    dtype = x.dtype
    x64, a64 = x.astype(np.float64), alpha.astype(np.float64)
    small = x64 < _f(0.8)
    large = ~small & (a64 > 8)
    out = _by_branch(x.shape, (
        (small, lambda m: _gamma_small_x(x64[m], a64[m])),
        (large, lambda m: _gamma_large_alpha(x64[m], a64[m])),
        (~small & ~large, lambda m: _gamma_rational(x64[m], a64[m]))), np.float64)
    return out.astype(dtype)


# --- Dirichlet: each coordinate's Beta(alpha, total - alpha) gradient over (1 - x) --------

def _beta_alpha_small_x(x, a, b):
    """x near 0: d x / d alpha by the Taylor series of the incomplete beta function (the
    sample's dtype throughout)."""
    one = x.dtype.type(1)
    factor = digamma(a) - digamma(a + b) - _log(x)
    numer = np.ones_like(x)
    series = numer / a * (factor + one / a)
    for i in range(1, 11):
        k = x.dtype.type(i)
        numer = numer * ((k - b) * x / k)
        denom = a + k
        series = series + numer / denom * (factor + one / denom)
    with np.errstate(all="ignore"):
        out = x * _pow(one - x, -b) * series
    return np.where(np.isnan(out), x.dtype.type(0), out)


def _beta_beta_small_x(x, a, b):
    """x near 0: d x / d beta by the same series (called with 1 - x and the roles swapped
    for samples near 1)."""
    one = x.dtype.type(1)
    factor = digamma(a + b) - digamma(b)
    numer, betas, dbetas = np.ones_like(x), np.ones_like(x), np.zeros_like(x)
    series = factor / a
    for i in range(1, 9):
        k = x.dtype.type(i)
        numer = numer * (-x / k)
        dbetas = dbetas * (b - k) + betas
        betas = betas * (b - k)
        series = series + numer / (a + k) * (dbetas + factor * betas)
    with np.errstate(all="ignore"):
        out = -_pow(one - x, one - b) * series
    return np.where(np.isnan(out), x.dtype.type(0), out)


def _beta_alpha_large(x, a, b):
    """alpha and beta above 6: the Rice saddle-point expansion, in double."""
    total = a + b
    mean = a / total
    std = np.sqrt(a * b / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)

    def at_mean(m):
        xm, am, bm, tm = x[m], a[m], b[m], total[m]
        bb = bm * bm
        poly = 47 * xm * bb * bb + am * (
            (43 + 20 * (16 + 27 * bm) * xm) * bb * bm + am * (
                3 * (59 + 180 * bm - 90 * xm) * bb + am * (
                    (453 + 1620 * bm * (1 - xm) - 455 * xm) * bm + am * (
                        8 * (1 - xm) * (135 * bm - 11)))))
        num = (1 + 12 * am) * (1 + 12 * bm) / (tm * tm)
        den = 12960 * am * am * am * bm * bm * (1 + 12 * tm)
        return num / (1 - xm) * poly / den

    def away(m):
        xm, am, bm, tm = x[m], a[m], b[m], total[m]
        prefactor = -xm / np.sqrt(2 * am * bm / tm)
        stirling = (1 + 1 / (12 * am) + 1 / (288 * am * am)) \
            * (1 + 1 / (12 * bm) + 1 / (288 * bm * bm)) \
            / (1 + 1 / (12 * tm) + 1 / (288 * tm * tm))
        axbx = am * (xm - 1) + bm * xm
        with np.errstate(all="ignore"):
            term1 = (2 * (am * am) * (xm - 1) + am * bm * (xm - 1) - xm * (bm * bm)) \
                / (np.sqrt(2 * am / bm) * _pow(tm, 1.5) * axbx * axbx)
            term2 = 0.5 * _log(am / (tm * xm))
            term3 = np.sqrt(8 * am * bm / tm) / (bm * xm + am * (xm - 1))
            term4 = _pow(bm * _log(bm / (tm * (1 - xm))) + am * _log(am / (tm * xm)),
                             -1.5)
            return stirling * prefactor * (term1 + term2 * (term3 + np.where(xm < mean[m], term4,
                                                                               -term4)))

    return _by_branch(x.shape, ((near, at_mean), (~near, away)), np.float64)


# The rational correction's coefficients: [numerator, denominator][power of log x]
# [power of log(alpha / x)] -> a cubic in log(total) - log(alpha / x)
_DIRICHLET_RATIONAL = np.array((
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
))


def _beta_rational(x, a, total, dtype):
    """Elsewhere: the analytic approximation x (digamma(total) - digamma(alpha)) / beta,
    corrected by a rational fit (double)."""
    u = _log(x)
    la = _log(a) - u
    lb = _log(total) - la
    sums = []
    for c in _DIRICHLET_RATIONAL:
        acc = np.zeros_like(x)
        for i, pu in enumerate((np.ones_like(u), u, u * u)):
            for j, pa in enumerate((np.ones_like(la), la, la * la)):
                k = c[i, j]
                acc = acc + pu * pa * (k[0] + lb * (k[1] + lb * (k[2] + lb * k[3])))
        sums.append(acc)
    # (the two digammas are the sample's dtype, and so is their difference)
    spread = (digamma(total.astype(dtype)) - digamma(a.astype(dtype))).astype(np.float64)
    approx = x * spread / (total - a)
    return sums[0] / sums[1] * approx


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """PyTorch's `_dirichlet_grad`: -(dF/dalpha) / pdf / (1 - x) of each coordinate's Beta
    marginal, Beta(alpha, total - alpha), at samples `x` (same shapes, the sample's dtype)."""
    kind = x.dtype.type
    beta = total - alpha
    boundary = total * x * (kind(1) - x)
    near_0 = (x <= kind(0.5)) & (boundary < kind(2.5))
    near_1 = ~near_0 & (x >= kind(0.5)) & (boundary < kind(0.75))
    rest = ~near_0 & ~near_1
    large = rest & (alpha > 6) & (beta > 6)
    x64, a64, t64 = x.astype(np.float64), alpha.astype(np.float64), total.astype(np.float64)
    out = _by_branch(x.shape, (
        (near_0, lambda m: _beta_alpha_small_x(x[m], alpha[m], beta[m])),
        (near_1, lambda m: -_beta_beta_small_x(kind(1) - x[m], beta[m], alpha[m])),
        (large, lambda m: _beta_alpha_large(x64[m], a64[m], t64[m] - a64[m])),
        (rest & ~large, lambda m: _beta_rational(x64[m], a64[m], t64[m], x.dtype))),
        np.float64)
    return out.astype(x.dtype)
