"""Assignment, `x[key] = value`: the `setitem` primitive.

Its eager evaluation writes through NumPy into x's memory when no graph is recorded (a
basic key straight into the view), and otherwise through the `index_put` primitive (out
of place, then copied in) on `x` itself: a basic key is already NumPy's; any other is
rewritten as one index array per dim of `x`, so that no view is involved.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import run_quiet
from .._tensor import Tensor
from .._view import non_overlapping
from ._scalar_value import setitem_value
from .copy import cast_array
from .index import index_put_p
from .index_key import (
    TENSOR_SLOT,
    basic_key,
    byte_masks_as_bool,
    check_value_shape,
    flat_key,
    has_byte_mask,
    key_shape,
    np_key,
    plan,
    probe,
    refuse_byte_mask_fill,
    tn,
    value_tensor,
)
from .registry import (
    Primitive,
    apply_given_,
    batch_by_loop,
    bind,
    bump_version,
    check_inplace,
    nondifferentiable,
    overlapping,
    refuse_overlap,
)

_grad_state = grad_mode.state


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
        raise TypeError(f"can't assign a {_type_name(value)} to a torch.{tn(x._dtype)}Tensor")
    if not isinstance(value, Tensor):
        value = setitem_value(value, x._dtype)  # refused where it overflows x's dtype
    if key is False:
        return  # PyTorch writes nothing and records nothing for `x[False] = v`
    if has_byte_mask(key):
        refuse_byte_mask_fill(x, key, value.numel() if isinstance(value, Tensor) else 1)
        key = byte_masks_as_bool(key)
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
    skey, idx = adv if adv is not None else (None, None)
    adv = None if skey is None or not on_cpu else np_key(skey, idx._array())
    if skey is not None and isinstance(value, Tensor) and value._dtype is not x._dtype and not (
            isinstance(key, Tensor) and key._dtype is dt.bool_ and value.numel() == 1):
        # PyTorch casts only for a copy into a view, or a one-value fill through one mask.
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{tn(x._dtype)} for the destination and {tn(value._dtype)} for the source.")
    # As PyTorch: a copy into a basic view refuses a destination whose elements share memory;
    # an advanced-index write (index_put_) writes through it.
    if needs_graph and skey is None and x._grad_fn is None and x._requires_grad and (
            view._shape, view.stride(), view._offset) != (x._shape, x.stride(), x._offset):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")  # PyTorch writes through x[key], a view
    check_inplace(x, aliased_ok=on_cpu and not needs_graph)
    if on_cpu and not needs_graph:
        if skey is None and overlapping(view):
            refuse_overlap()
        if isinstance(value, Tensor):
            _check_overlap(view, value)
        _write(x, view._array(), adv, value)
        return
    if x.device.type == "meta":
        target = view._shape if skey is None else key_shape(view._shape, skey, idx._shape)
        check_value_shape(target, np.shape(value) if not isinstance(value, Tensor)
                          else value._shape, skey is not None, x._dtype)
        return
    value = value_tensor(value, x)
    npkey = None if skey is not None else basic_key(key)
    if npkey is not None:
        # As PyTorch: a copy into the view x[key], so x's node is CopySlices
        target = view._shape
        check_value_shape(target, value._shape, False, value._dtype)
        while value.ndim > len(target):
            value = value.squeeze(0)
        x[key].copy_(value)
        return
    target, npkey, index = flat_key(x, key)
    check_value_shape(target, value._shape, skey is not None, value._dtype)
    while value.ndim > len(target):
        value = value.squeeze(0)
    if x.ndim == 0 and skey is not None:
        value = value.expand(target).reshape(-1)
    # (the node shows the key's index tensors, not the flat coordinates written through)
    given = None if skey is None else {"indices": _key_indices(skey, idx)}
    apply_given_(given, index_put_p, x, value, index, key=npkey, accumulate=False)


def _key_indices(skey: tuple, idx: Tensor) -> tuple:
    """The `indices` PyTorch's index_put_ node shows for a key `plan` read as `skey` and
    `idx`: None for each whole dim, each index tensor in its place (several are stacked in
    `idx`: each is its row)."""
    slots = sum(k is TENSOR_SLOT for k in skey)
    rows = iter((idx,) if slots == 1 else idx.unbind(0))
    return tuple(next(rows) if k is TENSOR_SLOT else None for k in skey)


# `x[key] = value`: no outputs (on `meta` the impl checks shapes); with a graph it records
# index_put's node, so it has no derivative of its own

class WritePrimitive(Primitive):
    """A primitive that writes into its first argument and returns nothing (`x[key] = v`):
    a forward-mode level rewrites that argument's tangent the same way."""

    __slots__ = ()
    writes_first = True


setitem_p = WritePrimitive("setitem", None, lambda x, value, *index, key: None,
                           impl=_eval_setitem)
nondifferentiable(setitem_p)
batch_by_loop(setitem_p, "a write into x's memory, not a value: vmap writes each example's "
                         "slice (the value form, index_put, has a batch rule)")


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
    npkey = basic_key(key)
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
    if dst.size == 0 and adv is not None:  # (nothing to write: PyTorch checks no bounds)
        return
    if isinstance(value, Tensor):
        src = value._array()
        if src.dtype.kind == "c" and dst.dtype.kind not in "cb":  # (bool reads both parts)
            src = src.real
        if src.dtype != dst.dtype:  # (PyTorch's conversion: a double to bfloat16 via float)
            src = cast_array(src, dt.from_numpy(dst.dtype), copy=False)
    else:
        src = value
    if isinstance(src, np.ndarray) and src.ndim:
        target = dst.shape if adv is None else probe(dst.shape)[adv].shape
        check_value_shape(target, src.shape, adv is not None, value._dtype)
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


def _type_name(v) -> str:
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


TENSOR_METHODS = {"__setitem__": setitem}

__all__: list[str] = []
