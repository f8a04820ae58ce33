"""PyTorch's Cephes-derived I0, I1 (plain and exp-scaled) and ndtri, replayed in the input's
own precision: the kernels `special_ops.py` uses for i0, i0e, i1, i1e and ndtri.

PyTorch's CPU kernels for these evaluate Cephes' Chebyshev series (I0, I1) and rational
approximations (ndtri) in the tensor's dtype: float32 inputs are computed in float32, with
float32-rounded coefficients (and, for I1, shorter float32 tables), float64 in float64.
ember's own float64 series are more exact, but land an ulp or more away from PyTorch's
values in most elements (up to ~13 float32 ulps for i1 near 8). These kernels take the same
steps in the same dtype and order, so results match PyTorch's bit for bit, up to the C
library's exp and log: PyTorch calls glibc's, these call NumPy's (float64) or round
NumPy's float64 result (float32), which agree with glibc's to the last bit in all but
rare elements (see the tests' tolerance).

PyTorch's AVX2 / AVX512 builds contract `x * b1 - b2` and `r * x + a` into FMAs (its scalar
'default' build does not): `ember.random.get_kernel_profile()` picks which to reproduce.
The coefficient tables are Cephes' (3-clause BSD, as PyTorch's ATen/native/Math.h cites).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

from .. import native
from ..native import calls
from ._fma import fma
from ._rng_kernels import avx2

_I0_A = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16,
    1.715391285555133e-15, -1.1685332877993451e-14, 7.676185498604936e-14,
    -4.856446783111929e-13, 2.95505266312964e-12, -1.726826291441556e-11,
    9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07,
    1.1173875391201037e-06, -4.4167383584587505e-06, 1.6448448070728896e-05,
    -5.754195010082104e-05, 0.00018850288509584165, -0.0005763755745385824,
    0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
    -0.3046826723431984, 0.6767952744094761)
_I0_B = (
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17,
    3.461222867697461e-17, -2.8276239805165836e-16, -3.425485619677219e-16,
    1.7725601330565263e-15, 3.8116806693526224e-15, -9.554846698828307e-15,
    -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11,
    -3.1499165279632416e-11, 1.1889147107846439e-11, 4.94060238822497e-10,
    3.3962320257083865e-09, 2.266668990498178e-08, 2.0489185894690638e-07,
    2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943, 0.8044904110141088)
_I1_A64 = (
    2.7779141127610464e-18, -2.111421214358166e-17, 1.5536319577362005e-16,
    -1.1055969477353862e-15, 7.600684294735408e-15, -5.042185504727912e-14,
    3.223793365945575e-13, -1.9839743977649436e-12, 1.1736186298890901e-11,
    -6.663489723502027e-11, 3.625590281552117e-10, -1.8872497517228294e-09,
    9.381537386495773e-09, -4.445059128796328e-08, 2.0032947535521353e-07,
    -8.568720264695455e-07, 3.4702513081376785e-06, -1.3273163656039436e-05,
    4.781565107550054e-05, -0.00016176081582589674, 0.0005122859561685758,
    -0.0015135724506312532, 0.004156422944312888, -0.010564084894626197,
    0.024726449030626516, -0.05294598120809499, 0.1026436586898471, -0.17641651835783406,
    0.25258718644363365)
_I1_A32 = (
    9.381537386495773e-09, -4.445059128796328e-08, 2.0032947535521353e-07,
    -8.568720264695455e-07, 3.4702513081376785e-06, -1.3273163656039436e-05,
    4.781565107550054e-05, -0.00016176081582589674, 0.0005122859561685758,
    -0.0015135724506312532, 0.004156422944312888, -0.010564084894626197,
    0.024726449030626516, -0.05294598120809499, 0.1026436586898471, -0.17641651835783406,
    0.25258718644363365)
_I1_B64 = (
    7.517296310842105e-18, 4.414348323071708e-18, -4.6503053684893586e-17,
    -3.209525921993424e-17, 2.96262899764595e-16, 3.3082023109209285e-16,
    -1.8803547755107825e-15, -3.8144030724370075e-15, 1.0420276984128802e-14,
    4.272440016711951e-14, -2.1015418427726643e-14, -4.0835511110921974e-13,
    -7.198551776245908e-13, 2.0356285441470896e-12, 1.4125807436613782e-11,
    3.2526035830154884e-11, -1.8974958123505413e-11, -5.589743462196584e-10,
    -3.835380385964237e-09, -2.6314688468895196e-08, -2.512236237870209e-07,
    -3.882564808877691e-06, -0.00011058893876262371, -0.009761097491361469,
    0.7785762350182801)
_I1_B32 = (
    -3.835380385964237e-09, -2.6314688468895196e-08, -2.512236237870209e-07,
    -3.882564808877691e-06, -0.00011058893876262371, -0.009761097491361469,
    0.7785762350182801)
_NDTRI_P0 = (
    -59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
    -1.2391658386738125)
_NDTRI_Q0 = (
    1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905, -225.46268785411937,
    200.26021238006066, -82.03722561683334, 15.90562251262117, -1.1833162112133)
_NDTRI_P1 = (
    4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
    14.684956192885803, 2.1866330685079025, -0.1402560791713545, -0.03504246268278482,
    -0.0008574567851546854)
_NDTRI_Q1 = (
    1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075,
    2.504649462083094, -0.14218292285478779, -0.03808064076915783, -0.0009332594808954574)
_NDTRI_P2 = (
    3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
    0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
    2.6580697468673755e-06, 6.239745391849833e-09)
_NDTRI_Q2 = (
    1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132, 0.21623699359449663,
    0.013420400608854318, 0.00032801446468212774, 2.8924786474538068e-06,
    6.790194080099813e-09)

_S2PI = 2.50662827463100050242  # sqrt(2 pi)
_EXP_M2 = 0.13533528323661269189  # exp(-2)


_LIBM: dict = {}


def _libm_fn(name: str, single: bool, arity: int = 1):
    """The C library's function `name` (ctypes; float arguments and result when `single`,
    else double), or None where there is no C library."""
    if name not in _LIBM:
        fn = None
        lib = ctypes.util.find_library("m")
        if lib:
            try:
                fn = getattr(ctypes.CDLL(lib), name)
                c = ctypes.c_float if single else ctypes.c_double
                fn.restype, fn.argtypes = c, [c] * arity
            except (OSError, AttributeError):
                fn = None
        _LIBM[name] = fn
    return _LIBM[name]


def _python_math(name: str):
    """math's `name` with C's values at the poles and for NaN (math raises there)."""
    f = getattr(math, name)

    def g(*v):
        try:
            return f(*v)
        except (ValueError, OverflowError):
            return math.inf if name in ("lgamma", "pow") else math.nan

    return g


def _libm_native(name: str, x: np.ndarray, y: np.ndarray | None):
    """`libm`'s loop in C (csrc/libm_maps.c), or None where native kernels are off or the
    family does not build (then ctypes calls the C library element by element)."""
    sfx = calls.SUFFIX.get(x.dtype)
    lib = native.library("libm_maps") if sfx is not None and x.size else None
    if lib is None:
        return None
    arrays = [np.ascontiguousarray(x)] + ([] if y is None else
                                          [np.ascontiguousarray(y, dtype=x.dtype)])
    out = np.empty(x.shape, x.dtype)
    try:
        fn = calls.entry(lib, f"libm_{name}_{sfx}", [calls.P] * (len(arrays) + 1) + [calls.I64])
    except (AttributeError, native.kernels.Unavailable):
        return None
    fn(*(calls.ptr(a) for a in arrays), calls.ptr(out), x.size)
    return out


def libm(name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """The C library's `name` (exp, log, sin, lgamma, pow(x, y) ...) elementwise in x's
    dtype, as PyTorch's scalar code calls it: `namef` for float32, `name` for float64
    (NumPy's own functions differ from glibc's in the last bit of a few percent of values).
    Without a C library, Python's math function on float64, rounded."""
    native_out = _libm_native(name, x, y)
    if native_out is not None:
        return native_out
    f32 = x.dtype == np.float32
    args = [x.ravel().tolist()] + ([] if y is None else [y.ravel().tolist()])
    fn = _libm_fn(name + "f" if f32 else name, f32, len(args))
    with np.errstate(all="ignore"):
        if fn is None and hasattr(np, name) and y is None:
            return getattr(np, name)(x.astype(np.float64)).astype(x.dtype)
        fn = fn or _python_math(name)
        return np.fromiter(map(fn, *args), x.dtype, count=x.size).reshape(x.shape)


def _exp(x: np.ndarray) -> np.ndarray:
    """exp as PyTorch's scalar code calls it (glibc's expf is not always the correctly
    rounded value: expf(6.2f) is one ulp off it)."""
    return libm("exp", x)


def _chbevl(x: np.ndarray, table, fused: bool) -> np.ndarray:
    """Cephes' Chebyshev sum (Clenshaw's recurrence), every step in x's dtype."""
    t = x.dtype.type
    b0, b1, b2 = np.full_like(x, t(table[0])), np.zeros_like(x), np.zeros_like(x)
    for c in table[1:]:
        b2, b1 = b1, b0
        b0 = (fma(x, b1, -b2) if fused else x * b1 - b2) + t(c)
    return t(0.5) * (b0 - b2)


def _polevl(x: np.ndarray, table, fused: bool) -> np.ndarray:
    """r = r * x + c over the table (Horner), fused as PyTorch's contracted build does."""
    t = x.dtype.type
    r = np.zeros_like(x)
    for c in table:
        r = fma(r, x, np.full_like(x, t(c))) if fused else r * x + t(c)
    return r


def _i_family(x: np.ndarray, nu: int, scaled: bool, modified: bool = False) -> np.ndarray:
    """calc_i0 / calc_i0e / calc_i1 / calc_i1e in x's dtype (float32 or float64), or with
    `modified` PyTorch's modified_bessel_i0 / _i1 (the same series, but I1 always from the
    longer float64 tables and its small-x product in another order)."""
    t = x.dtype.type
    short = x.dtype == np.float32 and not modified
    fused = avx2()
    a = np.abs(x)
    low = a <= 8
    out = np.empty_like(a)
    if nu == 0:
        ta, tb = _I0_A, _I0_B
    else:
        ta, tb = (_I1_A32, _I1_B32) if short else (_I1_A64, _I1_B64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        al = a[low]
        cl = _chbevl(al / t(2) - t(2), ta, fused)
        if nu == 1 and scaled:
            cl = cl * al
        elif nu == 1:  # i1: exp(x) * x * c; modified_bessel_i1: c * x * exp(x)
            cl = cl * al * _exp(al) if modified else _exp(al) * al * cl
        elif not scaled:
            cl = _exp(al) * cl
        out[low] = cl
        ah = a[~low]
        ch = _chbevl(t(32) / ah - t(2), tb, fused)
        out[~low] = (ch if scaled else _exp(ah) * ch) / np.sqrt(ah)
    if nu == 1:  # (odd, with +0 at -0: PyTorch tests x < 0)
        out = np.where(x < 0, -out, out)
    return out


def _dtype_kernel(fn):
    """`fn` as a kernel of `_via64`: float64 arrays directly, and (as its `.float32`) the
    float32 computation for float32, float16 and bfloat16 inputs, as PyTorch's do."""
    def kernel(x: np.ndarray, dtype=None) -> np.ndarray:
        return fn(x)

    kernel.__name__ = kernel.__qualname__ = fn.__name__
    kernel.float32 = kernel
    return kernel


@_dtype_kernel
def i0(x: np.ndarray) -> np.ndarray:
    return _i_family(x, 0, False)


@_dtype_kernel
def i0e(x: np.ndarray) -> np.ndarray:
    return _i_family(x, 0, True)


@_dtype_kernel
def i1(x: np.ndarray) -> np.ndarray:
    return _i_family(x, 1, False)


@_dtype_kernel
def i1e(x: np.ndarray) -> np.ndarray:
    return _i_family(x, 1, True)


@_dtype_kernel
def modified_i0(x: np.ndarray) -> np.ndarray:
    return _i_family(x, 0, False, modified=True)


@_dtype_kernel
def modified_i1(x: np.ndarray) -> np.ndarray:
    return _i_family(x, 1, False, modified=True)


@_dtype_kernel
def ndtri(y0: np.ndarray) -> np.ndarray:
    """calc_ndtri in y0's dtype: a rational function of y - 1/2 in the middle, of
    1 / sqrt(-2 log y) in the tails (two tables, split at y = exp(-32))."""
    t = y0.dtype.type
    fused = avx2()
    out = np.full_like(y0, np.nan)
    out[y0 == 0] = -np.inf
    out[y0 == 1] = np.inf
    ok = (y0 > 0) & (y0 < 1)
    y = y0[ok]
    upper = y > t(1) - t(_EXP_M2)
    y = np.where(upper, t(1) - y, y)
    res = np.empty_like(y)
    mid = y > t(_EXP_M2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ym = y[mid] - t(0.5)
        y2 = ym * ym
        r = y2 * _polevl(y2, _NDTRI_P0, fused) / _polevl(y2, _NDTRI_Q0, fused)
        res[mid] = (fma(ym, r, ym) if fused else ym + ym * r) * t(_S2PI)
        # (PyTorch calls C's double ::log and ::sqrt here, rounding to the dtype on store)
        yt = y[~mid].astype(np.float64)
        xt = np.sqrt(-2 * np.log(yt)).astype(y.dtype)
        x64 = xt.astype(np.float64)
        x0 = (x64 - np.log(x64) / x64).astype(y.dtype)
        z = t(1) / xt
        near = xt < 8
        x1 = np.where(near, z * _polevl(z, _NDTRI_P1, fused) / _polevl(z, _NDTRI_Q1, fused),
                      z * _polevl(z, _NDTRI_P2, fused) / _polevl(z, _NDTRI_Q2, fused))
        tail = x0 - x1
        res[~mid] = np.where(upper[~mid], tail, -tail)
    # (the middle branch returns before the tail's sign flip, as Cephes does)
    out[ok] = res
    return out
