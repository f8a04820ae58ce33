"""Indexing primitives: `x[key]` (and `index_select`), `index_put`, `gather` and its
transpose `scatter`; each with its VJP, JVP and vmap rule (nonzero: nonzero.py).

`index` reads x at a key whose static structure is a param (see `index_key`) and whose
index array is an input; its VJP puts the gradient back into zeros with `index_put`,
accumulating, so repeated indices add up. `gather` picks along one dim; `scatter`
writes along one dim (assigning, or adding with `reduce="add"`), into a tensor or into
zeros of a given shape, which is how other ops' VJPs undo a gather.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from .._view import broadcast_shapes, wrap_dim
from . import movement
from ._arg_parser_text import method_aware, need_int, need_tensor
from ._batching import batch_size, front, loop, pad_front
from ._common import (
    has_values,
    laid_out,
    preserve_copy,
    reduced_float,
    same_meta,
    type_name,
    write_out,
)
from ._dynamic_shape import refuse_batched_mask
from ._gather_adds import add_merged, add_slices, merged_slots, take
from ._scatter_native import scatter_add_native
from .index_key import (
    TENSOR_SLOT,
    _on,
    check_value_shape,
    flat_key,
    key_shape,
    np_key,
    plan,
    probe,
    refuse_byte_mask_fill,
    select_int,
    slots,
    tn,
    value_tensor,
)
from .registry import (
    Family,
    Member,
    Primitive,
    apply,
    apply_,
    bind,
    defbatch,
    defjvp,
    defvjp,
    keep_given,
)

_grad_state = grad_mode.state


def linear_in(prim: Primitive, *positions: int) -> None:
    """Register the JVP of a primitive linear in the inputs at `positions` jointly (the
    others are indices or masks): the tangent is the primitive applied to their tangents
    (a missing tangent is zero; a number at such a position, a fill value, becomes 0)."""
    from .creation import zeros_like

    target, extra = (prim.family, {"fn": prim}) if isinstance(prim, Member) else (prim, {})

    def jvp(primals, tangents, out, **params):
        if all(tangents[i] is None for i in positions):
            return None
        args = list(primals)
        for i in positions:
            t = tangents[i]
            if t is not None:
                args[i] = t
            else:
                args[i] = zeros_like(primals[i]) if isinstance(primals[i], Tensor) else 0
        return bind(target, *args, **extra, **params)

    jvp.linear = True
    defjvp(prim, jvp)


# --- index: x[key], and index_select ------------------------------------------------------

def _unique_key(key) -> bool:
    """True when `key` reaches each position at most once (no integer index arrays)."""
    return not any(isinstance(k, np.ndarray) and k.dtype != np.bool_ for k in key)


def _take_axis(key, idx) -> int | None:
    """The axis when the key is slices then one 1-D integer index (np.take's faster case)."""
    if key and key[-1] is TENSOR_SLOT and idx.ndim == 1 and idx.dtype != np.bool_:
        for k in key[:-1]:
            if k.__class__ is not slice:
                return None
        return len(key) - 1
    return None


def _index_kernel(a, idx=None, *, key, select=False):
    if select:  # index_select: a 1-D (or 0-d) index along the key's last dim
        return a.copy() if a.ndim == 0 else take(a, idx.reshape(-1), len(key) - 1)
    if idx is None:
        return a[key].copy()  # a basic key makes a view: copy it
    if a.size == 0 and idx.dtype != np.bool_:  # (nothing is read: PyTorch checks no bounds)
        return np.empty(key_shape(a.shape, key, idx.shape), a.dtype)
    axis = _take_axis(key, idx)
    if axis is not None:
        out = take(a, idx, axis)
        return out if a.flags.c_contiguous else _take_layout(a, idx, axis, out)
    merged = merged_slots(key, idx, a.shape)
    if merged is not None:
        axis, shape, flat = merged
        out = take(a.reshape(shape), flat, axis)
        return out.reshape(a.shape[:axis] + idx.shape[1:] + a.shape[axis + len(idx):])
    out = a[np_key(key, idx)]  # a fresh array, but NumPy may lay it out transposed
    out = out if out.flags.c_contiguous else np.ascontiguousarray(out)
    if not a.flags.c_contiguous and idx.dtype == np.bool_ and idx.ndim == 1 and \
            all(k.__class__ is slice for k in key[:-1]) and key[-1] is TENSOR_SLOT:
        return _take_layout(a, np.flatnonzero(idx), len(key) - 1, out)  # (mask: nonzero)
    return out


def _take_layout(a, idx, axis: int, out):
    """`a[..., idx]` (a 1-D index on `axis`) laid out as PyTorch's TensorIterator lays it
    out over `a` (the indexed dim's stride 0) and `idx`: `pool[idx]` stays channels-last."""
    if out.ndim < 2:
        return out
    src, along = list(a.strides), [0] * a.ndim
    src[axis], along[axis] = 0, idx.strides[0] if idx.shape[0] > 1 else 1
    return laid_out([(out.shape, tuple(src)), (out.shape, tuple(along))], out)


def _index_meta(x, idx=None, *, key, select=False):
    if select:
        d = len(key) - 1
        shape = () if x.ndim == 0 else x._shape[:d] + (idx.numel(),) + x._shape[d + 1:]
        return shape, x._dtype
    if idx is not None and idx._dtype is dt.bool_:
        raise NotImplementedError(
            "indexing with a bool mask needs the mask's values: it cannot run on 'meta'")
    return key_shape(x._shape, key, None if idx is None else idx._shape), x._dtype


# x at `key` (static: slices, ints, None, `...` and TENSOR_SLOTs) with index array `idx`
# in the slots (see index_key.plan); with `select`, index_select along the last key dim
index_p = Primitive("index", _index_kernel, _index_meta,
                    grad_name=lambda args, params: (
                        "IndexSelectBackward0" if params.get("select") else "IndexBackward0"))


def _index_vjp(g, out, x, idx, *, key, select=False, in_shape):
    if select:
        from .index_ops import index_add_zeros

        return index_add_zeros(in_shape, len(key) - 1, idx, g)
    return put_into_zeros(in_shape, key, g, idx)


defvjp(index_p, _index_vjp, None, reads=((1,), ()), in_shape=True)
linear_in(index_p, 0)


def _subspace(key: tuple) -> int | None:
    """Where x[key]'s index dims land: the first slot when the slots are adjacent, else
    None (NumPy then puts them in front)."""
    pos = [i for i, k in enumerate(key) if k is TENSOR_SLOT]
    return pos[0] if pos[-1] - pos[0] == len(pos) - 1 else None


def _with_batch_index(idx: Tensor, di, key: tuple, b: int) -> tuple[Tensor, tuple]:
    """The index stacked (see `plan`) with arange(b) as a first row, for the key with a
    slot in front: the batch becomes an index of x's batch dim. `di` is idx's batch axis
    (None: the same index for every example)."""
    from .creation import arange
    from .join import cat

    n = slots(key)
    if n == 1:
        idx = idx.to(dt.int64).unsqueeze(0)
        di = None if di is None else di + 1
    if di is None:
        idx = idx.unsqueeze(1).expand((idx._shape[0], b) + idx._shape[1:])
    else:
        idx = idx.movedim(di, 1)
    rows = arange(b, device=idx.device).reshape((1, b) + (1,) * (idx.ndim - 2))
    return cat([rows.expand((1,) + idx._shape[1:]), idx]), (TENSOR_SLOT,) + key


def _index_batch(args, dims, *, key, select=False):
    x, idx = args[0], args[1] if len(args) > 1 else None
    dx, di = dims[0], dims[1] if len(dims) > 1 else None
    if select:
        if x.ndim - (dx is not None) == 0:  # index_select of a 0-d x is x
            return (x.clone(), dx) if dx is not None else (bind(index_p, x, idx, key=key,
                                                                select=True), None)
        idx = idx.reshape(-1) if di is None else front(idx, di).reshape(idx._shape[di], -1)
        di = None if di is None else 0
    if idx is not None and idx._dtype is dt.bool_ and di is not None:
        return loop(index_p, args, dims, key=key)  # (each mask picks its own count)
    if di is None:
        key1 = (slice(None),) + key
        out = bind(index_p, front(x, dx), idx, key=key1)
        if idx is None or _subspace(key1) is not None:
            return out, 0
        return out, idx.ndim - 1  # the index dims went in front of the batch dim
    if dx is None:
        n = slots(key)
        if n == 1:
            return bind(index_p, x, front(idx, di), key=key), key.index(TENSOR_SLOT)
        out = bind(index_p, x, idx.movedim(di, 1), key=key)
        at = _subspace(key)
        return out, 0 if at is None else at
    idx2, key2 = _with_batch_index(idx, di, key, x._shape[dx])
    out = bind(index_p, front(x, dx), idx2, key=key2)  # (b, *index dims, *x's other dims)
    at = _subspace(key)
    if at:  # each example's result has `at` of x's dims before its index dims
        nb = idx2.ndim - 2
        out = out.movedim(tuple(range(1 + nb, 1 + nb + at)), tuple(range(1, 1 + at)))
    return out, 0


defbatch(index_p, _index_batch)


def index_by(x: Tensor, key: tuple) -> Tensor:
    """x[key] for a key in NumPy's terms: slices, ints, None, `...` and at most one index
    (an int64 or bool NumPy array or tensor), which becomes the index input."""
    skey, idx = [], None
    for k in key:
        if isinstance(k, (np.ndarray, Tensor)):
            if idx is not None:
                raise ValueError("index_by takes one index array")
            idx = _on(k if isinstance(k, Tensor) else _as_tensor(k), x)
            k = TENSOR_SLOT
        skey.append(k)
    return apply(index_p, x, idx, key=tuple(skey))


def _as_tensor(a: np.ndarray) -> Tensor:
    from .._tensor import _wrap

    return _wrap(np.array(a))


def _selected(x: Tensor, ints: tuple) -> Tensor | None:
    """x[i, j, ...] for Python ints in range (the commonest keys: a dataset's `data[i]`):
    the selects `plan` would bind, without parsing the key; None where one is out of range
    (`plan` words the error)."""
    shape = x._shape
    if len(ints) > len(shape):
        return None
    for k, n in zip(ints, shape):
        if not -n <= k < n:
            return None
    for k, n in zip(ints, shape):
        x = select_int(x, 0, k, n)
    return x


def getitem(x: Tensor, key) -> Tensor:
    ints = (key,) if key.__class__ is int else key if key.__class__ is tuple else ()
    for k in ints:
        if k.__class__ is not int:
            break
    else:
        view = _selected(x, ints) if ints else None
        if view is not None:
            return view
    if x.ndim == 0 and isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, Tensor) and k._dtype in (dt.bool_, dt.uint8):
            refuse_batched_mask(k, "index")
    view, adv = plan(x, key)
    if adv is None:
        if view is x:
            return movement.alias(x)
        return view
    return bind(index_p, view, adv[1], key=adv[0])


# --- index_put: the primitive behind assignment -------------------------------------------

def _index_put_kernel(a, v, idx=None, *, key, accumulate, shape=None):
    if shape is not None:  # into zeros of `shape` (`a` is the number 0): the VJP of x[key]
        out = np.zeros(shape, dtype=v.dtype)
    else:
        out = preserve_copy(a)  # PyTorch keeps the input's layout here
    if out.size == 0:  # (nothing is written: PyTorch checks no bounds)
        return out
    npkey = np_key(key, idx)
    if accumulate and _unique_key(npkey):
        out[npkey] += v  # each position is picked once: nothing to accumulate
    elif accumulate:
        axis = None if idx is None else _take_axis(key, idx)
        if axis is None and add_merged(out, key, idx, v):
            return out
        if axis is None or not add_slices(out, axis, idx, v):
            np.add.at(out, npkey[-1] if axis == 0 and out.ndim else npkey, v)
    else:
        out[npkey] = v
    return out


def _index_put_meta(x, v, idx=None, *, key, accumulate, shape=None):
    return same_meta(x) if shape is None else (tuple(shape), v._dtype)


# x with v written (or added) at key (static, with index `idx` in its slots, as `index`);
# with `shape`, zeros of that shape instead of x (the gradient of indexing, which PyTorch
# computes with its _index_put_impl_)
index_put_p = Primitive("index_put", _index_put_kernel, _index_put_meta,
                        grad_name=lambda args, params: (
                            "IndexPutBackward0" if params.get("shape") is None
                            else "IndexPutImplBackward0"))


def _index_put_grad_x(g, out, x, v, idx, *, key, accumulate, shape=None):
    if accumulate:
        return g
    return apply(index_put_p, g, 0, idx, key=key, accumulate=False)


defvjp(index_put_p, _index_put_grad_x,
       lambda g, out, x, v, idx, *, key, accumulate, shape=None: apply(index_p, g, idx, key=key),
       None, reads=((2,), (2,), ()))
linear_in(index_put_p, 0, 1)


def _index_put_batch(args, dims, *, key, accumulate, shape=None):
    x, v, idx = args
    dx, dv, di = dims
    b = batch_size(args, dims)
    lshape = tuple(shape) if shape is not None else (
        x._shape if dx is None else x._shape[:dx] + x._shape[dx + 1:])
    lidx = None if idx is None else (idx._shape if di is None else
                                     idx._shape[:di] + idx._shape[di + 1:])
    if idx is not None and idx._dtype is dt.bool_ and di is not None:
        return loop(index_put_p, args, dims, key=key, accumulate=accumulate, shape=shape)
    target = len(key_shape(lshape, key, lidx, mask=idx is not None and idx._dtype is dt.bool_))
    v = pad_front(v, dv, target)  # (b or 1, *logical target), its dims right-aligned
    if shape is not None:
        x, shape = 0, (b,) + lshape
    else:
        x = front(x, dx) if dx is not None else x.unsqueeze(0).expand((b,) + lshape)
    if idx is None or (di is None and slots(key) == 1):
        return bind(index_put_p, x, v, idx, key=(slice(None),) + key, accumulate=accumulate,
                    shape=shape), 0
    # the batch as an extra index of x's batch dim: x[b, ...] has the index dims first
    idx2, key2 = _with_batch_index(idx, di, key, b)
    at = _subspace(key)
    if at:  # the logical target has `at` dims before its index dims: move those after them
        nb = len(idx2._shape) - 2
        v = v.movedim(tuple(range(1, 1 + at)), tuple(range(1 + nb, 1 + nb + at)))
    return bind(index_put_p, x, v, idx2, key=key2, accumulate=accumulate, shape=shape), 0


defbatch(index_put_p, _index_put_batch)


def put_into_zeros(shape, key: tuple, v: Tensor, idx: Tensor | None = None) -> Tensor:
    """Zeros of `shape` with `v` added at `key` (static, `idx` in its slots; see `plan`)."""
    return apply(index_put_p, 0, v, idx, key=key, accumulate=True, shape=tuple(shape))


def _index_put_args(x: Tensor, indices, values, accumulate: bool):
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    items = tuple(indices)
    for j, i in enumerate(items):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {j} in argument 1, but got "
                            f"{type(i).__name__}")
    masks = [i._dtype in (dt.uint8, dt.bool_) for i in items]
    given = sum(i.ndim if m else 1 for i, m in zip(items, masks))
    if given > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {given})")
    for i in items:
        if i._dtype not in (dt.int64, dt.int32, dt.uint8, dt.bool_):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if not any(masks) and any(x._shape[j] == 0 and i.numel() for j, i in enumerate(items)):
        raise IndexError("index is out of bounds for dimension with size 0")
    if isinstance(values, Tensor) and values._dtype is not x._dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{tn(x._dtype)} for the destination and {tn(values._dtype)} for the source.")
    values = value_tensor(values, x)
    if not accumulate:
        refuse_byte_mask_fill(x, items, values.numel(), tensor_ints=False)
    if x.ndim:  # (the indices are tensors: no view is taken)
        view, adv = plan(x, items, tensor_ints=False)
        key, idx = adv if adv is not None else (None, None)
        if key is None:  # no index: every element
            key, target = (Ellipsis,), x._shape
        elif x.device.type == "meta":
            return values, key, idx
        elif x.numel() == 0 and idx._dtype is not dt.bool_:
            target = key_shape(x._shape, key, idx._shape)
        else:
            target = probe(x._shape)[np_key(key, idx._array())].shape
    else:  # a 0-d bool mask would take a view: as one index array per dim of x instead
        target, key, idx = flat_key(x, items)
    check_value_shape(target, values._shape, True, strip_ones=False)
    while values.ndim > len(target):
        values = values.squeeze(0)
    if x.ndim == 0:
        values = values.expand(target).reshape(-1)
    return values, key, idx


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `values` put at the advanced index `indices` (summed if
    `accumulate`)."""
    values, key, idx = _index_put_args(input, indices, values, accumulate)
    return apply(index_put_p, input, values, idx, key=key, accumulate=bool(accumulate))


def index_put_(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    values, key, idx = _index_put_args(input, indices, values, accumulate)
    return apply_(index_put_p, input, values, idx, key=key, accumulate=bool(accumulate))


# --- gather and its transpose, scatter (other ops' VJPs use these too) ---------------------

def _gather_kernel(a, idx, *, dim):
    if a.ndim == 0:  # every index is 0 (checked): the one value, in the index's shape
        return np.broadcast_to(a, idx.shape).copy()
    if idx.ndim == 0:  # (a 0-d index into a 1-d input: one element, kept 0-d)
        return _gather_kernel(a, idx.reshape(1), dim=dim).reshape(())
    if idx.shape != a.shape:
        # take_along_axis wants equal sizes off `dim`; gather reads only the first ones.
        a = a[tuple(slice(0, n) if i != dim else slice(None) for i, n in enumerate(idx.shape))]
    # (row-major whatever the index's layout, as PyTorch's gather allocates its result)
    return np.ascontiguousarray(np.take_along_axis(a, idx, axis=dim))


gather_p = Primitive("gather", _gather_kernel,
                     lambda a, idx, *, dim: (idx._shape, a._dtype))


def _gather(a: Tensor, idx: Tensor, dim: int) -> Tensor:
    return apply(gather_p, a, idx, dim=dim)


# (the rule reads the input's shape only, but PyTorch's gather_backward names the input, so
# its node keeps it: an in-place op on it refuses backward there and here)
defvjp(gather_p, lambda g, out, a, idx, *, dim, in_shape: _scatter_add_zeros(g, idx, in_shape,
                                                                              dim),
       None, reads=((0, 1), ()), in_shape=True)
linear_in(gather_p, 0)


def _to_1d(t, d):
    """A 0-d logical operand of a gather / scatter as 1-d, as the kernels read it."""
    if not isinstance(t, Tensor):
        return t
    return t.reshape(-1) if d is None else front(t, d).reshape(t._shape[d], -1)


def _along_batch(args, dims, n):
    """gather / scatter operands (first `n` are tensors) with the batch at 0 in each one
    (expanded where unbatched), for the op along dim + 1."""
    b = batch_size(args, dims)
    out = []
    for a, d in zip(args, dims):
        if not isinstance(a, Tensor) or len(out) >= n:
            out.append(front(a, d) if isinstance(a, Tensor) and d is not None else a)
        elif d is None:
            out.append(a.unsqueeze(0).expand((b,) + a._shape))
        else:
            out.append(front(a, d))
    return out


def _gather_batch(args, dims, *, dim):
    a, idx = args
    if a.ndim - (dims[0] is not None) == 0:  # a 0-d input: every index is 0
        scalar = idx.ndim - (dims[1] is not None) == 0
        a1, i1 = _to_1d(a, dims[0]), _to_1d(idx, dims[1])
        a1, i1 = _along_batch((a1, i1), (0 if dims[0] is not None else None,
                                        0 if dims[1] is not None else None), 2)
        out = bind(gather_p, a1, i1, dim=1)
        return (out.reshape(-1) if scalar else out), 0
    a, idx = _along_batch(args, dims, 2)
    return bind(gather_p, a, idx, dim=dim + 1), 0


defbatch(gather_p, _gather_batch)


def scatter_grid(idx: np.ndarray, dim: int) -> tuple:
    """The NumPy key that addresses `out[..., idx[i, j, ...], ...]` along `dim`."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[dim] = idx
    return tuple(grids)


def scatter_target(a, idx, dim):
    """(target array, key, index shape) for writing along `dim`; 0-d made 1-d."""
    if a.ndim == 0:
        return a.reshape(1), (idx.reshape(-1),), idx.reshape(-1).shape
    if idx.ndim == 0:  # (a 0-d index into a 1-d target: PyTorch reads it as one element)
        idx = idx.reshape(1)
    return a, scatter_grid(idx, dim), idx.shape


def src_part(src, shape):
    """The leading `shape` block of `src` (a scatter reads only that much), or the number."""
    if np.ndim(src) == 0:
        return src
    src = src.reshape(-1) if src.ndim == 0 else src
    if src.shape != shape:
        src = src[tuple(slice(0, n) for n in shape)]
    return src


def _scatter_kernel(a, idx, src, *, dim, shape=None):
    out = np.zeros(shape, dtype=src.dtype) if shape is not None else a.copy()
    flat, key, ishape = scatter_target(out, idx, dim)
    flat[key] = src_part(src, ishape)
    return out


def scatter_accumulator(a: np.ndarray) -> np.ndarray:
    """A copy of `a` to add into: float16 / bfloat16 widened to float32.

    NOTE: PyTorch's CPU scatter kernels (scatter_add, scatter_reduce's sum / prod / mean,
    scatter_'s add / multiply) accumulate reduced floats in float32 and round once at the
    end; index_add, index_reduce and index_put(accumulate=True) round after every add."""
    return a.astype(np.float32) if reduced_float(a.dtype) else a.copy()


def _scatter_add_kernel(a, idx, src, *, dim, shape=None):
    out = np.zeros(shape, dtype=src.dtype) if shape is not None else a
    acc = scatter_accumulator(out)
    flat, key, ishape = scatter_target(acc, idx, dim)
    np.add.at(flat, key, src_part(src, ishape))
    return acc.astype(out.dtype, copy=False)


def _scatter_meta(x, idx, src, *, dim, shape=None, **params):
    return (x._shape, x._dtype) if shape is None else (tuple(shape), src._dtype)


# src combined into x at idx along dim: one primitive whose member is the combining
# function (its kernel, node name and derivative): `scatter` writes a tensor, `scatter_value`
# a number (PyTorch's scatter.value, ScatterBackward1, no src gradient), `scatter_add` adds,
# and `scatter_reduce` (index_ops) reduces with sum / prod / mean / amax / amin. With `shape`,
# into zeros of that shape instead of x (`x` is the number 0): the transpose of gather.
scatter_p = Family("scatter")
scatter_fn = Member(scatter_p, "scatter", _scatter_kernel, _scatter_meta)
scatter_value_fn = Member(scatter_p, "scatter_value", _scatter_kernel, _scatter_meta,
                          grad_name="ScatterBackward1")
scatter_add_fn = Member(scatter_p, "scatter_add", _scatter_add_kernel, _scatter_meta)
native.register(scatter_add_fn, "scatter", scatter_add_native)


def _gather_into(g: Tensor, dim: int, idx: Tensor, shape: tuple) -> Tensor:
    """g gathered at `idx`, zero-padded up to `shape` (the source's) when that is larger."""
    picked = _gather(g, idx, wrap_dim(dim, max(g.ndim, 1)))
    if picked._shape == shape or len(shape) == 0:
        return picked.reshape(shape)
    key = tuple(slice(0, n) for n in idx._shape)
    return put_into_zeros(shape, key, picked)


def scatter_zeros_at(g: Tensor, idx: Tensor, dim: int) -> Tensor:
    """g with the positions a scatter along `dim` wrote set to zero (its gradient for x)."""
    return apply(scatter_p, g, idx, 0, fn=scatter_value_fn, dim=dim)


def _scatter_grad_x(g, out, x, idx, src, *, dim, shape=None):
    return scatter_zeros_at(g, idx, dim)


def _scatter_grad_src(g, out, x, idx, src, *, dim, shape=None, in_shape):
    return _gather_into(g, dim, idx, in_shape)


def _scatter_grad_x_src(g, out, x, idx, src, *, dim, shape=None, in_shape):
    return scatter_zeros_at(g, idx, dim)


# The source's rule reads its shape only (in_shape=2), not its values: as in PyTorch, whose
# node keeps only the index, an in-place op on the source after the scatter trains.
defvjp(scatter_fn, _scatter_grad_x_src, None, _scatter_grad_src, reads=((1,), (), (1,)),
       in_shape=2)
defvjp(scatter_value_fn, _scatter_grad_x, None, None, reads=((1,), (), ()))
defvjp(scatter_add_fn, lambda g, out, x, idx, src, *, dim, shape=None, in_shape: g, None,
       _scatter_grad_src, reads=((), (), (1,)), in_shape=2)
for _fn in (scatter_fn, scatter_value_fn, scatter_add_fn):
    linear_in(_fn, 0, 2)


def _scatter_batch(args, dims, *, dim, shape=None, **params):
    """Every operand with the batch in front, the op along dim + 1 (a 0-d target made 1-d,
    as the kernels read it); `shape` (a scatter into zeros) gets the batch in front too."""
    x, idx, src = args
    b = batch_size(args, dims)
    lnd = len(shape) if shape is not None else x.ndim - (dims[0] is not None)
    if lnd == 0:  # a 0-d target: as the kernel, 1-d, then back to 0-d
        args = [_to_1d(a, d) for a, d in zip(args, dims)]
        dims = [None if d is None else 0 for d in dims]
        if shape is not None:
            shape = (1,)
    x, idx, src = _along_batch(args, dims, 3)
    if shape is not None:
        x, params["shape"] = 0, (b,) + tuple(shape)
    out = bind(scatter_p, x, idx, src, dim=(dim if lnd else 0) + 1, **params)
    return (out if lnd else out.reshape(b)), 0


defbatch(scatter_p, _scatter_batch)


def _scatter_add_zeros(g, idx, shape, dim):
    return apply(scatter_p, 0, idx, g, fn=scatter_add_fn, dim=dim, shape=tuple(shape))


def scatter_into_zeros(shape, dim: int, idx: Tensor, src: Tensor) -> Tensor:
    """Zeros of `shape` with `src` put at `idx` along `dim` (indices unique per slice)."""
    return apply(scatter_p, 0, idx, src, fn=scatter_fn, dim=dim, shape=tuple(shape))


def check_gather_index(name: str, input: Tensor, dim: int, index: Tensor, src=None) -> None:
    """PyTorch's checks on a gather / scatter index, in its order: dtype, rank and sizes
    (none of them for an empty index), then bounds. Every scatter variant's messages say
    'scatter'."""
    need_tensor(index, name, "index", 3)
    gathering = name == "gather"
    if index.numel() == 0:
        return
    if index._dtype is not dt.int64 and index._dtype is not dt.int32:
        raise RuntimeError(f"{'gather' if gathering else 'scatter'}(): Expected dtype "
                           "int32/int64 for index")
    if isinstance(src, Tensor) and src._dtype is not input._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    nd = max(input.ndim, 1)
    if max(index.ndim, 1) != nd:
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as "
            f"{'input' if gathering else 'self'} tensor")
    ishape = index._shape or (1,)
    sshape = input._shape or (1,)
    if gathering:
        for i, (a, b) in enumerate(zip(ishape, sshape)):
            if i != dim and a > b:
                raise RuntimeError(
                    f"Size does not match at dimension {i} expected index {list(index._shape)}"
                    f" to be no larger than self {list(input._shape)} apart from dimension "
                    f"{dim}")
    else:
        if src is not None and max(src.ndim, 1) != nd:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        wrong = any(i != dim and a > b for i, (a, b) in enumerate(zip(ishape, sshape))) or \
            src is not None and any(a > b for a, b in zip(ishape, src._shape or (1,)))
        if wrong:
            also = "" if src is None else \
                f" and to be no larger size than src {list(src._shape)}"
            raise RuntimeError(f"Expected index {list(index._shape)} to be no larger than self "
                               f"{list(input._shape)} apart from dimension {dim}{also}")
    if index.device.type == "cpu" and has_values(index):
        arr = index._array()
        n = sshape[dim]
        if arr.min() < 0 or arr.max() >= n:
            bad = arr[(arr >= n) | (arr < 0)].flat[0]
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


@method_aware
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0): values picked along `dim`."""
    if dim.__class__ is not int:
        dim = need_int(dim, "gather", "dim", 2)
    d = wrap_dim(dim, max(input.ndim, 1))
    check_gather_index("gather", input, d, index)
    r = _gather(input, index, d)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out=None) -> Tensor:
    """Values along `dim` at `indices` (broadcast against `input` off `dim`), as in NumPy."""
    if dim is None:
        return write_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    if indices._dtype is not dt.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{type_name(indices._dtype)}")
    d = wrap_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    shape_i = list(indices._shape)
    shape_x = list(input._shape)
    shape_i[d] = shape_x[d] = 1
    common = broadcast_shapes(shape_x, shape_i)
    x_shape = common[:d] + (input._shape[d],) + common[d + 1:]
    i_shape = common[:d] + (indices._shape[d],) + common[d + 1:]
    return write_out(gather(input.expand(x_shape), d, indices.expand(i_shape)), out)


# (nonzero's home is nonzero.py: imported here for the method table and the namespace)
from .nonzero import _nonzero_static_method, argwhere, nonzero, nonzero_static  # noqa: E402

TENSOR_METHODS = {
    "__getitem__": getitem, "gather": gather,
    "take_along_dim": take_along_dim, "nonzero": nonzero, "argwhere": argwhere,
    "nonzero_static": _nonzero_static_method,
    "index_put": index_put, "index_put_": index_put_,
}

__all__ = ["gather", "take_along_dim", "nonzero", "nonzero_static", "argwhere", "index_put",
           "index_put_"]
