"""scatter_add's native kernel (csrc/scatter.c), beside ops/index.py's NumPy one.

The same sums in the same order as np.add.at (the index's row-major order), so the same
bits, in one C loop where np.add.at goes element by element through NumPy's machinery.
float32 / float64 only (a 16-bit input accumulates in float32 there, an integer one
stays with NumPy); an index outside [0, size) or a 0-d operand: the NumPy kernel.
"""

from __future__ import annotations

import numpy as np

from ..native import calls

P, INT = calls.P, calls.INT


def scatter_add_native(lib, a, idx, src, *, dim, shape=None):
    from .index import src_part

    out = np.zeros(shape, dtype=src.dtype) if shape is not None else a
    sfx = calls.SUFFIX.get(out.dtype)
    if sfx is None or np.ndim(src) == 0 or src.dtype != out.dtype or out.ndim == 0 \
            or idx.ndim != out.ndim:
        return NotImplemented
    acc = np.array(out, order="C")  # (a copy, as the NumPy kernel's accumulator)
    if idx.size == 0:
        return acc
    part = np.ascontiguousarray(src_part(src, idx.shape))
    index = np.ascontiguousarray(idx, np.int64)
    oshape = np.array(acc.shape, np.int64)
    ishape = np.array(index.shape, np.int64)
    fn = calls.entry(lib, f"ember_scatter_add_{sfx}", [P, P, P, P, P, INT, INT], calls.INT)
    if fn(calls.ptr(acc), calls.ptr(oshape), calls.ptr(index), calls.ptr(part),
          calls.ptr(ishape), acc.ndim, dim):
        return NotImplemented  # (an index out of range: the NumPy kernel's way with it)
    return acc
