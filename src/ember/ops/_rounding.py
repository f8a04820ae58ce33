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
from ._scalar_value import _F32_MAX, _as_float


def rounded(x, d: dt.dtype):
    """The real number `x` rounded to the 16-bit float dtype `d` (through float32, as
    PyTorch converts a number: `_scalar_value._as_float`), +-inf out of its range."""
    with np.errstate(over="ignore"):
        return _as_float(x, d)


def wide(x) -> np.float32:
    """A real number at the float32 precision mul and div read it with (+-inf out of its
    range, as PyTorch's cast gives)."""
    if x.__class__ is complex:
        x = x.real
    if -_F32_MAX <= x <= _F32_MAX:
        return np.float32(x)
    with np.errstate(over="ignore"):
        return np.float32(x)
