"""`_fma.fma` in one C pass (csrc/multiply_add.c `fma3`): C's correctly rounded fused
multiply-add, the bits ops/_fma.py's NumPy emulation computes in a dozen passes.

float32 and float64 operands of one dtype (numbers read at it). The C pass reads each
operand as the result's shape in C order or as one element; any other layout (a row of
per-channel factors broadcast over a batch, a transposed view) is copied to the result's
shape first: one pass more, against the emulation's dozen. Other dtypes, shapes that do not
broadcast, and native kernels off: None, and the caller emulates with NumPy.
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
    shape = ops[0].shape
    if ops[1].shape != shape or ops[2].shape != shape:
        try:
            shape = np.broadcast_shapes(*(v.shape for v in ops))
        except ValueError:
            return None
    pattern = 0
    for k, v in enumerate(ops):
        side = calls.full_or_one(v, shape)
        if side is None:
            ops[k] = np.ascontiguousarray(np.broadcast_to(v, shape))
            side = 1
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
