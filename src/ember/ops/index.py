"""Indexing: `x[key]`, `x[key] = value`, `index_put`, `gather`, `take_along_dim`, `nonzero`.

A key is applied as PyTorch applies it: ints, slices, `None`, `...` and bool
scalars first, as views; what is left (integer tensors / lists and bool masks,
one index array per dim) is an advanced index, broadcast together, whose result
dims land where the first indexed dim was when the indexed dims are adjacent,
and in front otherwise (NumPy's rule, applied to the view). The gather is the
`index` primitive; its VJP scatter-adds back, so repeated indices accumulate.

Assignment writes through NumPy into the view when no graph is recorded, and
otherwise through the `index_put` primitive (out of place, then copied in) on `x`
itself: a basic key is already NumPy's; any other is rewritten as one index array
per dim of `x`, so that no view is involved.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import data_dependent
from .._core.dispatch import run_quiet
from .._tensor import Tensor
from .._view import broadcast_shapes, non_overlapping, wrap_dim
from . import movement
from ._common import same_meta, write_out
from ._scalar_value import setitem_value
from .registry import (
    Primitive,
    apply,
    apply_,
    bind,
    bump_version,
    check_inplace,
    defvjp,
    nondifferentiable,
    overlapping,
    refuse_overlap,
)

_grad_state = grad_mode.state
_BAD_KEY = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
            "are valid indices (got {})")


def _index_error(i, dim: int, size: int) -> IndexError:
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


# --- parsing a key ------------------------------------------------------------------------

def _seq_as_tuple(key: list) -> bool:
    """PyTorch (like old NumPy) reads a short list holding slices, tensors or lists as a tuple."""
    if len(key) >= 32:
        return False
    return any(isinstance(k, (Tensor, np.ndarray, list, tuple, range, slice)) or k is None
               or k is Ellipsis for k in key)


def _items(key) -> tuple:
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and _seq_as_tuple(key):
        warnings.warn(
            "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
            "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this "
            "will be interpreted as tensor index, x[torch.tensor(seq)], which will result either "
            "in an error or a different result", UserWarning, stacklevel=4)
        return tuple(key)
    return (key,)


def _is_int(k) -> bool:
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        return True
    if isinstance(k, (Tensor, np.ndarray)) and k.ndim == 0:
        d = k.dtype
        if isinstance(k, Tensor):
            return d._kind == 1 and d is not dt.uint8
        return d.kind in "iu" and d != np.uint8  # (a uint8 array is a mask, as in PyTorch)
    return False


def _index_array(k) -> np.ndarray:
    """An advanced index as an int64 or bool array (meta tensors: zeros of their shape)."""
    if isinstance(k, Tensor):
        d = k._dtype
        if d is not dt.bool_ and d is not dt.uint8 and d._kind != 1:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if k.device.type == "meta":
            if d is dt.bool_ or d is dt.uint8:
                raise NotImplementedError(
                    "indexing with a bool mask needs the mask's values: it cannot run on 'meta'")
            return np.broadcast_to(np.zeros((), np.int64), k._shape)
        a = k._array()
        return a.astype(bool) if d is dt.uint8 else (a if d is dt.bool_ else a.astype(np.int64))
    if isinstance(k, np.ndarray):
        # NOTE: PyTorch reads a NumPy array as it reads a list: bool and uint8 arrays are
        # masks, any other number becomes int64 (floats truncate, as in x[[0.5, 1.0]]).
        if k.dtype == np.bool_ or k.dtype == np.uint8:
            return k.astype(bool, copy=False)
        if k.dtype.kind == "c":
            k = k.real
        if k.dtype.kind not in "iuf":
            raise TypeError(f"can't convert np.ndarray of type numpy.{k.dtype.type.__name__}: "
                            "only numbers and bools index a tensor")
        return k.astype(np.int64)
    try:
        arr = np.asarray(k)
    except ValueError:
        raise IndexError("too many indices: index lists must be rectangular") from None
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iuf":
        raise TypeError("new(): invalid data type 'str'")
    return arr.astype(np.int64)


def _specified_dims(items) -> int:
    n = 0
    for k in items:
        if k.__class__ is int or k.__class__ is slice:
            n += 1
        elif k is None or k is Ellipsis or isinstance(k, bool):
            continue
        elif isinstance(k, Tensor) and k._dtype in (dt.bool_, dt.uint8):
            n += k.ndim
        elif isinstance(k, np.ndarray) and k.dtype in (np.bool_, np.uint8):
            n += k.ndim
        elif isinstance(k, list):
            a = np.asarray(k)
            n += a.ndim if a.dtype == np.bool_ else 1
        else:
            n += 1
    return n


def plan(x: Tensor, key):
    """Apply the basic part of `key` to `x` as views; return (view, advanced key or None).

    The advanced key is a tuple in NumPy's terms on the view: `slice(None)` or an int64
    array per dim; a bool mask stays a mask when it is the only advanced index (NumPy then
    reads it as PyTorch does, and faster), else it becomes its nonzero positions.
    """
    items = _items(key)
    specified = _specified_dims(items)
    if specified > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    view, dim, idx = x, 0, {}
    for pos, k in enumerate(items):
        if k.__class__ is slice:
            view = _slice(view, dim, k)
            dim += 1
        elif k is None:
            view = movement.unsqueeze(view, dim)
            dim += 1
        elif k is Ellipsis:
            dim += x.ndim - specified
        elif isinstance(k, bool):
            view = movement.unsqueeze(view, dim)
            idx[dim] = np.zeros(1 if k else 0, np.int64)
            dim += 1
        elif _is_int(k):
            i = int(k)
            n = view._shape[dim]
            if i < -n or i >= n:
                raise _index_error(i, pos, n)  # (PyTorch names the key's item, not the dim)
            view = bind(movement.view_p, view, fn=movement.select_p, dim=dim, index=i % n)
        elif isinstance(k, (Tensor, np.ndarray, list, tuple, range)):
            arr = _index_array(k)
            if arr.dtype == np.bool_:
                if arr.ndim == 0:
                    view = movement.unsqueeze(view, dim)
                    arr = np.zeros(1 if arr else 0, np.int64)
                else:
                    _check_mask(view, arr, dim)
                idx[dim] = arr
                dim += max(arr.ndim, 1)
                continue
            n = view._shape[dim]
            on_meta = isinstance(k, Tensor) and k.device.type == "meta"
            if arr.size and not on_meta and (arr.max() >= n or arr.min() < -n):
                raise _index_error(int(arr[(arr >= n) | (arr < -n)].flat[0]), dim, n)
            idx[dim] = arr
            dim += 1
        else:
            name = type(k).__name__
            if isinstance(k, str):
                raise TypeError(f"new(): invalid data type '{name}'")
            if isinstance(k, np.generic):
                name = "numpy." + name
            raise IndexError(_BAD_KEY.format(name))
    if not idx:
        return view, None
    if len(idx) == 1:
        (d, arr), = idx.items()
        return view, (slice(None),) * d + (arr,)
    for d, arr in list(idx.items()):
        if arr.dtype == np.bool_:
            idx.update((d + j, nz) for j, nz in enumerate(np.nonzero(arr)))
    shapes = [a.shape for a in idx.values()]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes " + ", ".join(str(list(s)) for s in shapes)) from None
    return view, tuple(idx.get(d, slice(None)) for d in range(max(idx) + 1))


def _slice(view: Tensor, dim: int, k: slice) -> Tensor:
    step = 1 if k.step is None else int(k.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    if k.start is None and k.stop is None and step == 1:
        return view
    return movement.slice_dim(view, dim, k.start, k.stop, step)


def _check_mask(view: Tensor, mask: np.ndarray, dim: int) -> None:
    for j in range(mask.ndim):
        if mask.shape[j] != view._shape[dim + j]:
            raise IndexError(
                f"The shape of the mask [{', '.join(map(str, mask.shape))}] at index {j} does not "
                f"match the shape of the indexed tensor [{', '.join(map(str, view._shape))}] at "
                f"index {dim + j}"
            )


# --- the advanced gather and its scatter-add transpose ------------------------------------

def _unique_key(key) -> bool:
    """True when `key` reaches each position at most once (no integer index arrays)."""
    return not any(isinstance(k, np.ndarray) and k.dtype != np.bool_ for k in key)


def _take_axis(key) -> int | None:
    """The axis when `key` is slices then one 1-D array (np.take's faster case), else None."""
    if not key:
        return None
    last = key[-1]
    if isinstance(last, np.ndarray) and last.ndim == 1 and last.dtype != np.bool_ and all(
            isinstance(k, slice) for k in key[:-1]):
        return len(key) - 1
    return None


def _index_kernel(a, *, key):
    axis = _take_axis(key)
    if axis is not None:
        return np.take(a, key[-1], axis=axis)
    if not any(isinstance(k, np.ndarray) for k in key):
        return a[key].copy()  # a basic key makes a view: copy it
    out = a[key]  # a fresh array, but NumPy may lay it out transposed
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


def _probe(shape) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))


def _index_meta(x, *, key):
    return _probe(x._shape)[key].shape, x._dtype


index_p = Primitive("index", _index_kernel, _index_meta)


defvjp(index_p, lambda g, out, x, *, key, in_shape: put_into_zeros(in_shape, key, g),
       reads=((),), in_shape=True)


def index_by(x: Tensor, key: tuple) -> Tensor:
    """x[key] for a key already in NumPy's terms (see `plan`): the `index` primitive."""
    return apply(index_p, x, key=key)


def getitem(x: Tensor, key) -> Tensor:
    if x.ndim == 0 and _is_int(key):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    view, adv = plan(x, key)
    if adv is None:
        if view is x:
            return movement.alias(x)
        return view
    return index_by(view, adv)


# --- index_put: the primitive behind assignment -------------------------------------------

def _index_put_kernel(a, v, *, key, accumulate, shape=None):
    if shape is not None:  # into zeros of `shape` (`a` is the number 0): the VJP of x[key]
        out = np.zeros(shape, dtype=v.dtype)
    else:
        out = a.copy(order="K")  # PyTorch keeps the input's layout here
    if accumulate and _unique_key(key):
        out[key] += v  # each position is picked once: nothing to accumulate
    elif accumulate:
        axis = _take_axis(key)
        np.add.at(out, key[-1] if axis == 0 and out.ndim else key, v)
    else:
        out[key] = v
    return out


def _index_put_meta(x, v, *, key, accumulate, shape=None):
    return same_meta(x) if shape is None else (tuple(shape), v._dtype)


# x with v written (or added) at key; with `shape`, zeros of that shape instead of x (the
# gradient of indexing, which PyTorch computes with its _index_put_impl_)
index_put_p = Primitive("index_put", _index_put_kernel, _index_put_meta,
                        grad_name=lambda args, params: (
                            "IndexPutBackward0" if params.get("shape") is None
                            else "IndexPutImplBackward0"))


def _index_put_grad_x(g, out, x, v, *, key, accumulate, shape=None):
    if accumulate:
        return g
    return apply(index_put_p, g, 0, key=key, accumulate=False)


defvjp(index_put_p, _index_put_grad_x,
       lambda g, out, x, v, *, key, accumulate, shape=None: index_by(g, key), reads=((), ()))


def put_into_zeros(shape, key: tuple, v: Tensor) -> Tensor:
    """Zeros of `shape` with `v` added at `key` (a key in NumPy's terms, see `plan`)."""
    return apply(index_put_p, 0, v, key=key, accumulate=True, shape=tuple(shape))


def _flat_key(x: Tensor, key):
    """`key` on `x` as one index array per dim of `x` (its elements in x[key]'s order).

    Returns (target shape, NumPy key); x[numpy key] has the target's elements,
    laid out as the target shape (or flattened, for a 0-d `x`).
    """
    from .creation import arange

    with grad_mode.no_grad():
        pos = arange(x.numel(), dtype=dt.int64).reshape(x._shape)
        view, adv = plan(pos, key)
        flat = view._array() if adv is None else view._array()[adv]
    if x.ndim == 0:  # a 0-d bool mask: x[mask] is x as shape (1,), or empty
        return flat.shape, (np.array(flat.size > 0),)
    return flat.shape, np.unravel_index(flat, x._shape)


def _value_tensor(value, x: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        if value.device != x.device and value.ndim == 0:
            value = value.to(x.device)
        return value if value._dtype is x._dtype else value.to(x._dtype)
    from .creation import scalar_tensor

    return scalar_tensor(value, dtype=x._dtype, device=x.device)


def _check_value_shape(target, vshape, advanced: bool, dtype=dt.float32) -> None:
    vshape = tuple(vshape)
    while len(vshape) > len(target) and vshape[0] == 1:
        vshape = vshape[1:]  # PyTorch drops a value's leading size-1 dims
    try:
        ok = broadcast_shapes(target, vshape) == tuple(target)
    except RuntimeError:
        ok = False
    if ok:
        return
    if advanced:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}")
    if len(vshape) > len(target):
        raise RuntimeError(f"expand(torch.{_tn(dtype)}Tensor{{{list(vshape)}}}, "
                           f"size={list(target)}): "
                           f"the number of sizes provided ({len(target)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(vshape)})")
    for i in range(1, len(vshape) + 1):
        if vshape[-i] not in (1, target[-i]):
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                f"({vshape[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(vshape)}")


class _TensorSlot:
    """Where a tensor stood in a `setitem` key: the tensor itself is an input of the op."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<tensor input>"


TENSOR_SLOT = _TensorSlot()


def setitem(x: Tensor, key, value) -> None:
    """`x[key] = value`, bound as the primitive `setitem` (its eager impl writes through
    NumPy's own indexing when no graph is needed, else records `index_put`).

    The index tensors in `key` are inputs of the op, after `x` and `value`; the `key`
    param keeps the static rest (ints, slices, None, `...`), a `TENSOR_SLOT` where each
    tensor stood, so an interpreter sees the index data as data.
    """
    if key.__class__ is tuple:
        for k in key:  # (a loop, not any(): this is every assignment's path)
            if isinstance(k, Tensor):
                bind(setitem_p, x, value, *[k for k in key if isinstance(k, Tensor)],
                     key=tuple(TENSOR_SLOT if isinstance(k, Tensor) else k for k in key))
                return
    elif isinstance(key, Tensor):
        bind(setitem_p, x, value, key, key=TENSOR_SLOT)
        return
    bind(setitem_p, x, value, key=key)


def _full_key(key, tensors: tuple):
    """The key `setitem` was given, from its static structure and its tensor inputs."""
    if key is TENSOR_SLOT:
        return tensors[0]
    rest = iter(tensors)
    return tuple(next(rest) if k is TENSOR_SLOT else k for k in key)


def _eval_setitem(prim, args: tuple, params: dict) -> None:
    """Eager evaluation of `x[key] = value`."""
    x, value = args[0], args[1]
    key = params["key"]
    if len(args) > 2:
        key = _full_key(key, args[2:])
    vcls = value.__class__
    if vcls is not float and vcls is not int and not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"can't assign a {_type_name(value)} to a torch.{_tn(x._dtype)}Tensor")
    if not isinstance(value, Tensor):
        value = setitem_value(value, x._dtype)  # refused where it overflows x's dtype
    if key is False:
        return  # PyTorch writes nothing and records nothing for `x[False] = v`
    needs_graph = _grad_state.enabled and (
        x._requires_grad or (isinstance(value, Tensor) and value._requires_grad) or (
            x._base is not None and x._base._requires_grad))
    on_cpu = x._storage is None or x._storage.device.type == "cpu"
    if on_cpu and not needs_graph:
        dst = _basic_target(x, key, value)
        if dst is not None:
            check_inplace(x, aliased_ok=True)
            if x._base is not None and not non_overlapping(
                    dst.shape, tuple(s // dst.itemsize for s in dst.strides)):
                refuse_overlap()
            _write(x, dst, None, value)
            return
    with grad_mode.no_grad():
        view, adv = plan(x, key)
    if adv is not None and isinstance(value, Tensor) and value._dtype is not x._dtype and not (
            isinstance(key, Tensor) and key._dtype is dt.bool_ and value.numel() == 1):
        # PyTorch casts only for a copy into a view, or a one-value fill through one mask.
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_tn(x._dtype)} for the destination and {_tn(value._dtype)} for the source.")
    # As PyTorch: a copy into a basic view refuses a destination whose elements share memory;
    # an advanced-index write (index_put_) writes through it.
    if needs_graph and adv is None and x._grad_fn is None and x._requires_grad and (
            view._shape, view.stride(), view._offset) != (x._shape, x.stride(), x._offset):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")  # PyTorch writes through x[key], a view
    check_inplace(x, aliased_ok=on_cpu and not needs_graph)
    if on_cpu and not needs_graph:
        if adv is None and overlapping(view):
            refuse_overlap()
        if isinstance(value, Tensor):
            _check_overlap(view, value)
        _write(x, view._array(), adv, value)
        return
    if x.device.type == "meta":
        target = view._shape if adv is None else _probe(view._shape)[adv].shape
        _check_value_shape(target, np.shape(value) if not isinstance(value, Tensor)
                           else value._shape, adv is not None, x._dtype)
        return
    value = _value_tensor(value, x)
    npkey = None if adv is not None else _basic_key(key)
    if npkey is not None:
        target = view._shape  # ints, slices, None and one `...` mean the same in NumPy
    else:
        target, npkey = _flat_key(x, key)
    _check_value_shape(target, value._shape, adv is not None, value._dtype)
    while value.ndim > len(target):
        value = value.squeeze(0)
    if x.ndim == 0 and adv is not None:
        value = value.expand(target).reshape(-1)
    apply_(index_put_p, x, value, key=npkey, accumulate=False)


# `x[key] = value`: no outputs (on `meta` the impl checks shapes); with a graph it records
# index_put's node, so it has no derivative of its own
setitem_p = Primitive("setitem", None, lambda x, value, *index, key: None, impl=_eval_setitem)
nondifferentiable(setitem_p)


def _basic_key(key) -> tuple | None:
    """A key of ints, slices, None and at most one `...` in NumPy's terms, else None."""
    out, ellipsis = [], False
    for k in _items(key):
        if k is Ellipsis:
            if ellipsis:
                return None
            ellipsis = True
        elif _is_int(k):
            k = int(k)
        elif not (k is None or isinstance(k, slice)):
            return None
        out.append(k)
    return tuple(out)


def _check_overlap(dst: Tensor, src: Tensor) -> None:
    """PyTorch refuses to copy between contiguous tensors whose memory partly overlaps."""
    if dst._storage is None or dst._storage is not src._storage:
        return
    a, b = (dst._offset, dst.numel()), (src._offset, src.numel())
    if a != b and a[0] < b[0] + b[1] and b[0] < a[0] + a[1] and dst.is_contiguous() \
            and src.is_contiguous():
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")


def _basic_target(x: Tensor, key, value) -> np.ndarray | None:
    """x[key] as a NumPy view of x's memory when `key` holds only ints, forward slices, None
    and one `...` (NumPy reads those as PyTorch does) and `value` is not a view of x; None
    otherwise, and for an index out of range (the general path words the error)."""
    if isinstance(value, Tensor) and value._storage is not None \
            and value._storage is x._storage:
        return None
    npkey = _basic_key(key)
    if npkey is None or not all(k.step is None or k.step > 0 for k in npkey
                                if k.__class__ is slice):
        return None
    if Ellipsis not in npkey:
        npkey += (Ellipsis,)  # (so that a full set of ints gives a 0-d view, not a scalar)
    try:
        dst = x._array()[npkey]
    except IndexError:
        return None
    return dst if dst.__class__ is np.ndarray else None


def _write(x: Tensor, dst: np.ndarray, adv, value) -> None:
    """Write `value` straight into x's memory at `dst` (a view of it), through the advanced
    key `adv` if any; no graph recorded."""
    if isinstance(value, Tensor):
        src = value._array()
        if src.dtype.kind == "c" and dst.dtype.kind != "c":
            src = src.real
        if src.dtype != dst.dtype:
            src = src.astype(dst.dtype)
    else:
        src = value
    if isinstance(src, np.ndarray) and src.ndim:
        target = dst.shape if adv is None else _probe(dst.shape)[adv].shape
        _check_value_shape(target, src.shape, adv is not None, value._dtype)
        while np.ndim(src) > len(target):
            src = src[0]
    if dst.dtype.kind in "iub":  # (only a cast into integers can warn: NaN, inf, overflow)
        run_quiet(_assign, dst, adv, src)
    else:
        _assign(dst, adv, src)
    bump_version(x)


def _assign(dst: np.ndarray, adv, src) -> None:
    if adv is None:
        np.copyto(dst, src, casting="unsafe")
    else:
        dst[adv] = src


def _index_put_args(x: Tensor, indices, values):
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    items = tuple(indices)
    for j, i in enumerate(items):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {j} in argument 1, but got "
                            f"{type(i).__name__}")
        if i._dtype._kind not in (0, 1):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if isinstance(values, Tensor) and values._dtype is not x._dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_tn(x._dtype)} for the destination and {_tn(values._dtype)} for the source.")
    values = _value_tensor(values, x)
    if x.device.type == "meta":
        view, adv = plan(x, items)
        return values, adv
    target, npkey = _flat_key(x, items)
    _check_value_shape(target, values._shape, True)
    while values.ndim > len(target):
        values = values.squeeze(0)
    if x.ndim == 0:
        values = values.expand(target).reshape(-1)
    return values, npkey


def _type_name(v) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _tn(d: dt.dtype) -> str:
    from ._common import type_name

    return type_name(d)


def index_put(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    """A copy of `input` with `values` put at the advanced index `indices` (summed if
    `accumulate`)."""
    values, key = _index_put_args(input, indices, values)
    return apply(index_put_p, input, values, key=key, accumulate=bool(accumulate))


def index_put_(input: Tensor, indices, values, accumulate: bool = False) -> Tensor:
    values, key = _index_put_args(input, indices, values)
    return apply_(index_put_p, input, values, key=key, accumulate=bool(accumulate))


# --- gather and its scatter transposes (other ops' VJPs use these too) --------------------

def _scatter_zeros_kernel(src, idx, *, shape, dim, accumulate=False):
    if accumulate:
        return _scatter_add_kernel(src, idx, shape=shape, dim=dim)
    buf = np.zeros(shape, dtype=src.dtype)
    np.put_along_axis(buf, idx, src, axis=dim)
    return buf


# `src` put (or with `accumulate`, added) at `idx` along `dim` into zeros of `shape`: the
# transpose of gather, which other ops' VJPs use
scatter_zeros_p = Primitive("scatter_zeros", _scatter_zeros_kernel,
                            lambda src, idx, *, shape, dim, accumulate=False: (
                                tuple(shape), src._dtype),
                            grad_name=lambda args, params: (
                                "ScatterAddBackward0" if params.get("accumulate")
                                else "ScatterBackward0"))


def _gather_kernel(a, idx, *, dim):
    if a.ndim == 0:  # every index is 0 (checked): the one value, in the index's shape
        return np.broadcast_to(a, idx.shape).copy()
    if idx.shape != a.shape:
        # take_along_axis wants equal sizes off `dim`; gather reads only the first ones.
        a = a[tuple(slice(0, n) if i != dim else slice(None) for i, n in enumerate(idx.shape))]
    return np.take_along_axis(a, idx, axis=dim)


gather_p = Primitive("gather", _gather_kernel,
                     lambda a, idx, *, dim: (idx._shape, a._dtype))


def _gather(a: Tensor, idx: Tensor, dim: int) -> Tensor:
    return apply(gather_p, a, idx, dim=dim)


defvjp(scatter_zeros_p, lambda g, out, src, idx, *, shape, dim, accumulate=False:
       _gather(g, idx, dim), None, reads=((1,), ()))
defvjp(gather_p, lambda g, out, a, idx, *, dim, in_shape: _scatter_add_zeros(g, idx, in_shape,
                                                                              dim),
       None, reads=((1,), ()), in_shape=True)


def scatter_grid(idx: np.ndarray, dim: int) -> tuple:
    """The NumPy key that addresses `out[..., idx[i, j, ...], ...]` along `dim`."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[dim] = idx
    return tuple(grids)


def _scatter_add_kernel(src, idx, *, shape, dim):
    buf = np.zeros(shape, dtype=src.dtype)
    if len(shape) == 0:
        np.add.at(buf.reshape(1), idx.reshape(-1), src.reshape(-1))
        return buf
    if src.shape != idx.shape:
        src = src[tuple(slice(0, n) for n in idx.shape)]
    np.add.at(buf, scatter_grid(idx, dim), src)
    return buf


def _scatter_add_zeros(g, idx, shape, dim):
    return apply(scatter_zeros_p, g, idx, shape=tuple(shape), dim=dim, accumulate=True)


def scatter_into_zeros(shape, dim: int, idx: Tensor, src: Tensor) -> Tensor:
    """Zeros of `shape` with `src` put at `idx` along `dim` (indices unique per slice)."""
    return apply(scatter_zeros_p, src, idx, shape=tuple(shape), dim=dim)


def check_gather_index(name: str, input: Tensor, dim: int, index: Tensor, src=None) -> None:
    """PyTorch's checks on a gather / scatter index: dtype, rank, sizes, bounds."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._dtype is not dt.int64 and index._dtype is not dt.int32:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    nd = max(input.ndim, 1)
    if max(index.ndim, 1) != nd:
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as "
            f"{'input' if name == 'gather' else 'self'} tensor")
    if index.numel() == 0:
        return
    ishape = index._shape or (1,)
    sshape = input._shape or (1,)
    for i, (a, b) in enumerate(zip(ishape, sshape)):
        if i != dim and a > b:
            raise RuntimeError(
                f"Size does not match at dimension {i} expected index {list(index._shape)} to "
                f"be no larger than self {list(input._shape)} apart from dimension {dim}")
    if src is not None:
        if max(src.ndim, 1) != nd:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        for i, (a, b) in enumerate(zip(ishape, src._shape or (1,))):
            if a > b:
                raise RuntimeError(
                    f"Size does not match at dimension {i} expected index {list(index._shape)} "
                    f"to be no larger than src {list(src._shape)}")
    if index.device.type == "cpu":
        arr = index._array()
        n = sshape[dim]
        if arr.min() < 0 or arr.max() >= n:
            bad = arr[(arr >= n) | (arr < 0)].flat[0]
            raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0): values picked along `dim`."""
    d = wrap_dim(dim, max(input.ndim, 1))
    check_gather_index("gather", input, d, index)
    return write_out(_gather(input, index, d), out)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out=None) -> Tensor:
    """Values along `dim` at `indices` (broadcast against `input` off `dim`), as in NumPy."""
    if dim is None:
        return write_out(gather(input.reshape(-1), 0, indices.reshape(-1)), out)
    if indices._dtype is not dt.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be int64 but got "
                           f"{indices._dtype!r}")
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = wrap_dim(dim, max(input.ndim, 1))
    shape_i = list(indices._shape)
    shape_x = list(input._shape)
    shape_i[d] = shape_x[d] = 1
    common = broadcast_shapes(shape_i, shape_x)
    x_shape = common[:d] + (input._shape[d],) + common[d + 1:]
    i_shape = common[:d] + (indices._shape[d],) + common[d + 1:]
    return write_out(gather(input.expand(x_shape), d, indices.expand(i_shape)), out)


# --- nonzero / argwhere --------------------------------------------------------------------

def _nonzero_kernel(a):
    if a.ndim == 0:
        return np.zeros((1 if a else 0, 0), np.int64)
    return np.stack(np.nonzero(a), axis=-1).astype(np.int64)


nonzero_p = Primitive("nonzero", _nonzero_kernel, None)
nondifferentiable(nonzero_p)
data_dependent(nonzero_p)


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) tensor, or one 1-D tensor per dim."""
    if input.device.type == "meta":
        raise NotImplementedError(
            "nonzero's output shape depends on the data, so it cannot run on 'meta'")
    with grad_mode.no_grad():
        r = apply(nonzero_p, input)
    if as_tuple:
        if input.ndim == 0:
            return (r.reshape(-1)[:0] if r._shape[0] == 0 else
                    apply(nonzero_p, input.reshape(1)).reshape(-1),)
        return tuple(r[:, i] for i in range(input.ndim))
    return write_out(r, out)


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


TENSOR_METHODS = {
    "__getitem__": getitem, "__setitem__": setitem, "gather": gather,
    "take_along_dim": take_along_dim, "nonzero": nonzero, "argwhere": argwhere,
    "index_put": index_put, "index_put_": index_put_,
}

__all__ = ["gather", "take_along_dim", "nonzero", "argwhere", "index_put", "index_put_"]
