"""The argument checks of MLX's shape functions (broadcast_to, full, moveaxis, swapaxes,
expand_dims, squeeze, flatten, unflatten, tril / triu, eye), in MLX's order and with its
messages and exception types; ember's own ops would answer in PyTorch's words, or not at
all where PyTorch accepts what MLX refuses (an expand_dims axis one past the end)."""

from __future__ import annotations

from ._errors import check_broadcasts


def _text(shape) -> str:
    return "(" + ",".join(map(str, shape)) + ")"


def _in_range(op: str, axis: int, ndim: int) -> int:
    """`axis` made non-negative, or MLX's "Invalid axis" IndexError."""
    if not -ndim <= axis < ndim:
        raise IndexError(f"[{op}] Invalid axis {axis} for array with {ndim} dimensions.")
    return axis % ndim


def broadcast_target(op: str, shape: tuple, target) -> tuple:
    """The shape `broadcast_to(x of shape, target)` gives, refused as MLX refuses it
    (negative sizes named after `op`, then a broadcast that fails or widens `target`)."""
    target = tuple(int(d) for d in target)
    if any(d < 0 for d in target):
        raise ValueError(f"[{op}] Negative dimensions not allowed.")
    if len(target) >= len(shape):
        check_broadcasts(shape, target)
    if len(target) < len(shape) or any(
            s != 1 and s != t for s, t in zip(reversed(shape), reversed(target))):
        raise ValueError(f"Cannot broadcast array of shape {_text(shape)} into shape "
                         f"{_text(target)}.")
    return target


def move_axes(op: str, ndim: int, *axes: int) -> list:
    """The axes of moveaxis / swapaxes made non-negative, each checked in turn."""
    return [_in_range(op, ax, ndim) for ax in axes]


def _distinct(op: str, axes: list, ndim: int) -> None:
    if len({ax % ndim for ax in axes}) != len(axes):
        raise ValueError(f"[{op}] Received duplicate axes.")


def expand_axes(ndim: int, axes: tuple) -> list:
    """The sorted positions of the new axes in the result (ndim + len(axes) dimensions):
    each in range first, then no position twice."""
    n = ndim + len(axes)
    for ax in axes:
        if not -n <= ax < n:
            raise IndexError(f"[expand_dims] Axis {ax} is out of bounds for array with {n} "
                             "dimensions.")
    _distinct("expand_dims", list(axes), n)
    return sorted(ax % n for ax in axes)


def squeeze_axes(shape: tuple, axes: tuple) -> list:
    """The axes to drop: each in range and of size 1 (checked together, axis by axis, and
    named as given), then none twice."""
    ndim = len(shape)
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise IndexError(f"[squeeze] Axis {ax} is out of bounds for array with {ndim} "
                             "dimensions.")
        if shape[ax] != 1:
            raise ValueError(f"[squeeze] Cannot squeeze axis {ax} with size {shape[ax]} "
                             "which is not equal to 1.")
    _distinct("squeeze", list(axes), ndim)
    return sorted(ax % ndim for ax in axes)


def flatten_span(ndim: int, start: int, end: int) -> tuple:
    """The axes flatten joins: negative ones counted from the end, then both clipped to
    the array's axes (MLX refuses no axis as out of range), start not past end."""
    start = max(start + ndim if start < 0 else start, 0)
    end = min(end + ndim if end < 0 else end, ndim - 1)
    if start > end:
        raise ValueError("[flatten] start_axis must be less than or equal to end_axis")
    return start, end


def unflatten_shape(shape: tuple, axis: int, sizes) -> tuple:
    """The sizes axis `axis` splits into (one -1 inferred), refused as MLX refuses them."""
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise ValueError("[unflatten] Shape to unflatten to cannot be empty.")
    ndim = len(shape)
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim:
        raise IndexError(f"[unflatten] Invalid axes {ax} for array with {ndim} dimensions.")
    if sizes.count(-1) > 1:
        raise ValueError("[Unflatten] Can only infer one dimension.")
    known = 1
    for s in sizes:
        known *= 1 if s == -1 else s
    if -1 in sizes and known:
        sizes[sizes.index(-1)] = shape[ax] // known
    total = 1
    for s in sizes:
        total *= s
    if total != shape[ax]:
        raise ValueError(f"[Unflatten] Cannot unflatten axis {axis} with size {shape[ax]} "
                         f"into shape {_text(sizes)}.")
    return tuple(sizes)


def check_matrix(op: str, ndim: int) -> None:
    """tril / triu need at least two axes."""
    if ndim < 2:
        raise ValueError(f"[{op}] array must be at least 2-D")


def check_eye(n: int, m: int) -> None:
    if n < 0 or m < 0:
        raise ValueError("[eye] N and M must be positive integers.")


def check_diag(ndim: int) -> None:
    if ndim not in (1, 2):
        raise ValueError(f"[diag] array must be 1-D or 2-D, got array with {ndim} dimensions.")


def diagonal_axes(op: str, ndim: int, axis1: int, axis2: int) -> tuple:
    """The two axes diagonal / trace read a diagonal from, made non-negative: at least
    two axes, each in range, not the same one."""
    if ndim < 2:
        raise ValueError(f"[{op}] Array must have at least two dimensions, but got {ndim} "
                         "dimensions.")
    for name, ax in (("axis1", axis1), ("axis2", axis2)):
        if not -ndim <= ax < ndim:
            raise IndexError(f"[{op}] Invalid {name} {ax} for array with {ndim} dimensions.")
    if axis1 % ndim == axis2 % ndim:
        raise ValueError(f"[{op}] axis1 and axis2 cannot be the same axis")
    return axis1 % ndim, axis2 % ndim


def check_repeat(ndim: int, repeats: int, axis: int | None) -> None:
    """An axis in range (checked first), then a count of at least 0."""
    if axis is not None and not -ndim <= axis < ndim:
        raise IndexError(f"[repeat] Axis {axis} is out of bounds for array with {ndim} "
                         "dimensions.")
    if repeats < 0:
        raise ValueError("[repeat] Number of repeats cannot be negative")


def check_tile(reps: tuple) -> None:
    """MLX tiles by broadcasting, whose refusal of a negative count it reports."""
    if any(r < 0 for r in reps):
        raise ValueError("[broadcast_to] Negative dimensions not allowed.")


def check_slice(shape: tuple, start_ndim: int, start_size: int, start_dtype, axes,
                sizes) -> None:
    """MLX's checks of `slice(a, start_indices, axes, slice_size)`, in its order: the
    starts 0-d or 1-d, one per axis, integers; each axis in range, none twice; a size per
    dimension of `a`, none past it."""
    if start_ndim > 1:
        raise ValueError("[slice] array of starting indices must be zero or one dimensional "
                         f"but has dimension {start_ndim}.")
    if start_size != len(axes):
        raise ValueError(f"[slice] Number of starting indices {start_size} does not match "
                         f"number of axes {len(axes)}.")
    if start_dtype.kind not in "iu":
        raise ValueError(f"[slice] Start indices must be integers, got type {start_dtype.name}.")
    ndim = len(shape)
    for ax in axes:
        if not -ndim <= ax < ndim:
            raise IndexError(f"[slice] Invalid axis {ax} for array with dimension {ndim}.")
    if len({ax % ndim for ax in axes}) != len(axes):
        raise ValueError("[slice] Repeat axes not allowed.")
    if len(sizes) != ndim:
        raise ValueError(f"[slice] Invalid slice size for array with {ndim} dimensions.")
    if any(s > d for s, d in zip(sizes, shape)):
        raise ValueError(f"[slice] Invalid slice size {_text(sizes)} for array with shape "
                         f"{_text(shape)}.")
