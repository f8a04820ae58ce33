"""The precision at which a number meets a tensor, and add / sub's `alpha=` rounded once.

PyTorch's CPU kernels compute float16 and bfloat16 in float32 and round once, but they do
not all read a Python number (or NumPy scalar) alike. mul, div (every rounding mode) and
floor_divide read it at float32 precision; add, sub, remainder, fmod, pow and the
comparisons first round it to the tensor's dtype (measured on 100,000 elements: either
choice differs from the other in 15-45% of them, by an ulp, or by 1 after a floor).

`add(a, b, alpha=k)` is one fused multiply-add in PyTorch: a + k b rounded once, k at
float32 precision for a float32 tensor and at the tensor's own for float16 / bfloat16.
Its two roundings (k b, then the sum) would differ in the last bit of 18-30% of elements
(and an SGD step `p.add_(g, alpha=-lr)` with them). In float64 every product of two
float32 numbers is exact, so the sum rounded from there is the fused result (up to a
double rounding once in about 2^29 sums). float64 and complex tensors take the two
roundings: emulating a fused float64 product in NumPy costs about 20x (long double).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_LOW = (np.dtype(np.float16), dt.bfloat16.np)
BLOCK = 1 << 16  # elements per float64 block: 512 KB of scratch, cache-resident


def is_low(d: dt.dtype) -> bool:
    """float16 or bfloat16."""
    return d is dt.float16 or d is dt.bfloat16


def rounded(x, d: dt.dtype):
    """The number `x` rounded to the 16-bit float dtype `d`, as a NumPy scalar of it (a
    number out of its range becomes +-inf, as PyTorch's cast gives)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, _F64).astype(d.np)[()]


def wide(x) -> np.float32:
    """A real number at the float32 precision mul and div read it with."""
    with np.errstate(over="ignore"):
        return np.float32(x.real if isinstance(x, complex) else x)


def alpha_param(alpha, d: dt.dtype):
    """`alpha=` at the precision add / sub's fused kernel reads it for a floating result of
    dtype `d`: the dtype's own for float16 / bfloat16, float32 for float32; as given for
    float64 and complex."""
    if is_low(d):
        return float(rounded(alpha, d))
    if d is dt.float32:
        return float(wide(alpha))
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
    shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z))
    out = np.empty(shape, d)
    if not fma_into(out, x, y, z):
        t = np.add(np.multiply(x, y, dtype=_F64), z, dtype=_F64)
        np.copyto(out, t if d == _F32 else t.astype(_F32), casting="unsafe")
    return out


def fma_into(out: np.ndarray, x, y, z) -> bool:
    """`fma` written into `out` block by block through float64 scratch, when `out` and the
    array operands are C-ordered arrays of its shape that `out` does not partly overlap (it
    may be one of them). False (nothing written) otherwise."""
    ops = (x, y, z)
    for a in ops:
        if isinstance(a, np.ndarray) and not (
                a.shape == out.shape and a.flags.c_contiguous
                and (a is out or not np.shares_memory(a, out))):
            return False
    if not out.flags.c_contiguous:
        return False
    n = out.size
    flat = out.reshape(-1)
    fx, fy, fz = (a.reshape(-1) if isinstance(a, np.ndarray) else np.float64(a) for a in ops)
    scratch = np.empty(min(n, BLOCK), _F64)
    for lo in range(0, n, BLOCK):
        hi = min(lo + BLOCK, n)
        t = scratch[:hi - lo]
        bx, by, bz = (a[lo:hi] if a.ndim else a for a in (fx, fy, fz))
        np.multiply(bx, by, out=t, dtype=_F64)
        np.add(t, bz, out=t)
        if out.dtype == _F32:
            np.copyto(flat[lo:hi], t, casting="unsafe")
        else:  # via float32, as PyTorch rounds its float32 result to the 16-bit dtype
            np.copyto(flat[lo:hi], t.astype(_F32), casting="unsafe")
    return True
