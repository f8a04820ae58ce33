"""Copies and conversions: clone, contiguous copies, `to` (dtype / device), `copy_`."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._algorithms import fill_value, fills_uninitialized
from .._device import as_device, device
from .._layout import CHANNELS_LAST_RANK
from .._tensor import Tensor, layout_strides
from .._user_warnings import warn_at_user
from .._view import broadcast_shapes, contiguous_strides, like_strides
from ..native import strided
from ._arg_parser_text import not_tensor
from ._common import laid_copy, member_strides, same_meta
from ._float8 import to_float8
from ._half_casts import cast
from .fill import fill_p
from .registry import (
    Member,
    Primitive,
    apply,
    apply_,
    bind,
    bump_version,
    check_inplace,
    check_not_inference,
    check_partial_overlap,
    defbatch,
    deflinear,
    defvjp,
    rename_node,
)

_grad_state = grad_mode.state

# --- clone ---------------------------------------------------------------------


def _clone_kernel(a, *, contiguous=False, dtype=None, strides=None):
    if strides is not None:  # (`relaid`: the copy in these element strides)
        return laid_copy(a, a.shape, strides, a.dtype)
    if dtype is not None and (0 not in a.strides or min(a.strides) < 0):
        # `to(dtype)`: the cast copy in the input's element order (NumPy's order "K", which
        # is PyTorch's but for a broadcast dim: NumPy puts a stride-0 dim innermost)
        return cast_array(a, dtype)
    if contiguous or min(a.strides, default=0) < 0:
        return np.array(a, order="C" if contiguous else "K", copy=True)
    # preserve_format: keep a dense input's strides, else a dense layout in its dim order
    it = a.itemsize
    stride = like_strides(a.shape, tuple(s // it for s in a.strides))
    if dtype is None and stride == contiguous_strides(a.shape):
        return np.array(a, order="C", copy=True)
    return laid_copy(a if dtype is None else cast_array(a, dtype, copy=False), a.shape, stride,
                     a.dtype if dtype is None else dtype.np)


def _clone_meta(x, *, contiguous=False, dtype=None, strides=None):
    d = x._dtype if dtype is None else dtype
    if strides is not None:
        return x._shape, d, tuple(strides)
    if contiguous:
        return x._shape, d
    # (a cast copy too is `empty_like(x)`'s layout, as `to` lays the eager one out)
    return x._shape, d, like_strides(x._shape, x.stride())


# A copy with its own storage: clone (CloneBackward0), or with `dtype` the cast copy that
# `to(dtype)` makes (ToCopyBackward0). The engine casts the gradient back to the input's
# dtype (autograd.engine.fit), so the VJP is the identity either way.
clone_p = Primitive("clone", _clone_kernel, _clone_meta, grad_name=lambda args, params: (
    "CloneBackward0" if params.get("dtype") is None else "ToCopyBackward0"))
defvjp(clone_p, lambda g, out, x, **params: g, reads=((),))


def _clone_native(lib, a, *, contiguous=False, dtype=None, strides=None):
    """The row-major copy of a transposed input in tiles (native/strided.py: NumPy's copy
    walks it a cache line per element); every other copy is NumPy's."""
    if not contiguous or dtype is not None or strides is not None:
        return NotImplemented
    out = strided.transposed_copy(a)
    return NotImplemented if out is None else out


native.register(clone_p, "transpose", _clone_native, min_size=(vars(strided), "MIN_ELEMENTS"))
deflinear(clone_p)


def _clone_batch(args, dims, /, **params):
    """vmap of a copy. A contiguous copy makes each example contiguous, as the loop would:
    the batch dim goes in front first (copied where it stood, the examples would keep the
    batch's strides, and `is_contiguous()` or `as_strided` inside vmap would see those)."""
    x, d = args[0], dims[0]
    if d is not None and params.get("strides") is not None:  # (one example's layout)
        params = dict(params, strides=None)
    if d is None or not params.get("contiguous") or d == 0:
        return bind(clone_p, *args, **params), d
    from .views import move_to_front

    return bind(clone_p, move_to_front(x, d), **params), 0


defbatch(clone_p, _clone_batch)


def clone(x: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage; keeps the graph (CloneBackward0)."""
    contiguous = getattr(memory_format, "name", "") == "contiguous_format"
    if x._vc is None and not grad_mode.state.inference:
        return _inference_copy(x, contiguous)
    out = apply(clone_p, x, contiguous=contiguous)
    return out if contiguous else _strides_kept(x, out)


def _strides_kept(x: Tensor, out: Tensor) -> Tensor:
    """`out`, a preserve_format copy of `x`, showing the strides PyTorch gives it: NumPy
    reports C strides for size-1 dims and empty arrays, PyTorch keeps the input's. Both
    address the same elements, so take PyTorch's."""
    # (out._np None: one example's view of a batch inside vmap, whose layout is the batch's)
    if out._storage is None and out._np is not None \
            and x._stride is not None and x._stride != contiguous_strides(x._shape):
        want = like_strides(x._shape, x._stride)
        if out._ensure_storage() != want:
            out._stride = want
    return out


def relaid(x: Tensor, operands, kind: str | None = None) -> Tensor:
    """`x`, a composite's fresh result, laid out as PyTorch's one pointwise kernel over
    `operands` (tensors and numbers; `kind` a MEMBER_LAYOUT kind) lays its result out."""
    if not x._strided or not all(t._strided for t in operands if isinstance(t, Tensor)):
        return x  # (a sparse layout has no strides)
    return restrided(x, member_strides(operands, x._shape, kind))


def restrided(x: Tensor, want) -> Tensor:
    """`x`, a fresh result of the caller's own ops, with element strides `want` (dense):
    `x` itself when it has them, or when its data lies so and only a size-1 dim's stride
    differs (restrided: nothing views it yet), else a copy so laid (CloneBackward0, the
    node the composite renames)."""
    want = tuple(want)
    if layout_strides(x) == want:
        return x
    a = x._np
    if x._storage is None and a is not None and all(
            n == 1 or s == w * a.itemsize for n, s, w in zip(a.shape, a.strides, want)):
        x._ensure_storage()
        x._stride = want
        return x
    out = apply(clone_p, x, strides=want)
    if out._storage is None and out._np is not None and want != contiguous_strides(x._shape):
        out._ensure_storage()  # (NumPy's flags would report a size-1 dim's stride otherwise)
        out._stride = want
    return out


def clone_contiguous(x: Tensor) -> Tensor:
    return apply(clone_p, x, contiguous=True)


def contiguous_copy(x: Tensor) -> Tensor:
    """`x.contiguous()`'s copy: `clone_contiguous`, or an inference tensor's copy outside
    inference mode as PyTorch makes it (`_inference_copy`)."""
    if x._vc is None and not grad_mode.state.inference:
        return _inference_copy(x, True)
    return apply(clone_p, x, contiguous=True)


def to_memory_format(x: Tensor, memory_format, node: str = "CloneBackward0") -> Tensor:
    """A channels-last copy of `x`, its node named `node` (PyTorch's for the caller)."""
    from .._layout import channels_last_strides

    rank = CHANNELS_LAST_RANK[memory_format.name]
    if x.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    from .creation import empty_strided

    if x._is_wrapper:  # (one example inside vmap: its layout is the batch's to keep)
        last = (0,) + tuple(range(2, rank)) + (1,)
        return x.permute(*last).contiguous().permute(0, rank - 1, *range(1, rank - 1))
    out = empty_strided(x._shape, channels_last_strides(x._shape), dtype=x._dtype,
                        device=x.device).copy_(x)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, node)
    return out


# --- dtype and device conversion ------------------------------------------------------

def cast_array(a: np.ndarray, d: dt.dtype, copy: bool = True) -> np.ndarray:
    """`a` converted to dtype `d` as PyTorch converts (a fresh array when `copy`).

    Complex to real keeps the real part; anything to bool tests != 0; float16 and
    bfloat16 are reached through float32, since PyTorch rounds a double to float
    first and then to 16 bits (which can differ from rounding once).
    """
    if a.dtype == d.np:
        return a.copy(order="K") if copy else a
    if d is dt.bool_:
        return a != 0
    if d in dt.FLOAT8:
        return to_float8(a.real if a.dtype.kind == "c" else a, d)
    if a.dtype.kind == "c" and not d.is_complex:
        a = a.real
    if a.dtype.kind == "V" and d._kind == 1:  # (bfloat16 / float8 to an integer: through
        a = a.astype(np.float32)              # float, C's wrap; ml_dtypes 0.7 gives 0)
    if a.dtype.kind not in "fcV" or a.dtype.itemsize <= d.itemsize and d._kind != 1:
        if d.itemsize == 2 and d._kind == 2 and a.dtype.itemsize > 2:
            a = a.astype(np.float32)  # int -> float -> half, as PyTorch converts
        return cast(a, d.np)  # nothing to overflow
    # narrowing floats overflow to inf and float -> int keeps C's result, as in PyTorch
    with np.errstate(over="ignore", invalid="ignore"):
        if d.itemsize == 2 and d._kind == 2 and a.dtype != np.float32:
            a = a.astype(np.float32)
        return cast(a, d.np)


def _drops_imaginary(src: dt.dtype, dst: dt.dtype) -> bool:
    """Whether a cast loses imaginary parts (and so warns): complex to a real dtype, except
    bool, which tests the whole value against zero."""
    return src.is_complex and not dst.is_complex and dst is not dt.bool_


def _warn_imaginary_dropped() -> None:
    # NOTE: PyTorch warns from one TORCH_WARN_ONCE in its copy kernel: once a process, for
    # casts and copy_ alike, whatever the warnings filters say.
    warn_at_user("Casting complex values to real discards the imaginary part", once=True)


def _cast(x: Tensor, dtype: dt.dtype, copy: bool = False) -> Tensor:
    if dtype is x._dtype and not copy:
        return x
    if _drops_imaginary(x._dtype, dtype):
        _warn_imaginary_dropped()
    if x._vc is None and not grad_mode.state.inference:
        return _inference_copy(x, False, dtype)
    return _strides_kept(x, apply(clone_p, x, dtype=dtype))


def _inference_copy(x: Tensor, contiguous: bool, dtype: dt.dtype | None = None) -> Tensor:
    """A copy (clone, cast) of an inference tensor outside inference mode, as PyTorch makes
    it: without autograd's kernel (the tensor has no autograd key), so as its composite
    does, a new normal tensor written by `copy_`. Its version is 1, and when `x` requires
    grad (made so in inference mode) the copy joins the graph as CopyBackwards."""
    from .creation import empty_strided

    shape = x._shape
    stride = contiguous_strides(shape) if contiguous else like_strides(shape, x.stride())
    out = empty_strided(shape, stride, dtype=x._dtype if dtype is None else dtype)
    return copy_(out, x)


def _to_device(x: Tensor, dev: device, dtype: dt.dtype | None) -> Tensor:
    from .device_copy import to_device

    return to_device(x, dev, dtype)


# `Tensor.to`'s overloads as torch prints them (`Module.to` parses the same ones).
_TO_OVERLOADS = (
    "(torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)",
    "(torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
    "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
)
# each overload's positional parameters, with whether None is accepted
_TO_PARAMS = ((("device", True), ("dtype", True), ("non_blocking", False), ("copy", False)),
              (("dtype", False), ("non_blocking", False), ("copy", False)),
              (("tensor", False), ("non_blocking", False), ("copy", False)))


def _to_fits(name: str, value, optional: bool) -> bool:
    """Whether torch's argument parser takes `value` for `to`'s parameter `name`."""
    if value is None:
        return optional or name == "memory_format"
    if name == "device":
        return isinstance(value, (str, device)) or (isinstance(value, int)
                                                    and not isinstance(value, bool))
    if name == "dtype":
        # NOTE: the dtype-first overload also takes a Python number, read as its type's dtype
        # (torch: `t.to(2.5)` is float64, `t.to(True)` bool), the device-first one does not.
        return isinstance(value, dt.dtype) or (value.__class__ is type and value in dt._PY_TYPES) \
            or (not optional and value.__class__ in dt._PY_TYPES)
    if name == "tensor":
        return isinstance(value, Tensor)
    if name == "memory_format":
        from .._layout import memory_format

        return isinstance(value, memory_format)
    return isinstance(value, (bool, np.bool_))


def parse_to(args: tuple, kwargs: dict) -> dict:
    """Read `to(...)`'s arguments against its three overloads, in torch's order (the first
    that fits wins): a dict of device, dtype, non_blocking, copy and memory_format, or
    torch's TypeError listing the overloads."""
    for params in _TO_PARAMS:
        if len(args) > len(params):
            continue
        names = [n for n, _ in params]
        got = dict(zip(names, args))
        optional = dict(params)
        if any(k in got or (k not in optional and k != "memory_format") for k in kwargs):
            continue
        got.update(kwargs)
        if not all(_to_fits(k, v, optional.get(k, True)) for k, v in got.items()):
            continue
        if any(not opt and n not in got for n, opt in params[:1]):
            continue
        if "tensor" in got:
            got["device"], got["dtype"] = got["tensor"].device, got["tensor"]._dtype
        elif got.get("dtype").__class__ in dt._PY_TYPES:
            got["dtype"] = got["dtype"].__class__
        return {"device": None if got.get("device") is None else as_device(got["device"]),
                "dtype": dt.as_dtype(got.get("dtype")),
                "non_blocking": bool(got.get("non_blocking", False)),
                "copy": bool(got.get("copy", False)),
                "memory_format": got.get("memory_format")}
    from ._arg_parser_text import invalid_combination

    raise invalid_combination("to", _TO_OVERLOADS, args, kwargs)


def _parse_to(args, kwargs):
    if not kwargs and len(args) == 1:  # (hot: `x.to(dtype)`, `x.to("cpu")`, `x.to(other)`)
        a = args[0]
        cls = a.__class__
        if cls is dt.dtype:
            return None, a, False, None
        if cls is str or cls is device:
            return as_device(a), None, False, None
        if isinstance(a, Tensor):
            return a.device, a._dtype, False, None
    r = parse_to(args, kwargs)
    return r["device"], r["dtype"], r["copy"], r["memory_format"]


def to(x: Tensor, *args, **kwargs) -> Tensor:
    """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(other)`; no copy when nothing changes."""
    dev, dtype, copy, fmt = _parse_to(args, kwargs)
    if dev is not None and dev != x.device:
        x = _to_device(x, dev, dtype)
    elif dtype is None:
        x = clone(x) if copy else x
    else:
        x = _cast(x, dtype, copy)
    name = getattr(fmt, "name", "preserve_format")
    if name in CHANNELS_LAST_RANK:
        from .conv import channels_last_like

        # (an alias only where PyTorch's suggest_memory_format() already says so)
        if x.ndim != CHANNELS_LAST_RANK[name] or not channels_last_like(x):
            x = to_memory_format(x, fmt, "ToCopyBackward0")
    elif name != "preserve_format":
        from .movement import contiguous

        x = contiguous(x, memory_format=fmt)
    return x


def type_(x: Tensor, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return _legacy_type_name(x)
    if isinstance(dtype, str):
        from .legacy_constructors import legacy_type_dtype

        dtype = legacy_type_dtype(dtype)
    if isinstance(dtype, type) and hasattr(dtype, "_ember_dtype"):
        dtype = dtype._ember_dtype
    elif isinstance(dtype, type):
        raise ValueError(f"invalid type: '{dtype.__name__}'")
    elif not isinstance(dtype, dt.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return _cast(x, dtype)


def _legacy_type_name(x: Tensor) -> str:
    from ._common import type_name

    return f"torch.{type_name(x._dtype)}Tensor"


def _converter(d: dt.dtype):
    def convert(x: Tensor, memory_format=None) -> Tensor:
        return _cast(x, d)

    convert.__name__ = d.name
    return convert


def cpu(x: Tensor, memory_format=None) -> Tensor:
    return to(x, "cpu")


def cuda(x: Tensor, device=None, non_blocking=False, memory_format=None) -> Tensor:
    dev = as_device("cuda" if device is None else device)  # a bare int needs a GPU
    if dev.type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    return to(x, dev)


# --- copy_ ----------------------------------------------------------------------

def _copy_kernel(dst, src):
    out = np.empty(dst.shape, dst.dtype)
    np.copyto(out, cast_array(src, dt.from_numpy(dst.dtype), copy=False))
    return out


# `src` cast and broadcast to `dst`: the write `copy_` makes, a member of `fill`
COPY = Member(fill_p, "copy", _copy_kernel, lambda dst, src: same_meta(dst),
              grad_name="CopyBackwards")
defvjp(COPY, lambda g, out, dst, src: g * 0, lambda g, out, dst, src: g, reads=((), ()))


def _copy_native(lib, dst, src):
    """`copy_` from a transposed source of the destination's shape and dtype, in tiles."""
    if src.dtype != dst.dtype or src.shape != dst.shape:
        return NotImplemented
    out = strided.transposed_copy(src)
    return NotImplemented if out is None else out


native.register(COPY, "transpose", _copy_native, min_size=(vars(strided), "MIN_ELEMENTS"))
deflinear(COPY)


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Write `src` (broadcast, cast, from any device) into `self`; a number is taken as a
    0-d tensor (PyTorch's hidden overload), anything else refused as its parser does."""
    if not isinstance(src, Tensor):
        if not isinstance(src, (int, float, complex, np.number, np.bool_)):
            raise not_tensor("copy_", "other", 1, src)  # (a method only: `self` uncounted)
        from .creation import tensor

        src = tensor(src)
    broadcast = broadcast_shapes(self._shape, src._shape)
    if broadcast != self._shape:
        raise RuntimeError(
            f"output with shape {list(self._shape)} doesn't match the broadcast shape "
            f"{list(broadcast)}"
        )
    if src.device != self.device:
        if self.device.type == "meta":
            check_inplace(self)
            return self
        src = _to_device(src, self.device, None)
    if _drops_imaginary(src._dtype, self._dtype):
        _warn_imaginary_dropped()
    if src._storage is self._storage:  # (a view of itself: refused where they partly overlap)
        check_partial_overlap(self, (src,))
    return apply_(fill_p, self, src, fn=COPY)


# --- resize_ ---------------------------------------------------------------------

def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Reshape in place to `sizes` (row-major), growing the storage if it is too small.

    Elements past the old ones are uninitialised, as in PyTorch.
    """
    from .._view import contiguous_strides, numel
    from .creation import _sizes

    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    check_not_inference(self)
    shape = _sizes(sizes, "resize_")
    storage = self._ensure_storage_obj()
    need = (self._offset + numel(shape)) * self._dtype.itemsize
    if need > storage.nbytes() and storage.data is not None:
        grown = np.zeros(need, np.uint8)
        old = storage.bytes
        grown[:old.size] = old
        if fills_uninitialized():  # (deterministic mode: the new elements, as PyTorch fills)
            size = self._dtype.itemsize
            first = -(-old.size // size)
            grown[first * size:].view(self._dtype.np)[:] = fill_value(self._dtype.np)
        storage.data, storage._bytes, storage._nbytes = grown, grown, need
    elif need > storage.nbytes():
        storage._nbytes = need
    self._shape = shape
    self._stride = contiguous_strides(shape)
    self._np = None
    bump_version(self)
    return self


def resize_as_(self: Tensor, other: Tensor, memory_format=None) -> Tensor:
    return resize_(self, other._shape)


def xpu(x: Tensor, device=None, non_blocking=False, memory_format=None) -> Tensor:
    return to(x, "xpu" if device is None else device)


def ipu(x: Tensor, device=None, non_blocking=False, memory_format=None) -> Tensor:
    return to(x, "ipu" if device is None else device)


def mtia(x: Tensor, device=None, non_blocking=False, memory_format=None) -> Tensor:
    return to(x, "mtia" if device is None else device)


def pin_memory(x: Tensor, device=None) -> Tensor:
    """Page-locked host memory is for copies to a GPU: PyTorch's CPU build refuses it."""
    from ..backends.cuda import is_available

    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return x  # NOTE: CuPy copies from ordinary host memory; nothing to pin


def is_pinned(x: Tensor, device=None) -> bool:
    return False


TENSOR_METHODS = {
    "resize_": resize_, "resize_as_": resize_as_, "xpu": xpu, "ipu": ipu, "mtia": mtia,
    "pin_memory": pin_memory,
    "is_pinned": is_pinned,
    "clone": clone, "to": to, "type": type_, "cpu": cpu, "cuda": cuda, "copy_": copy_,
    "float": _converter(dt.float32), "double": _converter(dt.float64),
    "half": _converter(dt.float16), "bfloat16": _converter(dt.bfloat16),
    "long": _converter(dt.int64), "int": _converter(dt.int32), "short": _converter(dt.int16),
    "char": _converter(dt.int8), "byte": _converter(dt.uint8), "bool": _converter(dt.bool_),
    "cfloat": _converter(dt.complex64), "cdouble": _converter(dt.complex128),
}

__all__ = ["clone"]
