"""MLX's sorting functions: `sort`, `argsort`, `partition`, `argpartition`, `topk`.

Ascending and stable along one axis (all of them flattened for `axis=None`), NaN last;
complex arrays in MLX's order (`_complex_order`). NOTE: MLX's `partition` leaves the
elements on each side of the kth in an order of its kernel's making; ember's is the sorted
order, which is one of the orders MLX's contract allows.
"""

from __future__ import annotations

import ember as E

from . import _complex_order as C
from . import _dtypes as D
from ._array import _wrap, array, as_array
from ._indexing import shape_text

_arr = as_array


def _line(a: array, axis: int | None, name: str) -> tuple:
    """(tensor, axis): `a`'s tensor (flattened for `axis=None`) and the axis to order
    along, refused as MLX refuses it."""
    if axis is None:
        return a._t.reshape(-1), 0
    if not -a.ndim <= axis < a.ndim:
        raise IndexError(f"[{name}] Axis {axis} is out of bounds for array with {a.ndim} "
                         "dimensions.")
    return a._t, axis


def _check_kth(t, axis: int, given: int | None, kth: int, name: str) -> None:
    if not -t.shape[axis] <= kth < t.shape[axis]:
        space = "" if name == "partition" else " "  # (sic: MLX's partition has none)
        raise ValueError(f"[{name}] Received invalid kth {kth}{space}along axis "
                         f"{0 if given is None else given} for array with shape: "
                         f"{shape_text(t.shape)}")


def sort(a, /, axis: int | None = -1, *, stream=None) -> array:
    a = _arr(a)
    t, ax = _line(a, axis, "sort")
    return _wrap(C.sort(t, ax), a._dtype)


def argsort(a, /, axis: int | None = -1, *, stream=None) -> array:
    a = _arr(a)
    t, ax = _line(a, axis, "argsort")
    return _wrap(C.argsort(t, ax), D.uint32)


def partition(a, /, kth: int, axis: int | None = -1, *, stream=None) -> array:
    a = _arr(a)
    t, ax = _line(a, axis, "partition")
    _check_kth(t, ax, axis, kth, "partition")
    return _wrap(C.sort(t, ax), a._dtype)


def argpartition(a, /, kth: int, axis: int | None = -1, *, stream=None) -> array:
    a = _arr(a)
    t, ax = _line(a, axis, "argpartition")
    _check_kth(t, ax, axis, kth, "argpartition")
    return _wrap(C.argsort(t, ax), D.uint32)


def topk(a, /, k: int, axis: int | None = -1, *, stream=None) -> array:
    """The `k` largest along `axis`, ascending (MLX's kernel leaves them in an order of
    its own; the values are the same)."""
    a = _arr(a)
    t, ax = _line(a, axis, "topk")
    n = t.shape[ax]
    if not 0 <= k <= n:
        raise ValueError(f"[topk] Received invalid k={k} along axis "
                         f"{0 if axis is None else axis} for array with shape: "
                         f"{shape_text(t.shape)}")
    return _wrap(E.narrow(C.sort(t, ax), ax, n - k, k), a._dtype)


__all__ = ["argpartition", "argsort", "partition", "sort", "topk"]
