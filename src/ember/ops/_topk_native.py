"""topk's native kernel (csrc/topk.c), beside sorting.py's NumPy one.

The NumPy kernel partitions with NumPy, then replays libstdc++'s selection in Python for
each row whose order the values alone do not fix (ties, or an unsorted result); the C
kernel runs that replay on every row, in one pass per row, so it returns the same values
and indices (tests/native/test_topk.py holds the two together). float32 and float64; other
dtypes, a 0-d input or k == 0: the NumPy kernel (NotImplemented here).
"""

from __future__ import annotations

import numpy as np

from ..native import calls

P, I64, INT = calls.P, calls.I64, calls.INT


def topk_native(lib, a, *, k, dim, largest, in_shape, sorted=True):
    sfx = calls.SUFFIX.get(a.dtype)
    if sfx is None or a.ndim == 0 or k == 0:
        return NotImplemented
    dim %= a.ndim
    last = dim == a.ndim - 1
    rows = np.ascontiguousarray(a if last else np.moveaxis(a, dim, -1))
    n = rows.shape[-1]
    vals = np.empty(rows.shape[:-1] + (k,), a.dtype)
    idx = np.empty(vals.shape, np.int64)
    fn = calls.entry(lib, f"ember_topk_{sfx}", [P, P, P, I64, I64, I64, INT, INT], calls.INT)
    if fn(calls.ptr(rows), calls.ptr(vals), calls.ptr(idx), rows.size // n, n, k,
          int(largest), int(sorted)):
        raise MemoryError("ember: no memory for topk's scratch")
    if last:
        return vals, idx
    # (the NumPy kernel's results are row-major in the input's dim order)
    return (np.ascontiguousarray(np.moveaxis(vals, -1, dim)),
            np.ascontiguousarray(np.moveaxis(idx, -1, dim)))
