"""Tensor creation from data: `tensor`, `as_tensor`, `asarray`, `from_numpy`,
`frombuffer`, `from_dlpack`, and copies (`deepcopy`, `new_tensor`, `x.new_*`). The factories
(`zeros`, `arange`, `*_like`, ...) live in `factories.py` and are re-exported here."""

from __future__ import annotations

import copy as _copy
import warnings

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._device import CPU, as_device
from .._storage import Storage
from .._tensor import Tensor, _make, _meta, _wrap
from .._user_warnings import user_stacklevel
from .._view import contiguous_strides, numel, storage_extent
from ._arg_parser_text import need_dtype, need_number
from ._nested_data import (
    data_shape,
    infer_dtype,
    nested_values,
    refuse_string,
    values_array,
)
from ._scalar_value import scalar_value as _fill_value
from .copy import cast_array
from .factories import (  # noqa: F401  (the factories: re-exported, they lived here)
    _dtype_or_default,
    _finish,
    _place,
    _refuse_pinned,
    _sizes,
    arange,
    empty,
    empty_like,
    empty_strided,
    eye,
    filled_like_p,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    range_,
    scalar_tensor,
    scalar_tensor_api,
    zeros,
    zeros_like,
)
from .registry import bind

# --- from Python data ------------------------------------------------------------

_NUMBER_TYPES = (bool, int, float, complex)
_COPY_WARNING = ("To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
                 "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
                 "{}(sourceTensor).")


def from_data(data, dtype: dt.dtype | None, device, copy: bool) -> Tensor:
    """PyTorch's one reader of Python data (`tensor`, `as_tensor`, `new_tensor`, `Tensor(...)`):
    a tensor, NumPy array or DLPack exporter converted (copied when `copy`), else nested data
    read by `_nested_data`'s rules. With `dtype` None the dtype is inferred from the data."""
    cls = data.__class__
    if cls is not list and cls is not tuple:
        refuse_string(data)
        if isinstance(data, Tensor):
            with grad_mode.no_grad():
                t = data.detach()
                if copy:
                    t = t.clone()
                if dtype is not None or device is not None:
                    t = t.to(device=device, dtype=dtype)
            return t
        if isinstance(data, np.ndarray):
            d = dt.from_numpy(data.dtype) if dtype is None else dtype
            if not copy and d.np == data.dtype and as_device(device).type == "cpu":
                return from_numpy(data)
            _check_numpy_strides(data)  # (PyTorch reads every array as a tensor first)
            if not data.size and as_device(device).type == "cpu":
                return _empty_copy(data, d)
            if any(s == 0 for s, n in zip(data.strides, data.shape) if n > 1):
                return _place(_broadcast_copy(data, d), d, device, False)
            # keeps a permuted array's memory order, as PyTorch does
            arr = cast_array(np.array(data, copy=True, order="K"), d)
            if as_device(device).type == "cpu" and arr.flags.c_contiguous and arr.size:
                return _with_size_one_strides(arr, data, d)
            return _place(arr, d, device, False)
        if hasattr(data, "__dlpack__"):
            shared = from_dlpack(data)
            t = shared.to(device=device, dtype=dtype) if dtype is not None or \
                device is not None else shared
            return t.clone() if copy and t is shared else t
        if cls in _NUMBER_TYPES:  # fast path for a lone Python number
            d = infer_dtype(data) if dtype is None else dtype
            return _place(values_array(data, (), d), d, device, False)
    shape = data_shape(data)
    plain_rows: set = set()
    d = infer_dtype(data, plain_rows) if dtype is None else dtype
    if as_device(device).type == "meta":
        return _meta(shape, d)  # no values to read (PyTorch reads none either)
    if numel(shape) == 0:
        return _place(np.empty(shape, d.np), d, device, False)
    return _place(values_array(nested_values(data, shape, d, plain_rows), shape, d), d, device,
                  False)


def _with_size_one_strides(arr: np.ndarray, src: np.ndarray, d: dt.dtype) -> Tensor:
    """`arr` (a copy of `src`) with `src`'s size-1 strides, as PyTorch's copy keeps them."""
    want, rows = tuple(s // src.itemsize for s in src.strides), contiguous_strides(arr.shape)
    if want == rows or any(s % src.itemsize or s < 0 or n > 1 and w != c for s, n, w, c in zip(
            src.strides, arr.shape, want, rows)):
        return _wrap(arr, d)
    t = _make(Storage(arr.reshape(-1), arr.nbytes, CPU), arr.shape, want, 0, d)
    t._np = np.ndarray(arr.shape, arr.dtype, arr, strides=[w * arr.itemsize for w in want])
    return t


def _empty_copy(src: np.ndarray, d: dt.dtype) -> Tensor:
    """An empty array's copy, with the array's own strides (NumPy's, all 0), as PyTorch
    keeps them."""
    stride = tuple(s // src.itemsize for s in src.strides)
    return _make(Storage(np.empty(0, d.np), 0, CPU), src.shape, stride, 0, d)


def _broadcast_copy(src: np.ndarray, d: dt.dtype) -> np.ndarray:
    """A copy of an array with a broadcast (stride 0) dim, laid out as PyTorch's copy lays
    it out: dims ordered innermost-first by stride, a stride-0 dim ordered with none (it
    keeps its row-major place), an equal stride putting the smaller size inside."""
    shape, strides = src.shape, src.strides
    order = list(range(src.ndim))[::-1]  # innermost first
    for i in range(1, len(order)):
        at = i
        for j in range(i - 1, -1, -1):
            a, b = order[j], order[at]
            if strides[a] == 0 or strides[b] == 0:
                continue  # (no order: look further in)
            if strides[a] > strides[b] or strides[a] == strides[b] and shape[a] > shape[b]:
                order[j], order[at] = order[at], order[j]
                at = j
            else:
                break
    elem, step = [0] * src.ndim, 1
    for k in order:
        elem[k] = step
        step *= shape[k]
    out = np.empty(step, d.np)
    view = np.lib.stride_tricks.as_strided(out, shape, [e * out.itemsize for e in elem])
    view[...] = cast_array(np.asarray(src), d)
    return view


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor copying `data` (nested sequences, numbers, arrays, tensors)."""
    _refuse_pinned(pin_memory, device)
    if isinstance(data, Tensor):
        warnings.warn(_COPY_WARNING.format("torch.tensor"), UserWarning,
                      stacklevel=user_stacklevel())
    return _finish(from_data(data, need_dtype(dtype, "tensor"), device, copy=True),
                   requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like `tensor`, but shares memory with a tensor or NumPy array when it can."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    return from_data(data, need_dtype(dtype, "as_tensor"), device, copy=False)


_ASARRAY_WARNED = []


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """`obj` as a tensor, sharing its memory unless `copy` or a dtype / device change asks
    otherwise: a tensor, a NumPy array or scalar, a buffer (read as `dtype`, the default dtype
    when none is given) or DLPack exporter; any other data is read as `tensor` reads it."""
    dtype = need_dtype(dtype, "asarray")
    t = obj if isinstance(obj, Tensor) else None
    grad = requires_grad if requires_grad is not None else (t is not None and t.requires_grad)
    if grad and requires_grad is None and not _ASARRAY_WARNED:
        _ASARRAY_WARNED.append(True)
        warnings.warn("torch.asarray: unspecified requires_grad now defaults to "
                      "obj.requires_grad instead of False. Pass requires_grad=False explicitly "
                      "to get the old behavior and silence this warning.", UserWarning,
                      stacklevel=user_stacklevel())
    force_copy = bool(copy)
    if t is None and isinstance(obj, (np.ndarray, np.generic)):
        if isinstance(obj, np.generic):
            if copy is False:
                raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                                   "transform it in a ndarray. ")
            t, force_copy = _share(np.array(obj), dt.from_numpy(obj.dtype)), False
        else:
            t = _share(obj, dt.from_numpy(obj.dtype), warn=False)
    elif t is None and hasattr(obj, "__dlpack__"):
        t = from_dlpack(obj)
    elif t is None and _has_buffer(obj):
        t = frombuffer(obj, dtype=_dtype_or_default(dtype, "asarray"))
    if t is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return _finish(from_data(obj, dtype, device, copy=False), grad)
    dev = None if device is None else as_device(device)
    wrong_device = dev is not None and dev != t.device
    wrong_dtype = dtype is not None and dtype is not t._dtype
    if force_copy or (copy is None and (wrong_device or wrong_dtype)):
        t = t.to(device=dev, dtype=dtype, copy=True) if wrong_device or wrong_dtype else t.clone()
    elif wrong_device:
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{dev}'.")
    elif wrong_dtype:
        from ._common import type_name as scalar_type_name

        raise ValueError(f"can't alias tensor with dtype '{scalar_type_name(t._dtype)}' into "
                         f"dtype '{scalar_type_name(dtype)}'.")
    if not t.is_leaf:
        return t if grad else t.detach()
    return _finish(t, True) if grad else t.requires_grad_(False)


def _has_buffer(obj) -> bool:
    """Whether `obj` has the buffer protocol (bytes, bytearray, memoryview, array.array ...)."""
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing `arr`'s memory (any non-negative strides)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    d = dt.from_numpy(arr.dtype)
    return _share(arr, d)


def _check_numpy_strides(arr: np.ndarray) -> None:
    """PyTorch's refusals of an array its tensors cannot view: a negative stride, or one
    that is no multiple of the element size (copies included: it views the array first)."""
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array  with array.copy().) "
        )
    if any(s % arr.itemsize for s in arr.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")


def _share(arr: np.ndarray, d: dt.dtype, warn: bool = True) -> Tensor:
    itemsize = arr.itemsize
    _check_numpy_strides(arr)
    if warn and not arr.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.", UserWarning, stacklevel=user_stacklevel())
    stride = tuple(s // itemsize for s in arr.strides)
    n = storage_extent(arr.shape, stride, 0)
    if not arr.size:
        flat = np.empty(0, arr.dtype)
    elif arr.flags.c_contiguous:
        flat = arr.reshape(-1)
    else:  # (through raw bytes of the same width: NumPy cannot restride ml_dtypes' float8)
        raw = arr.view(np.dtype((np.void, itemsize)))
        flat = np.lib.stride_tricks.as_strided(raw, (n,), (itemsize,)).view(arr.dtype)
    t = _make(Storage(flat, n * itemsize, CPU), arr.shape, stride, 0, d)
    t._np = arr
    return t


def frombuffer(buffer, *, dtype: dt.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """`count` elements of `dtype` read from `buffer` starting `offset` bytes in (all that
    fit when `count` is -1). Writes through the tensor change the buffer, as in PyTorch."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.c_contiguous:  # (PyTorch asks for a plain buffer, which a strided one is not)
        raise RuntimeError("could not retrieve buffer from object")
    nbytes = view.nbytes
    size = dtype.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if offset < 0 or offset > nbytes - 1:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % size:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (nbytes - offset) // size
    elif offset + count * size > nbytes:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    arr = np.frombuffer(buffer, dtype=np.dtype(dtype.np), count=count, offset=offset)
    t = from_numpy(arr)
    return t.requires_grad_(True) if requires_grad else t


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with any DLPack exporter (NumPy, PyTorch ...)."""
    if isinstance(ext, Tensor):
        return ext
    from .._dlpack import import_array

    arr = import_array(ext)
    return _share(arr, dt.from_numpy(arr.dtype))


# --- copies and new_* ---------------------------------------------------------

def deepcopy_tensor(t: Tensor, memo) -> Tensor:
    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
            "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
            "because of a torch.nn.utils.weight_norm usage, see "
            "https://github.com/pytorch/pytorch/pull/103001"
        )
    if id(t) in memo:
        return memo[id(t)]
    with grad_mode.no_grad():
        new = t.clone()
    if type(t) is not Tensor:
        new = type(t)._make_subclass(type(t), new, t._requires_grad) \
            if hasattr(type(t), "_make_subclass") else new
    new._requires_grad = t._requires_grad
    if t._grad is not None:
        new._grad = deepcopy_tensor(t._grad, memo)
    if t.__dict__:
        new.__dict__.update(_copy.deepcopy(t.__dict__, memo))
    memo[id(t)] = new
    return new


def new_tensor(self: Tensor, data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A copy of `data` with `self`'s dtype and device unless given (no dtype inference)."""
    if isinstance(data, Tensor):
        warnings.warn(_COPY_WARNING.format("tensor.new_tensor"), UserWarning,
                      stacklevel=user_stacklevel())
    d = self._dtype if dtype is None else need_dtype(dtype, "new_tensor")
    t = from_data(data, d, self.device if device is None else device, copy=True)
    return _finish(t, requires_grad)


def _new(self: Tensor, shape, value, dtype, device, requires_grad, stride=None) -> Tensor:
    d = self._dtype if dtype is None else dt.as_dtype(dtype)
    dev = self.device if device is None else as_device(device)
    return _finish(bind(filled_like_p, self, shape=shape, value=value, dtype=d, device=dev,
                        stride=stride), requires_grad)


def _new_filled(fill, name: str):
    def new(self: Tensor, *sizes, size=None, dtype=None, device=None, requires_grad=False,
            **kw) -> Tensor:
        return _new(self, _sizes(sizes, name, size), fill, dtype, device, requires_grad)

    return new


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    need_number(fill_value, "new_full", "fill_value", 3, method=True)
    d = self._dtype if dtype is None else need_dtype(dtype, "new_full")
    return _new(self, _sizes((size,), "full"), _fill_value(fill_value, d), d, device,
                requires_grad)


def new_empty_strided(self: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad=False) -> Tensor:
    return _new(self, tuple(size), None, dtype, device, requires_grad, tuple(stride))


TENSOR_METHODS = {
    "new_tensor": new_tensor, "new_zeros": _new_filled(0, "new_zeros"),
    "new_ones": _new_filled(1, "new_ones"), "new_empty": _new_filled(None, "new_empty"),
    "new_full": new_full,
    "new_empty_strided": new_empty_strided,
}

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "from_dlpack", "zeros", "ones",
    "empty", "full", "empty_strided", "scalar_tensor", "zeros_like", "ones_like", "empty_like",
    "full_like", "arange", "linspace", "logspace", "eye",
]
