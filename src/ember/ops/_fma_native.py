"""`_fma.fma` in one C pass (csrc/multiply_add.c `fma3`): C's correctly rounded fused
multiply-add, the bits ops/_fma.py's NumPy emulation computes in a dozen passes.

float32 and float64 operands of one dtype (numbers read at it), each either the result's
shape in C order or one element; anything else, and native kernels off: None, and the
caller emulates with NumPy.
"""

from __future__ import annotations

import numpy as np

from .. import native
from ..native import calls
from ..native.kernels import Unavailable

_ARGS = [calls.P, calls.P, calls.P, calls.P, calls.I64, calls.INT]


def fma_native(x, y, z, d: np.dtype) -> np.ndarray | None:
    """x * y + z rounded once, in float32 / float64 `d`, or None where not taken here."""
    sfx = calls.SUFFIX.get(d)
    if sfx is None or native.mode() != "native":
        return None
    ops = []
    for v in (x, y, z):
        if isinstance(v, np.ndarray):
            if v.dtype != d:
                return None
        elif isinstance(v, (int, float, np.floating, np.integer)):
            v = np.asarray(v, d)
        else:
            return None
        ops.append(v)
    shape = max(ops, key=lambda v: (v.size, v.ndim)).shape  # (the others: it or one value)
    pattern = 0
    for v in ops:
        side = calls.full_or_one(v, shape)
        if side is None:
            return None
        pattern = pattern << 1 | side
    lib = native.library("multiply_add")
    if lib is None:
        return None
    out = np.empty(shape, d)
    try:
        fn = calls.entry(lib, f"fma3_{sfx}", _ARGS)
    except Unavailable:
        return None
    fn(*(calls.ptr(v) for v in ops), calls.ptr(out), out.size, pattern)
    return out
