"""GELU: its kernels (exact GELU in float32 without a float64 erf, as NumPy passes and as
one C pass), the `gelu` member of the `unary` family and its fused derivative
`gelu_backward` (a member of `activation_backward`), each with its VJP and JVP and their
lowerings for compiled programs' fused loops. `gelu` itself is in `activation.py`."""

from __future__ import annotations

import math

import numpy as np

from .. import native
from ..native import calls
from ._common import same_meta
from ._parallel import elementwise
from .activation_backward import (
    _backward,
    _opmath,
    _zeros_like,
    activation_backward_p,
    def_smooth_rules,
    smooth_grad,
)
from .registry import apply, defjvp, deflower, defvjp
from .unary import defjvp1, lowp, named_vjp, unary, unary_p
from .unary_math import erf_p

_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)

# NOTE: exact GELU in float32 without a float64 erf. With a = |x| / sqrt(2) and
# t = 1 / (1 + _GELU_P a), 0.5 erfc(a) = t Q(t) exp(-x^2 / 2), Q a polynomial fitted at
# import to erfcx(a) / (2t) on a in [0, 10] (relative error 3e-8, under float32's half ulp;
# beyond 10 exp underflows and Q stays bounded). Phi(x) = 0.5 erfc(-x / sqrt(2)) is that
# for x <= 0 and 1 minus it for x > 0, so the lower tail keeps its relative accuracy
# (PyTorch's 1 + erf loses it). About 30 in-place passes over two buffers; no masked
# select (a NumPy `where` on a random mask costs as much as the whole kernel).
_GELU_P = 0.3


def _fit_gelu_q(deg: int = 8, amax: float = 10.0) -> tuple[float, ...]:
    cheb = np.polynomial.chebyshev
    tmin = 1 / (1 + _GELU_P * amax)
    u = cheb.chebpts1(64)
    t = (u * (1 - tmin) + 1 + tmin) / 2
    a = (1 / t - 1) / _GELU_P
    q = [math.erfc(v) * math.exp(v * v) / (2 * w) for v, w in zip(a, t)]
    in_u = cheb.cheb2poly(cheb.chebfit(u, q, deg))  # in u = (2t - 1 - tmin) / (1 - tmin)
    in_t = np.polynomial.Polynomial(in_u)(np.polynomial.Polynomial(
        [-(1 + tmin) / (1 - tmin), 2 / (1 - tmin)]))
    return tuple(float(c) for c in in_t.coef[::-1])  # highest degree first, for Horner


_GELU_Q = _fit_gelu_q()


def _half_erfc_f32(x, h, t, e) -> None:
    """0.5 erfc(|x| / sqrt(2)) of float32 `x` into `h`, and exp(-x^2 / 2) into `e`."""
    np.abs(x, out=t)
    np.multiply(t, _GELU_P / math.sqrt(2), out=t)
    np.add(t, 1, out=t)
    np.divide(1, t, out=t)
    np.multiply(t, _GELU_Q[0], out=h)
    for c in _GELU_Q[1:]:
        np.add(h, c, out=h)
        np.multiply(h, t, out=h)
    np.square(x, out=e)
    np.multiply(e, -0.5, out=e)
    np.exp(e, out=e)
    np.multiply(h, e, out=h)


def _cdf_f32(x, cdf, t, e) -> None:
    """Phi(x) into `cdf` as h + (x > 0) (1 - 2h), h = 0.5 erfc(|x| / sqrt(2)); e as above."""
    _half_erfc_f32(x, cdf, t, e)
    np.multiply(cdf, -2, out=t)
    np.add(t, 1, out=t)
    np.multiply(t, x > 0, out=t)
    np.add(cdf, t, out=cdf)


def _gelu_body(out, x) -> None:
    t = np.empty_like(x)
    _cdf_f32(x, out, t, np.empty_like(x))
    np.multiply(out, x, out=out)


def _gelu_grad_body(res, g, x, y) -> None:
    """g * (Phi(x) + x phi(x)), with Phi(x) read off the forward's y = x Phi(x) (0.5 at 0):
    ten passes instead of evaluating Phi again."""
    np.divide(y, x, out=res)
    np.copyto(res, 0.5, where=x == 0)  # (a mask nearly all False: no branch mispredicts)
    e = np.square(x)
    np.multiply(e, -0.5, out=e)
    np.exp(e, out=e)
    np.multiply(e, x, out=e)
    np.multiply(e, _INV_SQRT_2PI, out=e)
    np.add(res, e, out=res)
    np.multiply(res, g, out=res)


# The same arithmetic in one C pass (csrc/activation.c, through gelu.h), with ember_math.h's
# exp for NumPy's: within 4 ulps of the bodies above, and the bits of compiled programs'
# fused loops, which call gelu.h too.

def _gelu_body_native(out, x) -> None:
    lib = _activation_lib(out, x)
    if lib is None:
        return _gelu_body(out, x)
    if calls.entry(lib, "gelu_forward_f32", [calls.P, calls.P, calls.I64, calls.P, calls.I64,
                                             calls.F64], calls.INT)(
            calls.ptr(x), calls.ptr(out), x.size, calls.ptr(_GELU_Q_ARRAY), len(_GELU_Q),
            _GELU_P / math.sqrt(2)) != 0:
        return _gelu_body(out, x)  # (a Q of another degree than the C's)
    return None


def _gelu_grad_body_native(res, g, x, y) -> None:
    lib = _activation_lib(res, g, x, y)
    if lib is None:
        return _gelu_grad_body(res, g, x, y)
    calls.entry(lib, "gelu_backward_f32", [calls.P] * 4 + [calls.I64, calls.F64])(
        calls.ptr(g), calls.ptr(x), calls.ptr(y), calls.ptr(res), x.size, _INV_SQRT_2PI)
    return None


def _erf(x):
    """erf of a float64 array as `ember.erf` computes it: ember_math.h's erf in one C pass
    where native kernels are on (within 2 ulps, nearer PyTorch's than the NumPy kernel),
    else the NumPy kernel, a Chebyshev sum of degree 30 over masks some 20x slower."""
    return erf_p.kernel(x)


_GELU_Q_ARRAY = np.array(_GELU_Q, np.float64)
_GELU_NATIVE_MIN = 1  # (every size: one C pass against thirty NumPy passes)


def _activation_lib(*arrays):
    """The native library for float32 C-order arrays of one size, or None (NumPy's)."""
    a = arrays[0]
    if a.size < _GELU_NATIVE_MIN or any(b.dtype != np.float32 or not b.flags.c_contiguous
                                   for b in arrays):
        return None
    return native.library("activation") if native.mode() == "native" else None


def _in_layout_of(x, res):
    """`res` (C order) in `x`'s layout, as `empty_like(x)` lays it out."""
    if x.flags.c_contiguous:
        return res
    out = np.empty_like(x)
    out[...] = res
    return out


def _gelu_f32(x):
    xc = calls.c_order(x)
    if _activation_lib(xc) is None:
        out = np.empty_like(x)
        elementwise(_gelu_body, out, x)
        return out
    out = np.empty_like(xc)
    _gelu_body_native(out, xc)  # (one call: the C splits the work over the kernel threads)
    return _in_layout_of(x, out)


def _gelu_grad_f32(g, x, y):
    arrays = [calls.c_order(a) for a in (g, x, y)]
    if _activation_lib(*arrays) is None:
        res = np.empty_like(x)
        elementwise(_gelu_grad_body, res, g, x, y)
        return res
    res = np.empty_like(arrays[1])
    _gelu_grad_body_native(res, *arrays)
    return _in_layout_of(x, res)


@lowp
def _gelu_kernel(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a)))
    if a.dtype == np.float32:
        return _gelu_f32(a)
    return (0.5 * a * (1 + _erf(a * (1 / math.sqrt(2))))).astype(a.dtype)


# NOTE: a kernel of its own rather than a composition: the erf form in float32 for half
# inputs, as PyTorch rounds it.
gelu_p = unary("gelu", _gelu_kernel)


def _gelu_backward_kernel(g, x, y):
    if x.dtype == np.float32:
        return _gelu_grad_f32(g, x, y)
    d = x.dtype
    if d.itemsize == 2:  # float16 / bfloat16: in float32 (Phi anew: y has too few digits)
        x, g = x.astype(np.float32), g.astype(np.float32)
        return _gelu_grad_f32(g, x, _gelu_f32(x)).astype(d)
    cdf = 0.5 * (1 + _erf(x * (1 / math.sqrt(2))))
    return (g * (cdf + x * _INV_SQRT_2PI * np.exp(-0.5 * x * x))).astype(d)


# GELU's derivative as one fused kernel (PyTorch's gelu_backward), given the forward's
# output `y` too (a cache of x Phi(x), so its own derivative is zero; it reads Phi(x) off y:
# ten passes instead of thirty). Its VJP, in ember ops, keeps double backward working:
# d/dx of g (Phi + x phi) is g phi (2 - x^2).
gelu_backward_p = _backward("gelu_backward", _gelu_backward_kernel,
                            lambda g, x, y: same_meta(x), "GeluBackwardBackward0")


def _gelu_grad_bound(g, x, y):
    return apply(activation_backward_p, g, x, y, fn=gelu_backward_p)


def _gelu_second(v, g, x):
    """v * d/dx [g (Phi(x) + x phi(x))] = v g phi(x) (2 - x^2)."""
    return v * g * (-0.5 * x * x).exp() * _INV_SQRT_2PI * (2 - x * x)


# GELU and its derivative in compiled code's fused loops (float32): gelu.h, as the eager
# native kernels call it (so the bits of eager with native kernels); within 4 ulps of the
# NumPy bodies (the exp; measured), the derivative in ulps of its larger term where it
# cancels (near its zero at x = -0.75).

def _c_float(v: float) -> str:
    return float.hex(float(np.float32(v))) + "f"


_GELU_C = ('#include "gelu.h"\n'
           f"static const float EMBER_GELU_Q[{len(_GELU_Q)}] = "
           f"{{{', '.join(_c_float(c) for c in _GELU_Q)}}};\n")
deflower(gelu_p, f"ember_gelu_f({{0}}, EMBER_GELU_Q, {_c_float(_GELU_P / math.sqrt(2))})",
         ulps=4, params={"approximate": "none"}, dtypes=("float32",), support=_GELU_C)
deflower(gelu_backward_p, f"ember_gelu_grad_f({{0}}, {{1}}, {{2}}, {_c_float(_INV_SQRT_2PI)})",
         ulps=4, dtypes=("float32",), support=_GELU_C)


defvjp(gelu_backward_p,
       lambda v, out, g, x, y: _gelu_grad_bound(v, x, y),
       lambda v, out, g, x, y: _gelu_second(v, g, x),
       lambda v, out, g, x, y: _zeros_like(y),
       reads=((1, 2), (0, 1), (2,)))


def _gelu_backward_jvp(primals, tangents, out):
    g, x, y = primals
    tg, tx = tangents[0], tangents[1]
    parts = ([] if tg is None else [_gelu_grad_bound(tg, x, y)]) + (
        [] if tx is None else [_gelu_second(tx, g, x)])
    if not parts:
        return _zeros_like(out)
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


defjvp(gelu_backward_p, _gelu_backward_jvp)


# --- the tanh form's derivative (PyTorch's gelu_backward with approximate="tanh"), one
# fused kernel in its order (the constants rounded to the type first; 16-bit in float32,
# rounded once): with u = beta (x + kappa x^3), t = tanh(u),
#   g (0.5 (1 + t) + ((0.5 x) (1 - t^2)) (beta (1 + (3 kappa) x^2)))
# Eleven NumPy passes where its composite took some twenty ops; NumPy's tanh for PyTorch's
# vectorised one, so within a few ulps of torch's (of the terms' size, g (1 + |x|)).

_KAPPA = 0.044715
_BETA = 1.41421356237309504880 * 1.12837916709551257390 * 0.5  # (M_SQRT2 M_2_SQRTPI / 2)


def _gelu_tanh_backward_body(out, g, x) -> None:
    d = x.dtype.type
    x_sq = np.asarray(np.multiply(x, x))
    t = np.asarray(np.multiply(x_sq, x))
    np.multiply(t, d(_KAPPA), out=t)
    np.add(t, x, out=t)
    np.multiply(t, d(_BETA), out=t)
    np.tanh(t, out=t)
    np.multiply(x_sq, d(3) * d(_KAPPA), out=x_sq)  # (beta (1 + 3 kappa x^2) in x_sq)
    np.add(x_sq, 1, out=x_sq)
    np.multiply(x_sq, d(_BETA), out=x_sq)
    rd = np.asarray(np.multiply(x, d(0.5)))
    td = np.asarray(np.multiply(t, t))
    np.subtract(1, td, out=td)
    np.multiply(rd, td, out=rd)
    np.multiply(rd, x_sq, out=rd)
    np.add(t, 1, out=t)
    np.multiply(t, d(0.5), out=t)
    np.add(t, rd, out=t)
    np.multiply(g, t, out=out)


@_opmath
def _gelu_tanh_backward_kernel(g, x):
    # (one thread: the workers' split of these NumPy passes measured slower, 400 -> 700 us
    # at 128 x 1024 float32)
    out = np.empty(np.broadcast_shapes(g.shape, x.shape), np.result_type(g, x))
    _gelu_tanh_backward_body(out, g, x)
    return out


gelu_tanh_backward_p = _backward("gelu_tanh_backward", _gelu_tanh_backward_kernel,
                                 lambda g, x: same_meta(x), "GeluBackwardBackward0")


def _gelu_tanh_grad(g, x):
    return smooth_grad(gelu_tanh_backward_p, g, x)


def _gelu_tanh_second(v, g, x):
    """v * d/dx [g f'(x)] for the tanh form: g (1 - t^2) (u' - x t u'^2 + 3 beta kappa x^2),
    u' = beta (1 + 3 kappa x^2)."""
    x_sq = x * x
    t = (_BETA * (x + _KAPPA * x_sq * x)).tanh()
    du = _BETA * (1 + 3 * _KAPPA * x_sq)
    return v * g * ((1 - t * t) * (du - x * t * du * du + 3 * _BETA * _KAPPA * x_sq))


# (linear in g, the kernel itself again; in x the second derivative above)
def_smooth_rules(gelu_tanh_backward_p, _gelu_tanh_second)


def _gelu_grad(g, out, x, approximate="none"):
    if approximate == "tanh":
        return _gelu_tanh_grad(g, x)
    if out is None:  # (overwritten in place since: x Phi(x) again, a constant of the rule)
        out = apply(unary_p, x.detach(), fn=gelu_p, approximate=approximate)
    return _gelu_grad_bound(g, x, out)


# PyTorch's gelu_backward reads the input only (GELU then an in-place op trains); the output
# is kept as a shortcut to Phi(x), recomputed if an in-place op overwrote it.
defvjp(gelu_p, named_vjp("GeluBackwardBackward0", _gelu_grad), cache_output=True)
defjvp1(gelu_p, _gelu_grad)  # (real only: the same product with the tangent)
