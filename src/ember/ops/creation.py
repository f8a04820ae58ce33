"""Tensor creation: `tensor`, `zeros`, `arange`, `*_like`, `from_numpy`, legacy constructors."""

from __future__ import annotations

import copy as _copy
import math
import numbers
import warnings

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import kernels, meta_rules
from .._core.primitive import _op_layer
from .._device import CPU, as_device
from .._storage import Storage
from .._tensor import Tensor, _make, _meta, _wrap
from .._view import contiguous_strides, like_strides, numel, storage_extent
from ._batching import front
from ._scalar_value import scalar_value as _fill_value
from .copy import cast_array
from .registry import Family, Member, Primitive, batch_by_loop, bind, defbatch, nondifferentiable

_cpu_kernels = kernels["cpu"]

_grad_state = grad_mode.state


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        if not (t._dtype.is_floating_point or t._dtype.is_complex):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad_(True)
    return t


def _place(arr: np.ndarray, dtype: dt.dtype | None, device, requires_grad: bool,
           pin_memory: bool = False) -> Tensor:
    """A fresh CPU array placed as a tensor on `device` (no copy on cpu)."""
    dev = as_device(device)
    t = _wrap(arr, dtype)
    if dev.type != "cpu":
        from .device_copy import to_device

        t = to_device(t, dev, None)
    return _finish(t, requires_grad)


def _sizes(size, name: str = "empty") -> tuple[int, ...]:
    """Sizes given as `f(2, 3)`, `f((2, 3))` or `f([2, 3])`, checked as PyTorch checks them."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    elif len(size) == 1 and not isinstance(size[0], (int, np.integer)) and \
            hasattr(size[0], "__iter__"):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"{name}(): argument 'size' (position 1) must be tuple of ints, but found "
                f"element of type {type(s).__name__}"
            )
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(size)}"
            )
        out.append(int(s))
    return tuple(out)


def _eval_factory(prim, args: tuple, params: dict) -> Tensor:
    """Eager evaluation of a factory: the meta rule on `meta`, else the NumPy kernel, moved
    to the device when it is not the CPU."""
    device = params["device"]
    if device.type == "meta":
        return _meta(*meta_rules[prim](*args, **params))
    if device.type != "cpu":
        from ..backends import refuse_unavailable

        refuse_unavailable(device, factory=True)
    t = _wrap(_cpu_kernels[prim](*args, **params), params["dtype"])
    if device.type != "cpu":
        from .device_copy import to_device

        t = to_device(t, device, None)
    return t


# The factories: no tensor inputs, their params say the values, shape, dtype and device.
# One primitive, each kind a member: `bind(factory_p, fn=FULL, shape=..., dtype=..., ...)`.
factory_p = Family("factory", impl=_eval_factory)
batch_by_loop(factory_p, "no tensor input to vectorise over: each example's call is the "
                         "same constant")


def _full_kernel(*, shape, value=None, dtype, device):
    if value is None:  # `empty`: memory with no value written
        return np.empty(shape, dtype.np)
    return np.full(shape, value, dtype=dtype.np)


# `full`, and without a `value` `empty`
FULL = Member(factory_p, "full", _full_kernel,
              lambda *, shape, value=None, dtype, device: (shape, dtype))


def _arange_kernel(*, start, step, n, dtype, device):
    if dtype._kind == 1 or dtype is dt.bool_:
        return (start + step * np.arange(n, dtype=np.int64)).astype(dtype.np)
    return (np.float64(start) + np.float64(step) * np.arange(n, dtype=np.float64)
            ).astype(dtype.np)


ARANGE = Member(factory_p, "arange", _arange_kernel,
                lambda *, start, step, n, dtype, device: ((n,), dtype))
for _m in (FULL, ARANGE):
    nondifferentiable(_m)


def _filled(size, value, dtype, device, requires_grad) -> Tensor:
    dev = as_device(device)
    if value is None:
        return _finish(bind(factory_p, fn=FULL, shape=size, dtype=dtype, device=dev), requires_grad)
    return _finish(bind(factory_p, fn=FULL, shape=size, value=value, dtype=dtype, device=dev),
                   requires_grad)


def _dtype_or_default(dtype) -> dt.dtype:
    return dt.get_default_dtype() if dtype is None else dt.as_dtype(dtype)


def _refuse_pinned(pin_memory: bool, device) -> None:
    """Pinned host memory needs a GPU: PyTorch's CPU build refuses `pin_memory=True`."""
    if pin_memory and as_device(device).type != "meta":
        from ..backends.cuda import is_available

        if not is_available():
            raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; "
                               "no pinned memory allocator is available on this system.")


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False) -> Tensor:
    _refuse_pinned(pin_memory, device)
    d = _dtype_or_default(dtype)
    return _out(_filled(_sizes(size, "zeros"), 0, d, device, requires_grad), out)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False) -> Tensor:
    _refuse_pinned(pin_memory, device)
    d = _dtype_or_default(dtype)
    return _out(_filled(_sizes(size, "ones"), 1, d, device, requires_grad), out)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None) -> Tensor:
    _refuse_pinned(pin_memory, device)
    return _out(_filled(_sizes(size), None, _dtype_or_default(dtype), device, requires_grad),
                out)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                else fill_value)
    return _out(_filled(_sizes((size,), "full"), _fill_value(fill_value, dtype), dtype, device,
                        requires_grad), out)


def _out(t: Tensor, out):
    if out is None:
        return t
    from ._common import write_out

    return write_out(t, out)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> Tensor:
    _refuse_pinned(pin_memory, device)
    dtype = _dtype_or_default(dtype)
    size, stride = tuple(size), tuple(stride)
    dev = as_device(device)
    n = storage_extent(size, stride, 0)
    if dev.type == "meta":
        return _finish(_make(Storage(None, n * dtype.itemsize, dev), size, stride, 0, dtype),
                       requires_grad)
    buf = np.empty(n, dtype.np)
    t = _make(Storage(buf, buf.nbytes, CPU), size, stride, 0, dtype)
    if dev.type != "cpu":
        from .device_copy import to_device

        t = to_device(t, dev, None)
    return _finish(t, requires_grad)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    if dtype is None:
        dtype = dt.scalar_dtype(value)
    return _filled((), value, dtype, device, requires_grad)


def _eval_filled_like(prim, args: tuple, params: dict) -> Tensor:
    """Eager evaluation of `filled_like`: a fresh tensor shaped like the input, laid out as
    PyTorch lays out `*_like` results (the input is read for its shape and strides only)."""
    (input,) = args
    d, dev, fill = params["dtype"], params["device"], params["value"]
    if "shape" in params:  # x.new_*: its own shape, `input` only says what batch it is in
        if params["stride"] is not None:
            return empty_strided(params["shape"], params["stride"], dtype=d, device=dev)
        return _filled(params["shape"], fill, d, dev, False)
    shape = input._shape
    stride = like_strides(shape, input.stride(), params["memory_format"])
    if stride == contiguous_strides(shape):
        return bind(factory_p, fn=FULL, shape=shape, dtype=d, device=dev) if fill is None \
            else bind(factory_p, fn=FULL, shape=shape, value=fill, dtype=d, device=dev)
    if dev.type == "meta":
        return _meta(shape, d, stride)
    n = storage_extent(shape, stride, 0)
    buf = np.empty(n, d.np) if fill is None else np.full(n, fill, d.np)
    t = _make(Storage(buf, buf.nbytes, CPU), shape, stride, 0, d)
    if dev.type != "cpu":
        from .device_copy import to_device

        t = to_device(t, dev, None)
    return t


def _filled_like_meta(input, *, value, dtype, device, memory_format=None, shape=None,
                      stride=None):
    if shape is not None:
        return (shape, dtype) if stride is None else (shape, dtype, stride)
    return input._shape, dtype, like_strides(input._shape, input.stride(), memory_format)


def _filled_like_batch(args, dims, /, **params):
    """Like the batch (batch axis in front): inside vmap `zeros_like(x)` is one per example,
    and so is `x.new_zeros(3)` (PyTorch's rule), so an in-place write of a batched value
    into it works."""
    x = front(args[0], dims[0])
    shape = params.get("shape")
    if shape is not None:
        stride = params["stride"]
        if stride is not None:  # each example's block after the last one's
            stride = (max(storage_extent(shape, stride, 0), 1),) + tuple(stride)
        params = {**params, "shape": (x._shape[0],) + tuple(shape), "stride": stride}
    return bind(filled_like_p, x, **params), 0


# `zeros_like`, `ones_like`, `empty_like`, `full_like`: the input is an argument (read for
# its shape and layout, never its values) so that an interpreter sees what the result is
# shaped like: under vmap, a batched input gives a batched result. With `shape` (and
# `stride`) it is `x.new_zeros(shape)` and its kin: the input is seen, not read at all.
filled_like_p = Primitive("filled_like", None, _filled_like_meta, impl=_eval_filled_like)
nondifferentiable(filled_like_p)
defbatch(filled_like_p, _filled_like_batch)


def _filled_like(input: Tensor, fill, d: dt.dtype, device, requires_grad: bool,
                 memory_format) -> Tensor:
    """A fresh tensor shaped like `input`, laid out as PyTorch lays out `*_like` results."""
    dev = input.device if device is None else as_device(device)
    t = bind(filled_like_p, input, value=fill, dtype=d, device=dev,
             memory_format=memory_format)
    return _finish(t, requires_grad)


def _like(fill):
    def like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None) -> Tensor:
        d = input._dtype if dtype is None else dtype
        return _filled_like(input, fill, d, device, requires_grad, memory_format)

    like.__name__ = {0: "zeros_like", 1: "ones_like", None: "empty_like"}[fill]
    like.__doc__ = f"A new tensor shaped (and strided) like `input`, {like.__name__[:-5]}."
    return like


zeros_like = _like(0)
_op_layer.zeros_like = zeros_like  # the core's zeros for a missing tangent
ones_like = _like(1)
empty_like = _like(None)


def full_like(input: Tensor, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None) -> Tensor:
    """A tensor shaped like `input` filled with `fill_value` (in `input`'s dtype by default)."""
    d = input._dtype if dtype is None else dtype
    return _filled_like(input, _fill_value(fill_value, d), d, device, requires_grad,
                        memory_format)


# --- from Python data ------------------------------------------------------------

_NUMBER_TYPES = (bool, int, float, complex)


def _number_dtype(x) -> dt.dtype:
    """The dtype PyTorch infers for one leaf of nested data."""
    cls = x.__class__
    if cls is float:
        return dt.get_default_dtype()
    if cls is int:
        return dt.int64
    if isinstance(x, (bool, np.bool_)):
        return dt.bool_
    if isinstance(x, np.generic):
        return dt.from_numpy(x.dtype)
    if isinstance(x, numbers.Integral):
        return dt.int64
    if isinstance(x, numbers.Real):
        return dt.get_default_dtype()
    if isinstance(x, numbers.Complex):
        return dt.default_complex()
    if isinstance(x, str):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _data_shape(data) -> tuple[int, ...]:
    """The shape, read off the first element at each depth (as PyTorch does)."""
    shape = []
    x = data
    while True:
        if isinstance(x, np.ndarray):
            shape.extend(x.shape)
            return tuple(shape)
        if not isinstance(x, (list, tuple)):
            return tuple(shape)
        shape.append(len(x))
        if not x:
            return tuple(shape)
        x = x[0]


def _infer(data):
    """Nested data as (nested Python numbers, shape, dtype) by PyTorch's inference.

    Every leaf's dtype (Python number, NumPy scalar or array, one-element tensor)
    is combined with `promote_types`; tensors inside lists count as numbers.
    """
    shape = _data_shape(data)
    nd = len(shape)
    found: list[dt.dtype] = []

    def leaf(x):
        if isinstance(x, Tensor):
            if numel(x._shape) != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            found.append(x._dtype)
            return x.item()
        if isinstance(x, (list, tuple, np.ndarray)):
            raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as a number")
        found.append(_number_dtype(x))
        return x.item() if isinstance(x, np.generic) else x

    def walk(x, dim):
        if dim == nd:
            return leaf(x)
        if isinstance(x, np.ndarray):
            if x.shape != shape[dim:]:
                raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                                 f"(got {x.shape[0] if x.ndim else 'a scalar'})")
            found.append(dt.from_numpy(x.dtype))
            return (x.astype(np.float32) if x.dtype == dt.bfloat16.np else x).tolist()
        if not isinstance(x, (list, tuple)):
            raise TypeError("not a sequence")
        if len(x) != shape[dim]:
            raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                             f"(got {len(x)})")
        if dim == nd - 1:
            kinds = set(map(type, x))
            if kinds <= set(_NUMBER_TYPES):  # fast path for plain numbers
                found.extend(_number_dtype(k()) for k in kinds)
                return x
        return [walk(v, dim + 1) for v in x]

    values = walk(data, 0)
    d = None
    for f in found:
        d = f if d is None else dt.promote_types(d, f)
    return values, shape, (dt.get_default_dtype() if d is None else d)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor copying `data` (nested lists, numbers, arrays, tensors)."""
    _refuse_pinned(pin_memory, device)
    dtype = dt.as_dtype(dtype)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
        with grad_mode.no_grad():
            t = data.detach().clone()
            if dtype is not None or device is not None:
                t = t.to(device=device, dtype=dtype)
        return _finish(t, requires_grad)
    if isinstance(data, (np.ndarray, np.generic)):
        d = dt.from_numpy(data.dtype) if dtype is None else dtype
        # keeps a permuted array's memory order, as PyTorch does
        arr = cast_array(np.array(data, copy=True, order="K"), d)
        return _place(arr, d, device, requires_grad)
    if data.__class__ in _NUMBER_TYPES:  # fast path for a lone Python number
        d = _number_dtype(data) if dtype is None else dtype
        return _place(_values_array(data, (), d), d, device, requires_grad)
    values, shape, inferred = _infer(data)
    d = inferred if dtype is None else dtype
    return _place(_values_array(values, shape, d), d, device, requires_grad)


def _values_array(values, shape, d: dt.dtype) -> np.ndarray:
    """Nested Python numbers as an array of dtype `d`, with PyTorch's overflow checks."""
    try:
        raw = np.array(values)
    except OverflowError:
        raw = np.array(values, dtype=object)
    raw = raw.reshape(shape)
    if raw.dtype.kind in "Ou":  # Python ints beyond int64
        if d._kind <= 1 and d is not dt.bool_:
            raise ValueError("Overflow when unpacking long long")
        raw = raw.astype(np.bool_ if d is dt.bool_ else np.complex128 if d.is_complex
                         else np.float64)
    if raw.dtype.kind == "c" and not (d.is_complex or d is dt.bool_):
        if d._kind == 1:
            raise TypeError("'complex' object cannot be interpreted as an integer")
        raise TypeError("must be real number, not complex")
    if d._kind == 1:
        _check_int_range(raw, d)
        if raw.dtype.kind == "f":
            raw = np.trunc(raw).astype(np.int64)
    return cast_array(raw, d)


def _check_int_range(raw: np.ndarray, d: dt.dtype) -> None:
    if raw.size == 0 or raw.dtype.kind == "b":
        return
    info = np.iinfo(d.np)
    # NOTE: PyTorch lets uint8 take -255..-1 and wraps them (tensor([-1], dtype=uint8) == 255).
    lo = -int(info.max) if d is dt.uint8 and raw.dtype.kind != "f" else int(info.min)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(raw) if raw.dtype.kind == "f" else np.zeros((), bool)
        if bad.any() or raw.min() < lo or raw.max() > info.max:
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like `tensor`, but shares memory with a tensor or NumPy array when it can."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and \
            as_device(device).type == "cpu":
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    if copy:
        t = tensor(obj, dtype=dtype, device=device) if not isinstance(obj, Tensor) else \
            obj.detach().clone().to(device=device, dtype=dtype)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, (Tensor, np.ndarray)):
        t = from_dlpack(obj)
        if dtype is not None or device is not None:
            t = t.to(device=device, dtype=dtype)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and isinstance(obj, np.ndarray) and not np.shares_memory(
                t._array(), obj):
            raise ValueError("asarray(copy=False) would have to copy")
    return _finish(t, requires_grad)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing `arr`'s memory (any non-negative strides)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    d = dt.from_numpy(arr.dtype)
    return _share(arr, d)


def _share(arr: np.ndarray, d: dt.dtype) -> Tensor:
    itemsize = arr.itemsize
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making "
            "a copy of your array  with array.copy().) "
        )
    if any(s % itemsize for s in arr.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    if not arr.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.", UserWarning, stacklevel=3)
    stride = tuple(s // itemsize for s in arr.strides)
    n = storage_extent(arr.shape, stride, 0)
    flat = np.lib.stride_tricks.as_strided(arr, (n,), (itemsize,)) if arr.size else \
        np.empty(0, arr.dtype)
    if arr.size and arr.flags.c_contiguous:
        flat = arr.reshape(-1)
    t = _make(Storage(flat, n * itemsize, CPU), arr.shape, stride, 0, d)
    t._np = arr
    return t


def from_dlpack(ext) -> Tensor:
    """A tensor sharing memory with any DLPack exporter (NumPy, PyTorch ...)."""
    if isinstance(ext, Tensor):
        return ext
    from .._dlpack import import_array

    arr = import_array(ext)
    return _share(arr, dt.from_numpy(arr.dtype))


# --- ranges ---------------------------------------------------------------------

def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False) -> Tensor:
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = dt.int64 if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                for v in vals) else dt.get_default_dtype()
    n = math.ceil((end - start) / step)
    if n < 0 or (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError(
            "upper bound and lower bound inconsistent with step sign"
        )
    t = bind(factory_p, fn=ARANGE, start=start, step=step, n=n, dtype=dtype,
             device=as_device(device))
    return _out(_finish(t, requires_grad), out)


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    d = dt.get_default_dtype() if dtype is None else dtype
    arr = (start + step * np.arange(n, dtype=np.float64)).astype(d.np)
    return _place(arr, d, device, requires_grad)


def linspace(start, end, steps: int, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dtype_or_default(dtype)
    start = start.item() if isinstance(start, Tensor) else start
    end = end.item() if isinstance(end, Tensor) else end
    if as_device(device).type == "meta":
        return _finish(_meta((steps,), d), requires_grad)
    if steps > 1 and d in (dt.float32, dt.float64) and not (
            isinstance(start, complex) or isinstance(end, complex)):
        return _out(_place(_linspace_float(start, end, steps, d.np.type), d, device,
                           requires_grad), out)
    if steps == 1:
        arr = np.array([start], dtype=np.float64)
    else:
        # PyTorch fills the first half from the start and the second half from the end.
        step = (end - start) / (steps - 1)
        idx = np.arange(steps, dtype=np.float64)
        half = steps // 2
        arr = np.where(idx < half, start + step * idx, end - step * (steps - 1 - idx))
    if d._kind == 1:
        arr = np.trunc(arr)
    if d.is_complex:
        arr = arr.astype(np.complex128)
    return _out(_place(arr.astype(d.np), d, device, requires_grad), out)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, as a fused multiply-add (float32 or float64 arrays)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    # float64: the exact product as a sum of two doubles (Dekker), then two error-free sums
    p = a * b
    split = np.float64(134217729.0)  # 2**27 + 1

    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi

    ah, al = halves(a)
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def _linspace_float(start, end, steps: int, t) -> np.ndarray:
    """linspace in float32 / float64 as PyTorch's CPU kernel computes it, value for value:
    the step in the dtype, the first half counted up from `start` and the second half down
    from `end`, each point one fused multiply-add."""
    start, end = t(start), t(end)
    step = np.asarray((end - start) / t(steps - 1))
    i = np.arange(steps)
    n = len(i)
    up = _fma(np.broadcast_to(step, (n,)), i.astype(t), np.full(n, start))
    down = _fma(np.broadcast_to(-step, (n,)), (steps - 1 - i).astype(t), np.full(n, end))
    return np.where(i < steps // 2, up, down)


def logspace(start, end, steps: int, base: float = 10.0, *, out=None, dtype=None, layout=None,
             device=None, requires_grad=False) -> Tensor:
    """base ** linspace(start, end, steps), computed in float64 and cast once to `dtype`."""
    from .binary import pow as power

    d = _dtype_or_default(dtype)
    exps = linspace(start, end, steps, dtype=dt.float64, device=device)
    return _out(_finish(power(float(base), exps).to(d), requires_grad), out)


def eye(n: int, m: int | None = None, *, out=None, dtype=None, layout=None, device=None,
        requires_grad=False) -> Tensor:
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    d = _dtype_or_default(dtype)
    if as_device(device).type == "meta":
        return _finish(_meta((n, m), d), requires_grad)
    return _out(_place(np.eye(n, m, dtype=d.np), d, device, requires_grad), out)


# --- legacy constructors ------------------------------------------------------

_LEGACY = {
    "FloatTensor": dt.float32, "DoubleTensor": dt.float64, "HalfTensor": dt.float16,
    "BFloat16Tensor": dt.bfloat16, "LongTensor": dt.int64, "IntTensor": dt.int32,
    "ShortTensor": dt.int16, "CharTensor": dt.int8, "ByteTensor": dt.uint8,
    "BoolTensor": dt.bool_,
}


def legacy_type_dtype(name: str) -> dt.dtype:
    short = name.rsplit(".", 1)[-1]
    if short not in _LEGACY:
        raise ValueError(f"invalid type: '{name}'")
    return _LEGACY[short]


def legacy_new(dtype: dt.dtype, *args, device=None) -> Tensor:
    """PyTorch's `Tensor(2, 3)` (uninitialised) / `Tensor([1, 2])` (data) constructors."""
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if len(args) == 1 and isinstance(args[0], np.ndarray):
        return tensor(args[0], dtype=dtype, device=device)
    if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return empty(*args, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return tensor(args[0], dtype=dtype, device=device)
    from .._device import device as _device

    if len(args) == 1 and isinstance(args[0], _device):
        return empty(0, dtype=dtype, device=args[0])
    raise TypeError(f"new(): invalid arguments {args!r}")


def legacy_tensor_new(cls, *args, **kwargs):
    t = legacy_new(dt.get_default_dtype(), *args, device=kwargs.get("device"))
    if cls is not Tensor:
        return cls._make_subclass(cls, t) if hasattr(cls, "_make_subclass") else t
    return t


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
    return tensor(data, dtype=self._dtype if dtype is None else dtype,
                  device=self.device if device is None else device, requires_grad=requires_grad)


def _new(self: Tensor, shape, value, dtype, device, requires_grad, stride=None) -> Tensor:
    d = self._dtype if dtype is None else dt.as_dtype(dtype)
    dev = self.device if device is None else as_device(device)
    return _finish(bind(filled_like_p, self, shape=shape, value=value, dtype=d, device=dev,
                        stride=stride), requires_grad)


def _new_filled(fill, name: str):
    def new(self: Tensor, *size, dtype=None, device=None, requires_grad=False, **kw) -> Tensor:
        return _new(self, _sizes(size, name), fill, dtype, device, requires_grad)

    return new


def new_full(self: Tensor, size, fill_value, *, dtype=None, device=None,
             requires_grad=False) -> Tensor:
    d = self._dtype if dtype is None else dt.as_dtype(dtype)
    return _new(self, _sizes((size,), "full"), _fill_value(fill_value, d), d, device,
                requires_grad)


def new_empty_strided(self: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad=False) -> Tensor:
    return _new(self, tuple(size), None, dtype, device, requires_grad, tuple(stride))


TENSOR_METHODS = {
    "new_tensor": new_tensor, "new_zeros": _new_filled(0, "zeros"),
    "new_ones": _new_filled(1, "ones"), "new_empty": _new_filled(None, "empty"),
    "new_full": new_full,
    "new_empty_strided": new_empty_strided,
    "new": lambda self, *args, **kw: legacy_new(self._dtype, *args, device=self.device),
}

__all__ = [
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "zeros", "ones", "empty",
    "full", "empty_strided", "scalar_tensor", "zeros_like", "ones_like", "empty_like",
    "full_like", "arange", "linspace", "logspace", "eye",
]
_ = contiguous_strides
