"""PyTorch's Cephes-derived Airy function Ai, replayed in the input's own precision: the
kernel of `special_ops.py`'s airy_ai.

PyTorch evaluates, in the tensor's dtype: below -2.09 the oscillating asymptotic form with
rational fits in 1 / zeta (zeta = 2/3 |x|^(3/2)); from 2.09 the decaying form
an/ad / (2 x^(1/4) e^zeta) (0 past 103.892, and from where e^zeta overflows); between,
the Maclaurin series summed until its term falls below the dtype's epsilon. These take the
same steps, order and FMA contractions (per `ember.random.get_kernel_profile()`) and the C
library's exp, sin and cos, so results match PyTorch's bit for bit.
The coefficient tables are Cephes' (3-clause BSD, as PyTorch's ATen/native/Math.h cites).
"""

from __future__ import annotations

import math

import numpy as np

from ._cephes_bessel import _dtype_kernel, _polevl, libm
from ._fma import fma
from ._rng_kernels import avx2

_AN = (
    0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058,
    159.75639135016442, 70.53609068404442, 14.026469116338967, 1.0)
_AD = (
    0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045,
    164.2346928715297, 71.47784008255756, 14.095913560783403, 1.0)
_AFN = (
    -0.1316963234183318, -0.6264565444319123, -0.6931580360369335, -0.2797799815451191,
    -0.04919001326095003, -0.004062659235948854, -0.0001592764962392621,
    -2.776491081552329e-06, -1.6778769848911465e-08)
_AFD = (
    13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596,
    1.4752914677166642, 0.11568717379518804, 0.004402916416152112, 7.547203482874142e-05,
    4.5185009297058035e-07)
_AGN = (
    0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502,
    0.35146565610554764, 0.06338889196289255, 0.005858041130483885, 0.000282851600836737,
    6.98793669997261e-06, 8.117892395543892e-08, 3.415517847659236e-10)
_AGD = (
    9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755,
    0.9542936116189619, 0.08645808263523921, 0.004126565238242226, 0.00010125908511650914,
    1.1716673321441352e-06, 4.9183457006293e-09)

_RSQRT_PI = 5.64189583547756286948e-01  # 1 / sqrt(pi)
_AI0, _AIP0 = 0.355028053887817239260, 0.258819403792806798405  # Ai(0), -Ai'(0)


def _negative(x: np.ndarray, fused: bool) -> np.ndarray:
    """x < -2.09: (sin(t) (1 + z^2 F) - cos(t) z G) / (sqrt(pi) |x|^(1/4)), z = 1 / zeta."""
    t_ = x.dtype.type
    root = np.sqrt(-x)
    z = t_(1) / (t_(-2) * x * root / t_(3))
    zz = z * z
    afn, afd = _polevl(zz, _AFN, fused), _polevl(zz, _AFD, fused)
    agn, agd = _polevl(zz, _AGN, fused), _polevl(zz, _AGD, fused)
    t = t_(-2) * x * root / t_(3) + t_(0.25) * t_(math.pi)
    s, c = libm("sin", t), libm("cos", t)
    a, b = t_(1) + zz * afn / afd, z * agn / agd
    head = fma(s, a, -(c * b)) if fused else s * a - c * b
    return t_(_RSQRT_PI) / np.sqrt(root) * head


def _positive(x: np.ndarray, fused: bool) -> np.ndarray:
    """x >= 2.09: an/ad (1 / zeta) / (sqrt(pi) 2 x^(1/4) e^zeta)."""
    t = x.dtype.type
    zeta = t(2) * x * np.sqrt(x) / t(3)
    w = t(1) / zeta
    an, ad = _polevl(w, _AN, fused), _polevl(w, _AD, fused)
    return t(_RSQRT_PI) * (an / ad) / (t(2) * np.sqrt(np.sqrt(x)) * libm("exp", zeta))


def _series(x: np.ndarray, fused: bool) -> np.ndarray:
    """|x| < 2.09: Ai(0) f(x) - (-Ai'(0)) g(x), the two Maclaurin series summed until the
    term m / f falls below the dtype's epsilon (each element its own count)."""
    t = x.dtype.type
    eps = np.finfo(x.dtype).eps
    f, g, k = np.ones_like(x), x.copy(), np.ones_like(x)
    m, n = np.ones_like(x), x.copy()
    z = x * x * x
    live = np.arange(x.size)
    while live.size:
        zl, kl = z[live], k[live]
        ml = m[live] * zl
        kl = kl + t(1)
        ml = ml / kl
        nl = n[live] * zl
        kl = kl + t(1)
        nl = nl / kl
        ml = ml / kl
        f[live] += ml
        kl = kl + t(1)
        nl = nl / kl
        g[live] += nl
        m[live], n[live], k[live] = ml, nl, kl
        live = live[np.abs(ml / f[live]) > eps]
    return fma(np.full_like(f, t(_AI0)), f, -(t(_AIP0) * g)) if fused else \
        t(_AI0) * f - t(_AIP0) * g


@_dtype_kernel
def airy_ai(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    fused = avx2()
    out = np.full_like(x, np.nan)  # (+-inf, and NaN, give NaN)
    with np.errstate(all="ignore"):
        neg = x < t(-2.09)
        out[neg] = _negative(x[neg], fused)
        pos = (x >= t(2.09)) & (x <= t(103.892))
        out[pos] = _positive(x[pos], fused)
        mid = (x > t(-2.09)) & (x < t(2.09)) | (x == t(-2.09))
        out[mid] = _series(x[mid], fused)
        out[(x > t(103.892)) & np.isfinite(x)] = 0
    return out
