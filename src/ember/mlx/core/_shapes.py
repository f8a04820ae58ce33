"""MLX's shape and layout functions beyond `_ops`: atleast_nd, broadcasting helpers,
unflatten / permute_dims / matrix_transpose / unstack, flip and roll, strided views, bit
reinterpretation (`view`) and slices at array-valued starts (`slice`, `slice_update`)."""

from __future__ import annotations

import numpy as np

import ember as E

from . import _axis_checks as AC
from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array, as_array, cast
from ._errors import check_broadcast
from ._tracers import is_vmap_tracer

_arr = as_array  # (the conversion every op's array operands share)


def _atleast(arys, n: int, fn):
    out = [fn(_arr(x)) if _arr(x).ndim < n else _arr(x) for x in arys]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys) -> array | list:
    """Each array with at least one dimension."""
    return _atleast(arys, 1, lambda x: O.reshape(x, (1,)))


def atleast_2d(*arys) -> array | list:
    """Each array with at least two dimensions (a vector becomes a row)."""
    return _atleast(arys, 2, lambda x: O.reshape(x, (1,) * (2 - x.ndim) + x.shape))


def atleast_3d(*arys) -> array | list:
    """Each array with at least three dimensions, NumPy's way: (N,) -> (1, N, 1),
    (M, N) -> (M, N, 1)."""
    def lift(x: array) -> array:
        shape = {0: (1, 1, 1), 1: (1, *x.shape, 1), 2: (*x.shape, 1)}[x.ndim]
        return O.reshape(x, shape)
    return _atleast(arys, 3, lift)


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to."""
    out: list = []
    for shape in shapes:
        shape = list(shape)
        a, b = [1] * (len(shape) - len(out)) + out, [1] * (len(out) - len(shape)) + shape
        if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
            raise ValueError(f"[broadcast_shapes] Shapes {_fmt(out)} and {_fmt(shape)} cannot "
                             "be broadcast.")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    return tuple(out)


def _fmt(shape) -> str:
    return "(" + ",".join(str(s) for s in shape) + ")"


def broadcast_arrays(*arrays) -> list:
    """The arrays broadcast to their common shape."""
    arrs = [_arr(x) for x in arrays]
    shape = broadcast_shapes(*(x.shape for x in arrs))
    return [O.broadcast_to(x, shape) for x in arrs]


def meshgrid(*arrays, sparse: bool = False, indexing: str = "xy", stream=None) -> tuple:
    """Coordinate grids, MLX's way: each array flattened onto its own axis of an
    n-d shape (the first two swapped for "xy"), then broadcast together unless `sparse`;
    each grid keeps its array's type."""
    if indexing not in ("xy", "ij"):
        raise ValueError("[meshgrid] Invalid indexing value. Valid values are 'xy' and 'ij'.")
    arrs = [_arr(x) for x in arrays]
    n = len(arrs)
    axes = list(range(n))
    if indexing == "xy" and n > 1:
        axes[0], axes[1] = 1, 0
    grids = [O.reshape(x, [-1 if i == axis else 1 for i in range(n)])
             for x, axis in zip(arrs, axes)]
    return tuple(grids if sparse else broadcast_arrays(*grids))


def unflatten(a, /, axis: int, shape) -> array:
    """Axis `axis` split into `shape` (one entry may be -1)."""
    a = _arr(a)
    return _wrap(E.unflatten(a._t, axis, AC.unflatten_shape(a.shape, axis, shape)), a._dtype)


def permute_dims(a, /, axes=None) -> array:
    """Alias of `transpose`."""
    return O.transpose(a, axes)


def matrix_transpose(a, /) -> array:
    """The last two axes swapped."""
    a = _arr(a)
    if a.ndim < 2:
        raise ValueError("[matrix_transpose] Input array must have at least 2 dimensions.")
    return O.swapaxes(a, -1, -2)


def unstack(x, /, *, axis: int = 0) -> tuple:
    """The slices along `axis`, which they lose."""
    x = _arr(x)
    return tuple(_wrap(t, x._dtype) for t in E.unbind(x._t, axis))


def flip(a, /, axis=None) -> array:
    """The order of elements reversed along `axis` (all axes by default)."""
    a = _arr(a)
    axes = range(a.ndim) if axis is None else [axis] if isinstance(axis, int) else axis
    return _wrap(E.flip(a._t, tuple(axes)), a._dtype)


def roll(a, /, shift, axis=None) -> array:
    """Elements shifted along `axis` (of the flattened array by default), wrapping round.
    A tuple of shifts on one axis (or with no axis) adds up; one shift applies to every
    axis given. (MLX's signature marks `shift` and `axis` positional-only, but its
    binding takes them as keywords too.)"""
    a = _arr(a)
    shifts = [shift] if isinstance(shift, int) else list(shift)
    if axis is None:
        flat = E.roll(a._t.reshape(-1), sum(shifts), 0)
        return _wrap(flat.reshape(a.shape), a._dtype)
    axes = [axis] if isinstance(axis, int) else list(axis)
    for ax in axes:
        if not -a.ndim <= ax < a.ndim:
            raise IndexError(f"[roll] Invalid axis {ax} for array with {a.ndim} dimensions.")
    if len(axes) == 1:
        shifts = [sum(shifts)]
    elif len(shifts) == 1:
        shifts = shifts * len(axes)
    return _wrap(E.roll(a._t, shifts[:len(axes)], axes), a._dtype)


def contiguous(a, /, allow_col_major: bool = False) -> array:
    """A row-contiguous copy (every ember array already reads as one)."""
    a = _arr(a)
    return _wrap(a._t.contiguous(), a._dtype)


def _flat_stride(t: E.Tensor) -> int:
    """The one stride of `t`'s elements in row-major order where its axes collapse to one
    (as MLX's flatten makes a view of them), else 1 (MLX's flatten copies them)."""
    dims = [(n, st) for n, st in zip(t.shape, t.stride(), strict=True) if n != 1]
    for (_, outer), (n, inner) in zip(dims, dims[1:]):
        if outer != inner * n:
            return 1
    return dims[-1][1] if dims else 1


def as_strided(a, /, shape=None, strides=None, offset: int = 0) -> array:
    """A view with the given shape and element strides into `a`, counted from its first
    element in row-major order.

    NOTE: MLX flattens `a` first, a view where its axes collapse to one stride (else a
    row-major copy), and refuses a flat view that is not row-contiguous (a stepped slice,
    a column, a broadcast scalar). Past `a`'s own elements MLX reads whatever memory
    follows (its parent's, for a slice); ember reads the parent's storage where `a` shares
    it, and refuses the rest."""
    a = _arr(a)
    if is_vmap_tracer(a._t):  # (MLX's AsStrided primitive has no vmap rule)
        raise ValueError("[Primitive::vmap] Not implemented for AsStrided.")
    if a.size > 1 and _flat_stride(a._t) != 1:
        raise RuntimeError("AsStrided must be used with row contiguous arrays only.")
    shape = a.shape if shape is None else tuple(shape)
    if strides is None:
        strides, step = [], 1
        for s in reversed(shape):
            strides.insert(0, step)
            step *= s
    if any(s < 0 for s in shape):
        raise ValueError("[as_strided] Negative dimensions not allowed.")
    flat = a._t.contiguous().reshape(-1)
    strides = tuple(strides)
    if min(strides, default=0) >= 0:
        # NOTE: torch's as_strided counts its offset from the storage's start; MLX's from the
        # array's first element (a slice's own start)
        view = E.as_strided(flat, shape, strides, flat.storage_offset() + offset)
        return _wrap(view.contiguous(), a._dtype)
    # negative strides (MLX walks them, torch's as_strided refuses): gather the elements
    index = np.full(shape, offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(shape, strides)):
        index += (np.arange(size) * stride).reshape((-1,) + (1,) * (len(shape) - axis - 1))
    if index.size and (index.min() < 0 or index.max() >= flat.numel()):
        raise ValueError(f"[as_strided] The view reaches element {int(index.min())} .. "
                         f"{int(index.max())} of an array of {flat.numel()} elements.")
    return _wrap(E.take(flat, E.tensor(index)), a._dtype)


_SIGNED = {1: E.int8, 2: E.int16, 4: E.int32, 8: E.int64}


def view(a, dtype) -> array:
    """The same bytes read as `dtype`: the last axis scales by the ratio of the sizes."""
    a = _arr(a)
    src, dst = a._dtype, dtype
    if dst.size > src.size and (a.ndim == 0 or a.shape[-1] * src.size % dst.size):
        raise ValueError("[view] When viewing as a larger dtype, the size in bytes of the last "
                         "axis must be a multiple of the requested type size.")
    t = a._t
    if src.kind == "u" and src.wraps and src is not D.uint64:
        t = t.to(_SIGNED[src.size])  # the carrier's low bytes are the value's bytes
    if src is D.bool_:
        t = t.to(E.uint8)
    exact = _SIGNED[dst.size] if dst.kind == "u" and dst.wraps else \
        E.uint8 if dst is D.bool_ else dst.carrier
    if a.ndim == 0:
        t = t.reshape(1)
    t = t.view(exact)
    if dst is D.bool_:
        t = t != 0
    elif dst.kind == "u" and dst.wraps and dst is not D.uint64:
        t = cast(t.to(E.int64), D.int64, dst)
    return _wrap(t.reshape(()) if a.ndim == 0 and dst.size == src.size else t, dst)


def _window(a: array, start_indices, axes, sizes, name: str):
    """Index tensors selecting the window of `a` at `start_indices` along `axes`."""
    if len(sizes) != a.ndim:
        raise ValueError(f"[{name}] Invalid slice size for array with {a.ndim} dimensions.")
    starts = _arr(start_indices)._t.reshape(-1).to(E.int64)
    index = []
    for d in range(a.ndim):
        idx = E.arange(sizes[d])
        if d in [x % a.ndim for x in axes]:
            idx = idx + starts[[x % a.ndim for x in axes].index(d)]
        index.append(idx.reshape([-1 if i == d else 1 for i in range(a.ndim)]))
    return tuple(index)


def slice(a, start_indices, axes, slice_size) -> array:  # noqa: A001  (MLX's name)
    """The `slice_size` window of `a` starting at `start_indices` (an array, so the start
    may be computed) along `axes`."""
    a, starts = _arr(a), _arr(start_indices)
    AC.check_slice(a.shape, starts.ndim, starts.size, starts.dtype, tuple(axes),
                   tuple(slice_size))
    return _wrap(a._t[_window(a, starts, axes, list(slice_size), "slice")], a._dtype)


def slice_update(a, update, start_indices, axes) -> array:
    """`a` with the window at `start_indices` along `axes` replaced by `update` (the window
    spans the other axes whole, along `axes` as much of `update` as `a` holds, and `update`
    broadcasts to it, as MLX checks)."""
    a, u = _arr(a), _arr(update)
    if u.ndim > a.ndim:  # (MLX 0.32.4 crashes here; ember refuses)
        raise ValueError(f"[slice_update] Update with {u.ndim} dimensions for an array with "
                         f"{a.ndim} dimensions.")
    padded = (1,) * (a.ndim - u.ndim) + u.shape
    along = [x % a.ndim for x in axes]
    shape = [min(padded[d], a.shape[d]) if d in along else a.shape[d] for d in range(a.ndim)]
    check_broadcast(u.shape, tuple(shape))
    index = _window(a, start_indices, axes, shape, "slice_update")
    values = E.broadcast_to(cast(u._t, u._dtype, a._dtype).reshape(padded), tuple(shape))
    return _wrap(a._t.index_put(index, values), a._dtype)


__all__ = ["as_strided", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays",
           "broadcast_shapes",
           "contiguous", "meshgrid", "flip", "matrix_transpose", "permute_dims", "roll", "slice",
           "slice_update", "unflatten", "unstack", "view"]
