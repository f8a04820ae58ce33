"""Indexing: `x[key]` and `x[key] = value`, with PyTorch's (NumPy's) rules.

Basic keys (ints, slices, None, ...) become views. Integer tensors, lists and
bool masks are advanced indices: `index` gathers with them, and its VJP
scatter-adds back (repeated indices accumulate). Assignment writes through
NumPy directly when no graph is recorded, and otherwise through the
`index_put` primitive, out of place, so that autograd sees it.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..autograd import grad_mode
from . import movement
from .registry import Primitive, apply, apply_, bump_version, check_inplace, defvjp

_grad_state = grad_mode.state


def _index_error(i, dim: int, size: int) -> IndexError:
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


def _expand_key(x: Tensor, key) -> list:
    """The key as a list with `...` expanded and bool scalars made explicit."""
    if not isinstance(key, tuple):
        key = (key,)
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, bool):
            continue
        if isinstance(k, Tensor) and k._dtype in (dt.bool_, dt.uint8):
            consumed += k.ndim
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            consumed += k.ndim
        else:
            consumed += 1
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    out = []
    seen_ellipsis = False
    for k in key:
        if k is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            out.extend([slice(None)] * (x.ndim - consumed))
        else:
            out.append(k)
    return out


def _as_index_array(k, dim_size: int | None = None):
    """An advanced index as an int64 / bool NumPy array, validated like PyTorch."""
    if isinstance(k, Tensor):
        if k._dtype is dt.bool_ or k._dtype is dt.uint8:
            return k._array().astype(bool)
        if k._dtype._kind != 1:
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        return k._array().astype(np.int64)
    arr = np.asarray(k)
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            return arr.astype(np.int64)
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
            "valid indices (got " + type(k).__name__ + ")"
        )
    return arr.astype(np.int64)


def _basic(x: Tensor, key: list):
    """Apply the basic parts of `key` as views; return (view, advanced key or None)."""
    dim = 0
    advanced = []
    has_adv = False
    for k in key:
        if k is None:
            x = movement.unsqueeze(x, dim)
            advanced.append(slice(None))
            dim += 1
        elif isinstance(k, bool):
            x = movement.unsqueeze(x, dim)
            if not k:
                x = movement.slice_dim(x, dim, 0, 0)
            advanced.append(slice(None))
            dim += 1
        elif isinstance(k, (int, np.integer)) or (isinstance(k, Tensor) and k.ndim == 0 and
                                                    k._dtype._kind == 1):
            i = int(k)
            n = x._shape[dim]
            if i < -n or i >= n:
                raise _index_error(i, dim, n)
            x = movement.select(x, dim, i)
        elif isinstance(k, slice):
            step = 1 if k.step is None else int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if k != slice(None):
                x = movement.slice_dim(x, dim, k.start, k.stop, step)
            advanced.append(slice(None))
            dim += 1
        elif isinstance(k, (Tensor, list, tuple, np.ndarray)):
            arr = _as_index_array(k)
            has_adv = True
            if arr.dtype == np.bool_:
                for j in range(arr.ndim):
                    if arr.shape[j] != x._shape[dim + j]:
                        raise IndexError(
                            f"The shape of the mask [{', '.join(map(str, arr.shape))}] at index "
                            f"{j} does not match the shape of the indexed tensor "
                            f"[{', '.join(map(str, x._shape))}] at index {dim + j}"
                        )
                advanced.append(arr)
                dim += arr.ndim
            else:
                n = x._shape[dim]
                if arr.size and (arr.max() >= n or arr.min() < -n):
                    bad = arr[(arr >= n) | (arr < -n)].flat[0]
                    raise _index_error(int(bad), dim, n)
                advanced.append(arr)
                dim += 1
        elif isinstance(k, float):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got float)"
            )
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(k).__name__})"
            )
    return x, (tuple(advanced) if has_adv else None)


# --- advanced gather and its scatter-add VJP ---------------------------------------------

def _index_kernel(a, *, key):
    return np.array(a[key])


def _index_meta(x, *, key):
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), x._shape, (0,) * x.ndim)
    return probe[key].shape, x._dtype


index_p = Primitive("index", _index_kernel, _index_meta)


def _index_put_acc_kernel(g, *, key, in_shape):
    buf = np.zeros(in_shape, dtype=g.dtype)
    np.add.at(buf, key, g)
    return buf


index_put_acc_p = Primitive("index_put_acc", _index_put_acc_kernel,
                            lambda g, *, key, in_shape: (tuple(in_shape), g._dtype),
                            grad_name="IndexPutBackward0")
defvjp(index_p, lambda g, out, x, *, key: apply(index_put_acc_p, g, key=key,
                                                 in_shape=x._shape), reads=((0,),))
defvjp(index_put_acc_p, lambda gg, out, g, *, key, in_shape: apply(index_p, gg, key=key),
       reads=((),))


def getitem(x: Tensor, key) -> Tensor:
    if x.ndim == 0 and not (key is None or key is Ellipsis or isinstance(key, (bool, tuple))
                            or key == slice(None)):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    view, adv = _basic(x, _expand_key(x, key))
    if adv is None:
        return view if view is not x else movement.apply_view(
            movement.view_p, x, size=x._shape, in_shape=x._shape)
    return apply(index_p, view, key=adv)


# --- assignment ------------------------------------------------------------------------

def _np_key(x: Tensor, key):
    """The key in NumPy's terms, validated against PyTorch's rules."""
    parts = _expand_key(x, key)
    out = []
    dim = 0
    for k in parts:
        if isinstance(k, Tensor):
            if k.ndim == 0 and k._dtype._kind == 1:
                k = int(k.item())
            else:
                arr = _as_index_array(k)
                out.append(arr)
                dim += arr.ndim if arr.dtype == np.bool_ else 1
                continue
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            n = x._shape[dim]
            if k < -n or k >= n:
                raise _index_error(int(k), dim, n)
            dim += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            dim += 1
        elif isinstance(k, (list, np.ndarray)):
            k = _as_index_array(k)
            dim += k.ndim if k.dtype == np.bool_ else 1
        elif isinstance(k, float):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got float)"
            )
        out.append(k)
    return tuple(out)


def _setitem_kernel(a, v, *, key):
    out = a.copy()
    out[key] = v
    return out


def _setitem_meta(x, v, *, key):
    return x._shape, x._dtype


setitem_p = Primitive("index_put", _setitem_kernel, _setitem_meta,
                      grad_name="IndexPutBackward0")


def _setitem_grad_x(g, out, x, v, *, key):
    return index_put(g, key, 0.0)


def _setitem_grad_v(g, out, x, v, *, key):
    picked = apply(index_p, g, key=key)
    return picked


defvjp(setitem_p, _setitem_grad_x, _setitem_grad_v, reads=((), ()))


def index_put(x: Tensor, key, value) -> Tensor:
    """Out of place: a copy of `x` with `x[key] = value` (differentiable in both)."""
    return apply(setitem_p, x, value, key=key)


def setitem(x: Tensor, key, value) -> None:
    if isinstance(value, Tensor) and value.device != x.device and value.ndim == 0:
        value = value.to(x.device)
    npkey = _np_key(x, key)
    needs_graph = _grad_state.enabled and (
        x._requires_grad or (isinstance(value, Tensor) and value._requires_grad))
    if not needs_graph and x.device.type == "cpu":
        check_inplace(x)
        dst = x._array()
        if isinstance(value, Tensor):
            src = value._array()
            if src.dtype.kind == "c" and dst.dtype.kind != "c":
                src = src.real
        else:
            src = value
        try:
            if isinstance(src, np.ndarray) and src.dtype != dst.dtype:
                src = src.astype(dst.dtype)
            dst[npkey] = src
        except ValueError as e:
            raise RuntimeError(_shape_mismatch(dst[npkey].shape, np.shape(src), e)) from None
        bump_version(x)
        return
    if x.device.type == "meta":
        return
    if not isinstance(value, Tensor):
        from .creation import scalar_tensor

        value = scalar_tensor(value, dtype=x._dtype, device=x.device)
    elif value._dtype is not x._dtype:
        value = value.to(x._dtype)
    target_shape = _index_meta(x, key=npkey)[0]
    from .._view import broadcast_shapes

    try:
        if broadcast_shapes(target_shape, value._shape) != tuple(target_shape):
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(_shape_mismatch(target_shape, value._shape, None)) from None
    apply_(setitem_p, x, value, key=npkey)


def _shape_mismatch(dst_shape, src_shape, err) -> str:
    return (f"shape mismatch: value tensor of shape {list(src_shape)} cannot be broadcast to "
            f"indexing result of shape {list(dst_shape)}")


# --- helpers other ops' VJPs use ------------------------------------------------------------

def _scatter_zeros_kernel(src, idx, *, shape, dim):
    buf = np.zeros(shape, dtype=src.dtype)
    np.put_along_axis(buf, idx, src, axis=dim)
    return buf


scatter_zeros_p = Primitive("scatter_zeros", _scatter_zeros_kernel,
                            lambda src, idx, *, shape, dim: (tuple(shape), src._dtype),
                            grad_name="ScatterBackward0")


def _gather_kernel(a, idx, *, dim):
    return np.take_along_axis(a, idx, axis=dim)


gather_p = Primitive("gather", _gather_kernel,
                     lambda a, idx, *, dim: (idx._shape, a._dtype))
defvjp(scatter_zeros_p, lambda g, out, src, idx, *, shape, dim: apply(gather_p, g, idx, dim=dim),
       None, reads=((1,), ()))
defvjp(gather_p, lambda g, out, a, idx, *, dim: _scatter_add_zeros(g, idx, a._shape, dim),
       None, reads=((0, 1), ()))


def _scatter_add_kernel(src, idx, *, shape, dim):
    buf = np.zeros(shape, dtype=src.dtype)
    nd = len(shape)
    grids = list(np.indices(idx.shape, sparse=True))
    grids[dim] = idx
    np.add.at(buf, tuple(grids) if nd else (), src)
    return buf


scatter_add_zeros_p = Primitive("scatter_add_zeros", _scatter_add_kernel,
                                lambda src, idx, *, shape, dim: (tuple(shape), src._dtype),
                                grad_name="ScatterAddBackward0")
defvjp(scatter_add_zeros_p,
       lambda g, out, src, idx, *, shape, dim: apply(gather_p, g, idx, dim=dim), None,
       reads=((1,), ()))


def _scatter_add_zeros(g, idx, shape, dim):
    return apply(scatter_add_zeros_p, g, idx, shape=tuple(shape), dim=dim)


def scatter_into_zeros(shape, dim: int, idx: Tensor, src: Tensor) -> Tensor:
    """Zeros of `shape` with `src` put at `idx` along `dim` (indices unique per slice)."""
    return apply(scatter_zeros_p, src, idx, shape=tuple(shape), dim=dim)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    from .._view import wrap_dim
    from ._common import write_out

    d = wrap_dim(dim, max(input.ndim, 1))
    if index._dtype is not dt.int64:
        raise RuntimeError("gather(): Expected dtype int64 for index")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor"
        )
    for i, (a, b) in enumerate(zip(index._shape, input._shape)):
        if i != d and a > b:
            raise RuntimeError(
                f"Size does not match at dimension {i} expected index {list(index._shape)} to "
                f"be smaller than self {list(input._shape)} apart from dimension {d}"
            )
    if index.device.type == "cpu" and index.numel():
        arr = index._array()
        n = input._shape[d] if input.ndim else 1
        if arr.min() < -n or arr.max() >= n:
            bad = arr[(arr >= n) | (arr < -n)].flat[0]
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return write_out(apply(gather_p, input, index, dim=d), out)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,
                   out=None) -> Tensor:
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    return gather(input, dim, indices.expand(
        tuple(i if j == (dim % input.ndim) else max(i, s) for j, (i, s) in
              enumerate(zip(indices._shape, input._shape)))), out=out)


def _nonzero_kernel(a):
    return np.stack(np.nonzero(a), axis=-1).astype(np.int64) if a.ndim else \
        np.zeros((1 if a else 0, 0), np.int64)


nonzero_p = Primitive("nonzero", _nonzero_kernel, None)


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    if input.device.type == "meta":
        raise NotImplementedError(
            "nonzero's output shape depends on the data, so it cannot run on 'meta'"
        )
    r = apply(nonzero_p, input)
    if as_tuple:
        if input.ndim == 0:
            return (r.reshape(-1)[:0] if not bool(input.item()) else
                    apply(nonzero_p, input.reshape(1)).reshape(-1),)
        return tuple(r[:, i] for i in range(input.ndim))
    from ._common import write_out

    return write_out(r, out)


TENSOR_METHODS = {
    "__getitem__": getitem, "__setitem__": setitem, "gather": gather,
    "take_along_dim": take_along_dim, "nonzero": nonzero,
}

__all__ = ["gather", "take_along_dim", "nonzero"]
