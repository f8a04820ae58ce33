"""Reading an indexing key: which parts are views and which are an advanced index.

A key is applied as PyTorch applies it: ints, slices, `None`, `...` and bool
scalars first, as views; what is left (integer tensors / lists and bool masks,
one index array per dim) is an advanced index, broadcast together, whose result
dims land where the first indexed dim was when the indexed dims are adjacent,
and in front otherwise (NumPy's rule, applied to the view).

`plan` returns the advanced part as a static key (`slice(None)` per dim, `TENSOR_SLOT`
where an index array stands) and ONE index tensor, an input of the `index` /
`index_put` primitives: the index itself when there is one (an integer tensor of any
width, or a bool mask), else the indices broadcast together and stacked, int64 of shape
(slots, *broadcast shape). So the primitives' params hold only the key's structure.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import bind
from .._tensor import Tensor, _wrap
from .._user_warnings import user_stacklevel, warn_at_user
from .._view import broadcast_shapes
from . import movement
from .registry import keep_given

_BAD_KEY = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
            "are valid indices (got {})")


class _TensorSlot:
    """Where an index tensor stands in a static key: the tensor itself is an input of the op."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<tensor input>"

    def __reduce__(self):
        return "TENSOR_SLOT"


TENSOR_SLOT = _TensorSlot()

def index_error(i, dim: int, size: int) -> IndexError:
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
            "in an error or a different result", UserWarning, stacklevel=user_stacklevel())
        return tuple(key)
    return (key,)


def _is_int(k, tensor_ints: bool = True) -> bool:
    """An integer key (a view: select); with `tensor_ints`, a 0-d integer tensor too (as
    PyTorch reads one in a key; index_put's indices are index tensors, even 0-d ones)."""
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        return True
    if isinstance(k, (Tensor, np.ndarray)) and k.ndim == 0:
        d = k.dtype
        if isinstance(k, Tensor):
            return tensor_ints and d._kind == 1 and d is not dt.uint8
        return d.kind in "iu" and d != np.uint8  # (a uint8 array is a mask, as in PyTorch)
    return False


_BYTE_MASK_DEPRECATED = ("indexing with dtype torch.uint8 is now deprecated, please use a "
                         "dtype torch.bool instead.")


def _is_byte_mask(k) -> bool:
    return (isinstance(k, Tensor) and k._dtype is dt.uint8) or (
        isinstance(k, np.ndarray) and k.dtype == np.uint8)


def has_byte_mask(key) -> bool:
    """Whether `key` is or holds a uint8 mask. The write path runs this on every call, so
    ints and slices, the usual keys, are passed over by class with no further call."""
    cls = key.__class__
    if cls is tuple or cls is list:
        for k in key:
            c = k.__class__
            if c is not int and c is not slice and _is_byte_mask(k):
                return True
        return False
    return cls is not int and cls is not slice and _is_byte_mask(key)


def refuse_byte_mask_fill(x: Tensor, key, value_numel: int, tensor_ints: bool = True) -> None:
    """PyTorch writes one value through a lone mask index with masked_fill_, which takes no
    uint8 mask: refuse that in its words, once the mask's shape is checked as it checks it.
    (Beside any other index, or with several values, the write goes through index_put,
    which reads a uint8 mask as bool; in a key, a 0-d mask becomes an index.)"""
    if value_numel != 1:
        return
    items = key if isinstance(key, (tuple, list)) and not _is_byte_mask(key) else (key,)
    indices = [k for k in items if isinstance(k, (Tensor, np.ndarray, list, range))
               and not _is_int(k, tensor_ints)]
    if len(indices) != 1 or not _is_byte_mask(indices[0]):
        return
    mask = indices[0]
    if tensor_ints and mask.ndim == 0:
        return
    as_bool = mask.to(dt.bool_) if isinstance(mask, Tensor) else mask.astype(bool)
    with grad_mode.no_grad():
        plan(x, tuple(as_bool if k is mask else k for k in items), tensor_ints)
    raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                       "unsigned char")


def byte_masks_as_bool(key):
    """`key` with its uint8 masks read as bool masks, warning once for each as PyTorch does
    (for a write whose key is then planned more than once)."""
    if _is_byte_mask(key) and key.ndim:
        return index_tensor(key)
    if isinstance(key, tuple) and any(_is_byte_mask(k) and k.ndim for k in key):
        return tuple(index_tensor(k) if _is_byte_mask(k) and k.ndim else k for k in key)
    return key


def index_tensor(k, warn: bool = True) -> Tensor:
    """An advanced index as a tensor: an integer tensor as given, a bool mask (uint8 masks
    read as bool, with PyTorch's deprecation warning unless `warn` is False), or a list /
    NumPy array made into an int64 or bool tensor."""
    if isinstance(k, Tensor):
        d = k._dtype
        if d is dt.bool_ or d is dt.uint8:
            if k.device.type == "meta":
                raise NotImplementedError(
                    "indexing with a bool mask needs the mask's values: it cannot run on 'meta'")
            if d is dt.uint8:
                if warn:
                    warn_at_user(_BYTE_MASK_DEPRECATED)
                with grad_mode.no_grad():
                    return k.to(dt.bool_)
            return k
        if d is not dt.int64 and d is not dt.int32:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return k
    if isinstance(k, np.ndarray):
        # NOTE: PyTorch reads a NumPy array as it reads a list: bool and uint8 arrays are
        # masks, any other number becomes int64 (floats truncate, as in x[[0.5, 1.0]]).
        if k.dtype == np.uint8 and warn:
            warn_at_user(_BYTE_MASK_DEPRECATED)
        if k.dtype == np.bool_ or k.dtype == np.uint8:
            return _wrap(k.astype(bool))
        if k.dtype.kind == "c":
            k = k.real
        if k.dtype.kind not in "iuf":
            raise TypeError(f"can't convert np.ndarray of type numpy.{k.dtype.type.__name__}: "
                            "only numbers and bools index a tensor")
        return _wrap(k.astype(np.int64))
    try:
        arr = np.asarray(k)
    except ValueError:
        raise IndexError("too many indices: index lists must be rectangular") from None
    if arr.dtype == np.bool_:
        return _wrap(arr)
    if arr.dtype.kind not in "iuf":
        raise TypeError("new(): invalid data type 'str'")
    return _wrap(arr.astype(np.int64))


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


def select_int(x: Tensor, dim: int, i: int, n: int) -> Tensor:
    """x[..., i] along `dim` (of size n, -n <= i < n) for an integer key: a select view whose
    node shows the index as given."""
    view = bind(movement.view_p, x, fn=movement.select_p, dim=dim, index=i % n)
    if view._grad_fn is not None:
        keep_given(view, index=i)
    return view


def plan(x: Tensor, key, tensor_ints: bool = True):
    """Apply the basic part of `key` to `x` as views; return (view, advanced part).

    With no advanced part that is None, else (static key, index): the static key is a
    tuple in NumPy's terms on the view (`slice(None)` or `TENSOR_SLOT` per dim) and the
    index is one tensor on x's device (see the module docstring): a bool mask stays a mask
    when it is the only advanced index (NumPy then reads it as PyTorch does, and faster),
    else it becomes its nonzero positions.
    """
    items = _items(key)
    if list in map(type, items):  # (each list read once: its kind decides the dims it takes)
        items = tuple(index_tensor(k) if k.__class__ is list else k for k in items)
    specified = _specified_dims(items)
    if specified > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    view, dim, idx = x, 0, {}
    indexed = 0  # index tensors so far: PyTorch's bounds messages count them, not the dims
    pending = []  # bounds to check once the indices are known to broadcast (PyTorch's order)
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
            idx[dim] = _wrap(np.zeros(1 if k else 0, np.int64))
            dim += 1
        elif _is_int(k, tensor_ints):
            i = int(k)
            n = view._shape[dim]
            if i < -n or i >= n:
                raise index_error(i, pos, n)  # (PyTorch names the key's item, not the dim)
            view = select_int(view, dim, i, n)
        elif isinstance(k, (Tensor, np.ndarray, list, tuple, range)):
            # (in a key, PyTorch turns a 0-d mask into an index without the uint8 warning)
            t = index_tensor(k, warn=not (tensor_ints and getattr(k, "ndim", 1) == 0))
            if t._dtype is dt.bool_:
                if t.ndim == 0:
                    view = movement.unsqueeze(view, dim)
                    t = _wrap(np.zeros(1 if t._array() else 0, np.int64))
                else:
                    _check_mask(view, t._shape, dim)
                idx[dim] = t
                dim += max(t.ndim, 1)
                indexed += max(t.ndim, 1)
                continue
            pending.append((t, view._shape[dim], indexed, bool(view.numel())))
            idx[dim] = t
            dim += 1
            indexed += 1
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
        _check_bounds(pending)
        (d, t), = idx.items()
        return view, ((slice(None),) * d + (TENSOR_SLOT,), _on(t, x))
    for d, t in list(idx.items()):
        if t._dtype is dt.bool_:  # (a mask among other indices: its positions, read here)
            idx.update((d + j, _wrap(nz.astype(np.int64)))
                       for j, nz in enumerate(np.nonzero(t._array())))
    shapes = [t._shape for t in idx.values()]
    try:
        common = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         "shapes " + ", ".join(str(list(s)) for s in shapes)) from None
    _check_bounds(pending)
    key = tuple(TENSOR_SLOT if d in idx else slice(None) for d in range(max(idx) + 1))
    return view, (key, _on(stack_indices([idx[d] for d in sorted(idx)], common), x))


def _check_bounds(pending: list) -> None:
    """Each index tensor within its dim: (tensor, dim size, its position among the index
    tensors, whether the view holds anything)."""
    for t, n, indexed, nonempty in pending:
        if n == 0 and t.numel():
            if t.ndim == 0 and t.device.type == "cpu":  # (worded as for an integer)
                raise index_error(int(t.item()), indexed, 0)
            raise IndexError("index is out of bounds for dimension with size 0")
        # (PyTorch checks the bounds as it reads: not at all when the result is empty)
        if nonempty and (t._storage is None or t._storage.device.type == "cpu"):
            arr = t._np if t._np is not None else t._array()
            if arr.size and (arr.max() >= n or arr.min() < -n):
                raise index_error(int(arr[(arr >= n) | (arr < -n)].flat[0]), indexed, n)


def stack_indices(indices, shape) -> Tensor:
    """Index tensors broadcast to `shape` and stacked as int64: (len(indices), *shape)."""
    if all(i._storage is None or i._storage.device.type == "cpu" for i in indices):
        out = np.empty((len(indices),) + tuple(shape), np.int64)  # (the wrapper has read
        for j, i in enumerate(indices):  # them for the bounds check anyway)
            out[j] = i._array()
        return _wrap(out)
    from .join import stack

    with grad_mode.no_grad():
        return stack([i.to(dt.int64).expand(shape) for i in indices])


def _on(t: Tensor, x: Tensor) -> Tensor:
    """Index tensor `t` on x's device (PyTorch takes CPU indices for a tensor elsewhere)."""
    xs, ts = x._storage, t._storage
    if xs is None and ts is None:
        return t
    xd = "cpu" if xs is None else xs.device.type
    td = "cpu" if ts is None else ts.device.type
    if xd == td or td != "cpu":
        return t
    with grad_mode.no_grad():
        return t.to(x.device)


def slots(key: tuple) -> int:
    """How many index arrays a static key takes."""
    return sum(1 for k in key if k is TENSOR_SLOT)


def np_key(key: tuple, idx) -> tuple:
    """The NumPy key: the static `key` with the index array (`idx`, see `plan`) in its
    slots; None for `idx` means the key has no slots."""
    if idx is None:
        return key
    if len(key) == 1:
        return (idx,)
    if slots(key) == 1:
        return tuple(idx if k is TENSOR_SLOT else k for k in key)
    rows = iter(idx)
    return tuple(next(rows) if k is TENSOR_SLOT else k for k in key)


def probe(shape) -> np.ndarray:
    """A zero-strided array of `shape` (no memory): NumPy's indexing of it gives shapes."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))


def key_shape(shape, key: tuple, idx_shape, mask: bool = False) -> tuple:
    """The shape of x[key] for x of `shape` and an index of `idx_shape` (no data read; for
    a `mask`, its dim is given as 0: only the rank is known)."""
    if idx_shape is None:
        return probe(shape)[key].shape
    zero = np.zeros(idx_shape, bool) if mask else probe(
        idx_shape if slots(key) == 1 else idx_shape[1:])
    return probe(shape)[tuple(zero if k is TENSOR_SLOT else k for k in key)].shape


def _slice(view: Tensor, dim: int, k: slice) -> Tensor:
    step = 1 if k.step is None else int(k.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    if k.start is None and k.stop is None and step == 1:
        return view
    return movement.slice_dim(view, dim, k.start, k.stop, step)


def _check_mask(view: Tensor, mask_shape: tuple, dim: int) -> None:
    for j in range(len(mask_shape)):
        if mask_shape[j] != view._shape[dim + j]:
            raise IndexError(
                f"The shape of the mask [{', '.join(map(str, mask_shape))}] at index {j} does "
                f"not match the shape of the indexed tensor [{', '.join(map(str, view._shape))}]"
                f" at index {dim + j}"
            )


def basic_key(key) -> tuple | None:
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


# --- the target of an assignment ------------------------------------------------------------

def flat_key(x: Tensor, key):
    """`key` on `x` as one index array per dim of `x` (its elements in x[key]'s order).

    Returns (target shape, static key, index tensor) for `index_put` on `x`: x[key]'s
    elements, laid out as the target shape (or flattened, for a 0-d `x`).
    """
    from .creation import arange

    with grad_mode.no_grad():
        pos = arange(x.numel(), dtype=dt.int64).reshape(x._shape)
        view, adv = plan(pos, key)
        flat = view._array() if adv is None else view._array()[
            np_key(adv[0], adv[1]._array())]
    if x.ndim == 0:  # a 0-d bool mask: x[mask] is x as shape (1,), or empty
        return flat.shape, (TENSOR_SLOT,), _on(_wrap(np.array(flat.size > 0)), x)
    arrays = np.unravel_index(flat, x._shape)
    if x.ndim == 1:
        return flat.shape, (TENSOR_SLOT,), _on(_wrap(arrays[0]), x)
    return flat.shape, (TENSOR_SLOT,) * x.ndim, _on(_wrap(np.stack(arrays)), x)


def value_tensor(value, x: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        if value.device != x.device and value.ndim == 0:
            value = value.to(x.device)
        return value if value._dtype is x._dtype else value.to(x._dtype)
    from .creation import scalar_tensor

    return scalar_tensor(value, dtype=x._dtype, device=x.device)


def check_value_shape(target, vshape, advanced: bool, dtype=dt.float32, *,
                      strip_ones: bool = True) -> None:
    """The value of an indexed write must broadcast to the indexed result's shape `target`.

    `x[key] = value` drops all of the value's leading size-1 dims first (so PyTorch's
    messages quote its shape without them); `index_put_` takes the value as it is
    (`strip_ones=False`)."""
    vshape = tuple(vshape)
    while strip_ones and vshape and vshape[0] == 1:
        vshape = vshape[1:]
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
        raise RuntimeError(f"expand(torch.{tn(dtype)}Tensor{{{list(vshape)}}}, "
                           f"size={list(target)}): "
                           f"the number of sizes provided ({len(target)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(vshape)})")
    for i in range(1, len(vshape) + 1):
        if vshape[-i] not in (1, target[-i]):
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-i]}) must match the existing size "
                f"({vshape[-i]}) at non-singleton dimension {len(target) - i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(vshape)}")


def tn(d: dt.dtype) -> str:
    """The dtype's name as PyTorch's messages give it (`Float`)."""
    from ._common import type_name

    return type_name(d)
