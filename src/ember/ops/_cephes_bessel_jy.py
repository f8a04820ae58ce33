"""PyTorch's Cephes-derived Bessel functions J0, J1, Y0, Y1 (and its spherical j0), replayed
in the input's own precision: the kernels of `special_ops.py`'s bessel_j0 / _j1 / _y0 / _y1
and spherical_bessel_j0.

PyTorch evaluates rational approximations in the tensor's dtype (float32 in float32): in
x^2 up to 5, and beyond that Hankel's form P cos(x - phase) - (5/x) Q sin(x - phase), whose
rational P and Q are in 25 / x^2, with the phase subtracted in the dtype and the C
library's sin and cos. Past ~1e8 in float32 (and ~1e16 in float64) that subtraction loses
the phase entirely, so PyTorch's values there are not J or Y at all (ember's earlier
series gave the true values, millions of ulps away). These take
PyTorch's steps, order and FMA contractions (per `ember.random.get_kernel_profile()`), so
results match PyTorch's bit for bit up to the C library's sin, cos and log, which these
call too (`_cephes_bessel.libm`).
The coefficient tables are Cephes' (3-clause BSD, as PyTorch's ATen/native/Math.h cites).
"""

from __future__ import annotations

import numpy as np

from ._cephes_bessel import _dtype_kernel, _polevl, libm
from ._fma import fma
from ._rng_kernels import avx2

_J0_PP = (
    0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687,
    8.74716500199817, 5.303240382353949, 1.0)
_J0_PQ = (
    0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171,
    8.761908832370695, 5.306052882353947, 1.0)
_J0_QP = (
    -0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683,
    -177.68116798048806, -147.07750515495118, -51.41053267665993, -6.050143506007285)
_J0_QQ = (
    64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525,
    5930.727011873169, 2062.0933166032783, 242.0057402402914)
_J0_RP = (
    -4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_J0_RQ = (
    499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683,
    2112775201154.892, 310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_J1_PP = (
    0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076,
    8.424045901417724, 5.214515986823615, 1.0)
_J1_PQ = (
    0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015,
    8.399855543276042, 5.209828486823619, 1.0)
_J1_QP = (
    0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508,
    710.8563049989261, 597.4896124006136, 211.68875710057213, 25.207020585802372)
_J1_QQ = (
    74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562,
    7997.041604473507, 2826.1927851763908, 336.0936078106983)
_J1_RP = (
    -899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_J1_RQ = (
    620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925,
    4749141220799.914, 784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_Y0_YP = (
    15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115,
    87590639439536.7, -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_Y0_YQ = (
    1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935,
    20297961275010.555, 3171577528429750.5, 2.5059625617265306e+17)
_Y1_YP = (
    1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0,
    2.024394757135949e+17, -7.788771962659501e+17)
_Y1_YQ = (
    594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617,
    3882312774962.3857, 620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)

_PI_4, _3PI_4 = 0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163
_SQRT_2_PI = 0.797884560802865355879892119868763737  # sqrt(2 / pi)
_2_PI = 0.636619772367581343075535053490057448  # 2 / pi
_J0_Z1, _J0_Z2 = 5.78318596294678452118, 30.4712623436620863991  # squares of J0's roots
_J1_Z1, _J1_Z2 = 14.6819706421238932572, 49.2184563216946036703  # and of J1's


def _hankel(x: np.ndarray, nu: int, second: bool, fused: bool) -> np.ndarray:
    """J_nu or (`second`) Y_nu for x > 5: sqrt(2 / (pi x)) (P cos(x - phase) - 5/x Q sin(...))
    (for Y, P sin + 5/x Q cos), P and Q rational in 25 / x^2."""
    t = x.dtype.type
    tabs = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if nu == 0 else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    with np.errstate(all="ignore"):
        w = t(25) / (x * x) if nu == 0 else t(5) / x * (t(5) / x)
        pp, pq, qp, qq = (_polevl(w, tab, fused) for tab in tabs)
        phase = x - t(_PI_4 if nu == 0 else _3PI_4)
        c, s = libm("cos", phase), libm("sin", phase)
        a, b = (s, c) if second else (c, -s)
        p, q = pp / pq, t(5) / x * (qp / qq)
        # P a + Q b: the first product fused into the sum, as GCC contracts it
        head = fma(p, a, q * b) if fused else p * a + q * b
        return head * t(_SQRT_2_PI) / np.sqrt(x)


def _j_small(x: np.ndarray, nu: int, fused: bool) -> np.ndarray:
    """J0 / J1 for 0 <= x <= 5: (x^2 - z1)(x^2 - z2) R(x^2) (times x for J1)."""
    t = x.dtype.type
    xx = x * x
    rp = _polevl(xx, _J0_RP if nu == 0 else _J1_RP, fused)
    rq = _polevl(xx, _J0_RQ if nu == 0 else _J1_RQ, fused)
    if nu == 0:
        out = (xx - t(_J0_Z1)) * (xx - t(_J0_Z2)) * rp / rq
        tiny = x < t(1e-5)
        return np.where(tiny, t(1) - xx / t(4), out)
    return rp / rq * x * (xx - t(_J1_Z1)) * (xx - t(_J1_Z2))


def _j(x: np.ndarray, nu: int) -> np.ndarray:
    fused = avx2()
    a = np.abs(x)
    out = np.empty_like(a)
    small = a <= 5
    # (J1 at -0 is -0: PyTorch's x < 0 test leaves it to the series, which keeps its sign)
    out[small] = _j_small(np.where(x == 0, x, a)[small], nu, fused)
    out[~small] = _hankel(a[~small], nu, False, fused)
    return np.where(x < 0, -out, out) if nu == 1 else out


def _y(x: np.ndarray, nu: int) -> np.ndarray:
    t = x.dtype.type
    fused = avx2()
    out = np.empty_like(x)
    small = x <= 5  # (NaN goes to the large-x branch, and stays NaN)
    with np.errstate(all="ignore"):
        xs = x[small]
        xx = xs * xs
        yp = _polevl(xx, _Y0_YP if nu == 0 else _Y1_YP, fused)
        yq = _polevl(xx, _Y0_YQ if nu == 0 else _Y1_YQ, fused)
        lg = libm("log", xs)
        j = _j_small(xs, nu, fused)
        if nu == 0:  # R + (2/pi log x) J0
            ys = fma(t(_2_PI) * lg, j, yp / yq) if fused else yp / yq + t(_2_PI) * lg * j
        else:  # x R + 2/pi (J1 log x - 1/x)
            inner = fma(j, lg, -(t(1) / xs)) if fused else j * lg - t(1) / xs
            ys = fma(xs, yp / yq, t(_2_PI) * inner) if fused else xs * (yp / yq) + t(_2_PI) * inner
        ys = np.where(xs == 0, t(-np.inf), np.where(xs < 0, t(np.nan), ys))
    out[small] = ys
    out[~small] = _hankel(x[~small], nu, True, fused)
    return out


@_dtype_kernel
def j0(x: np.ndarray) -> np.ndarray:
    return _j(x, 0)


@_dtype_kernel
def j1(x: np.ndarray) -> np.ndarray:
    return _j(x, 1)


@_dtype_kernel
def y0(x: np.ndarray) -> np.ndarray:
    return _y(x, 0)


@_dtype_kernel
def y1(x: np.ndarray) -> np.ndarray:
    return _y(x, 1)


@_dtype_kernel
def spherical_j0(x: np.ndarray) -> np.ndarray:
    """sin(x) / x, by its Taylor polynomial (Horner in x^2) below |x| = 1/2; 0 at +-inf."""
    t = x.dtype.type
    fused = avx2()
    with np.errstate(all="ignore"):
        out = libm("sin", x) / x
        small = np.abs(x) < t(0.5)
        xx = x[small] * x[small]
        # 1/7!... 1/13! with alternating signs, each a quotient rounded in the dtype
        acc = np.full_like(xx, t(1) / t(6227020800))
        for den in (-39916800, 362880, -5040, 120, -6):
            c = np.full_like(xx, (t(-1) if den < 0 else t(1)) / t(abs(den)))
            acc = fma(xx, acc, c) if fused else c + xx * acc
        out[small] = fma(xx, acc, np.ones_like(xx)) if fused else t(1) + xx * acc
    out[np.isinf(x)] = 0
    return out
