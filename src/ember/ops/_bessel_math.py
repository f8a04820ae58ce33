"""Bessel functions of the second kind Y0, Y1, the modified Bessel functions K0, K1 (plain and
exp-scaled) and the Airy function Ai, in float64: the kernels of `special_ops.py`.

- Y0/Y1 below 15: their power series (with J0/J1's, whose log term they carry), summed in
  extended precision because the terms grow to ~e^x before they cancel; Hankel's asymptotic
  expansion beyond (its smallest term is ~e^-2x there).
- K0/K1 up to 2: their power series (all terms of one sign); beyond, exp(x) K_nu(x) as the
  integral of exp(-x (cosh t - 1)) cosh(nu t) over t > 0 by the trapezoid rule (which
  converges geometrically for this smooth, fast-decaying integrand); past 50 the asymptotic
  series.
- Ai: its Maclaurin series between -8 and 2 (extended precision again), Ai(x) =
  sqrt(x / 3) K_{1/3}(2/3 x^{3/2}) / pi above, the oscillating asymptotic form below -8.
"""

from __future__ import annotations

import math

import numpy as np

_LD = np.longdouble
_EULER = 0.5772156649015329


def _log_half_plus_euler(x):
    return np.log(x / 2) + _EULER


def _ys_series(x, nu: int):
    """J_nu(x) and the series part of Y_nu(x) (nu = 0 or 1) in extended precision."""
    t = (np.asarray(x, _LD) / 2) ** 2
    half = np.asarray(x, _LD) / 2
    term = np.ones_like(t) if nu == 0 else half.copy()  # (x/2)^(2k+nu) / (k! (k+nu)!)
    sign = 1.0
    j = term.copy()
    harmonic = _LD(0)  # H_k
    harmonic_next = _LD(1) if nu == 1 else _LD(0)  # H_{k+nu}
    # Y0: sum_{k>=1} (-1)^(k+1) H_k t^k / k!^2;
    # Y1: sum_{k>=0} (-1)^k (H_k + H_{k+1}) (x/2)^(2k+1) / (k! (k+1)!)
    acc = np.zeros_like(t) if nu == 0 else term * (harmonic + harmonic_next)
    for k in range(1, 70):
        term = term * t / (k * (k + nu))
        sign = -sign
        harmonic += _LD(1) / k
        harmonic_next += _LD(1) / (k + nu)
        j += sign * term
        acc += (-sign if nu == 0 else sign) * (harmonic + harmonic_next * nu) * term
    return j, acc


def _y_small(x, nu: int):
    j, acc = _ys_series(x, nu)
    lx = np.asarray(_log_half_plus_euler(np.asarray(x, _LD)), _LD)
    two_pi = _LD(2) / _LD(math.pi)
    if nu == 0:
        out = two_pi * (lx * j + acc)
    else:  # psi(k+1) + psi(k+2) = H_k + H_{k+1} - 2 gamma
        out = (-two_pi / np.asarray(x, _LD) + two_pi * lx * j
               - acc / _LD(math.pi))
    return np.asarray(out, np.float64)


def _hankel_pq(x, nu: int):
    """Hankel's P and Q for order nu at x (x large)."""
    mu = 4.0 * nu * nu
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (8 * k * x)
        if k % 2:
            q += term if k % 4 == 1 else -term
        else:
            p += -term if k % 4 == 2 else term
    return p, q


def _y_large(x, nu: int):
    p, q = _hankel_pq(x, nu)
    c, s = np.cos(x), np.sin(x)
    # sin / cos of x - (2 nu + 1) pi / 4 from those of x (no rounding of the shift)
    if nu == 0:
        sc, cc = (s - c), (c + s)
    else:
        sc, cc = -(s + c), (s - c)
    sc, cc = sc * math.sqrt(0.5), cc * math.sqrt(0.5)
    return np.sqrt(2 / (math.pi * x)) * (p * sc + q * cc)


def _bessel_y(x, nu: int):
    out = np.full(x.shape, np.nan)
    small = (x > 0) & (x < 15)
    out[small] = _y_small(x[small], nu)
    big = (x >= 15) & np.isfinite(x)
    out[big] = _y_large(x[big], nu)
    out[x == 0] = -np.inf
    return out


def _y0(x):
    return _bessel_y(x, 0)


def _y1(x):
    return _bessel_y(x, 1)


def _k_small(x, nu: int):
    """K_nu(x) for 0 < x <= 2 by its power series."""
    t = x * x / 4
    term = np.ones_like(x) if nu == 0 else x / 2  # (x/2)^(2k+nu) / (k! (k+nu)!)
    i_nu = term.copy()
    h, h_next = 0.0, (1.0 if nu == 1 else 0.0)
    acc = np.zeros_like(x) if nu == 0 else term * (h + h_next)
    for k in range(1, 30):
        term = term * t / (k * (k + nu))
        h += 1.0 / k
        h_next += 1.0 / (k + nu)
        i_nu += term
        acc += (h if nu == 0 else h + h_next) * term
    lx = _log_half_plus_euler(x)
    if nu == 0:  # K0 = -(log(x/2) + gamma) I0 + sum H_k t^k / k!^2
        return acc - lx * i_nu
    # K1 = 1/x + (log(x/2) + gamma) I1 - (1/2) sum (H_k + H_{k+1}) (x/2)^(2k+1) / (k!(k+1)!)
    return 1 / x + lx * i_nu - acc / 2


_T_STEP = 0.05
_T_GRID = np.arange(0.0, 8.0 + _T_STEP / 2, _T_STEP)
_T_WEIGHTS = np.where(_T_GRID == 0, 0.5, 1.0) * _T_STEP


def _scaled_k_integral(x, nu: float):
    """exp(x) K_nu(x) for moderate x: the trapezoid rule on its cosh integral."""
    e = np.exp(-np.outer(x, np.cosh(_T_GRID) - 1))
    return e @ (_T_WEIGHTS * np.cosh(nu * _T_GRID))


def _scaled_k_asymptotic(x, nu: float):
    """exp(x) K_nu(x) for large x: sqrt(pi / 2x) sum_k prod_j (mu - (2j-1)^2) / (k! (8x)^k)."""
    mu = 4.0 * nu * nu
    term, acc = np.ones_like(x), np.ones_like(x)
    for k in range(1, 30):
        term = term * (mu - (2 * k - 1) ** 2) / (8 * k * x)
        acc += term
    return np.sqrt(math.pi / (2 * x)) * acc


def _scaled_k(x, nu: float):
    """exp(x) K_nu(x) for x > 0 (finite)."""
    out = np.empty_like(x)
    big = x > 50
    out[big] = _scaled_k_asymptotic(x[big], nu)
    out[~big] = _scaled_k_integral(x[~big], nu)
    return out


def _bessel_k(x, nu: int, scaled: bool):
    out = np.full(x.shape, np.nan)
    small = (x > 0) & (x <= 2)
    ks = _k_small(x[small], nu)
    out[small] = ks * np.exp(x[small]) if scaled else ks
    big = (x > 2) & np.isfinite(x)
    xb = x[big]
    sk = _scaled_k(xb, nu)
    out[big] = sk if scaled else sk * np.exp(-xb)
    out[x == 0] = np.inf
    out[np.isposinf(x)] = 0.0
    return out


def _k0(x):
    return _bessel_k(x, 0, False)


def _k1(x):
    return _bessel_k(x, 1, False)


def _k0e(x):
    return _bessel_k(x, 0, True)


def _k1e(x):
    return _bessel_k(x, 1, True)


_AI0 = 0.355028053887817239  # Ai(0) = 1 / (3^(2/3) Gamma(2/3))
_AIP0 = 0.258819403792806798  # -Ai'(0) = 1 / (3^(1/3) Gamma(1/3))


def _airy_series(x):
    """Ai by its Maclaurin series Ai(0) f(x) - (-Ai'(0)) g(x), in extended precision."""
    xl = np.asarray(x, _LD)
    cube = xl ** 3
    a, b = np.ones_like(xl), xl.copy()
    f, g = a.copy(), b.copy()
    for k in range(1, 60):
        a = a * cube / ((3 * k - 1) * (3 * k))
        b = b * cube / ((3 * k) * (3 * k + 1))
        f += a
        g += b
    return np.asarray(_LD(_AI0) * f - _LD(_AIP0) * g, np.float64)


def _airy_negative(x):
    """Ai(x) for x <= -8: x^(-1/4) / sqrt(pi) (sin(z + pi/4) P - cos(z + pi/4) Q)."""
    ax = -x
    z = 2 / 3 * ax * np.sqrt(ax)
    u, p, q = 1.0, np.ones_like(z), np.zeros_like(z)
    power = np.ones_like(z)
    for k in range(1, 30):  # u_k = (2k+1)(2k+3)...(6k-1) / (216^k k!)
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        power = power / z
        sign = 1 if (k // 2) % 2 == 0 else -1
        if k % 2:
            q += sign * u * power
        else:
            p += sign * u * power
    s, c = np.sin(z), np.cos(z)
    sp, cp = (s + c) * math.sqrt(0.5), (c - s) * math.sqrt(0.5)
    return (sp * p - cp * q) / (np.sqrt(math.pi) * np.sqrt(np.sqrt(ax)))


def _airy_ai(x):
    out = np.full(x.shape, np.nan)
    mid = (x > -8) & (x <= 2)
    out[mid] = _airy_series(x[mid])
    neg = (x <= -8) & np.isfinite(x)
    out[neg] = _airy_negative(x[neg])
    pos = (x > 2) & np.isfinite(x)
    xp = x[pos]
    z = 2 / 3 * xp * np.sqrt(xp)
    with np.errstate(under="ignore"):
        out[pos] = np.sqrt(xp / 3) / math.pi * _scaled_k(z, 1 / 3) * np.exp(-z)
    return out
