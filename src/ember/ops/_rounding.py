"""Where PyTorch's CPU kernels round: the precision a number is read at next to a tensor,
and add / sub's `alpha=`.

They compute float16 and bfloat16 in float32 and round once, but do not all read a Python
number (or NumPy scalar, or a 0-d tensor second) alike. mul, div (every rounding mode) and
floor_divide read it at float32 precision; add, sub, remainder, fmod, pow and the
comparisons first round it to the tensor's dtype (measured on 100,000 elements: either
choice differs from the other in 15-45% of them, by an ulp, or by 1 after a floor).

`add(a, b, alpha=k)` is one node (AddBackward0, `alpha` inside). For float16 / bfloat16 it
computes a + k b in float32 with k rounded to the tensor's dtype, where the product is exact,
and rounds once, as PyTorch. In float32 PyTorch's kernels (add with alpha, addcmul, lerp)
are fused multiply-adds, rounded once; ember rounds the product and the sum. Emulating the
fused result through float64 (exact for products of two float32 numbers) made SGD's
trajectory bit for bit torch's, but costs about 4x those ops: the MLP (SGD) and MNIST
(Adadelta) steps measured 3-4% slower, the GPT and digits steps (Adam: lerp, addcmul) 3-14%,
so it is not taken; the two differ in the last bit of 10-30% of elements. (PyTorch's
float32 sqrt, as built here, is not correctly rounded either: 16-18% of its results differ
by an ulp from NumPy's, and so ember's.)
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
    """`alpha=` as add / sub's kernel reads it for a floating result of dtype `d`: rounded
    to the dtype for float16 / bfloat16, as given otherwise."""
    if d is dt.float16 or d is dt.bfloat16:
        return float(rounded(alpha, d))
    return alpha


def scaled_add(a, b, alpha, subtract: bool = False):
    """a + alpha * b (a - alpha * b): float16 / bfloat16 in float32, rounded once; other
    dtypes with the product rounded first (see the module)."""
    op = np.subtract if subtract else np.add
    d = a.dtype if isinstance(a, np.ndarray) else b.dtype
    if d in _LOW:
        a32, b32 = (np.asarray(x).astype(_F32) if isinstance(x, np.ndarray) else x
                    for x in (a, b))
        return op(a32, np.multiply(b32, np.float32(alpha))).astype(d)
    return op(a, np.multiply(b, alpha))


def scaled_add_into(dst: np.ndarray, b, alpha, subtract: bool = False) -> bool:
    """`dst += alpha * b` (`-=`) in place, for a C-ordered dst of another dtype than the
    16-bit floats that `b` does not partly overlap; False (nothing written) otherwise."""
    if dst.dtype in _LOW or not dst.flags.c_contiguous or (
            isinstance(b, np.ndarray) and b is not dst and np.shares_memory(b, dst)):
        return False
    (np.subtract if subtract else np.add)(dst, np.multiply(b, alpha), out=dst)
    return True
