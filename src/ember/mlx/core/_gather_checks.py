"""MLX's argument checks for `take`, `take_along_axis` and `put_along_axis`, in MLX's order
and with its messages. Without them ember's gathers would accept float and boolean indices
(reading them as integers) and `put_along_axis` would write along a wrapped axis."""

from __future__ import annotations

from ._dtypes import Dtype
from ._errors import check_broadcast


def check_take(axis: int | None, ndim: int, indices: Dtype) -> None:
    """`take(a, indices, axis)`: an axis of `a`, then integer indices."""
    if axis is not None and not -ndim <= axis < ndim:
        raise IndexError(f"[take] Received invalid axis {axis} for array with {ndim} "
                         "dimensions.")
    if indices.name == "bool":
        raise ValueError("[Gather] Boolean indices not supported.")
    if indices.kind not in "iu":
        raise ValueError("[gather] Got indices with invalid dtype. Indices must be integral.")


def check_along_axis(op: str, shape: tuple, index_shape: tuple, axis: int) -> None:
    """`take_along_axis` / `put_along_axis` (`op`) on an array of `shape` (flattened when
    the call's axis is None) with indices of `index_shape`: a valid axis, indices of the
    array's rank, and the other axes broadcasting (MLX names them without `axis`)."""
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise IndexError(f"[{op}] Axis {axis} is out of bounds for array with {ndim} "
                         "dimensions.")
    if len(index_shape) != ndim:
        raise ValueError(f"[{op}] Indices of dimension {len(index_shape)} does not match "
                         f"array of dimension {ndim}.")
    axis %= ndim
    check_broadcast(tuple(shape[:axis]) + tuple(shape[axis + 1:]),
                    tuple(index_shape[:axis]) + tuple(index_shape[axis + 1:]))


def check_axis_indices(op: str, indices: Dtype) -> None:
    """Integer indices for a gather or scatter along an axis.

    NOTE: MLX finds these at evaluation (its CPU kernel has no case for other index types,
    so the error names `eval_cpu`); ember raises the same error when the op is called."""
    if indices.kind not in "iu":
        kind, verb = ("GatherAxis", "gather") if op == "take_along_axis" else \
            ("ScatterAxis", "scatter")
        raise RuntimeError(f"[{kind}::eval_cpu] Cannot {verb} with indices type.")


def check_take_empty(axis_size: int, count: int) -> None:
    """`take` with array indices: `count` indices from an axis of `axis_size` elements."""
    if axis_size == 0 and count > 0:
        raise ValueError("[take] Cannot do a non-empty take from an empty axis.")


def take_position(index: int, axis: int | None, shape: tuple) -> int:
    """Where `take(a, index, axis)` with an int `index` reads along `axis` of an array of
    `shape` (the flattened shape `(a.size,)` when `axis` is None).

    NOTE: MLX takes an int as the slice [index, index + 1) and squeezes it; the slice's
    bounds are wrapped once and clamped, so an index of -1 (its stop wraps to 0) or out of
    range gives an empty slice, and the squeeze refuses it."""
    if not -(1 << 31) <= index < (1 << 31):
        raise RuntimeError("std::bad_cast")  # nanobind's cast of the index to a C++ int
    ndim = len(shape)
    if axis is not None and not -ndim <= axis < ndim:
        raise IndexError(f"[take] Received invalid axis {axis} for array with {ndim} "
                         "dimensions.")
    if 0 in shape:
        raise ValueError("[take] Cannot do a non-empty take from an array with zero elements.")
    axis = 0 if axis is None else axis % ndim
    n = shape[axis]
    start, stop = (max(0, min(b + n if b < 0 else b, n)) for b in (index, index + 1))
    if stop - start != 1:
        raise ValueError(f"[squeeze] Cannot squeeze axis {axis} with size 0 which is not "
                         "equal to 1.")
    return start
