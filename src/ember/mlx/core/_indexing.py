"""MLX's indices on ember's indexing: arrays as index tensors (any integer type; masks
refused), negative-step slices read as flips, ints among arrays made advanced indices as
MLX reads them, and the shapes an update is broadcast into (with MLX's errors)."""

from __future__ import annotations

import numpy as np

import ember as E

from ... import _tensor
from . import _array as A
from . import _dtypes as D

Tensor = _tensor.Tensor

SETITEM_SIGNATURE = ("__setitem__(self, arg0: object | None, arg1: bool | int | float | "
                      "mlx.core.array | ndarray[writable=False] | complex | mlx.core.ArrayLike, "
                      "/) -> None")


def index_of(idx, shape, op: str = "gather") -> tuple:
    """(ember's index, the axes to flip first) for an MLX index into an array of `shape`,
    read by `op` ("gather" for a read, "scatter" for a write, as MLX's errors name them):
    arrays become tensors (boolean masks and float arrays are refused); a slice with a
    negative step reads its axis flipped, with a positive step (ember's tensors refuse
    negative steps, as PyTorch's do), so the slice stays a view of one axis among the other
    indices."""
    _check_widths(idx if idx.__class__ is tuple else (idx,))
    if idx.__class__ is tuple:
        _check_parts(idx, len(shape))
        if op == "gather" and any(isinstance(p, A.array) and p._dtype is D.bool_ for p in idx):
            raise ValueError("[Gather] Boolean indices not supported.")
        for p in idx:
            if p.__class__ is slice and p.step is not None and p.step < 0:
                parts, flips = _positive_steps(idx, shape)
                return tuple([_index_part(p, op) for p in parts]), flips
        if op == "gather":
            idx = _whole_as_all(idx, shape)
        return tuple([_index_part(p, op) for p in idx]), ()
    if not shape and idx is not None and idx is not Ellipsis:
        if _index_part(idx, op).__class__ is not bool:  # (a type MLX refuses, first)
            raise ValueError("too many indices for array: array is 0-dimensional")
    if idx.__class__ is slice and idx.step is not None and idx.step < 0:
        parts, flips = _positive_steps((idx,), shape)
        return parts[0], flips
    if op == "gather" and idx.__class__ is slice:
        idx = _whole_as_all((idx,), shape)[0]
    return _index_part(idx, op), ()


_PLAIN_INDICES = frozenset((int, slice, type(None), type(Ellipsis)))


def _check_widths(parts: tuple) -> None:
    """MLX's binding reads an int index and a slice's bounds as C++ int64s, then checks
    each fits in 32 bits (what fits in neither fails its cast)."""
    for p in parts:
        if p.__class__ is slice:
            for v in (p.start, p.stop, p.step):
                if isinstance(v, int | np.integer) and not -(2**31) <= v < 2**31:
                    _refuse_width(int(v))
        elif isinstance(p, int | np.integer) and not -(2**31) <= p < 2**31:
            _refuse_width(int(p))


def _refuse_width(v: int) -> None:
    """MLX's error for an index `v` outside int32."""
    if not -(2**63) <= v < 2**63:
        raise RuntimeError("std::bad_cast")
    raise ValueError("Slice indices must be 32-bit integers.")


def _check_parts(parts: tuple, ndim: int) -> None:
    """MLX's checks of a tuple index, in its order: every part of a type it indexes with
    (ints, slices, None, Ellipsis, arrays and lists; not bools, floats, tuples or NumPy
    arrays), one Ellipsis at most, no more indices than axes."""
    ellipses = taking = 0
    for p in parts:
        if p.__class__ not in _PLAIN_INDICES and not isinstance(p, A.array | list | np.integer):
            raise ValueError("Cannot index mlx array using the given type yet")
        if p is Ellipsis:
            ellipses += 1
        elif p is not None:
            taking += 1
    if ellipses > 1:
        raise ValueError("An index can only have a single ellipsis (...)")
    if taking > ndim:
        raise ValueError(f"Too many indices for array with {ndim} dimensions.")
_INDEX_DTYPES = (E.int64, E.int32)


def ints_among_arrays(parts: tuple) -> tuple:
    """An index with arrays in it: its ints as arrays of the arrays' broadcast shape. In
    MLX (as in NumPy) an int next to arrays is one of the advanced indices, so `x[0, :,
    idx]` puts idx's axes first; in ember's PyTorch-faced indexing an int selects first."""
    if not any(p.__class__ is int for p in parts):
        return parts
    arrays = [p for p in parts if isinstance(p, Tensor)]
    if not arrays:
        return parts
    shape = np.broadcast_shapes(*(tuple(a.shape) for a in arrays))
    return tuple(E.full(shape, p, dtype=E.int64) if p.__class__ is int else p for p in parts)


def _positive_steps(parts: tuple, shape) -> tuple:
    """`parts` with each negative-step slice made the slice of its axis flipped that takes
    the same elements in the same order, and those axes."""
    ndim = len(shape)
    taking = sum(1 for p in parts if p is not None and p is not Ellipsis)
    out, flips, axis = [], [], 0
    for p in parts:
        if p is Ellipsis:
            axis += ndim - taking
        elif p is not None:
            if p.__class__ is slice and p.step is not None and p.step < 0 and axis < ndim:
                n = shape[axis]
                start, stop, step = p.indices(n)
                count = len(range(start, stop, step))
                first = n - 1 - start  # (element i of the axis is element n-1-i flipped)
                p = slice(first, first - (count - 1) * step + 1, -step) if count else \
                    slice(0, 0)
                flips.append(axis)
            axis += 1
        out.append(p)
    return tuple(out), flips


def _index_part(i, op: str = "gather"):
    if i.__class__ in _PLAIN_INDICES:
        return i
    if isinstance(i, A.array):
        if i._dtype is D.bool_:
            raise ValueError("boolean indices are not yet supported")
        if i._dtype.kind not in "iu":
            raise ValueError(f"[{op}] Got indices with invalid dtype. Indices must be "
                             "integral.")
        t = i._t
        # (any integer type indexes in MLX; ember's indexing reads uint8 as a mask and
        # refuses int8 and int16, as PyTorch's does)
        return t if t.dtype in _INDEX_DTYPES else t.long()
    if isinstance(i, list):
        return _index_part(A.array(i), op)
    if i.__class__ is bool and op == "scatter":  # (MLX writes through `True` everywhere)
        return i
    if i.__class__ is bool or not isinstance(i, int | np.integer):
        # (MLX takes no NumPy array, float, bool or string as an index)
        raise ValueError("Cannot index mlx array using the given type.")
    return i


def kept_shape(shape: tuple, idx) -> tuple | None:
    """The shape MLX writes an update into for an index of slices, ints and None: each
    int's axis kept with length 1 (None for an index with arrays, which MLX scatters)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if any(isinstance(p, A.array | list | np.ndarray) for p in parts):
        return None
    taking = sum(1 for p in parts if p is not None and p is not Ellipsis)
    out, axis = [], 0
    for p in parts:
        if p is Ellipsis:
            out.extend(shape[axis:axis + len(shape) - taking])
            axis += len(shape) - taking
        elif p is not None and axis < len(shape):
            out.append(len(range(*p.indices(shape[axis]))) if isinstance(p, slice) else 1)
            axis += 1
    return tuple(out) + tuple(shape[axis:])


def fit(t: Tensor, shape: tuple, named: tuple | None = None) -> Tensor:
    """Update `t` broadcast to `shape`, the leading length-1 axes it has beyond them
    dropped first, as MLX does; MLX's error (naming the shape `named` where it writes
    into another one) where it cannot be."""
    while t.dim() > len(shape) and t.shape[0] == 1:
        t = t.squeeze(0)
    try:
        return E.broadcast_to(t, shape)
    except RuntimeError:
        have, want = tuple(t.shape), shape if named is None else named
        if any(a != b and 1 not in (a, b) for a, b in zip(reversed(have), reversed(want))):
            raise ValueError(f"[broadcast_shapes] Shapes {shape_text(have)} and "
                             f"{shape_text(want)} cannot be broadcast.") from None
        raise ValueError(f"Cannot broadcast array of shape {shape_text(have)} into shape "
                         f"{shape_text(want)}.") from None


def shape_text(shape) -> str:
    return "(" + ",".join(str(s) for s in shape) + ")"


def _bound(x) -> bool:
    return x is None or isinstance(x, int | np.integer)


def _whole_as_all(parts: tuple, shape: tuple) -> tuple:
    """`parts` (slices, Ellipsis and None only) with each step-1 slice that covers its axis
    made `:`. MLX makes no op for those, so a shapeless trace reads all of the axis at any
    shape, as ember's `:` does."""
    if any(p is not Ellipsis and p is not None and (p.__class__ is not slice or not (
            _bound(p.start) and _bound(p.stop) and _bound(p.step) and p.step in (None, 1)))
            for p in parts):
        return parts
    dots = [i for i, p in enumerate(parts) if p is Ellipsis]
    used = sum(p.__class__ is slice for p in parts)
    if len(dots) > 1 or used > len(shape):
        return parts  # (refused below, with ember's message)
    out, axis = [], 0
    for p in parts:
        if p is Ellipsis:
            axis = len(shape) - sum(q.__class__ is slice for q in parts[len(out) + 1:])
        elif p.__class__ is slice:
            if len(range(*p.indices(shape[axis]))) == shape[axis]:
                p = slice(None)
            axis += 1
        out.append(p)
    return tuple(out)
