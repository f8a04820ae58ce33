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
