"""The order MLX's CPU `partition`, `argpartition` and `topk` leave each line in.

MLX runs the C++ standard library's `std::nth_element` on every line (its Linux wheels
link GCC's libstdc++), so the elements on each side of the kth come out in that
algorithm's order, not sorted: `mx.topk(mx.array([5, 1, 4, 2, 3]), 3)` is `[3, 4, 5]`
only by luck of the input. Programs print these arrays, so ember replays the same
introselect (median-of-three pivot, unguarded partition, heap select past the depth limit,
insertion sort below four elements) on the comparisons MLX makes:

- `partition`: `a < b` with NaN greater than everything (NaN-aware less),
- `argpartition`: the same on the values, ties broken by the smaller index.

The replay runs on one primitive (`mlx_nth_element`: in C where native kernels run,
csrc/mlx_select.c, else in Python, line by line: the algorithm is sequential) that returns
each line's permutation; the values
are gathered through it, so they stay differentiable. Complex lines keep the sorted order
(see `_sorting`).
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtype as edt
from ... import native
from ...native import calls
from ...ops.registry import Primitive, batch_by_loop, nondifferentiable


def _less(v: list, by_index: bool):
    """MLX's comparator on positions into `v`: NaN last, optional index tie-break."""
    def less(a: int, b: int) -> bool:
        x, y = v[a], v[b]
        if x != x:
            return False
        if y != y:
            return True
        return x < y or (by_index and x == y and a < b)
    return less


def _adjust_heap(p: list, first: int, hole: int, n: int, value: int, less) -> None:
    top, child = hole, hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(p[first + child], p[first + child - 1]):
            child -= 1
        p[first + hole] = p[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        p[first + hole] = p[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(p[first + parent], value):
        p[first + hole] = p[first + parent]
        hole, parent = parent, (parent - 1) // 2
    p[first + hole] = value


def _heap_select(p: list, first: int, middle: int, last: int, less) -> None:
    n = middle - first
    if n >= 2:
        for parent in range((n - 2) // 2, -1, -1):
            _adjust_heap(p, first, parent, n, p[first + parent], less)
    for i in range(middle, last):
        if less(p[i], p[first]):
            value, p[i] = p[i], p[first]
            _adjust_heap(p, first, 0, n, value, less)


def _median_to_first(p: list, result: int, a: int, b: int, c: int, less) -> None:
    if less(p[a], p[b]):
        pick = b if less(p[b], p[c]) else c if less(p[a], p[c]) else a
    else:
        pick = a if less(p[a], p[c]) else c if less(p[b], p[c]) else b
    p[result], p[pick] = p[pick], p[result]


def _partition_pivot(p: list, first: int, last: int, less) -> int:
    mid = first + (last - first) // 2
    _median_to_first(p, first, first + 1, mid, last - 1, less)
    pivot, lo, hi = p[first], first + 1, last
    while True:
        while less(p[lo], pivot):
            lo += 1
        hi -= 1
        while less(pivot, p[hi]):
            hi -= 1
        if lo >= hi:
            return lo
        p[lo], p[hi] = p[hi], p[lo]
        lo += 1


def _insertion_sort(p: list, first: int, last: int, less) -> None:
    for i in range(first + 1, last):
        value = p[i]
        if less(value, p[first]):
            p[first + 1:i + 1] = p[first:i]
            p[first] = value
            continue
        j = i
        while less(value, p[j - 1]):
            p[j] = p[j - 1]
            j -= 1
        p[j] = value


def nth_element(values: list, kth: int, by_index: bool) -> list:
    """The positions of `values` in the order `std::nth_element` leaves them for `kth`."""
    n = len(values)
    p = list(range(n))
    if n == 0 or kth == n:
        return p
    less = _less(values, by_index)
    first, last, depth = 0, n, 2 * int(math.log2(n))
    while last - first > 3:
        if depth == 0:
            _heap_select(p, first, kth + 1, last, less)
            p[first], p[kth] = p[kth], p[first]
            return p
        depth -= 1
        cut = _partition_pivot(p, first, last, less)
        if cut <= kth:
            first = cut
        else:
            last = cut
    _insertion_sort(p, first, last, less)
    return p


NATIVE_MIN = {"elements": 64}  # (below it the Python replay costs no more than the call)


def _native(a: np.ndarray, kth: int, by_index: bool) -> np.ndarray | None:
    """The permutations by csrc/mlx_select.c (the same replay in C, one line per task), or
    None where native kernels are off or a value would not survive the trip through a
    double (64-bit integers past 2**53)."""
    if a.size < NATIVE_MIN["elements"] or a.ndim == 0:
        return None
    if a.dtype.kind in "iu" and a.dtype.itemsize == 8 and a.size and \
            np.abs(a.astype(np.float64)).max() >= 2.0 ** 53:
        return None
    lib = native.library("mlx_select")
    if lib is None:
        return None
    n = a.shape[-1]
    v = np.ascontiguousarray(a, dtype=np.float64)
    out = np.empty(a.shape, np.int64)
    calls.entry(lib, "mlx_nth_element_rows_f32", [calls.P, calls.P, calls.I64, calls.I64,
                                                  calls.I64, calls.INT])(
        calls.ptr(v), calls.ptr(out), a.size // n if n else 0, n, kth, int(by_index))
    return out


def _kernel(a, *, kth: int, by_index: bool):
    out = _native(a, kth, by_index)
    if out is not None:
        return out
    rows = a.tolist()
    return np.array([nth_element(r, kth, by_index) for r in rows],
                    dtype=np.int64).reshape(a.shape)


def _meta(a, *, kth: int, by_index: bool):
    return a._shape, edt.int64


nth_element_p = Primitive("mlx_nth_element", _kernel, _meta)
nondifferentiable(nth_element_p)
batch_by_loop(nth_element_p, "each line is partitioned by a sequential selection")
