"""The piecewise activations' one C kernel (csrc/activation.c `piecewise`): its kinds, each
the NumPy kernel's operations in order, so the same bits in one pass where NumPy makes one
to five (a mask, a product, a select). Called by the activations and by clamp."""

from __future__ import annotations

import numpy as np

from ..native import calls

LEAKY, THRESHOLD, CLAMP, HARDSIGMOID, HARDSWISH = range(5)  # (its EMBER_* enum, in order)


def piecewise_native(kind: int, lib, a, p: float = 0.0, q: float = 0.0):
    """The C kernel of `kind` for a contiguous float32 / float64 `a`, else NotImplemented."""
    sfx = calls.SUFFIX.get(a.dtype) if a.__class__ is np.ndarray else None
    if sfx is None or not a.flags.c_contiguous:
        return NotImplemented
    out = np.empty_like(a)
    calls.entry(lib, f"piecewise_{sfx}", [calls.P, calls.P, calls.I64, calls.INT, calls.F64,
                                         calls.F64], calls.INT)(
        calls.ptr(a), calls.ptr(out), a.size, kind, p, q)
    return out
