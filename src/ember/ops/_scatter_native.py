"""scatter_add's and index_add's native kernels (csrc/scatter.c), beside their NumPy ones.

The same sums in the same order as np.add.at (the index's row-major order), so the same
bits, in one C loop where np.add.at goes element by element through NumPy's machinery.
float32 / float64 only (a 16-bit input accumulates in float32 there, an integer one
stays with NumPy); an index outside [0, size) or a 0-d operand: the NumPy kernel.
"""

from __future__ import annotations

import math

import numpy as np

from ..native import calls

P, I64, INT = calls.P, calls.I64, calls.INT


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
    dim %= acc.ndim  # (a negative dim, as NumPy's indexing takes it)
    part = np.ascontiguousarray(src_part(src, idx.shape))
    index = np.ascontiguousarray(idx, np.int64)
    oshape = np.array(acc.shape, np.int64)
    ishape = np.array(index.shape, np.int64)
    fn = calls.entry(lib, f"ember_scatter_add_{sfx}", [P, P, P, P, P, INT, INT], calls.INT)
    if fn(calls.ptr(acc), calls.ptr(oshape), calls.ptr(index), calls.ptr(part),
          calls.ptr(ishape), acc.ndim, dim):
        return NotImplemented  # (an index out of range: the NumPy kernel's way with it)
    return acc


def index_add_native(lib, a, idx, src, *, dim, accumulate=False, alpha=1, fill=False):
    """index_add (index_copy's kernel with `accumulate`): the NumPy kernel's copy and
    `src * alpha`, then the adds in C; other forms of the kernel stay with NumPy."""
    from ._scalar_value import kernel_number

    sfx = calls.SUFFIX.get(a.dtype)
    if not accumulate or fill or sfx is None or a.ndim == 0 or idx.ndim > 1 \
            or np.ndim(src) != a.ndim or np.asarray(src).dtype != a.dtype:
        return NotImplemented
    out = a.copy()
    if out.size == 0:
        return out
    dim %= out.ndim  # (a negative dim, as NumPy's indexing takes it)
    if alpha != 1:
        src = src * kernel_number(alpha, out.dtype)
    flat = np.ascontiguousarray(idx.reshape(-1), np.int64)
    shape = out.shape
    if src.shape != shape[:dim] + flat.shape + shape[dim + 1:]:
        return NotImplemented
    add = np.ascontiguousarray(src, out.dtype)
    outer = math.prod(shape[:dim])
    inner = math.prod(shape[dim + 1:])
    fn = calls.entry(lib, f"ember_index_add_{sfx}", [P, I64, I64, I64, P, I64, P], calls.INT)
    if fn(calls.ptr(out), outer, shape[dim], inner, calls.ptr(flat), flat.size, calls.ptr(add)):
        return NotImplemented  # (an index out of range: the NumPy kernel's way with it)
    return out
