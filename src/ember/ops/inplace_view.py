"""`copy_slices`: a base tensor with one view's region replaced, the op behind CopySlices.

When an in-place op writes through a view, the base's values change too, so
autograd rewrites the base's history as `new_base = copy_slices(old_base, result,
view)`: the old base everywhere except the view's region, which holds `result`.
Its VJP is two linear maps: for the old base, the gradient with the region
zeroed; for `result`, the region of the gradient. Both are again `copy_slices`
and `restride`, so double backward works.

Geometries are (shape, stride, storage_offset) triples over the base's storage.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .._view import numel, storage_extent
from .registry import Primitive, apply, bind, defbatch, deflinear, defvjp
from .views import batched_geometry, move_to_front, restride, strided, view_p
from .views import expand as _expand
from .views import unsqueeze as _unsqueeze


def _copy_slices_kernel(base, src, *, base_geom, view_geom):
    # Lay the base out in a scratch buffer with its own strides, write the source
    # through the view's strides, and read the base back: exactly what the storage
    # holds after the in-place write.
    if numel(base_geom[0]) == 0:
        return np.array(base, copy=True)
    lo = min(base_geom[2], view_geom[2])
    extent = max(storage_extent(*base_geom), storage_extent(*view_geom)) - lo
    flat = np.empty(extent, dtype=base.dtype)
    strided(flat, base_geom, lo)[...] = base
    if numel(view_geom[0]):
        strided(flat, view_geom, lo)[...] = src
    return strided(flat, base_geom, lo).copy()


copy_slices_p = Primitive("copy_slices", _copy_slices_kernel,
                          lambda base, src, *, base_geom, view_geom: (base._shape, base._dtype),
                          grad_name="CopySlices")
defvjp(copy_slices_p,
       lambda g, out, base, src, *, base_geom, view_geom:
       apply(copy_slices_p, g, 0, base_geom=base_geom, view_geom=view_geom),
       lambda g, out, base, src, *, base_geom, view_geom: restride(g, base_geom, view_geom),
       reads=((), ()))
deflinear(copy_slices_p)


def _copy_slices_batch(args, dims, *, base_geom, view_geom):
    # Each example's storage laid end to end: one copy_slices over batched geometries.
    base, src = args
    n = next(a._shape[d] for a, d in zip(args, dims) if d is not None)
    step = max(storage_extent(*base_geom), storage_extent(*view_geom))
    base = _batched(base, dims[0], n)
    if isinstance(src, Tensor):
        src = _batched(src, dims[1], n)
    return copy_slices_geom(base, src, batched_geometry(base_geom, n, step),
                            batched_geometry(view_geom, n, step)), 0


def _batched(x: Tensor, d, n: int) -> Tensor:
    """`x` with its batch dim `d` in front, or (unbatched) expanded to `n` copies."""
    if d is not None:
        return move_to_front(x, d)
    x = bind(view_p, x, fn=_unsqueeze, dim=0)
    return bind(view_p, x, fn=_expand, size=(n,) + x._shape[1:])


defbatch(copy_slices_p, _copy_slices_batch)


def geometry(t: Tensor) -> tuple:
    """`t`'s (shape, stride, storage_offset)."""
    return (tuple(t._shape), tuple(t.stride()), int(t._offset))


def copy_slices(base: Tensor, src, view: Tensor) -> Tensor:
    """`base` with the elements `view` addresses replaced by `src` (out of place)."""
    return apply(copy_slices_p, base, src, base_geom=geometry(base), view_geom=geometry(view))


def copy_slices_geom(base: Tensor, src, base_geom, view_geom) -> Tensor:
    """`base` laid out through geometry `base_geom`, `src` written through `view_geom`, and
    the result read back through `base_geom`: `copy_slices` with both geometries given."""
    return apply(copy_slices_p, base, src, base_geom=base_geom, view_geom=view_geom)


TENSOR_METHODS: dict = {}

__all__: list = []
