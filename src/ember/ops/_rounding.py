"""Where PyTorch's CPU kernels round: the precision a number is read at next to a tensor,
and the ops that are one fused multiply-add.

They compute float16 and bfloat16 in float32 and round once, but do not all read a Python
number (or NumPy scalar, or a 0-d tensor second) alike. mul, div (every rounding mode) and
floor_divide read it at float32 precision; add, sub, remainder, fmod, pow and the
comparisons first round it to the tensor's dtype (measured on 100,000 elements: either
choice differs from the other in 15-45% of them, by an ulp, or by 1 after a floor).

`add(a, b, alpha=k)` is one fused multiply-add in float32: rounded once, where two
roundings differ in the last bit of 18-30% of elements (and an SGD step
`p.add_(g, alpha=-lr)` with them), k at float32 precision (at the tensor's own for 16-bit
floats). In float64 every product of two float32 numbers is exact, so the sum rounded from
there is the fused result (up to a double rounding once in about 2^29 sums); it costs
about 4x the two roundings. PyTorch's addcmul and lerp are fused multiply-adds too; ember
rounds them twice, since at 4x their cost (in Adam's and Adadelta's updates) the GPT,
digits and MNIST steps measured 3-14% slower. float64 and complex tensors take two
roundings: a fused float64 product costs about 20x in NumPy (long double). (PyTorch's
float32 sqrt, as built here, is not correctly rounded: 16-18% of its results differ by an
ulp from NumPy's, and so ember's; Adam, RMSprop and Adadelta differ from it by that.)
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def rounded(x, d: dt.dtype):
    """The number `x` rounded to the 16-bit float dtype `d`, as a NumPy scalar of it (a
    number out of its range becomes +-inf, as PyTorch's cast gives)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, _F64).astype(d.np)[()]


_F32_MAX = float(np.finfo(np.float32).max)


def wide(x) -> np.float32:
    """A real number at the float32 precision mul and div read it with."""
    if x.__class__ is complex:
        x = x.real
    if -_F32_MAX <= x <= _F32_MAX:
        return np.float32(x)
    with np.errstate(over="ignore"):  # (out of range: +-inf, as PyTorch's cast gives)
        return np.float32(x)


def alpha_param(alpha, d: dt.dtype):
    """`alpha=` at the precision add / sub's fused kernel reads it for a floating result of
    dtype `d`: the dtype's own for float16 / bfloat16, float32 for float32; as given for
    float64 and complex."""
    if d is dt.float32:
        return float(wide(alpha))
    if d is dt.float16 or d is dt.bfloat16:
        return float(rounded(alpha, d))
    return alpha


def fused_add(a, b, alpha, subtract: bool = False):
    """a + alpha * b (a - alpha * b), rounded once for float32, float16 and bfloat16 (see
    the module)."""
    d = a.dtype if isinstance(a, np.ndarray) else b.dtype
    if d != _F32 and d not in _LOW:
        return (np.subtract if subtract else np.add)(a, np.multiply(b, alpha))
    return fma(-alpha if subtract else alpha, b, a, d)


def fused_add_into(dst: np.ndarray, b, alpha) -> bool:
    """`dst += alpha * b` as `fused_add` rounds it, for a C-ordered float32 / 16-bit float
    `dst`; False (nothing written) leaves anything else to the out-of-place kernel."""
    d = dst.dtype
    if d != _F32 and d not in _LOW:
        return False
    return fma_into(dst, alpha, b, dst)


def fma(x, y, z, d: np.dtype) -> np.ndarray:
    """x * y + z rounded once to float32 (and from there to `d` when that is a 16-bit float),
    as a fused multiply-add in PyTorch's float32 arithmetic; x, y and z hold float32 (or
    16-bit) values and broadcast together."""
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z)), d)
    fma_into(out, x, y, z)
    return out


def fma_into(out: np.ndarray, x, y, z) -> bool:
    """`fma` written into `out` (which any operand may overlap: the sum is made whole in a
    float64 temporary first). Returns True."""
    if not isinstance(x, np.ndarray) or (isinstance(y, np.ndarray) and y.size > x.size):
        x, y = y, x
    t = x.astype(_F64)  # (converted, then multiplied in place: NumPy's mixed-dtype loops
    t = np.multiply(t, y, out=t if np.ndim(y) == 0 or y.shape == t.shape else None)  # are
    t = np.add(t, z, out=t if t.shape == out.shape else None)  # slower)
    np.copyto(out, t if out.dtype == _F32 else t.astype(_F32), casting="unsafe")
    return True
