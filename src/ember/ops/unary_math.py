"""More unary math: exp2/expm1/logs, trig and hyperbolic, erf family, rounding, predicates.

Each op is a member of the `unary` family with its VJP and JVP below it (the family,
the factory and the dtype policies are in `unary.py`). NumPy has no erf or erfinv, so
they are built here: erf/erfc from Chebyshev interpolants of erf(x)/x and of the scaled
erfcx(x) = e^{x^2} erfc(x) (fitted once at import against Python's `math.erf` /
`math.erfc`), and the asymptotic series of erfcx for large x (Abramowitz & Stegun
7.1.23); erfinv from Winitzki's closed-form estimate refined by Halley steps on erf.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial import chebyshev as cheb

from .. import _dtype as dt
from .. import native
from .._tensor import Tensor
from ..native import calls
from . import _complex_math
from ._arg_parser_text import (
    ABSENT,
    called_as_method,
    invalid_combination,
    method_aware,
    need_tensor,
    wrong_type,
)
from ._common import MEMBER_LAYOUT, same_meta, select, type_name, write_out
from ._in_float64 import _via64
from ._math_loops import NATIVE_MIN, map_kernel
from ._rounding import in_16
from ._size_args import _is_index
from .power import pow as _pow
from .registry import apply, deflower, defvjp, nondifferentiable
from .unary import (
    BOOL,
    BOOL_K,
    COMPLEX_K,
    FOUND_DTYPE,
    INT_K,
    SAME,
    bool_meta,
    cj,
    defjvp1,
    lowp,
    named_vjp,
    unary,
    unary_api,
    unary_p,
    zero_grad,
    zero_tangent,
)

LN2, LN10 = math.log(2.0), math.log(10.0)
_NO_COMPLEX = (COMPLEX_K,)


def _real_or_complex(real_fn, complex_fn):
    """A float kernel that takes a different NumPy route for complex inputs."""
    @lowp
    def kernel(a):
        return complex_fn(a) if a.dtype.kind == "c" else real_fn(a)

    return kernel


# --- exponentials and logarithms --------------------------------------------------

def _rsqrt(a):
    return 1 / np.sqrt(a)


rsqrt_p = unary("rsqrt", lowp(_rsqrt))
defvjp(rsqrt_p, lambda g, out, x: -0.5 * g * cj(out * out * out), reads=((),),
       save_output=True)
defjvp1(rsqrt_p, lambda t, out, x: -0.5 * t * (out * out * out))

exp2_p = unary("exp2", _real_or_complex(np.exp2, _complex_math.exp2))
# (PyTorch's formula ends in a Tensor-times-Scalar mul: its node is MulBackward1)
defvjp(exp2_p, named_vjp("MulBackward1", lambda g, out, x: g * cj(out) * LN2), reads=((),),
       save_output=True)
defjvp1(exp2_p, lambda t, out, x: t * out * LN2)

expm1_p = unary("expm1", _real_or_complex(np.expm1, _complex_math.expm1))
deflower(expm1_p, "ember_expm1_t({0})", ulps=1)
native.register(expm1_p, "math_maps", map_kernel("map_expm1"), min_size=(NATIVE_MIN, "n"))
defvjp(expm1_p, lambda g, out, x: g * cj(out + 1), reads=((),), save_output=True)
defjvp1(expm1_p, lambda t, out, x: t * (out + 1))


def _rounded_from64(fn):
    """A float32 kernel computed in float64 and rounded once (so correctly rounded in all
    but rare double-rounding cases); other dtypes run `fn` directly."""
    def kernel(a):
        if a.dtype == np.float32:
            return fn(a.astype(np.float64)).astype(np.float32)
        return fn(a)

    kernel.__name__ = fn.__name__
    return kernel


# NOTE: NumPy's float32 SIMD log10 is off by an ulp at exact powers of ten (log10(1000)
# gives 3.0000002), where PyTorch's kernel returns 3 exactly; through float64 it agrees
# with PyTorch on 99.99% of float32 inputs (NumPy's float32 route: 47%). log2 likewise.
log2_p = unary("log2", _real_or_complex(_rounded_from64(np.log2),
                                        lambda a: _complex_math.log_base(a, 2.0)))
native.register(log2_p, "math_maps", map_kernel("map_log2", (np.float32,)))
defvjp(log2_p, lambda g, out, x: g / cj(x * LN2))
defjvp1(log2_p, lambda t, out, x: t / (x * LN2))

log10_p = unary("log10", _real_or_complex(_rounded_from64(np.log10),
                                          lambda a: _complex_math.log_base(a, 10.0)))
native.register(log10_p, "math_maps", map_kernel("map_log10", (np.float32,)))
defvjp(log10_p, lambda g, out, x: g / cj(x * LN10))
defjvp1(log10_p, lambda t, out, x: t / (x * LN10))

log1p_p = unary("log1p", _real_or_complex(np.log1p, _complex_math.log1p),
                grad_name="Log1PBackward0")  # (torch's "P")
deflower(log1p_p, "ember_log1p_t({0})", ulps=2)
native.register(log1p_p, "math_maps", map_kernel("map_log1p"), min_size=(NATIVE_MIN, "n"))
defvjp(log1p_p, lambda g, out, x: g / cj(x + 1))
defjvp1(log1p_p, lambda t, out, x: t / (x + 1))


def _reciprocal(a: np.ndarray) -> np.ndarray:
    """1 / a; complex by Smith's division, as PyTorch (NumPy's zeros carry other signs)."""
    return _complex_math.reciprocal(a) if a.dtype.kind == "c" else np.reciprocal(a)


reciprocal_p = unary("reciprocal", lowp(_reciprocal))
defvjp(reciprocal_p, lambda g, out, x: -g * cj(out * out), reads=((),), save_output=True)
defjvp1(reciprocal_p, lambda t, out, x: -t * (out * out))


# --- trigonometric and hyperbolic -------------------------------------------------

tan_p = unary("tan", lowp(np.tan))
defvjp(tan_p, lambda g, out, x: g * cj(1 + out * out), reads=((),), save_output=True)
defjvp1(tan_p, lambda t, out, x: t * (1 + out * out))

asin_p = unary("asin", lowp(np.arcsin))
defvjp(asin_p, lambda g, out, x: g * cj((1 - x * x).rsqrt()))
defjvp1(asin_p, lambda t, out, x: t * (1 - x * x).rsqrt())

acos_p = unary("acos", lowp(np.arccos))
defvjp(acos_p, lambda g, out, x: -g * cj((1 - x * x).rsqrt()))
defjvp1(acos_p, lambda t, out, x: -t * (1 - x * x).rsqrt())

atan_p = unary("atan", lowp(np.arctan))
defvjp(atan_p, lambda g, out, x: g / cj(1 + x * x))
defjvp1(atan_p, lambda t, out, x: t / (1 + x * x))

sinh_p = unary("sinh", lowp(np.sinh))
defvjp(sinh_p, lambda g, out, x: g * cj(x.cosh()))
defjvp1(sinh_p, lambda t, out, x: t * x.cosh())

cosh_p = unary("cosh", lowp(np.cosh))
defvjp(cosh_p, lambda g, out, x: g * cj(x.sinh()))
defjvp1(cosh_p, lambda t, out, x: t * x.sinh())

asinh_p = unary("asinh", lowp(np.arcsinh))
defvjp(asinh_p, lambda g, out, x: g * cj((x * x + 1).rsqrt()))
defjvp1(asinh_p, lambda t, out, x: t * (x * x + 1).rsqrt())

acosh_p = unary("acosh", lowp(np.arccosh))


def _acosh_grad(g, out, x):
    if x._dtype.is_complex:
        return g * ((x + 1).rsqrt() * (x - 1).rsqrt()).conj()
    return g * (x * x - 1).rsqrt()


defvjp(acosh_p, _acosh_grad)


def _acosh_tangent(t, out, x):
    if x._dtype.is_complex:
        return t * ((x + 1).rsqrt() * (x - 1).rsqrt())
    return t * (x * x - 1).rsqrt()


defjvp1(acosh_p, _acosh_tangent)

atanh_p = unary("atanh", lowp(np.arctanh))
defvjp(atanh_p, lambda g, out, x: g / cj(1 - x * x))
defjvp1(atanh_p, lambda t, out, x: t / (1 - x * x))


def _logit_kernel(a, eps=None):
    if a.dtype.itemsize == 2 and a.dtype.kind in "fV":
        return _logit_16(a, eps)
    if eps is not None:
        a = _logit_clamp(a, a.dtype.type(eps), a.dtype.type(1 - eps))
    return np.log(a / (1 - a))


def _logit_clamp(x, lo, hi):
    """x clamped to [lo, hi] as PyTorch's logit kernel compares: below lo first, then above
    hi (so an `eps` over 0.5, where lo > hi, gives lo below lo and hi from there); NaN kept."""
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


def _logit_16(a, eps):
    """float16 / bfloat16 logit as PyTorch's kernel computes it: the bounds, `1 - x`, the
    quotient and the log each rounded to the dtype (its vector ops round per op)."""
    d = a.dtype
    x = a.astype(np.float32)
    if eps is not None:
        lo = in_16(eps, d)
        x = _logit_clamp(x, lo, in_16(1 - lo, d))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(in_16(x / in_16(1 - x, d), d)).astype(d)


logit_p = unary("logit", _logit_kernel)


def _logit_grad(g, out, x, eps=None):
    from .ternary import where

    inner = g / (x * (1 - x))
    if eps is None:
        return where((x < 0) | (x > 1), float("nan"), inner)
    return where((x < eps) | (x > 1 - eps), 0.0, inner)


defvjp(logit_p, _logit_grad)
defjvp1(logit_p, _logit_grad)  # (the same mask forward: 1 / (x (1 - x)) is real)


# --- erf, erfc, erfinv ---------------------------------------------------------------

def _exp_neg_sq(x):
    """exp(-x*x) with x*x split exactly (Veltkamp), so its rounding is not magnified by exp."""
    t = x * 134217729.0
    hi = t - (t - x)
    lo = x - hi
    return np.exp(-hi * hi) * np.exp(-lo * (x + hi))


def _fit(f, lo: float, hi: float, deg: int):
    nodes = cheb.chebpts1(deg + 1) * (hi - lo) / 2 + (hi + lo) / 2
    return cheb.chebfit(cheb.chebpts1(deg + 1), [f(float(v)) for v in nodes], deg), lo, hi


def _ev(fit, x):
    c, lo, hi = fit
    return cheb.chebval((2 * x - (hi + lo)) / (hi - lo), c)


# erf(x) / x = sum_n c_n t^n, t = x^2, for |x| < 0.5 (Taylor: c_n = 2/sqrt(pi) (-1)^n /
# (n! (2n + 1)); 15 terms reach 1e-19 there); erfcx on three intervals up to 8.
_ERF_TAYLOR = [2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
               for n in range(15)]


def _erf_small(x):
    """erf(x) for |x| < 0.5 (float64 array): x times the series in x^2, by Horner."""
    t = x * x
    acc = np.full_like(x, _ERF_TAYLOR[-1])
    for c in _ERF_TAYLOR[-2::-1]:
        acc *= t
        acc += c
    return x * acc


_ERFCX = [_fit(lambda v: math.erfc(v) / float(_exp_neg_sq(np.float64(v))), a, b, 30)
          for a, b in ((0.5, 2.0), (2.0, 4.0), (4.0, 8.0))]
_ASYM_TERMS = 22


def _erfc_pos(x):
    """erfc for x >= 0.5 (float64 array)."""
    out = np.empty_like(x)
    for f in _ERFCX:
        m = (x >= f[1]) & (x < f[2])
        out[m] = _ev(f, x[m]) * _exp_neg_sq(x[m])
    m = (x >= 8.0) & (x < 27.3)  # erfc underflows to 0 past 27.3
    out[x >= 27.3] = 0.0
    big = x[m]
    z = 1 / (2 * big * big)
    s = np.ones_like(big)
    for n in range(_ASYM_TERMS, 0, -1):  # Horner on sum (-1)^n (2n-1)!! z^n
        s = 1 - (2 * n - 1) * z * s
    out[m] = s / (big * math.sqrt(math.pi)) * _exp_neg_sq(big)
    return out


def _erf64(x):
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    out = np.empty_like(x)
    small = ax < 0.5
    out[small] = _erf_small(x[small])
    big = ~small & ~np.isnan(x)
    out[big] = np.copysign(1 - _erfc_pos(ax[big]), x[big])
    out[np.isnan(x)] = np.nan
    return out


def _erfc64(x):
    x = np.asarray(x, np.float64)
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    out[small] = 1 - _erf_small(x[small])
    pos = x >= 0.5
    out[pos] = _erfc_pos(x[pos])
    neg = x <= -0.5
    out[neg] = 2 - _erfc_pos(-x[neg])
    out[np.isnan(x)] = np.nan
    return out


def _erfinv64(y):
    y = np.asarray(y, np.float64)
    ay = np.abs(y)
    # Winitzki's estimate (a = 0.147), good to ~2e-3, then Halley steps on erf(x) = |y|.
    a = 0.147
    ln = np.log((1 - ay) * (1 + ay))
    t = 2 / (math.pi * a) + ln / 2
    x = np.sqrt(np.sqrt(t * t - ln / a) - t)
    tail = ay > 0.5
    c = 2 / math.sqrt(math.pi)
    for _ in range(3):
        xc = np.clip(np.nan_to_num(x), 0, 6.0)
        # erf(x) - |y|, through erfc near 1 so the difference keeps its digits.
        r = np.where(tail, (1 - ay) - _erfc64(xc), _erf64(xc) - ay)
        step = r / (c * _exp_neg_sq(xc))
        x = xc - step / (1 + xc * step)
    x = np.where(ay == 1, np.inf, np.where(ay > 1, np.nan, x))
    return np.copysign(x, y)


# erf in C: ember_math.h's erf (double, <= 2 ulp; float32 computed in double and rounded
# once): one pass over the native pool against the NumPy kernel's hundred (a Chebyshev sum
# of degree 30 and masks), 20-40x slower. The two agree to the last bit on nearly every
# float32 input and within 1 ulp on all (tests/ops/test_unary_math.py).
_erf_native = map_kernel("map_erf")

erf_p = unary("erf", _via64(_erf64))
native.register(erf_p, "math_maps", _erf_native)
defvjp(erf_p, lambda g, out, x: g * (2 / math.sqrt(math.pi)) * (-x * x).exp())
defjvp1(erf_p, lambda t, out, x: t * (2 / math.sqrt(math.pi)) * (-x * x).exp())

erfc_p = unary("erfc", _via64(_erfc64))
native.register(erfc_p, "math_maps", map_kernel("map_erfc"))
defvjp(erfc_p, lambda g, out, x: g * (-2 / math.sqrt(math.pi)) * (-x * x).exp())
defjvp1(erfc_p, lambda t, out, x: t * (-2 / math.sqrt(math.pi)) * (-x * x).exp())

erfinv_p = unary("erfinv", _via64(_erfinv64))


_erfinv_f32 = map_kernel("map_erfinv", (np.float32,))


def _erfinv_native(lib, a):
    """erfinv in C: float32 through ember_math.h's erfinvf (the NumPy kernel's method in
    double, rounded once), float64 through csrc/erfinv.c (its steps with the C library's
    erf, erfc and exp: within a few ulps of it). One pass over the pool against the NumPy
    kernel's three Halley steps through its masked erf and erfc, some 20-500x slower."""
    if a.dtype != np.float64:
        return _erfinv_f32(lib, a)
    lib64 = native.library("erfinv")
    if lib64 is None:
        return NotImplemented
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    out = np.empty_like(a)
    calls.entry(lib64, "ember_erfinv_double", [calls.P, calls.P, calls.I64])(
        calls.ptr(a), calls.ptr(out), a.size)
    return out


native.register(erfinv_p, "math_maps", _erfinv_native)
# (as PyTorch, from the input, erfinv computed again: an in-place op on the result trains)
defvjp(erfinv_p, lambda g, out, x: g * (math.sqrt(math.pi) / 2) * (x.erfinv() ** 2).exp())
defjvp1(erfinv_p, lambda t, out, x: t * (math.sqrt(math.pi) / 2) * (out * out).exp())


# --- rounding ---------------------------------------------------------------------------

def _int_passthrough(fn):
    """Rounding kernels return integer inputs unchanged (as a fresh copy)."""
    def kernel(a, **params):
        return a.copy() if a.dtype.kind in "iub" else fn(a, **params)

    kernel.__name__ = fn.__name__
    return kernel


@lowp
def _round_kernel(a, decimals=0):
    # NOTE: like PyTorch, scale by 10**decimals, round half to even, and scale back.
    if decimals == 0:
        return np.rint(a)
    ten = np.asarray(10.0 ** abs(decimals), a.dtype)
    return np.rint(a * ten) / ten if decimals > 0 else np.rint(a / ten) * ten


floor_p = unary("floor", _int_passthrough(np.floor))
ceil_p = unary("ceil", _int_passthrough(np.ceil))
trunc_p = unary("trunc", _int_passthrough(np.trunc))
round_p = unary("round", _int_passthrough(_round_kernel))
# round(x, decimals=d) is PyTorch's other overload, its node RoundBackward1
round_decimals_p = unary("round_decimals", _int_passthrough(_round_kernel),
                         grad_name="RoundBackward1")
for _m in (floor_p, ceil_p, trunc_p, round_p, round_decimals_p):
    defvjp(_m, zero_grad, reads=((),))
    defjvp1(_m, zero_tangent)


def _frac_kernel(a):
    return a - np.trunc(a)


frac_p = unary("frac", _frac_kernel)
defvjp(frac_p, lambda g, out, x: g, reads=((),))
defjvp1(frac_p, lambda t, out, x: t)


# --- angle -----------------------------------------------------------------------------

def _angle_kernel(a):
    if a.dtype.kind == "c":
        return np.angle(a)  # atan2(imag, real), in the real dtype of the parts
    wide = a.astype(np.float32) if a.dtype.itemsize == 2 else a
    # NOTE: PyTorch's real angle is pi where x < 0, else 0 (-0.0 and -0j included), NaN kept.
    out = np.where(np.isnan(wide), wide, np.where(wide < 0, np.pi, 0.0))
    return out.astype(a.dtype)


def _angle_grad(g, out, x):
    # PyTorch's angle_backward: zeros for real inputs; for complex, the gradient of
    # atan2(im, re) as one complex number, i g z / |z|^2, and 0 at z == 0.
    from .creation import zeros_like
    from .ternary import where

    if not x._dtype.is_complex:
        return zeros_like(x)
    sq = x.abs().square()
    return where(x == 0, 0j, g * x * 1j / where(sq == 0, 1.0, sq))


def _angle_tangent(t, out, x):
    # d atan2(im, re) = Im(conj(z) t) / |z|^2, 0 at z == 0
    from .ternary import where

    if not x._dtype.is_complex:
        return t * 0
    sq = x.abs().square()
    return where(sq == 0, 0.0, (x.conj() * t).imag / where(sq == 0, 1.0, sq))


angle_p = unary("angle", _angle_kernel, meta=lambda x: same_meta(x, x._dtype.to_real()))
defvjp(angle_p, _angle_grad)
# (PyTorch's complex angle is copied into `empty(0)` resized: row-major)
MEMBER_LAYOUT["angle"] = lambda args, params: "contiguous" if args[0]._dtype.is_complex else None
defjvp1(angle_p, _angle_tangent)


# --- predicates and nan_to_num ----------------------------------------------------------

_FLOAT_TESTS = {"nan": np.isnan, "inf": np.isinf, "posinf": np.isposinf,
                "neginf": np.isneginf, "finite": np.isfinite}


def _float_class_kernel(a, *, test):
    if a.dtype.kind in "iub":  # integers are finite, never NaN or infinite
        return np.full(a.shape, test == "finite")
    return _FLOAT_TESTS[test](a.astype(np.float32) if a.dtype.kind == "V" else a)


# isnan / isinf / isposinf / isneginf / isfinite: one classification of floats, `test` the class
float_class_p = unary("float_class", _float_class_kernel, meta=lambda x, *, test: bool_meta(x))
nondifferentiable(float_class_p)


def _float_class_layout(args, params) -> str | None:
    """PyTorch's isinf / isfinite are composites: `zeros_like` / `ones_like` of an integer
    input, `x.abs() == inf` (and `(x == x) * ...`) of a float one; the rest are kernels."""
    if params["test"] not in ("inf", "finite"):
        return None
    if args[0]._dtype._kind < 2:
        return "like"
    return "with number" if params["test"] == "inf" else "isfinite"


MEMBER_LAYOUT["float_class"] = _float_class_layout


def _nan_to_num_kernel(a, nan=0.0, posinf=None, neginf=None):
    if a.dtype.kind in "iub":
        return a.copy()
    if a.dtype.kind == "c":
        parts = [_nan_to_num_kernel(np.array(p), nan, posinf, neginf) for p in (a.real, a.imag)]
        return (parts[0] + 1j * parts[1]).astype(a.dtype)
    info = dt.finfo(dt.from_numpy(a.dtype))
    hi = np.asarray(info.max if posinf is None else posinf).astype(a.dtype)
    lo = np.asarray(info.min if neginf is None else neginf).astype(a.dtype)
    if np.isfinite(a).all():  # (the common case: one pass to find nothing to replace)
        return a.astype(a.dtype)
    # (each element's replacement is chosen from the input: nan=inf leaves an inf there)
    out = select(a == np.inf, hi, select(a == -np.inf, lo, a))
    return select(np.isnan(a), np.asarray(nan).astype(a.dtype), out).astype(a.dtype)


nan_to_num_p = unary("nan_to_num", _nan_to_num_kernel)
defvjp(nan_to_num_p, lambda g, out, x, **p: g * x.isfinite())
defjvp1(nan_to_num_p, lambda t, out, x, **p: t * x.isfinite())


# --- public functions ------------------------------------------------------------

rsqrt, rsqrt_ = unary_api(rsqrt_p, "1 / sqrt(x) elementwise.")
exp2, exp2_ = unary_api(exp2_p, "2 to the power of each element.")
expm1, expm1_ = unary_api(expm1_p, "exp(x) - 1, accurate near 0.")
log2, log2_ = unary_api(log2_p, "Base-2 logarithm.")
log10, log10_ = unary_api(log10_p, "Base-10 logarithm.")
log1p, log1p_ = unary_api(log1p_p, "log(1 + x), accurate near 0.")
reciprocal, reciprocal_ = unary_api(reciprocal_p, "1 / x elementwise.")
tan, tan_ = unary_api(tan_p, "Tangent (radians).")
asin, asin_ = unary_api(asin_p, "Inverse sine.")
acos, acos_ = unary_api(acos_p, "Inverse cosine.")
atan, atan_ = unary_api(atan_p, "Inverse tangent.")
sinh, sinh_ = unary_api(sinh_p, "Hyperbolic sine.")
cosh, cosh_ = unary_api(cosh_p, "Hyperbolic cosine.")
asinh, asinh_ = unary_api(asinh_p, "Inverse hyperbolic sine.")
acosh, acosh_ = unary_api(acosh_p, "Inverse hyperbolic cosine.")
atanh, atanh_ = unary_api(atanh_p, "Inverse hyperbolic tangent.")
_logit, _logit_ = unary_api(logit_p, "log(p / (1 - p)).", reject=_NO_COMPLEX)
erf, erf_ = unary_api(erf_p, "The error function.", reject=_NO_COMPLEX, kname="erf_vml_cpu")
erfc, erfc_ = unary_api(erfc_p, "1 - erf(x), accurate where erf(x) is near 1.",
                        reject=_NO_COMPLEX, kname="erfc_vml_cpu")
angle, _ = unary_api(angle_p, "The argument of each element: atan2(imag, real) for complex, "
                     "pi for negative reals, else 0.")
erfinv, erfinv_ = unary_api(erfinv_p, "The inverse error function on (-1, 1).",
                            reject=_NO_COMPLEX, kname="erfinv_vml_cpu")
floor, floor_ = unary_api(floor_p, "Largest integer <= x (integers unchanged).", result=SAME,
                          reject=(BOOL_K,), kname="floor_vml_cpu", no_complex=True,
                          exact_out=FOUND_DTYPE)
ceil, ceil_ = unary_api(ceil_p, "Smallest integer >= x (integers unchanged).", result=SAME,
                        reject=(BOOL_K,), kname="ceil_vml_cpu", no_complex=True,
                        exact_out=FOUND_DTYPE)
trunc, trunc_ = unary_api(trunc_p, "x rounded toward zero (integers unchanged).", result=SAME,
                          reject=(BOOL_K,), kname="trunc_vml_cpu", no_complex=True,
                          exact_out=FOUND_DTYPE)
_round, _round_ = unary_api(round_p, "x rounded half to even.", result=SAME,
                            reject=(BOOL_K, COMPLEX_K), kname="round_vml_cpu",
                            exact_out=FOUND_DTYPE)
_round_d, _round_d_ = unary_api(round_decimals_p, "x rounded half to even at `decimals`.",
                                result=SAME, reject=(BOOL_K, COMPLEX_K), kname="round_cpu",
                                name="round", exact_out=FOUND_DTYPE)
frac, frac_ = unary_api(frac_p, "x - trunc(x).", result=SAME,
                        reject=(BOOL_K, INT_K, COMPLEX_K), kname="frac_cpu",
                        exact_out=FOUND_DTYPE)
isnan, _ = unary_api(float_class_p, "True where the element is NaN.", result=BOOL,
                     name="isnan", fixed={"test": "nan"}, exact_out="")
isinf, _ = unary_api(float_class_p, "True where the element is +inf or -inf.", result=BOOL,
                     name="isinf", fixed={"test": "inf"}, exact_out="")
isfinite, _ = unary_api(float_class_p, "True where the element is neither inf nor NaN.",
                        result=BOOL, name="isfinite", fixed={"test": "finite"},
                        exact_out="")
_nan_to_num, _nan_to_num_ = unary_api(
    nan_to_num_p, "NaN and infinities replaced by numbers.", result=SAME,
    exact_out="nan_to_num: dtype of out: {out} should be same as input: {expected}")
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = (
    asin_, acos_, atan_, asinh_, acosh_, atanh_)
fix, fix_ = trunc, trunc_


def layout_own(input, name: str, out=None):
    """A sparse layout's own method `name` (COO: ops/sparse_pointwise.py, CSR / CSC:
    ops/sparse_compressed_pointwise.py), which a function form hands over to; else None."""
    if isinstance(input, Tensor) and not input._strided and out is None:
        return type(input).__dict__.get(name)
    return None


def square(input: Tensor, *, out=None) -> Tensor:
    """x * x (as `pow(x, 2)`: bool becomes int64, like PyTorch)."""
    need_tensor(input, "square")
    if (own := layout_own(input, "square", out)) is not None:
        return own(input)
    return _pow(input, 2, out=out)


def square_(self: Tensor) -> Tensor:
    return self.pow_(2)


def logit(input: Tensor, eps: float | None = None, *, out=None) -> Tensor:
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when `eps` is given."""
    return _logit(input, eps=eps, out=out)


def logit_(self: Tensor, eps: float | None = None) -> Tensor:
    return _logit_(self, eps=eps)


_ROUND_OVERLOADS = ("(Tensor input, *, Tensor out = None)",
                    "(Tensor input, *, int decimals, Tensor out = None)")


def round_decimals(x: Tensor, decimals, name: str = "round", method: bool = True,
                   out=None) -> int:
    """The number of decimals, read as torch's parser reads an int (a NumPy or one-element
    integer tensor too, never a bool); as in PyTorch, passing `decimals` at all (even 0)
    selects the floating-point kernel, which integer tensors do not have."""
    need_tensor(x, name)
    if decimals is ABSENT:
        return 0
    if not _is_index(decimals, bool_ok=False):
        if not method and out is None:  # (both overloads fit two arguments: none is named)
            raise invalid_combination(name, _ROUND_OVERLOADS, (x,), {"decimals": decimals})
        raise wrong_type(name, "decimals", None, "int", decimals)
    if x._dtype._kind == INT_K:
        kernel = "round_vml_cpu" if decimals == 0 else "round_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(x._dtype)}'")
    return int(decimals.item()) if isinstance(decimals, Tensor) else int(decimals)


@method_aware
def round(input: Tensor, *, decimals: int = ABSENT, out=None) -> Tensor:  # noqa: A001
    """Round half to even, to `decimals` decimal places (negative: to tens, hundreds ...)."""
    d = round_decimals(input, decimals, "round", called_as_method(), out)
    # (passing `decimals` at all, even 0, selects PyTorch's second overload: RoundBackward1)
    return (_round if decimals is ABSENT else _round_d)(input, decimals=d, out=out)


def round_(self: Tensor, *, decimals: int = ABSENT) -> Tensor:
    d = round_decimals(self, decimals, "round_")
    return (_round_ if decimals is ABSENT else _round_d_)(self, decimals=d)


def _signed_inf_check(name: str, x: Tensor) -> None:
    need_tensor(x, name)
    if x._dtype.is_complex:
        raise RuntimeError(f"{name} does not support complex inputs.")


def _bool_out(name: str, out) -> None:
    if isinstance(out, Tensor) and out._dtype is not dt.bool_:
        raise RuntimeError(f"{name} does not support non-boolean outputs.")


def isposinf(input: Tensor, *, out=None) -> Tensor:
    """True where the element is +inf."""
    if (own := layout_own(input, "isposinf", out)) is not None:
        return own(input)
    _signed_inf_check("isposinf", input)
    _bool_out("isposinf", out)
    return write_out(apply(unary_p, input, fn=float_class_p, test="posinf"), out)


def isneginf(input: Tensor, *, out=None) -> Tensor:
    """True where the element is -inf."""
    if (own := layout_own(input, "isneginf", out)) is not None:
        return own(input)
    _signed_inf_check("isneginf", input)
    _bool_out("isneginf", out)
    return write_out(apply(unary_p, input, fn=float_class_p, test="neginf"), out)


def _check_fill_values(nan, posinf, neginf) -> None:
    """TypeError, as PyTorch's argument parser gives, for a replacement that is no real number."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is None:
            continue
        if not isinstance(v, (int, float, np.integer, np.floating)):
            raise wrong_type("nan_to_num", name, None, "float", v)


def nan_to_num(input: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None, *, out=None) -> Tensor:
    """NaN -> `nan`, +inf -> `posinf`, -inf -> `neginf` (defaults: 0 and the dtype's extremes)."""
    _check_fill_values(nan, posinf, neginf)
    nan = 0.0 if nan is None else nan  # (None is the default, as in PyTorch's signature)
    return _nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf, out=out)


def nan_to_num_(self: Tensor, nan: float | None = 0.0, posinf: float | None = None,
                neginf: float | None = None) -> Tensor:
    _check_fill_values(nan, posinf, neginf)
    nan = 0.0 if nan is None else nan
    return _nan_to_num_(self, nan=nan, posinf=posinf, neginf=neginf)


_FNS = {
    "rsqrt": rsqrt, "exp2": exp2, "expm1": expm1, "log2": log2, "log10": log10,
    "log1p": log1p, "reciprocal": reciprocal, "tan": tan, "asin": asin, "acos": acos,
    "atan": atan, "sinh": sinh, "cosh": cosh, "asinh": asinh, "acosh": acosh, "atanh": atanh,
    "arcsin": arcsin, "arccos": arccos, "arctan": arctan, "arcsinh": arcsinh,
    "arccosh": arccosh, "arctanh": arctanh, "logit": logit, "erf": erf, "erfc": erfc,
    "erfinv": erfinv, "floor": floor, "ceil": ceil, "trunc": trunc, "fix": fix, "round": round,
    "frac": frac, "square": square, "nan_to_num": nan_to_num, "angle": angle,
}
_INPLACE = {
    "rsqrt_": rsqrt_, "exp2_": exp2_, "expm1_": expm1_, "log2_": log2_, "log10_": log10_,
    "log1p_": log1p_, "reciprocal_": reciprocal_, "tan_": tan_, "asin_": asin_,
    "acos_": acos_, "atan_": atan_, "sinh_": sinh_, "cosh_": cosh_, "asinh_": asinh_,
    "acosh_": acosh_, "atanh_": atanh_, "arcsin_": arcsin_, "arccos_": arccos_,
    "arctan_": arctan_, "arcsinh_": arcsinh_, "arccosh_": arccosh_, "arctanh_": arctanh_,
    "logit_": logit_, "erf_": erf_, "erfc_": erfc_, "erfinv_": erfinv_, "floor_": floor_,
    "ceil_": ceil_, "trunc_": trunc_, "fix_": fix_, "round_": round_, "frac_": frac_,
    "square_": square_, "nan_to_num_": nan_to_num_,
}
_PREDICATES = {"isnan": isnan, "isinf": isinf, "isfinite": isfinite, "isposinf": isposinf,
               "isneginf": isneginf}

TENSOR_METHODS = {**_FNS, **_INPLACE, **_PREDICATES}

__all__ = [*_FNS, *(n for n in _INPLACE if n != "erfinv_"), *_PREDICATES]
