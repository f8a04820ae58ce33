"""The `view` family: every view is one primitive, a strided window on its input's storage.

A view changes only (shape, stride, offset) over the same storage, so all of them are
one kind of math; each kind (permute, transpose, expand, slice, select, diagonal ...)
is a `Member` of the family `view_p` with its own geometry rule, node name
(`TBackward0`, `SliceBackward0` ...) and VJP: `bind(view_p, x, fn=slice_, dim=0, ...)`.
Eager evaluation (`_eval_view`) aliases: it never runs a kernel, it lays the rule's
geometry over `x`'s storage, sharing its version counter and `_base`; it serves every
device, `meta` included.

Reshaping views (view, permute, expand, squeeze) have inverse views as VJPs. Selecting
views (slice, select, diagonal, unfold, as_strided) scatter the gradient into zeros of
the input's shape with `restride`, whose own VJP is `restride` again, so double backward
works. Every view is linear, so its tangent is the same view of the input's tangent.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _grad_mode as grad_mode
from .._core.dispatch import autograd
from .._tensor import Tensor, _view, _wrap
from .._view import (
    contiguous_strides,
    expand_strides,
    non_overlapping,
    numel,
    storage_extent,
    view_strides,
)
from .registry import (
    MISSING,
    Family,
    Member,
    Primitive,
    apply,
    bind,
    defbatch,
    defjvp,
    deflinear,
    defvjp,
    inherit_view_mark,
    vjp_rules,
)
from .registry import _multi_output as multi_output_views

_grad_state = grad_mode.state
_as_strided = np.lib.stride_tricks.as_strided

# member -> its geometry rule, which maps the input's (shape, stride, offset) and the
# call's params (`fn=None` among them) to the view's; and member -> the same view taken of
# the input's NumPy array, where one is given (cheaper than building the result's array
# from its metadata later).
_rules: dict = {}
_np_views: dict = {}


def _eval_view(prim, args: tuple, params: dict) -> Tensor:
    """Eager evaluation of a view: new metadata over `x`'s storage, and its node when grad
    is on."""
    # NOTE: a hot path (t, view, transpose, unsqueeze, expand in every model step)
    x = args[0]
    fn = params["fn"]
    if x.__class__ is not Tensor and x._is_lazy:
        # NOTE: a pending value's layout is its graph value's; computed, a view of another
        # tensor lands at its place in that tensor's storage (`graph.lazy.become`): the
        # view is taken of what it became, not of the layout it had while pending
        x._force("view")
    stride = x._stride if x._stride is not None else x._ensure_storage()
    shape, stride, offset = _rules[fn](x._shape, stride, x._offset, **params)
    out = _view(x, shape, stride, offset)
    if x._np is not None and fn in _np_views:
        out._np = _np_views[fn](x._np, **params)
    if x._requires_grad and _grad_state.enabled:
        autograd.record(prim, _vjps.get(fn, MISSING), args, params, out)
        if x._base is not None and id(x) in multi_output_views:
            inherit_view_mark(x, out)  # (a view of a split's piece is refused as the piece)
    return out


view_p = Family("view", impl=_eval_view)
_vjps = vjp_rules[view_p].table  # member -> its VJP (the family's entry, read inline)


def _np_window(a: np.ndarray, shape, stride, offset: int) -> np.ndarray:
    """The NumPy view of `a`'s memory at element `offset` from its start, with `shape` and
    element `stride` (the caller's rule keeps it inside the storage)."""
    it = a.itemsize
    if offset:
        k = abs(offset)
        a = _as_strided(a, (k + 1,), (it if offset > 0 else -it,))[k:]
    return _as_strided(a, shape, tuple(s * it for s in stride))


def _member(name: str, rule: Callable, *, grad_name: str | None = None,
            np_view: Callable | None = None) -> Member:
    """A kind of view: its NumPy kernel (the same window on an array, for a backend that
    runs kernels) and meta rule both come from the geometry `rule`."""
    def kernel(a, **params):
        it = a.itemsize
        shape, stride, offset = rule(a.shape, tuple(s // it for s in a.strides), 0, **params)
        return _np_window(a, shape, stride, offset)

    def meta(x: Tensor, **params) -> tuple:
        stride = x._stride if x._stride is not None else x._ensure_storage()
        shape, stride, _ = rule(x._shape, stride, x._offset, **params)
        return shape, x._dtype, stride

    m = Member(view_p, name, kernel, meta, grad_name=grad_name)
    _rules[m] = rule
    if np_view is not None:
        _np_views[m] = np_view
    return m


# --- reshaping views ---------------------------------------------------------------

def _view_rule(shape, stride, offset, *, size, fn=None):
    new = view_strides(shape, stride, size)
    if new is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return size, new, offset


def _same_rule(shape, stride, offset, *, fn=None):
    return shape, stride, offset


def _reshape_vjp(g, out, x, *, in_shape, **params):
    return g.reshape(in_shape)


view_ = _member("view", _view_rule)
# the same geometry: what x[...] and x[()] return
alias = _member("alias", _same_rule)
# a contiguous op result nothing else sees, reshaped (what a reshape-by-copy returns)
unsafe_view = _member("unsafe_view", _view_rule)
# reshape of a tensor that is not contiguous but can be viewed (PyTorch's `_reshape_alias`)
reshape_alias = _member("reshape_alias", _view_rule, grad_name="ReshapeAliasBackward0")
for _m in (view_, unsafe_view, reshape_alias):
    defvjp(_m, _reshape_vjp, reads=((),), in_shape=True)
defvjp(alias, lambda g, out, x: g, reads=((),))


def _permute_rule(shape, stride, offset, *, dims, fn=None):
    return tuple(shape[d] for d in dims), tuple(stride[d] for d in dims), offset


def inverse_permutation(dims) -> tuple[int, ...]:
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return tuple(inv)


permute = _member("permute", _permute_rule)
defvjp(permute, lambda g, out, x, *, dims: bind(view_p, g, fn=permute,
                                                dims=inverse_permutation(dims)), reads=((),))


def _transpose_rule(shape, stride, offset, *, dim0, dim1, fn=None):
    if not shape:  # a 0-d tensor: transpose(0, 0) / (-1, -1) is the identity view
        return shape, stride, offset
    if len(shape) == 2 and dim0 != dim1:  # a matrix (`t()`, `.mT`, TBackward0)
        return (shape[1], shape[0]), (stride[1], stride[0]), offset
    shape, stride = list(shape), list(stride)
    shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
    stride[dim0], stride[dim1] = stride[dim1], stride[dim0]
    return tuple(shape), tuple(stride), offset


def _swapaxes(a, *, dim0, dim1, fn=None):
    return a.swapaxes(dim0, dim1) if a.ndim else a.view()


transpose = _member("transpose", _transpose_rule, np_view=_swapaxes)
t = _member("t", _transpose_rule, grad_name="TBackward0", np_view=_swapaxes)
for _m in (transpose, t):
    defvjp(_m, lambda g, out, x, *, dim0, dim1: bind(view_p, g, fn=transpose, dim0=dim0,
                                                     dim1=dim1), reads=((),))


def _expand_rule(shape, stride, offset, *, size, fn=None):
    return tuple(size), expand_strides(shape, stride, size), offset


expand = _member("expand", _expand_rule)
defvjp(expand, lambda g, out, x, *, size: g, reads=((),))  # the engine sums to x's shape


def _squeeze_rule(shape, stride, offset, *, dims, fn=None):
    keep = [i for i in range(len(shape)) if not (i in dims and shape[i] == 1)]
    return tuple(shape[i] for i in keep), tuple(stride[i] for i in keep), offset


# The form called names PyTorch's node: squeeze() 0, squeeze(dim) 1, squeeze(dims) 2.
squeeze = _member("squeeze", _squeeze_rule)
squeeze_dim = _member("squeeze_dim", _squeeze_rule, grad_name="SqueezeBackward1")
squeeze_dims = _member("squeeze_dims", _squeeze_rule, grad_name="SqueezeBackward2")
for _m in (squeeze, squeeze_dim, squeeze_dims):
    defvjp(_m, _reshape_vjp, reads=((),), in_shape=True)


def _unsqueeze_rule(shape, stride, offset, *, dim, fn=None):
    new_stride = stride[dim] * shape[dim] if dim < len(shape) else 1
    return shape[:dim] + (1,) + shape[dim:], stride[:dim] + (new_stride,) + stride[dim:], offset


unsqueeze = _member("unsqueeze", _unsqueeze_rule)
defvjp(unsqueeze, lambda g, out, x, *, dim: bind(view_p, g, fn=squeeze_dim, dims=(dim,)),
       reads=((),))


# --- selecting views ---------------------------------------------------------------

def _slice_rule(shape, stride, offset, *, dim, start, stop, step, fn=None):
    n = max(0, (stop - start + step - 1) // step)
    return (shape[:dim] + (n,) + shape[dim + 1:],
            stride[:dim] + (stride[dim] * step,) + stride[dim + 1:],
            offset + start * stride[dim])


def _select_rule(shape, stride, offset, *, dim, index, fn=None):
    return shape[:dim] + shape[dim + 1:], stride[:dim] + stride[dim + 1:], \
        offset + index * stride[dim]


def _diagonal_rule(shape, stride, offset, *, offset_, dim1, dim2, fn=None):
    k = offset_
    if k >= 0:
        n = max(0, min(shape[dim1], shape[dim2] - k))
        off = offset + k * stride[dim2]
    else:
        n = max(0, min(shape[dim1] + k, shape[dim2]))
        off = offset - k * stride[dim1]
    if n == 0:
        off = offset
    keep = [i for i in range(len(shape)) if i not in (dim1, dim2)]
    return (tuple(shape[i] for i in keep) + (n,),
            tuple(stride[i] for i in keep) + (stride[dim1] + stride[dim2],), off)


def _unfold_rule(shape, stride, offset, *, dim, size, step, fn=None):
    if not shape:
        return (size,), (1,), offset
    n = (shape[dim] - size) // step + 1
    return (shape[:dim] + (n,) + shape[dim + 1:] + (size,),
            stride[:dim] + (stride[dim] * step,) + stride[dim + 1:] + (stride[dim],), offset)


def _selecting_vjp(rule):
    """Scatter the gradient into zeros shaped like the input, where the view selected."""
    def vjp(g, out, x, *, in_shape, **params):
        dense = contiguous_strides(in_shape)
        return restride(g, rule(in_shape, dense, 0, **params), (in_shape, dense, 0))

    return vjp


slice_ = _member("slice", _slice_rule)
def _select_view(a, *, dim, index, fn=None):
    return a[index, ...] if dim == 0 else a[(slice(None),) * dim + (index, Ellipsis)]


select = _member("select", _select_rule, np_view=_select_view)
diagonal = _member("diagonal", _diagonal_rule)
unfold = _member("unfold", _unfold_rule)
for _m, _rule in ((slice_, _slice_rule), (select, _select_rule), (diagonal, _diagonal_rule),
                  (unfold, _unfold_rule)):
    defvjp(_m, _selecting_vjp(_rule), reads=((),), in_shape=True)


def _as_strided_rule(shape, stride, offset, *, size, stride_, storage_offset, in_shape,
                     in_stride, in_offset, fn=None):
    # (the offset is absolute; read relative to the input's, so a kernel on the input's
    # array, which starts at the input's offset, lands on the same element)
    return size, stride_, offset + storage_offset - in_offset


def _as_strided_vjp(g, out, x, *, size, stride_, storage_offset, in_shape, in_stride,
                    in_offset):
    # Both geometries address the same storage: scatter through the view's, gather
    # through the input's (PyTorch's as_strided_backward, without its special cases).
    return restride(g, (size, stride_, storage_offset), (in_shape, in_stride, in_offset))


as_strided = _member("as_strided", _as_strided_rule)
defvjp(as_strided, _as_strided_vjp, reads=((),))


# --- restride: the linear map behind every selecting view's VJP ------------------------

def _positions(geom, base: int) -> np.ndarray:
    shape, stride, offset = geom
    idx = np.zeros(shape, dtype=np.int64)
    idx += offset - base
    for d, (n, s) in enumerate(zip(shape, stride)):
        r = np.arange(n, dtype=np.int64) * s
        idx += r.reshape((n,) + (1,) * (len(shape) - d - 1))
    return idx


def strided(flat: np.ndarray, geom, base: int) -> np.ndarray:
    """The writable window `geom` = (shape, stride, offset) of `flat`, whose element 0 is
    storage position `base`."""
    shape, stride, offset = geom
    it = flat.itemsize
    return _as_strided(flat[offset - base:], shape, [s * it for s in stride], writeable=True)


def _restride_kernel(g, *, src, dst):
    if numel(dst[0]) == 0:
        return np.zeros(dst[0], dtype=g.dtype)
    base = min(src[2], dst[2])
    extent = max(storage_extent(*src), storage_extent(*dst)) - base
    flat = np.zeros(extent, dtype=g.dtype)
    if g.size:
        if non_overlapping(src[0], src[1]):
            strided(flat, src, base)[...] = g
        else:
            np.add.at(flat, _positions(src, base), g)
    if dst[2] == base and extent == numel(dst[0]) and dst[1] == contiguous_strides(dst[0]):
        return flat.reshape(dst[0])
    return strided(flat, dst, base).copy()


restride_p = Primitive("restride", _restride_kernel,
                       lambda g, *, src, dst: (tuple(dst[0]), g._dtype),
                       grad_name="AsStridedScatterBackward0")
defvjp(restride_p, lambda gg, out, g, *, src, dst: restride(gg, dst, src), reads=((),))
deflinear(restride_p)


def restride(g: Tensor, src, dst) -> Tensor:
    """Scatter-add `g` into a zero buffer through geometry `src`, read it back through `dst`.

    Each geometry is (shape, stride, offset) over one shared flat buffer. The map is
    linear and its transpose is the same map with the geometries swapped, which is
    its VJP.
    """
    src = (tuple(src[0]), tuple(src[1]), int(src[2]))
    dst = (tuple(dst[0]), tuple(dst[1]), int(dst[2]))
    return apply(restride_p, g.contiguous() if g.device.type == "cpu" else g, src=src, dst=dst)


def batched_geometry(geom, batch: int, step: int) -> tuple:
    """`geom` with a leading batch dim of `batch` copies, each `step` storage elements
    after the one before (a per-example storage laid end to end)."""
    shape, stride, offset = geom
    return (batch,) + tuple(shape), (step,) + tuple(stride), offset


def _restride_batch(args, dims, *, src, dst):
    g = move_to_front(args[0], dims[0])
    step = max(storage_extent(*src), storage_extent(*dst))
    n = g._shape[0]
    return restride(g, batched_geometry(src, n, step), batched_geometry(dst, n, step)), 0


defbatch(restride_p, _restride_batch)


# --- forward mode and vmap -------------------------------------------------------------

for _m in view_p.members.values():
    if _m is not as_strided:
        deflinear(_m)


def _as_strided_jvp(primals, tangents, out, *, size, stride_, storage_offset, in_shape,
                    in_stride, in_offset):
    # The tangent laid out in the input's geometry, read through the view's (a plain
    # as_strided of the tangent would read a fresh tensor's storage, not the input's).
    from .creation import zeros_like
    from .inplace_view import copy_slices_geom

    return copy_slices_geom(zeros_like(out), tangents[0], (size, stride_, storage_offset),
                            (in_shape, in_stride, in_offset))


defjvp(as_strided, _as_strided_jvp)


def move_to_front(x: Tensor, d: int) -> Tensor:
    """`x` with its dim `d` moved to the front (a permute view; `x` itself when d is 0)."""
    if d == 0:
        return x
    return bind(view_p, x, fn=permute, dims=(d,) + tuple(i for i in range(x.ndim) if i != d))


def _shift(p: dict, *names: str) -> dict:
    """The params with the dims named moved one on (the batch dim is now dim 0)."""
    return {k: (v + 1 if k in names else v) for k, v in p.items()}


def _batch_view(x, p):
    fn, size = p["fn"], p["size"]
    n = x._shape[0]
    if view_strides(x._shape, x.stride(), (n,) + size) is None:
        return bind(view_p, x.contiguous(), fn=fn, size=(n,) + size)
    return bind(view_p, x, fn=fn, size=(n,) + size)


def _batch_expand(x, p):
    size = p["size"]
    for _ in range(len(size) + 1 - x.ndim):  # new leading dims go after the batch dim
        x = bind(view_p, x, fn=unsqueeze, dim=1)
    return bind(view_p, x, fn=expand, size=(x._shape[0],) + tuple(size))


def _batch_transpose(x, p):
    if x.ndim == 1:  # a 0-d example: the identity view
        return bind(view_p, x, fn=alias)
    return bind(view_p, x, **_shift(p, "dim0", "dim1"))


def _batch_unfold(x, p):
    if x.ndim == 1:  # a 0-d example gives (size,) of its one element: size is 0 or 1
        x = bind(view_p, x, fn=unsqueeze, dim=1)
        return bind(view_p, x, fn=slice_, dim=1, start=0, stop=p["size"], step=1)
    return bind(view_p, x, **_shift(p, "dim"))


def _batch_as_strided(x, p):
    # Each example as the loop would see it: its own storage, written through the input's
    # geometry and read back through the view's. Both geometries are static, so which input
    # element each output element reads is worked out here, and the batch is one gather
    # (no in-place write: a nested vmap loops over those); an output element the input's
    # geometry never wrote reads zero.
    from .index_ops import index_select
    from .ternary import where

    src = (p["in_shape"], p["in_stride"], p["in_offset"])
    dst = (p["size"], p["stride_"], p["storage_offset"])
    source = np.full(max(storage_extent(*src), storage_extent(*dst)), -1, dtype=np.int64)
    source[_positions(src, 0).reshape(-1)] = np.arange(int(np.prod(src[0], dtype=np.int64)))
    pick = source[_positions(dst, 0).reshape(-1)]
    n = x._shape[0]
    out = index_select(x.reshape(n, -1), 1, _wrap(np.maximum(pick, 0)))
    if (pick < 0).any():
        out = where(_wrap(pick >= 0), out, 0)
    return out.reshape((n,) + tuple(p["size"]))


_BATCH = {
    view_: _batch_view, unsafe_view: _batch_view, reshape_alias: _batch_view,
    alias: lambda x, p: bind(view_p, x, fn=alias),
    permute: lambda x, p: bind(view_p, x, fn=permute,
                               dims=(0,) + tuple(d + 1 for d in p["dims"])),
    transpose: _batch_transpose, t: _batch_transpose,
    expand: _batch_expand,
    squeeze: lambda x, p: bind(view_p, x, fn=p["fn"], dims=tuple(d + 1 for d in p["dims"])),
    unsqueeze: lambda x, p: bind(view_p, x, **_shift(p, "dim")),
    slice_: lambda x, p: bind(view_p, x, **_shift(p, "dim")),
    select: lambda x, p: bind(view_p, x, **_shift(p, "dim")),
    diagonal: lambda x, p: bind(view_p, x, **_shift(p, "dim1", "dim2")),
    unfold: _batch_unfold,
    as_strided: _batch_as_strided,
}
_BATCH[squeeze_dim] = _BATCH[squeeze_dims] = _BATCH[squeeze]


def _view_batch(args, bdims, /, **params):
    """vmap of a view: the batch dim moved to the front, the view's dims shifted past it."""
    x, d = args[0], bdims[0]
    if d is None:
        return bind(view_p, x, **params), None
    return _BATCH[params["fn"]](move_to_front(x, d), params), 0


defbatch(view_p, _view_batch)
