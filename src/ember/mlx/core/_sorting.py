"""MLX's sorting functions: `sort`, `argsort`, `partition`, `argpartition`, `topk`.

Ascending and stable along one axis (all of them flattened for `axis=None`), NaN last;
complex arrays in MLX's order (`_complex_order`). `partition`, `argpartition` and `topk`
leave each line in the order MLX's CPU kernel (`std::nth_element`) does, replayed by
`_nth_element`. NOTE: complex lines come out sorted there, one of the orders MLX's
contract allows.
"""

from __future__ import annotations

import math

import ember as E

from ...ops.registry import apply
from . import _complex_order as C
from . import _dtypes as D
from ._array import _wrap, array, as_array
from ._indexing import shape_text
from ._nth_element import nth_element_p

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


def _nth_order(t, axis: int, kth: int, by_index: bool):
    """The positions along `axis` in the order MLX's partition leaves each line (int64)."""
    kth %= t.shape[axis]
    if t.dtype.is_complex:
        return C.argsort(t, axis)
    moved = E.movedim(t, axis, -1)
    lines = moved.detach().reshape(math.prod(moved.shape[:-1]), moved.shape[-1])
    order = apply(nth_element_p, lines, kth=kth, by_index=by_index)
    return E.movedim(order.reshape(moved.shape), -1, axis)


def _partitioned(t, axis: int, kth: int):
    return E.gather(t, axis, _nth_order(t, axis, kth, by_index=False))


def partition(a, /, kth: int, axis: int | None = -1, *, stream=None) -> array:
    a = _arr(a)
    t, ax = _line(a, axis, "partition")
    _check_kth(t, ax, axis, kth, "partition")
    return _wrap(_partitioned(t, ax, kth), a._dtype)


def argpartition(a, /, kth: int, axis: int | None = -1, *, stream=None) -> array:
    a = _arr(a)
    t, ax = _line(a, axis, "argpartition")
    _check_kth(t, ax, axis, kth, "argpartition")
    return _wrap(_nth_order(t, ax, kth, by_index=True), D.uint32)


def topk(a, /, k: int, axis: int | None = -1, *, stream=None) -> array:
    """The `k` largest along `axis`, in the order MLX's partition leaves them; the whole
    line, untouched, when `k` is its length (as MLX returns it)."""
    a = _arr(a)
    t, ax = _line(a, axis, "topk")
    n = t.shape[ax]
    if not 0 <= k <= n:
        raise ValueError(f"[topk] Received invalid k={k} along axis "
                         f"{0 if axis is None else axis} for array with shape: "
                         f"{shape_text(t.shape)}")
    if k == n:
        return _wrap(t, a._dtype)
    return _wrap(E.narrow(_partitioned(t, ax, n - k), ax, n - k, k), a._dtype)


__all__ = ["argpartition", "argsort", "partition", "sort", "topk"]
