"""The stand-ins for the globals a checkpoint may name: markers for storage classes,
`torch.Tensor` and `Parameter`; the storages read from a file (`_LoadedStorage`);
and the functions that replace PyTorch's tensor rebuilds (`_rebuild_tensor_v2` & co.,
which check every view against the bytes present before making it) and the
containers and small values a pickle may construct (OrderedDict, set, complex,
torch.Size, torch.device ...), each checking its arguments. Which name maps to which
stand-in is decided in `_allowlist.py`.

Anything a stand-in builds beyond what the file literally holds (copies of memoised
bytes, containers copied from a list, views materialised for their neg/conj bits) is
charged to the load's byte budget first (`_limits.charge`), and error messages name
values with `_limits.describe`, never their repr.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

import numpy as np

from .. import _dtype as dt
from .._device import device as _device
from .._storage import Storage
from ._limits import charge, describe
from ._unpickler import UnpicklingError


class _StorageType:
    """Marker for `torch.FloatStorage` & co.: it names a dtype, nothing more."""

    __slots__ = ("dtype_name",)

    def __init__(self, dtype_name: str | None) -> None:
        self.dtype_name = dtype_name  # None for torch.UntypedStorage


class _Marker:
    """A global that is only ever compared against, never called (`torch.Tensor`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


_TENSOR_TYPE = _Marker("torch.Tensor")
_PARAMETER_TYPE = _Marker("torch.nn.parameter.Parameter")


class _LoadedStorage:
    """A storage read from a file: the ember Storage plus what the file said about it."""

    __slots__ = ("storage", "dtype", "numel", "location")

    def __init__(self, storage: Storage, dtype: dt.dtype | None, numel: int,
                 location: str) -> None:
        self.storage = storage
        self.dtype = dtype
        self.numel = numel
        self.location = location


def _int(x, what: str) -> int:
    if type(x) is not int:
        raise UnpicklingError(f"{what} must be an int, got {type(x).__name__}")
    if not -2**63 <= x < 2**63:
        raise UnpicklingError(f"{what} {describe(x)} does not fit in 64 bits")
    return x


def _ints(x, what: str) -> tuple[int, ...]:
    if not isinstance(x, (tuple, list)) or len(x) > 64:
        raise UnpicklingError(f"{what} must be a tuple of at most 64 ints")
    return tuple(_int(v, what) for v in x)


_MAX_NUMEL = 2**48
_SLOT = 64  # bytes charged per item of a container a stand-in copies


def _make_tensor(st, offset, size, stride, requires_grad, dtype: dt.dtype, metadata=None):
    """A tensor viewing a loaded storage, after checking the view stays inside it."""
    from .._tensor import _make

    if not isinstance(st, _LoadedStorage):
        raise UnpicklingError("a tensor's storage must come from the file's storage records")
    offset = _int(offset, "storage offset")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride):
        raise UnpicklingError(f"size {size} and stride {stride} have different lengths")
    if offset < 0 or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise UnpicklingError(f"negative offset, size or stride in a tensor view "
                              f"(offset {offset}, size {size}, stride {stride})")
    if type(requires_grad) is not bool:
        raise UnpicklingError("requires_grad must be a bool")
    if st.dtype is not None and st.dtype is not dtype:
        raise UnpicklingError(f"a {dtype!r} tensor cannot view a {st.dtype!r} storage")
    capacity = st.storage.nbytes() // dtype.itemsize
    numel = 1
    for n in size:
        numel *= n
    if numel > _MAX_NUMEL:
        raise UnpicklingError(f"a tensor of {numel} elements is beyond any checkpoint")
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if numel else offset - 1
    if last >= capacity or offset > capacity:
        raise UnpicklingError(
            f"tensor view (offset {offset}, size {list(size)}, stride {list(stride)}) reaches "
            f"element {last}, past the end of its storage of {capacity} elements")
    if metadata:
        if not isinstance(metadata, dict) or set(metadata) - {"conj", "neg"}:
            raise UnpicklingError(f"unsupported tensor metadata ({describe(metadata)} with "
                                  "keys other than 'conj' and 'neg')")
    t = _make(st.storage, size, stride, offset, dtype)
    if metadata and (metadata.get("conj") or metadata.get("neg")):
        from ..ops.creation import tensor as _tensor

        # NOTE: ember has no lazy neg/conj bits, so this copies the view: a stride-0 view
        # of a few bytes would become gigabytes. Charge the copies before making them.
        copies = bool(metadata.get("conj")) + bool(metadata.get("neg")) + 1
        charge(copies * numel * dtype.itemsize,
               f"materialising the neg/conj bits of a {numel}-element tensor view")
        a = t.numpy()
        a = np.conj(a) if metadata.get("conj") else a
        t = _tensor(-a if metadata.get("neg") else a.copy())
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks, metadata=None):
    _check_hooks(hooks)
    if not isinstance(storage, _LoadedStorage) or storage.dtype is None:
        raise UnpicklingError("_rebuild_tensor_v2 needs a typed storage")
    return _make_tensor(storage, offset, size, stride, requires_grad, storage.dtype, metadata)


def _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype,
                       metadata=None):
    _check_hooks(hooks)
    if not isinstance(dtype, dt.dtype):
        raise UnpicklingError("_rebuild_tensor_v3 needs a dtype")
    return _make_tensor(storage, offset, size, stride, requires_grad, dtype, metadata)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    from .._tensor import _meta

    if not isinstance(dtype, dt.dtype):
        raise UnpicklingError("_rebuild_meta_tensor_no_storage needs a dtype")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    if len(size) != len(stride) or min(size + stride, default=0) < 0:
        raise UnpicklingError(f"bad meta tensor size {size} / stride {stride}")
    t = _meta(size, dtype, stride)
    return t.requires_grad_(True) if requires_grad is True else t


def _check_hooks(hooks) -> None:
    if not isinstance(hooks, dict) or hooks:
        raise UnpicklingError("tensor backward hooks must be an empty OrderedDict")


def _as_parameter(data, requires_grad):
    from .._tensor import Tensor

    if not isinstance(data, Tensor) or type(requires_grad) is not bool:
        raise UnpicklingError("_rebuild_parameter needs a tensor and a bool")
    try:
        from ..nn.parameter import Parameter
    except ImportError:
        return data.requires_grad_(requires_grad)
    return Parameter(data, requires_grad)


def _rebuild_parameter(data, requires_grad, hooks):
    _check_hooks(hooks)
    return _as_parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, hooks, state):
    _check_hooks(hooks)
    return _set_attrs(_as_parameter(data, requires_grad), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_REBUILDS_STANDIN) or not isinstance(args, tuple):
        raise UnpicklingError("_rebuild_from_type_v2 may only wrap a tensor rebuild")
    t = func(*args)
    if new_type is _PARAMETER_TYPE:
        t = _as_parameter(t, t.requires_grad)
    elif new_type is not _TENSOR_TYPE:
        raise UnpicklingError("tensor subclasses are not supported by ember.load")
    return _set_attrs(t, state)


def _set_attrs(obj, state):
    """Python attributes saved with a tensor: plain names and data values only."""
    if isinstance(state, tuple) and len(state) == 2:
        state = {**(state[0] or {}), **(state[1] or {})}
    if state is None:
        return obj
    if not isinstance(state, dict):
        raise UnpicklingError("tensor state must be a dict")
    for k, v in state.items():
        if not isinstance(k, str) or not k.isidentifier() or k.startswith("_"):
            # NOTE: underscore names would reach the tensor's own internals (_storage ...)
            raise UnpicklingError(f"refusing to set attribute {describe(k)} on a tensor")
        setattr(obj, k, v)
    return obj


def _ordered_dict(items=()):
    if not isinstance(items, (list, tuple, dict)):
        raise UnpicklingError("OrderedDict() takes a list of pairs")
    charge(_SLOT * len(items), f"OrderedDict() of {len(items)} items")
    pairs = items.items() if isinstance(items, dict) else items
    out = OrderedDict()
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise UnpicklingError("OrderedDict() takes a list of pairs")
        out[pair[0]] = pair[1]
    return out


def _counter(items=()):
    if not isinstance(items, dict):
        raise UnpicklingError("Counter() takes a dict")
    charge(_SLOT * len(items), f"Counter() of {len(items)} items")
    return Counter(items)


def _collection(kind):
    def build(items=()):
        if not isinstance(items, (list, tuple, set, frozenset)):
            raise UnpicklingError(f"{kind.__name__}() takes a list")
        charge(_SLOT * len(items), f"{kind.__name__}() of {len(items)} items")
        return kind(items)

    return build


def _complex(re=0.0, im=0.0):
    if not all(type(v) in (int, float) for v in (re, im)):
        raise UnpicklingError("complex() takes two numbers")
    return complex(re, im)


def _bytearray(data=b""):
    if isinstance(data, (bytes, bytearray)):
        charge(len(data), f"bytearray() of {len(data)} bytes")
        return bytearray(data)
    raise UnpicklingError("bytearray() takes bytes")


def _encode(text, encoding="utf-8"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise UnpicklingError("_codecs.encode is allowed only as (str, 'latin1')")
    charge(len(text), f"_codecs.encode() of {len(text)} characters")
    return text.encode("latin1")


def _bytes_empty(*args):
    if args:
        raise UnpicklingError("bytes() is allowed only without arguments")
    return b""


def _size(dims=()):
    from .._tensor import Size

    return Size(_ints(dims, "torch.Size"))


def _device_of(kind, index=None):
    if not isinstance(kind, str) or len(kind) > 32 or index is not None and type(index) is \
            not int:
        raise UnpicklingError("torch.device() takes a device string")
    try:
        return _device(kind) if index is None else _device(kind, index)
    except (RuntimeError, TypeError) as e:
        raise UnpicklingError(f"bad device in checkpoint: {e}") from None


def _get_layout(name):
    from .. import _layout

    if name != "torch.strided":
        raise UnpicklingError(f"layout {describe(name)} is not supported by ember")
    return _layout.strided


_REBUILDS_STANDIN = (_rebuild_tensor_v2, _rebuild_tensor_v3)
