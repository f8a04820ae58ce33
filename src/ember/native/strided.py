"""Row-major copies of transposed arrays in C (csrc/transpose.c).

NumPy copies an array whose fastest dim is not its last one (`x.t()`, a permutation)
element by element in output order, a new input cache line for every element: 3-6x the
time of a copy in tiles. `transposed_copy` is that copy's native twin; it gives the same
bits (the elements are moved, not converted) and declines, returning None, wherever
NumPy's own copy is already a copy of contiguous runs, or native kernels are off.
"""

from __future__ import annotations

import numpy as np

from . import calls, kernels

MIN_ELEMENTS = 1 << 15  # below this NumPy's copy stays in the first cache levels and wins
_WIDTHS = (1, 2, 4, 8)


def plan(a: np.ndarray) -> tuple | None:
    """The copy's layout: (outer dims as (size, input stride, output stride) triples,
    rows, cols, row_src, col_src, row_dst), strides in elements; None where the input's
    fastest dim is the last (NumPy copies contiguous runs then) or a dim is broadcast."""
    it = a.itemsize
    if it not in _WIDTHS or a.ndim < 2 or any(s % it for s in a.strides):
        return None
    dims = [(n, s // it, k) for k, (n, s) in enumerate(zip(a.shape, a.strides)) if n != 1]
    if len(dims) < 2 or any(s == 0 for _, s, _ in dims):
        return None
    out_stride, acc = {}, 1
    for n, _, k in reversed(dims):
        out_stride[k] = acc
        acc *= n
    last = dims[-1]
    fastest = min(dims[:-1], key=lambda d: abs(d[1]))
    if abs(last[1]) <= abs(fastest[1]):
        return None
    outer = [(n, s, out_stride[k]) for n, s, k in dims if k not in (last[2], fastest[2])]
    return outer, fastest[0], last[0], fastest[1], last[1], out_stride[fastest[2]]


def transposed_copy(a: np.ndarray) -> np.ndarray | None:
    """A row-major copy of `a` (its bits) made in tiles, or None where NumPy's own copy
    is as good or native kernels are off."""
    if a.size < MIN_ELEMENTS:
        return None
    layout = plan(a)
    if layout is None:
        return None
    lib = kernels.library("transpose")
    if lib is None:
        return None
    outer, rows, cols, row_src, col_src, row_dst = layout
    shape, src_stride, dst_stride = (np.array(v, np.int64) for v in
                                     (zip(*outer) if outer else ((), (), ())))
    out = np.empty(a.shape, a.dtype)
    fn = calls.entry(lib, f"transpose_copy_w{a.itemsize}",
                     [calls.P, calls.P, calls.I64] + [calls.P] * 3 + [calls.I64] * 5)
    fn(calls.ptr(a), calls.ptr(out), len(outer), calls.ptr(shape), calls.ptr(src_stride),
       calls.ptr(dst_stride), rows, cols, row_src, col_src, row_dst)
    return out
