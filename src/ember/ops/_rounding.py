"""Where PyTorch's CPU kernels round: the precision a number is read at next to a tensor,
and add / sub's `alpha=`.

They compute float16 and bfloat16 in float32 and round once, but do not all read a Python
number (or NumPy scalar, or a 0-d tensor second) alike. mul, div (every rounding mode) and
floor_divide read it at float32 precision; add, sub, remainder, fmod, pow and the
comparisons first round it to the tensor's dtype (measured on 100,000 elements: either
choice differs from the other in 15-45% of them, by an ulp, or by 1 after a floor).

`add(a, b, alpha=k)` is one node (AddBackward0, `alpha` inside). For float16 / bfloat16 it
computes a + k b in float32 with k rounded to the tensor's dtype, where the product is exact,
and rounds once, as PyTorch. In float32 and float64 PyTorch's kernels for add and sub with
alpha, addcmul and lerp are fused multiply-adds, rounded once, and so are ember's
(`_multiply_add`: C's fma, or NumPy's exact emulation in `_fma`); with them SGD's steps are
torch's bit for bit. (PyTorch's float32 and float64 sqrt, as built here, is not correctly
rounded: 0.2-0.7% of its results on large arrays differ by an ulp from IEEE's, which NumPy
and C give, and so ember's; the optimizers that take a square root differ there.)
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from ._half_casts import cast, widen
from ._scalar_value import _F32_MAX, _as_float


def rounded(x, d: dt.dtype):
    """The real number `x` rounded to the 16-bit float dtype `d` (through float32, as
    PyTorch converts a number: `_scalar_value._as_float`), +-inf out of its range."""
    with np.errstate(over="ignore"):
        return _as_float(x, d)


def in_16(x, d) -> np.ndarray:
    """float32 values rounded to the 16-bit NumPy dtype `d` and read back as float32: one
    operation of a kernel that computes in the 16-bit dtype itself (each of its C++ operators
    converts to float, computes, and rounds back)."""
    return widen(cast(np.asarray(x, np.float32), np.dtype(d)))


def wide(x) -> np.float32:
    """A real number at the float32 precision mul and div read it with (+-inf out of its
    range, as PyTorch's cast gives)."""
    if isinstance(x, np.generic):  # (a float16 one would read the bounds as float16:
        x = x.item()                # an overflow warning, and a wrong test)
    if x.__class__ is complex:
        x = x.real
    if -_F32_MAX <= x <= _F32_MAX:
        return np.float32(x)
    with np.errstate(over="ignore"):
        return np.float32(x)
