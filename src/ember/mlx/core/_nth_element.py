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

import numpy as np

from ... import _dtype as edt
from ... import native
from ...native import calls
from ...ops import _stl_sort
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


def nth_element(values: list, kth: int, by_index: bool) -> list:
    """The positions of `values` in the order `std::nth_element` leaves them for `kth`
    (libstdc++'s steps, as `ops/_stl_sort` replays them for PyTorch's sort)."""
    p = list(range(len(values)))
    _stl_sort.nth_element(p, 0, kth, len(p), _less(values, by_index))
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
