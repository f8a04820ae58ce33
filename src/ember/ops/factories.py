"""Factories: tensors made from sizes and numbers rather than data. `zeros`, `ones`,
`empty`, `full`, `empty_strided`, `scalar_tensor`, the `*_like` family (and the `filled_like`
primitive `x.new_*` binds too), and ranges: `arange`, `range`, `linspace`, `logspace`,
`eye`. `creation.py` re-exports them beside the readers of data (`tensor`, `from_numpy`)."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .. import _dtype as dt
from .._algorithms import uninitialized
from .._core import kernels, meta_rules
from .._core.primitive import _op_layer
from .._device import CPU, as_device
from .._storage import Storage
from .._tensor import Tensor, _make, _meta, _wrap
from .._user_warnings import user_stacklevel
from .._view import contiguous_strides, index_value, like_strides, storage_extent
from ._arg_parser_text import (
    ABSENT,
    invalid_combination,
    is_dtype_arg,
    is_int_arg,
    need_dtype,
    need_int,
    need_number,
    no_overload,
    wrong_type,
)
from ._batching import front
from ._scalar_value import kernel_number
from ._scalar_value import scalar_value as _fill_value
from ._size_args import keyword_size, size_values, unpack_size
from ._spacing import arange_float as _arange_float
from ._spacing import linspace_complex, linspace_real
from .copy import cast_array
from .registry import Family, Member, Primitive, batch_by_loop, bind, defbatch, nondifferentiable

_cpu_kernels = kernels["cpu"]


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


def _sizes(size, name: str = "empty", keyword=None) -> tuple[int, ...]:
    """Sizes given as `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(size=(2, 3))` (`keyword`),
    read and checked as PyTorch's argument parser and then its factories check them (`f()`
    gives none; `f(())` is 0-d)."""
    if keyword is not None:
        size = keyword_size(size, keyword, name)
    size = unpack_size(size_values(size, name), name)
    for s in size:
        if s < 0:
            if name == "zeros":  # torch.zeros checks its sizes itself, with its own words
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {size}")
    return tuple(size)


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
    if value is None:  # `empty`: memory with no value written (filled in deterministic mode)
        return uninitialized(shape, dtype.np)
    if dtype.itemsize == 2 and dtype._kind == 2:  # (a number to 16 bits through float32)
        value = kernel_number(value, dtype.np)
    return np.full(shape, value, dtype=dtype.np)


# `full`, and without a `value` `empty`
FULL = Member(factory_p, "full", _full_kernel,
              lambda *, shape, value=None, dtype, device: (shape, dtype))


def _arange_kernel(*, start, step, n, dtype, device):
    if dtype._kind == 1 or dtype is dt.bool_:
        return (start + step * np.arange(n, dtype=np.int64)).astype(dtype.np)
    from .. import random
    from ._parallel import workers

    return _arange_float(start, step, n, dtype.np.type, workers(),
                         random.get_kernel_profile() == "avx2")


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


def _dtype_or_default(dtype, fname: str) -> dt.dtype:
    return dt.get_default_dtype() if dtype is None else need_dtype(dtype, fname)


def _refuse_pinned(pin_memory: bool, device) -> None:
    """Pinned host memory needs a GPU: PyTorch's CPU build refuses `pin_memory=True`."""
    if pin_memory and as_device(device).type != "meta":
        from ..backends.cuda import is_available

        if not is_available():
            raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; "
                               "no pinned memory allocator is available on this system.")


def zeros(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False) -> Tensor:
    _refuse_pinned(pin_memory, device)
    d = _dtype_or_default(dtype, "zeros")
    return _out(_filled(_sizes(sizes, "zeros", size), 0, d, device, requires_grad), out)


def ones(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False) -> Tensor:
    _refuse_pinned(pin_memory, device)
    d = _dtype_or_default(dtype, "ones")
    return _out(_filled(_sizes(sizes, "ones", size), 1, d, device, requires_grad), out)


def empty(*sizes, size=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False, memory_format=None) -> Tensor:
    _refuse_pinned(pin_memory, device)
    shape = _sizes(sizes, "empty", size)
    d = _dtype_or_default(dtype, "empty")
    name = getattr(memory_format, "name", "contiguous_format")
    if name == "preserve_format":  # (there is no tensor whose layout it could preserve)
        raise RuntimeError("unsupported memory format Preserve")
    if name != "contiguous_format" and out is None:
        stride = like_strides(shape, contiguous_strides(shape), memory_format)
        return empty_strided(shape, stride, dtype=d, device=device, requires_grad=requires_grad)
    return _out(_filled(shape, None, d, device, requires_grad), out)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False) -> Tensor:
    need_number(fill_value, "full", "fill_value", 2)
    if dtype is None:
        dtype = dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                else dt.py_number(fill_value))
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
    dtype = _dtype_or_default(dtype, "empty_strided")
    size, stride = tuple(size), tuple(stride)
    dev = as_device(device)
    n = storage_extent(size, stride, 0)
    if dev.type == "meta":
        return _finish(_make(Storage(None, n * dtype.itemsize, dev), size, stride, 0, dtype),
                       requires_grad)
    buf = uninitialized(n, dtype.np)
    t = _make(Storage(buf, buf.nbytes, CPU), size, stride, 0, dtype)
    if dev.type != "cpu":
        from .device_copy import to_device

        t = to_device(t, dev, None)
    return _finish(t, requires_grad)


def scalar_tensor(value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A 0-d tensor of a number, in the number's own dtype unless told: the helper ops use
    for a number operand (`torch.scalar_tensor` itself is `scalar_tensor_api`)."""
    if dtype is None:
        dtype = dt.scalar_dtype(value)
    return _filled((), value, dtype, device, requires_grad)


def scalar_tensor_api(value, *, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`torch.scalar_tensor`: a 0-d tensor of `value`, in the default float dtype unless
    told (PyTorch's default whatever the number's kind; a 0-d tensor is taken as its
    number), refusing what the dtype cannot hold."""
    if isinstance(value, Tensor) and value._shape == ():
        value = value.item()
    elif not isinstance(value, numbers.Number) or isinstance(value, Tensor):
        raise wrong_type("scalar_tensor", "s", 1, "Number", value)
    d = dt.get_default_dtype() if dtype is None else dtype
    return _filled((), _fill_value(value, d), d, device, requires_grad)


scalar_tensor_api.__name__ = scalar_tensor_api.__qualname__ = "scalar_tensor"


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
    buf = uninitialized(n, d.np) if fill is None else np.full(n, fill, d.np)
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
        d = input._dtype if dtype is None else need_dtype(dtype, like.__name__)
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
    need_number(fill_value, "full_like", "fill_value", 2)
    d = input._dtype if dtype is None else need_dtype(dtype, "full_like")
    return _filled_like(input, _fill_value(fill_value, d), d, device, requires_grad,
                        memory_format)


# --- ranges ---------------------------------------------------------------------

_FACTORY_TAIL = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                 "None, bool pin_memory = False, bool requires_grad = False)")
_ARANGE_OVERLOADS = (f"(Number end, *, Tensor out = None, {_FACTORY_TAIL}",
                     f"(Number start, Number end, *, {_FACTORY_TAIL}",
                     f"(Number start, Number end, Number step = 1, *, Tensor out = None, "
                     f"{_FACTORY_TAIL}")


def _is_number(v) -> bool:
    return isinstance(v, (int, float, complex, np.number, np.bool_)) or (
        isinstance(v, Tensor) and v.numel() == 1)


def _check_arange(start, end, step, dtype) -> None:
    """PyTorch's parser refusing a bound that is no Number or a dtype that is no dtype: the
    one overload's own words for a single bound, else the overloads listed."""
    bounds = (start,) if end is ABSENT else (start, end) if step.__class__ is int and step == 1 \
        else (start, end, step)
    if all(_is_number(b) for b in bounds) and (dtype is None or isinstance(dtype, dt.dtype)):
        return
    if len(bounds) == 1 and dtype is None:
        raise wrong_type("arange", "end", 1, "Number", start)
    raise invalid_combination("arange", _ARANGE_OVERLOADS, bounds,
                              {} if dtype is None else {"dtype": dtype})


def arange(start, end=ABSENT, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False) -> Tensor:
    """start, start + step, ... below `end` (from 0 when only `end` is given; PyTorch's
    overloads take no None for it)."""
    _check_arange(start, end, step, dtype)
    if end is ABSENT:
        start, end = 0, start
    if dtype is not None:  # (a dtype without a kernel is refused before the bounds are read)
        _refuse_spacing_dtype("arange", dtype)
    vals = [_real_bound(v.item() if isinstance(v, Tensor) else v) for v in (start, end, step)]
    start, end, step = vals
    _check_range(start, end, step)
    if isinstance(out, Tensor):  # (the out tensor decides the dtype)
        if dtype is not None and dtype is not out._dtype:
            raise RuntimeError(f"dtype {dt.SCALAR_TYPE_NAMES[dtype.name]} does not match dtype "
                               f"of out parameter ({dt.SCALAR_TYPE_NAMES[out._dtype.name]})")
        dtype = out._dtype
    if dtype is None:
        # (a bool bound is integral to PyTorch: arange(True) is tensor([0]))
        dtype = dt.int64 if all(isinstance(v, (int, np.integer, np.bool_)) for v in vals) \
            else dt.get_default_dtype()
    _refuse_spacing_dtype("arange", dtype)
    n = math.ceil((end - start) / step)
    if n < 0 or (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError(
            "upper bound and lower bound inconsistent with step sign"
        )
    if n >= 2 ** 63:
        raise RuntimeError("invalid size, possible overflow?")
    if dtype._kind == 1:
        start, step, n = _integer_arange(start, end, step, dtype, n)
    t = bind(factory_p, fn=ARANGE, start=start, step=step, n=n, dtype=dtype,
             device=as_device(device))
    return _out(_finish(t, requires_grad), out)


def _shown(v) -> str:
    """A bound as PyTorch's messages print a Scalar (C++'s ostream: 6 significant digits)."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def _check_range(start, end, step) -> None:
    """PyTorch's refusals of arange / range bounds: a zero (or NaN) step, a bound that is
    not finite."""
    if not step == step or step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_shown(start)} -> {_shown(end)}")


def _real_bound(v):
    """A bound as PyTorch's kernels read it, a real number: a complex one only when its
    imaginary part is zero."""
    if isinstance(v, (complex, np.complexfloating)):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return float(v.real)
    return v


def _refuse_spacing_dtype(name: str, dtype: dt.dtype) -> None:
    """arange / range have no bool or complex kernel in PyTorch."""
    if dtype is dt.bool_ or dtype.is_complex:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                  f"'{dt.SCALAR_TYPE_NAMES[dtype.name]}'")


def _integer_arange(start, end, step, dtype: dt.dtype, n: int) -> tuple[int, int, int]:
    """(start, step, count) of an integer arange as PyTorch's kernel reads float bounds:
    start and step truncated toward zero (a step that truncates to 0 is refused), and
    for int64 the count from the truncated bounds in integer arithmetic (C's truncating
    division); narrower integers keep the count of the bounds as given."""
    start, step = int(start), int(step)
    if dtype is not dt.int64:
        return start, step, n
    if step == 0:
        raise ValueError("step must be nonzero")
    end = int(end)
    a = end - start + step - ((step > 0) - (step < 0))
    n = abs(a) // abs(step)
    return start, step, (n if (a >= 0) == (step > 0) else -n)


def range_(start=None, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """start, start + step, ... up to end inclusive (torch.range, deprecated in torch too)."""
    for name, v in (("start", start), ("end", end)):
        if v is None:
            raise TypeError(f'range() missing 1 required positional arguments: "{name}"')
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=user_stacklevel())
    for i, (name, v) in enumerate((("start", start), ("end", end), ("step", step))):
        if not _is_number(v):
            raise wrong_type("range", name, i + 1, "Number", v)
    d = dt.get_default_dtype() if dtype is None else need_dtype(dtype, "range")
    _refuse_spacing_dtype("range", d)
    start, end, step = (_real_bound(v.item() if isinstance(v, Tensor) else v)
                        for v in (start, end, step))
    _check_range(start, end, step)
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    arr = cast_array(start + step * np.arange(n, dtype=np.float64), d)
    return _place(arr, d, device, requires_grad)


def _spaced_dtype(name: str, start, end, dtype) -> dt.dtype:
    """The dtype of linspace / logspace: complex bounds infer the default complex dtype,
    which a real `dtype` may not narrow (PyTorch refuses it rather than drop the imaginary
    parts)."""
    if not (isinstance(start, complex) or isinstance(end, complex)):
        return _dtype_or_default(dtype, name)
    inferred = dt.default_complex()
    if dtype is None:
        return inferred
    d = need_dtype(dtype, name)
    if not d.is_complex:
        raise RuntimeError(
            f"torch.{name}(): inferred dtype {dt.CPP_TYPE_NAMES[inferred.name]} can't be safely "
            f"cast to passed dtype {dt.SCALAR_TYPE_NAMES[d.name]}")
    return d


def _is_bound(v) -> bool:
    return isinstance(v, (Tensor, int, float, complex, np.number, np.bool_))


def _spacing_args(name: str, start, end, steps, dtype, base=None):
    """(start, end, steps) of linspace / logspace as numbers, checked as PyTorch's parser
    and kernel check them: a call that fits none of the four overloads (a bound that is no
    Number or Tensor, `steps` no int, `base` no float) lists them; a bound tensor must be
    0-d; `steps` not negative."""
    extra = () if base is None or base.__class__ is float and base == 10.0 else (base,)
    fits = _is_bound(start) and _is_bound(end) and is_int_arg(steps) and is_dtype_arg(dtype) \
        and (base is None or isinstance(base, (int, float, np.integer, np.floating)) or (
            isinstance(base, Tensor) and base.numel() == 1))
    if not fits:
        raise no_overload(name, (start, end, steps, *extra), {"dtype": dtype}, method=False)
    for which, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, "
                               f"but got {which} with {v.ndim} dimension(s).")
    steps = steps if steps.__class__ is int else index_value(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return (start.item() if isinstance(start, Tensor) else start,
            end.item() if isinstance(end, Tensor) else end, steps)


def linspace(start, end, steps: int, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    start, end, steps = _spacing_args("linspace", start, end, steps, dtype)
    d = _spaced_dtype("linspace", start, end, dtype)
    if as_device(device).type == "meta":
        return _finish(_meta((steps,), d), requires_grad)
    if d.is_complex:
        arr = linspace_complex(complex(start), complex(end), steps, d.to_real().np.type)
        return _out(_place(arr, d, device, requires_grad), out)
    if steps > 1:
        return _out(_place(linspace_real(start, end, steps, d), d, device, requires_grad), out)
    arr = np.array([_fill_value(start, d)] * steps, dtype=d.np)
    return _out(_place(arr, d, device, requires_grad), out)


def logspace(start, end, steps: int, base: float = 10.0, *, out=None, dtype=None, layout=None,
             device=None, requires_grad=False) -> Tensor:
    """base ** linspace(start, end, steps): computed in float64 and cast once to a real
    `dtype`; in a complex dtype itself, as exp(exponent * log(base)) (PyTorch's complex power,
    whose rounding shows: `logspace(0, 2, 3, dtype=complex64)` ends at 100.00000763)."""
    from .power import pow as power
    from .unary import exp, log

    start, end, steps = _spacing_args("logspace", start, end, steps, dtype, base)
    base = base.item() if isinstance(base, Tensor) else base
    d = _spaced_dtype("logspace", start, end, dtype)
    if d.is_complex:
        exps = linspace(start, end, steps, dtype=d, device=device)
        result = exp(exps * log(full((), complex(base), dtype=d, device=device)))
        return _out(_finish(result, requires_grad), out)
    exps = linspace(start, end, steps, dtype=dt.float64, device=device)
    return _out(_finish(power(float(base), exps).to(d), requires_grad), out)


def eye(n: int, m: int = ABSENT, *, out=None, dtype=None,  # type: ignore[assignment]
        layout=None, device=None, requires_grad=False) -> Tensor:
    """The identity matrix, n x m (m: n when left out; PyTorch's overloads take no None)."""
    if m is ABSENT:
        n = need_int(n, "eye", "n", 1)
        m = n
    elif not (is_int_arg(n) and is_int_arg(m)):
        raise no_overload("eye", (n, m), {"dtype": dtype}, method=False)
    else:
        n, m = need_int(n, "eye", "n", 1), need_int(m, "eye", "m", 2)
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    d = _dtype_or_default(dtype, "eye")
    if as_device(device).type == "meta":
        return _finish(_meta((n, m), d), requires_grad)
    return _out(_place(np.eye(n, m, dtype=d.np), d, device, requires_grad), out)

