"""Activation functions as members of the `unary` family, each with its VJP and JVP beside
it; and their two fused derivative kernels (threshold_backward, gelu_backward), members of
the small `activation_backward` family.

`ember.relu`, `selu`, `celu`, `threshold` (and their `_` forms) are exported
because `torch.<name>` exists; the others (`gelu`, `silu`, `softplus`, `mish`,
`hardtanh`, `relu6`, `leaky_relu`, `elu`, `hardsigmoid`, `hardswish`,
`logsigmoid`, `softsign`, `tanhshrink`) are module-level functions with
`torch.nn.functional`'s signatures, for `ember.nn.functional` to bind.
Kernels on float16 / bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..native import calls
from ._batching import front
from ._common import bounded, same_meta
from ._parallel import elementwise
from ._scalar_value import kernel_number, real_operand, scalar_value
from .registry import Family, Member, apply, apply_, bind, defbatch, defjvp, deflower, defvjp
from .unary import (
    BOOL_K,
    COMPLEX_K,
    INT_K,
    check_tensor,
    cj,
    defjvp1,
    lowp,
    named_vjp,
    not_implemented,
    unary,
    unary_p,
)
from .unary_math import _erf64

_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _where(cond, a, b):
    from .ternary import where

    return where(cond, a, b)


def _run(prim: Member, input: Tensor, inplace: bool, reject, kname: str, fname="", **params):
    """Check input (named `fname`/the member, `_` in place), dtype; run `prim` (into input)."""
    check_tensor(input, (fname or prim.name) + "_" * bool(inplace))
    if input._dtype._kind in reject:
        raise not_implemented(kname, input._dtype)
    params = {k: real_operand(v, input._dtype) for k, v in params.items()}  # (a complex slope)
    return (apply_ if inplace else apply)(unary_p, input, fn=prim, **params)


# --- the derivative kernels: one family of elementwise maps of (g, x[, y]) -----------------

# ReLU's and GELU's derivatives as fused kernels (PyTorch's threshold_backward and
# gelu_backward), so that double backward and forward mode see one op each.
activation_backward_p = Family("activation_backward")


def _backward_batch(args, dims, **params):
    """vmap of a derivative kernel: batch axes to the front, every input expanded to the one
    broadcast shape (the kernels read their inputs elementwise, shaped alike)."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    logical = [tuple(a.shape[:d]) + tuple(a.shape[d + 1:]) if d is not None else tuple(a.shape)
               for a, d in zip(args, dims)]
    full = tuple(broadcast_shapes(*logical))
    moved = []
    for a, d, shape in zip(args, dims, logical):
        if d is not None:
            a = front(a, d).reshape((size,) + (1,) * (len(full) - len(shape)) + shape)
        moved.append(a.expand((size,) + full).contiguous())
    return bind(activation_backward_p, *moved, **params), 0


defbatch(activation_backward_p, _backward_batch)


def _backward(name: str, kernel, meta, grad_name: str) -> Member:
    return Member(activation_backward_p, name, kernel, meta, grad_name=grad_name)


_FLOAT_ONLY = (BOOL_K, INT_K, COMPLEX_K)


def _number(value, fname: str, argname: str, pos: int) -> None:
    """TypeError, as PyTorch's argument parser gives, when `value` is not a number."""
    if isinstance(value, (numbers.Number, np.generic)) or (
            isinstance(value, Tensor) and value.numel() == 1):
        return
    raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Number, not "
                    f"{type(value).__name__}")


# --- relu, hardtanh, relu6, threshold (integers allowed) ----------------------------------

def _relu_kernel(a):
    return bounded(np.maximum, a, 0)


def _threshold_backward_kernel(g, x, *, threshold):
    """g where x > threshold, else 0 (NaN x keeps g, as PyTorch's `x <= t ? 0 : g`).

    A bitwise select: g's bits ANDed with all-ones or zero, branch-free (a NumPy `where`
    on a random mask costs several times more) and exact for inf / NaN gradients."""
    # (the bool mask turned into 0 / -1 words by one subtract that casts in its loop: 3x
    # faster than an astype first; asarray: on 0-d inputs it gives a NumPy scalar)
    keep = np.asarray(np.subtract(np.less_equal(x, threshold), 1,
                                  dtype=np.dtype(f"i{g.dtype.itemsize}")))
    return np.bitwise_and(g.view(keep.dtype), keep,
                          out=keep if keep.shape == g.shape else None).view(g.dtype)


def _threshold_backward_native(lib, g, x, *, threshold):
    """The same select in C (csrc/activation.c): one pass, split over the native pool, for
    float32 / float64 operands of one shape and layout (C-contiguous) of 64K elements or
    more (below that NumPy's three loops cost less than the call's setup)."""
    if g.size < _NATIVE_MIN:
        return NotImplemented
    sfx = calls.suffix(g, x)
    if sfx is None or g.shape != x.shape or not (
            g.flags.c_contiguous and x.flags.c_contiguous) or not isinstance(
            threshold, (int, float)):
        return NotImplemented
    out = np.empty_like(g)
    calls.entry(lib, f"threshold_backward_{sfx}", [calls.P] * 3 + [calls.I64, calls.F64])(
        calls.ptr(g), calls.ptr(x), calls.ptr(out), g.size, threshold)
    return out


_NATIVE_MIN = 1 << 16

# ReLU's and threshold's derivative as one primitive (PyTorch's threshold_backward).
threshold_backward_p = _backward("threshold_backward", _threshold_backward_kernel,
                                 lambda g, x, *, threshold: same_meta(g),
                                 "ThresholdBackwardBackward0")
native.register(threshold_backward_p, "activation", _threshold_backward_native,
                min_size=(globals(), "_NATIVE_MIN"))
# (the kernel's bitwise select: g's bits where x > 0, else +0.0; NaN x keeps g)
deflower(threshold_backward_p, "EMBER_PICK({1} <= 0, ({T})0, {0})", params={"threshold": 0},
         support="#define EMBER_PICK(c, a, b) "
                 "_Generic((a), float: ember_pickf, double: ember_pick)(c, a, b)\n")


def threshold_grad(g: Tensor, x: Tensor, threshold) -> Tensor:
    """g where x > threshold, else 0 (the fused kernel, bound)."""
    return apply(activation_backward_p, g, x, fn=threshold_backward_p, threshold=threshold)


defvjp(threshold_backward_p,
       lambda v, out, g, x, *, threshold: threshold_grad(v, x, threshold),
       lambda v, out, g, x, *, threshold: _zeros_like(x), reads=((1,), (1,)))


def _threshold_backward_jvp(primals, tangents, out, *, threshold):
    # linear in g, piecewise constant in x
    t = tangents[0]
    return _zeros_like(out) if t is None else threshold_grad(t, primals[1], threshold)


defjvp(threshold_backward_p, _threshold_backward_jvp)


def _zeros_like(x: Tensor) -> Tensor:
    from .creation import zeros_like

    return zeros_like(x)


def _relu_native(lib, a):
    """max(x, 0) in C (csrc/activation.c): one pass over the native pool, for contiguous
    float32 / float64 arrays of 64K elements or more; the same bits (NaN and -0.0 pass)."""
    if a.size < _NATIVE_MIN:
        return NotImplemented
    sfx = calls.SUFFIX.get(a.dtype)
    if sfx is None or not a.flags.c_contiguous:
        return NotImplemented
    out = np.empty_like(a)
    calls.entry(lib, f"relu_{sfx}", [calls.P, calls.P, calls.I64])(
        calls.ptr(a), calls.ptr(out), a.size)
    return out


relu_p = unary("relu", _relu_kernel)
native.register(relu_p, "activation", _relu_native, min_size=(globals(), "_NATIVE_MIN"))
deflower(relu_p, "({0} < 0 ? ({T})0 : {0})")  # NaN and -0.0 pass through, as np.maximum(0, x)
# NOTE: the derivative at 0 is taken as 0, as in PyTorch (threshold_backward).
defvjp(relu_p, lambda g, out, x: threshold_grad(g, out, 0), reads=((),), save_output=True)
defjvp1(relu_p, lambda t, out, x: threshold_grad(t, out, 0))


def _no_bool(x, msg: str, name: str) -> None:
    check_tensor(x, name)
    if x._dtype._kind == BOOL_K:
        raise RuntimeError(msg)


def _clamp_refuses_complex(x: Tensor) -> None:
    """relu, relu6 and hardtanh are clamps, and refuse complex inputs in clamp's words."""
    if x._dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")


def functional_relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) elementwise (`nn.functional.relu`, with its `inplace` flag)."""
    # NOTE: the checks inline when they pass (no helper calls): relu is hot.
    if not isinstance(input, Tensor) or input._dtype._kind in (BOOL_K, COMPLEX_K):
        _no_bool(input, "Boolean inputs not supported for relu", "relu" + "_" * bool(inplace))
        _clamp_refuses_complex(input)
    if inplace:
        return apply_(unary_p, input, fn=relu_p)
    return apply(unary_p, input, fn=relu_p)


def relu(input: Tensor) -> Tensor:
    """max(x, 0) elementwise (`torch.relu` and `Tensor.relu` take the tensor alone)."""
    if isinstance(input, Tensor) and not input._strided and "relu" in type(input).__dict__:
        return type(input).__dict__["relu"](input)  # (sparse COO: sparse_pointwise)
    return functional_relu(input)


def relu_(input: Tensor) -> Tensor:
    return functional_relu(input, inplace=True)


def _hardtanh_kernel(a, min_val=-1.0, max_val=1.0):
    if a.dtype.kind in "iu":
        lo, hi = math.ceil(min_val), math.floor(max_val)
        return np.minimum(np.maximum(a, lo), hi).astype(a.dtype)
    return bounded(np.minimum, bounded(np.maximum, a, kernel_number(min_val, a.dtype)),
                   kernel_number(max_val, a.dtype))  # (16 bits: through float32)


hardtanh_p = unary("hardtanh", _hardtanh_kernel)


def _hardtanh_grad(g, out, x, min_val, max_val):
    # NOTE: PyTorch's hardtanh_backward, `x <= min || x >= max ? 0 : g` (a NaN x keeps g; an
    # infinite or NaN g outside gives 0), as two threshold_backward selects, so that the
    # result depends on x (with derivative 0) as PyTorch's does: a create_graph=True
    # gradient requires grad even though its own derivative is zero.
    return threshold_grad(threshold_grad(g, x, min_val), -x, -max_val)


defvjp(hardtanh_p, named_vjp("HardtanhBackwardBackward0", _hardtanh_grad))
defjvp1(hardtanh_p, _hardtanh_grad)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False, *, _fname: str = "hardtanh") -> Tensor:
    """x clipped to [min_val, max_val]."""
    if min_val > max_val:  # (a TypeError for non-numbers, as in PyTorch)
        raise ValueError("min_val cannot be greater than max_val")
    _no_bool(input, "Bool inputs not supported for hardtanh", _fname + "_" * bool(inplace))
    _clamp_refuses_complex(input)
    # (integer limits are read as int64, uint8 refuses negatives; each must fit the C type)
    if input._dtype._kind == INT_K:
        min_val, max_val = (int(scalar_value(v, dt.int64)) for v in (min_val, max_val))
        if input._dtype is dt.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    _fits(input, min_val, max_val)
    return _run(hardtanh_p, input, inplace, (), "", min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh on [0, 6], as PyTorch computes it."""
    return hardtanh(input, 0.0, 6.0, inplace, _fname="relu6")


def _threshold_kernel(a, threshold, value):
    return np.where(a > threshold, a, kernel_number(value, a.dtype))  # (as a Scalar converts)


threshold_p = unary("threshold", _threshold_kernel)
defvjp(threshold_p, lambda g, out, x, threshold, value: threshold_grad(g, x, threshold))
defjvp1(threshold_p, lambda t, out, x, threshold, value: threshold_grad(t, x, threshold))


def _fits(x: Tensor, *values) -> None:
    """Numbers outside the tensor's C type are refused, as PyTorch's Scalar conversion does."""
    for v in values:
        scalar_value(v, x._dtype)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else `value`."""
    check_tensor(input, "threshold" + "_" * bool(inplace))
    _fits(input, threshold, value)
    return _run(threshold_p, input, inplace, (BOOL_K, COMPLEX_K), "threshold_cpu",
                threshold=threshold, value=value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return globals()["threshold"](input, threshold, value, inplace=True)


# --- smooth activations -------------------------------------------------------------------

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


_GELU_Q_ARRAY = np.array(_GELU_Q, np.float64)
_GELU_NATIVE_MIN = 1  # (every size: one C pass against thirty NumPy passes)


def _activation_lib(*arrays):
    """The native library for float32 C-order arrays of one size, or None (NumPy's)."""
    a = arrays[0]
    if a.size < _GELU_NATIVE_MIN or any(b.dtype != np.float32 or not b.flags.c_contiguous
                                   for b in arrays):
        return None
    return native.library("activation") if native.mode() == "native" else None


def _gelu_f32(x):
    out = np.empty_like(x)
    elementwise(_gelu_body_native, out, x)
    return out


def _gelu_grad_f32(g, x, y):
    res = np.empty_like(x)
    elementwise(_gelu_grad_body_native, res, g, x, y)
    return res


@lowp
def _gelu_kernel(a, approximate="none"):
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(_SQRT_2_PI * (a + 0.044715 * a * a * a)))
    if a.dtype == np.float32:
        return _gelu_f32(a)
    return (0.5 * a * (1 + _erf64(a * (1 / math.sqrt(2))))).astype(a.dtype)


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
    cdf = 0.5 * (1 + _erf64(x * (1 / math.sqrt(2))))
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


def _gelu_grad(g, out, x, approximate="none"):
    if approximate == "tanh":
        inner = _SQRT_2_PI * (x + 0.044715 * x * x * x)
        t = inner.tanh()
        dinner = _SQRT_2_PI * (1 + 3 * 0.044715 * x * x)
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)
    if out is None:  # (overwritten in place since: x Phi(x) again, a constant of the rule)
        out = apply(unary_p, x.detach(), fn=gelu_p, approximate=approximate)
    return _gelu_grad_bound(g, x, out)


# PyTorch's gelu_backward reads the input only (GELU then an in-place op trains); the output
# is kept as a shortcut to Phi(x), recomputed if an in-place op overwrote it.
defvjp(gelu_p, named_vjp("GeluBackwardBackward0", _gelu_grad), cache_output=True)
defjvp1(gelu_p, _gelu_grad)  # (real only: the same product with the tangent)


def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """x * Phi(x), or its tanh approximation with approximate='tanh'."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _run(gelu_p, input, False, _FLOAT_ONLY, "GeluKernelImpl", approximate=approximate)


@lowp
def _silu_kernel(a):
    # x / (1 + e^-x), as PyTorch computes it: -0 where e^-x overflows (see _sigmoid_kernel)
    return a / (1 + np.exp(-a))


silu_p = unary("silu", _silu_kernel)


def _silu_grad(g, out, x):
    s = x.sigmoid()
    return g * cj(s * (1 + x * (1 - s)))


defvjp(silu_p, _silu_grad)


def _silu_tangent(t, out, x):
    s = x.sigmoid()
    return t * (s * (1 + x * (1 - s)))


defjvp1(silu_p, _silu_tangent)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    return _run(silu_p, input, inplace, (BOOL_K, INT_K), "silu_cpu")


@lowp
def _softplus_kernel(a, beta=1.0, threshold=20.0):
    z = a * beta
    # NOTE: log1p(exp(z)) = max(z, 0) + log1p(exp(-|z|)) never overflows.
    soft = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) / beta
    return np.where(z > threshold, a, soft)


softplus_p = unary("softplus", _softplus_kernel)


def _softplus_grad(g, out, x, beta, threshold):
    return _where(x * beta > threshold, g, g * (x * beta).sigmoid())


defvjp(softplus_p, named_vjp("SoftplusBackwardBackward0", _softplus_grad))
defjvp1(softplus_p, _softplus_grad)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold."""
    _number(beta, "softplus", "beta", 2)
    _number(threshold, "softplus", "threshold", 3)
    return _run(softplus_p, input, False, _FLOAT_ONLY, "softplus_cpu", beta=beta,
                threshold=threshold)


@lowp
def _mish_kernel(a):
    return a * np.tanh(np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a))))


mish_p = unary("mish", _mish_kernel)


def _mish_grad(g, out, x):
    t = softplus(x).tanh()
    return g * (t + x * x.sigmoid() * (1 - t * t))


defvjp(mish_p, _mish_grad)
defjvp1(mish_p, _mish_grad)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _run(mish_p, input, inplace, _FLOAT_ONLY, "mish_cpu")


@lowp
def _leaky_relu_kernel(a, negative_slope=0.01):
    return np.where(a > 0, a, a * negative_slope)


leaky_relu_p = unary("leaky_relu", _leaky_relu_kernel)


def _leaky_relu_grad(g, out, x, negative_slope):
    return _where(x > 0, g, g * negative_slope)


def _leaky_relu_vjp(g, out, x, negative_slope):
    if x.requires_grad and grad_mode.state.enabled:
        # (create_graph=True: the positive side's g selected by threshold_backward on x, so
        # that the result depends on x with derivative 0, as PyTorch's leaky_relu_backward)
        return _where(x > 0, threshold_grad(g, x, 0), g * negative_slope)
    return _leaky_relu_grad(g, out, x, negative_slope)


defvjp(leaky_relu_p, named_vjp("LeakyReluBackwardBackward0", _leaky_relu_vjp))
defjvp1(leaky_relu_p, _leaky_relu_grad)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    _number(negative_slope, "leaky_relu", "negative_slope", 2)
    return _run(leaky_relu_p, input, inplace, _FLOAT_ONLY, "leaky_relu_cpu",
                negative_slope=negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


# --- the ELU family: scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1)) ----------

@lowp
def _elu_kernel(a, alpha=1.0, scale=1.0, input_scale=1.0):
    # (a * (a <= 0), not minimum(a, 0): elu(-0) is -0, as PyTorch's expm1(-0) * alpha)
    neg = alpha * np.expm1(a * (a <= 0) * input_scale)
    return scale * np.where(a > 0, a, neg)


def _elu_grad(g, out, x, alpha, scale, input_scale):
    # NOTE: PyTorch's elu_backward: x <= 0 ? g * scale * alpha * input_scale *
    # exp(x * input_scale) : g * scale (a NaN x takes the linear side). Its own derivative in
    # x is nonzero only where x < 0 (elu_double_backward's mask), so the exponential reads x
    # there only: 0 at x = 0, and no inf or NaN from the unused side (x NaN or large).
    neg_x = _where(x < 0, x, 0.0)
    neg = g * (scale * alpha * input_scale) * (neg_x * input_scale).exp()
    return _where(x <= 0, neg, g * scale)


# elu, selu and celu are one ELU with its constants; PyTorch names celu's node apart
elu_p = unary("elu", _elu_kernel)
celu_p = unary("celu", _elu_kernel)
for _m in (elu_p, celu_p):  # (both differentiate with elu_backward)
    defvjp(_m, named_vjp("EluBackwardBackward0", _elu_grad))
    defjvp1(_m, _elu_grad)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x if x > 0 else alpha * (exp(x) - 1)."""
    _number(alpha, "elu", "alpha", 2)
    return _run(elu_p, input, inplace, _FLOAT_ONLY, "elu_cpu", alpha=alpha, scale=1.0,
                input_scale=1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """The self-normalising ELU: scale * elu(x, alpha) with the fixed SELU constants."""
    return _run(elu_p, input, inplace, _FLOAT_ONLY, "elu_cpu", "selu", alpha=SELU_ALPHA,
                scale=SELU_SCALE, input_scale=1.0)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    _number(alpha, "celu", "alpha", 2)
    alpha = real_operand(alpha, dt.float64)  # (celu reads alpha as a double first)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _run(celu_p, input, inplace, _FLOAT_ONLY, "elu_cpu", alpha=alpha, scale=1.0,
                input_scale=1.0 / alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


# --- hard approximations ---------------------------------------------------------------

@lowp
def _hardsigmoid_kernel(a):
    return np.minimum(np.maximum(a + 3, 0), 6) / 6


hardsigmoid_p = unary("hardsigmoid", _hardsigmoid_kernel)
# NOTE: PyTorch's backward multiplies by 1/6 rounded to float32, even for float64.
_ONE_SIXTH_F32 = float(np.float32(1 / 6))


def _hardsigmoid_grad(g, out, x):
    return _where((x > -3) & (x < 3), g * _ONE_SIXTH_F32, 0.0)


defvjp(hardsigmoid_p, _hardsigmoid_grad)
defjvp1(hardsigmoid_p, _hardsigmoid_grad)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return _run(hardsigmoid_p, input, inplace, _FLOAT_ONLY, "hardsigmoid_cpu")


@lowp
def _hardswish_kernel(a):
    return a * np.minimum(np.maximum(a + 3, 0), 6) / 6


hardswish_p = unary("hardswish", _hardswish_kernel)


def _hardswish_grad(g, out, x):
    # NOTE: PyTorch's backward: 0 below -3, g above 3, g * (x / 3 + 0.5) on [-3, 3] (ends
    # included).
    return _where(x < -3, 0.0, _where(x <= 3, g * (x / 3 + 0.5), g))


defvjp(hardswish_p, named_vjp("HardswishBackwardBackward0", _hardswish_grad))
defjvp1(hardswish_p, _hardswish_grad)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return _run(hardswish_p, input, inplace, _FLOAT_ONLY, "hardswish_cpu")


@lowp
def _logsigmoid_kernel(a):
    return np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))


logsigmoid_p = unary("log_sigmoid", _logsigmoid_kernel, grad_name="LogSigmoidBackward0")
defvjp(logsigmoid_p, named_vjp("LogSigmoidBackwardBackward0", lambda g, out, x: g * (-x).sigmoid()))
defjvp1(logsigmoid_p, lambda t, out, x: t * (-x).sigmoid())


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), without overflow for large |x|."""
    return _run(logsigmoid_p, input, False, _FLOAT_ONLY, "log_sigmoid_cpu")


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|) (a composite, as in PyTorch)."""
    return input / (1 + input.abs())


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x) (a composite, as in PyTorch)."""
    return input - input.tanh()


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    return method


TENSOR_METHODS = {"relu": _method(relu), "relu_": relu_}

__all__ = ["relu", "relu_", "selu", "selu_", "celu", "celu_", "threshold", "threshold_"]
