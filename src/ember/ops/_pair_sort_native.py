"""Native kernels of the ordering ops (csrc/pair_sort.c: libstdc++'s steps on (value,
index) pairs), beside sorting.py's NumPy ones.

- `topk_native`: ATen's topk loop on every row. The NumPy kernel partitions with NumPy,
  then replays libstdc++'s selection in Python for each row whose order the values alone
  do not fix (ties, or an unsorted result); this runs that replay on every row in C, so it
  returns the same values and indices (tests/native/test_topk.py holds them together).
- `sort_rows`: `std::sort`'s order of each row, as PyTorch's unstable sort leaves ties.
float32 and float64 (other dtypes: the callers' NumPy paths).
"""

from __future__ import annotations

import numpy as np

from .. import native
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


def sort_rows(rows: np.ndarray, descending: bool) -> np.ndarray | None:
    """The (rows, n) int64 indices of each row of `rows` (2-D, float32 or float64) in the
    order `std::sort` leaves them with ATen's comparator; None where native kernels are off
    or for another dtype."""
    sfx = calls.SUFFIX.get(rows.dtype)
    lib = None if sfx is None else native.library("pair_sort")
    if lib is None:
        return None
    rows = np.ascontiguousarray(rows)
    order = np.empty(rows.shape, np.int64)
    fn = calls.entry(lib, f"ember_sort_rows_{sfx}", [P, P, I64, I64, INT], calls.INT)
    if fn(calls.ptr(rows), calls.ptr(order), rows.shape[0], rows.shape[1], int(descending)):
        raise MemoryError("ember: no memory for sort's scratch")
    return order
