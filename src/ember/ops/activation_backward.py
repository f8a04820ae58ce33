"""The fused derivative kernels of the activations, members of the small
`activation_backward` family: ReLU's and threshold's (PyTorch's threshold_backward),
sigmoid's, tanh's, SiLU's and hardsigmoid's here, GELU's (gelu_backward) in `gelu.py`;
their batch rule, and `threshold_grad`, the select that hardtanh, leaky_relu and relu
differentiate with."""

from __future__ import annotations

import numpy as np

from .. import native
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..native import calls
from ._batching import front
from ._common import same_meta, select
from .registry import (
    Family,
    Member,
    apply,
    bind,
    defbatch,
    defjvp,
    deflower,
    defvjp,
    derivative_not_implemented,
)

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


def opmath_threshold(threshold, np_dtype: np.dtype):
    """A threshold as PyTorch's kernels compare with it: in float32 for float16 / bfloat16
    inputs (the type they compute in), else in the input's own type."""
    if np_dtype.itemsize == 2 and np_dtype.kind in "fV":
        return np.float32(threshold)
    return threshold


def _threshold_backward_kernel(g, x, *, threshold):
    """g where x > threshold, else 0 (NaN x keeps g, as PyTorch's `x <= t ? 0 : g`).

    A bitwise select: g's bits ANDed with all-ones or zero, branch-free (a NumPy `where`
    on a random mask costs several times more) and exact for inf / NaN gradients."""
    # (the bool mask turned into 0 / -1 words by one subtract that casts in its loop: 3x
    # faster than an astype first; asarray: on 0-d inputs it gives a NumPy scalar)
    keep = np.asarray(np.subtract(np.less_equal(x, opmath_threshold(threshold, x.dtype)), 1,
                                  dtype=np.dtype(f"i{g.dtype.itemsize}")))
    return np.bitwise_and(g.view(keep.dtype), keep,
                          out=keep if keep.shape == g.shape else None).view(g.dtype)


def grad_operand(g: np.ndarray, shape: tuple):
    """The incoming gradient as the C derivative kernels read it: (array, 1) C-order and of
    `shape` (copied if it is not), or (g, 0) for one value broadcast over `shape` (the
    gradient of a sum or a mean: read in place, not materialised); None where g's shape is
    another."""
    if g.shape != shape:
        return None
    if g.size and not any(g.strides) and not g.flags.c_contiguous:
        return g, 0
    return calls.c_order(g), 1


def _threshold_backward_native(lib, g, x, *, threshold):
    """The same select in C (csrc/activation.c): one pass, split over the native pool, for
    float32 / float64 operands of one shape, x C-contiguous and g too or broadcast from one
    value, of 64K elements or more (below that NumPy's three loops cost less than the
    call's setup)."""
    if g.size < _NATIVE_MIN:
        return NotImplemented
    sfx = calls.suffix(g, x)
    operand = None if sfx is None else grad_operand(g, x.shape)
    if operand is None or not x.flags.c_contiguous or not isinstance(threshold, (int, float)):
        return NotImplemented
    out = np.empty_like(x)
    calls.entry(lib, f"threshold_backward_{sfx}",
                [calls.P, calls.I64, calls.P, calls.P, calls.I64, calls.F64])(
        calls.ptr(operand[0]), operand[1], calls.ptr(x), calls.ptr(out), g.size, threshold)
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


# --- sigmoid's, tanh's and SiLU's derivatives (PyTorch's sigmoid_backward, tanh_backward and
# silu_backward), one pass each in its order where the composites took three to six; 16-bit
# floats computed in float32 and rounded once, as its kernels compute them. Real dtypes
# (a complex derivative stays the composite, with its conjugates).

def _opmath(kernel, per_op_float16: bool = False):
    def run(g, y):
        d = y.dtype
        if d.itemsize == 2 and d.kind in "fV" and not (per_op_float16 and d == np.float16):
            return kernel(g.astype(np.float32), y.astype(np.float32)).astype(d)
        return kernel(g, y)

    run.__name__ = kernel.__name__
    return run


def _sigmoid_backward_kernel(g, y):
    t = np.asarray(np.subtract(1, y))
    np.multiply(g, t, out=t)
    return np.multiply(t, y, out=t)


# (PyTorch's float16 sigmoid_backward rounds after each op, its bfloat16 one once)
_sigmoid_backward_kernel = _opmath(_sigmoid_backward_kernel, per_op_float16=True)


def _one_minus_square(y):
    """1 - y^2 rounded once (PyTorch's compiled tanh_backward contracts it to a fused
    multiply-add). float32: through double, where y^2 is exact; float64: y^2 split into
    its rounded value p and exact error e (Dekker), then (1 - p) - e, whose first step is
    exact from p = 1/2 up and otherwise carried as a two-sum's error: the fused value but
    in the rarest near-ties."""
    if y.dtype != np.float64:
        w = y.astype(np.float64)
        return np.asarray(1 - w * w).astype(y.dtype)
    p = y * y
    c = y * 134217729.0  # (2^27 + 1: y = hi + lo, each of 26 bits)
    hi = c - (c - y)
    lo = y - hi
    e = ((hi * hi - p) + 2 * hi * lo) + lo * lo
    s = 1 - p
    b = s - 1
    r = (1 - (s - b)) + (-p - b)  # (1 - p = s + r exactly)
    return np.asarray(s + (r - e))


@_opmath
def _tanh_backward_kernel(g, y):
    with np.errstate(invalid="ignore", over="ignore"):
        t = _one_minus_square(y)
        # (an infinite or NaN y: the error terms are NaN; 1 - y^2 itself is the answer)
        bad = ~np.isfinite(t)
        if bad.any():
            t[bad] = np.subtract(1, y * y)[bad]
    return np.multiply(g, t, out=t)


@_opmath
def _silu_backward_kernel(g, x):
    s = np.asarray(np.negative(x))
    with np.errstate(over="ignore"):
        np.exp(s, out=s)
    np.add(s, 1, out=s)
    np.divide(1, s, out=s)
    t = np.asarray(np.subtract(1, s))
    np.multiply(x, t, out=t)
    np.add(t, 1, out=t)
    np.multiply(g, s, out=s)
    return np.multiply(s, t, out=t)


# csrc/activation.c's kinds (its EMBER_*_BACKWARD enum, in order)
_SMOOTH = {"sigmoid_backward": 0, "tanh_backward": 1, "silu_backward": 2}


def _smooth_native(name: str):
    """The one-pass C kernel of `name` for float32 / float64 operands of one shape (copied to
    C order where they are not, but for a gradient broadcast from one value)."""
    kind = _SMOOTH[name]

    def kernel(lib, g, y):
        sfx = calls.suffix(g, y)
        operand = None if sfx is None else grad_operand(g, y.shape)
        if operand is None:
            return NotImplemented
        out = np.empty(y.shape, y.dtype)
        y = calls.c_order(y)
        calls.entry(lib, f"smooth_backward_{sfx}",
                    [calls.P, calls.I64, calls.P, calls.P, calls.I64, calls.INT], calls.INT)(
            calls.ptr(operand[0]), operand[1], calls.ptr(y), calls.ptr(out), y.size, kind)
        return out

    kernel.__name__ = f"_{name}_native"
    return kernel


_SMOOTH_MIN = 1  # (as the forwards': activation.py)


def _smooth_member(name: str, kernel, grad_name: str, lowered: str, ulps: int = 0,
                   support: str = "") -> Member:
    m = _backward(name, kernel, lambda g, y: same_meta(y), grad_name)
    native.register(m, "activation", _smooth_native(name), min_size=(globals(), "_SMOOTH_MIN"))
    deflower(m, lowered, ulps=ulps, support=support)
    return m


sigmoid_backward_p = _smooth_member("sigmoid_backward", _sigmoid_backward_kernel,
                                    "SigmoidBackwardBackward0",
                                    "({0} * (({T})1 - {1})) * {1}")
tanh_backward_p = _smooth_member("tanh_backward", _tanh_backward_kernel,
                                 "TanhBackwardBackward0", "{0} * EMBER_FMA_T(-{1}, {1}, ({T})1)",
    support="#define EMBER_FMA_T(a, b, c) _Generic((a), float: fmaf, default: fma)(a, b, c)\n")
silu_backward_p = _smooth_member("silu_backward", _silu_backward_kernel, "SiluBackwardBackward0",
                                 "ember_silu_grad_t({0}, {1})", ulps=2,
                                 support='#include "silu.h"\n')


def smooth_grad(member: Member, g: Tensor, y: Tensor) -> Tensor:
    """`member`'s derivative kernel on the gradient `g` and `y` (the output, or SiLU's
    input), bound."""
    return apply(activation_backward_p, g, y, fn=member)


def _sigmoid_second(v, g, y):
    return v * g * (-2 * y + 1)  # (PyTorch's: d/dy of (g (1 - y)) y)


def _tanh_second(v, g, y):
    return v * (-2 * y * g)


def _silu_second(v, g, x):
    """v g d/dx [s (1 + x (1 - s))] = v g s (1 - s) (2 + x (1 - 2 s))."""
    s = x.sigmoid()
    return v * g * (s * (1 - s)) * (2 + x * (1 - 2 * s))


def def_smooth_rules(m: Member, second) -> None:
    """The VJP and JVP of derivative kernel `m`: linear in g (m itself again), and
    `second(v, g, y)` in y."""
    defvjp(m, lambda v, out, g, y: smooth_grad(m, v, y), lambda v, out, g, y: second(v, g, y),
           reads=((1,), (0, 1)))

    def jvp(primals, tangents, out):
        (g, y), (tg, ty) = primals, tangents
        parts = ([] if tg is None else [smooth_grad(m, tg, y)]) + (
            [] if ty is None else [second(ty, g, y)])
        if not parts:
            return _zeros_like(out)
        return parts[0] if len(parts) == 1 else parts[0] + parts[1]

    defjvp(m, jvp)


def_smooth_rules(sigmoid_backward_p, _sigmoid_second)
def_smooth_rules(tanh_backward_p, _tanh_second)
def_smooth_rules(silu_backward_p, _silu_second)


# --- hardsigmoid's derivative (PyTorch's hardsigmoid_backward), which has no derivative of
# its own there: a create_graph gradient through hardsigmoid requires grad under a
# NotImplemented node whose backward raises, and forward mode over it refuses

_ONE_SIXTH_F32 = float(np.float32(1 / 6))  # (PyTorch's factor, rounded to float32 for float64 too)


@_opmath
def _hardsigmoid_backward_kernel(g, x):
    """g / 6 where -3 < x < 3, else 0 (a NaN x too)."""
    return select((x > -3) & (x < 3), g * g.dtype.type(_ONE_SIXTH_F32), g.dtype.type(0))


hardsigmoid_backward_p = _backward("hardsigmoid_backward", _hardsigmoid_backward_kernel,
                                   lambda g, x: same_meta(x), "NotImplemented")
deflower(hardsigmoid_backward_p,
         f"({{1}} > ({{T}})-3 && {{1}} < ({{T}})3) ? {{0}} * ({{T}}){_ONE_SIXTH_F32!r} : ({{T}})0")
derivative_not_implemented(hardsigmoid_backward_p, "hardsigmoid_backward", (True, True))


def hardsigmoid_grad(g: Tensor, x: Tensor) -> Tensor:
    """hardsigmoid's derivative kernel on the gradient `g` and the input `x`, bound."""
    return apply(activation_backward_p, g, x, fn=hardsigmoid_backward_p)


def _zeros_like(x: Tensor) -> Tensor:
    from .creation import zeros_like

    return zeros_like(x)
