"""`ember.save` / `ember.load`: PyTorch's checkpoint files, read and written without torch.

The format (torch >= 1.6) is a stored ZIP holding `data.pkl` (a protocol-2 pickle)
and one raw little-endian blob per storage, `data/<key>`. A tensor in the pickle
is a call to `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`
whose storage is a persistent id `('storage', torch.FloatStorage, key, 'cpu',
numel)`; tensors that share a key share memory (views, tied weights).

Loading is data-only: the pickle runs on ember's own interpreter (`_unpickler.py`)
against a fixed table of stand-ins, so no code named in a file ever runs. Every
view is checked against the bytes actually present before it is made. Files from
`torch.save` load here (also the pre-1.6 "legacy" stream format), and files from
`ember.save` load in `torch.load` with its default `weights_only=True`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import mmap as _mmap
import os
import re
import sys
import weakref
import zipfile
from collections import Counter, OrderedDict

import ml_dtypes
import numpy as np

from .. import _dtype as dt
from .._device import CPU, META
from .._device import device as _device
from .._storage import Storage
from ._pickler import Pickler
from ._unpickler import Unpickler, UnpicklingError
from ._zip import ZipWriter, payload_offset

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "UnpicklingError",
           "CheckpointError"]


class CheckpointError(RuntimeError):
    """A file is not a readable checkpoint: truncated, corrupt, or of another kind."""


# --- dtypes and storage classes ----------------------------------------------------------

_STORAGE_CLASSES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
_CLASS_OF = {v: k for k, v in _STORAGE_CLASSES.items()}
# dtypes PyTorch writes through untyped storages (_rebuild_tensor_v3); ember has no
# dtype of its own for them, so they load as extra dtype objects (see _extra_dtype).
_V3_NUMPY = {
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu,
}
_UNSUPPORTED_DTYPES = {
    "complex32", "chalf", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
    "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
} | {f"uint{i}" for i in range(1, 8)} | {f"int{i}" for i in range(1, 8)}
_EXTRA: dict[str, dt.dtype] = {}


def _extra_dtype(name: str) -> dt.dtype:
    """An ember dtype object for a PyTorch dtype ember has no arithmetic for: enough to
    hold, view, save and `.numpy()` such tensors."""
    d = _EXTRA.get(name)
    if d is None:
        np_dtype = np.dtype(_V3_NUMPY[name])
        d = _EXTRA[name] = dt.dtype(name, np_dtype, 9, 2 if "float" in name else 1)
    return d


def _dtype_named(name: str) -> dt.dtype:
    if name in dt.BY_NAME:
        return dt.BY_NAME[name]
    if name in _V3_NUMPY:
        return _extra_dtype(name)
    raise UnpicklingError(f"dtype torch.{name} is not supported by ember")


# --- save ------------------------------------------------------------------------------------

def _is_parameter(t) -> bool:
    try:
        from ..nn.parameter import Parameter
    except ImportError:  # NOTE: resolved lazily; ember.nn may be absent or partial
        return type(t).__name__ == "Parameter"
    return isinstance(t, Parameter)


def _describe(t) -> dict:
    """What the pickler needs to know about a tensor (see _pickler.save_tensor)."""
    s = t._ensure_storage_obj()
    d = t._dtype
    untyped = d.name not in _CLASS_OF
    if not untyped and d.name not in dt.BY_NAME:
        raise TypeError(f"ember.save cannot write tensors of dtype {d!r}")
    dev = s.device
    location = "cpu" if dev.type == "cpu" else str(dev) if dev.index is not None \
        else f"{dev.type}:0" if dev.type == "cuda" else dev.type
    nbytes = s.nbytes()
    if not untyped and nbytes % d.itemsize:
        raise RuntimeError(f"storage of {nbytes} bytes does not hold whole {d!r} elements")
    return {
        "meta": dev.type == "meta", "storage": s, "dtype": d, "location": location,
        "untyped": untyped,
        "storage_numel": nbytes if untyped else nbytes // d.itemsize,
        "offset": t._offset, "size": t._shape, "stride": t.stride(),
        "requires_grad": t.requires_grad, "parameter": _is_parameter(t),
    }


def _storage_class_name(rec) -> tuple[str, str]:
    if rec.untyped:
        return "torch.storage", "UntypedStorage"
    return "torch", _CLASS_OF[rec.dtype.name]


def _storage_bytes(s: Storage) -> memoryview:
    """A storage's raw bytes (copied to the host when it lives elsewhere)."""
    n = s.nbytes()
    if s.device.type == "cpu":
        return memoryview(s.bytes[:n])
    if s.device.type == "meta":
        return memoryview(b"")
    from .._tensor import _make

    host = _make(s, (n,), (1,), 0, dt.uint8).cpu()
    return memoryview(np.ascontiguousarray(host.numpy()))


def save(obj, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write `obj` (tensors, state_dicts, optimizer states, nested containers) to `f`, a
    path or a binary file object, in PyTorch's zip checkpoint format."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save writes only the zip format (torch >= 1.6); "
                                  "ember.load still reads legacy files")
    if not 2 <= pickle_protocol <= 5:
        raise ValueError(f"pickle_protocol must be between 2 and 5, got {pickle_protocol}")
    pickler = Pickler(pickle_protocol, _describe, _storage_class_name)
    data_pkl = pickler.dump(obj)
    records = [("data.pkl", data_pkl), (".format_version", b"1"),
               (".storage_alignment", b"64")]
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode()))
    digest = hashlib.sha1(data_pkl)
    for rec in pickler.storages.values():
        payload = _storage_bytes(rec.storage)
        digest.update(payload)
        records.append((f"data/{rec.key}", payload))
    records.append(("version", b"3\n"))
    # NOTE: PyTorch uses a random id; a content hash makes ember's files reproducible.
    records.append((".data/serialization_id",
                    str(int(digest.hexdigest(), 16) % 10**40).zfill(40).encode()))
    if isinstance(f, (str, os.PathLike)):
        prefix = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        with open(f, "wb") as stream:
            _write_zip(stream, prefix, records)
    else:
        _write_zip(f, "archive", records)


def _write_zip(stream, prefix: str, records) -> None:
    writer = ZipWriter(stream)
    for name, payload in records:
        writer.add(f"{prefix}/{name}", payload)
    writer.close()


# --- the allowlist: stand-ins for the globals a checkpoint may name --------------------------

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
    return x


def _ints(x, what: str) -> tuple[int, ...]:
    if not isinstance(x, (tuple, list)) or len(x) > 64:
        raise UnpicklingError(f"{what} must be a tuple of at most 64 ints")
    return tuple(_int(v, what) for v in x)


_MAX_NUMEL = 2**48


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
            raise UnpicklingError(f"unsupported tensor metadata {metadata!r}")
    t = _make(st.storage, size, stride, offset, dtype)
    if metadata and (metadata.get("conj") or metadata.get("neg")):
        from ..ops.creation import tensor as _tensor

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
            raise UnpicklingError(f"refusing to set attribute {k!r} on a tensor")
        setattr(obj, k, v)
    return obj


def _ordered_dict(items=()):
    if not isinstance(items, (list, tuple, dict)):
        raise UnpicklingError("OrderedDict() takes a list of pairs")
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
    return Counter(items)


def _collection(kind):
    def build(items=()):
        if not isinstance(items, (list, tuple, set, frozenset)):
            raise UnpicklingError(f"{kind.__name__}() takes a list")
        return kind(items)

    return build


def _complex(re=0.0, im=0.0):
    if not all(type(v) in (int, float) for v in (re, im)):
        raise UnpicklingError("complex() takes two numbers")
    return complex(re, im)


def _bytearray(data=b""):
    if isinstance(data, (bytes, bytearray)):
        return bytearray(data)
    raise UnpicklingError("bytearray() takes bytes")


def _encode(text, encoding="utf-8"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise UnpicklingError("_codecs.encode is allowed only as (str, 'latin1')")
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
        raise UnpicklingError(f"layout {name!r} is not supported by ember")
    return _layout.strided


_REBUILDS_STANDIN = (_rebuild_tensor_v2, _rebuild_tensor_v3)
_CALLABLE = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
    "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    "collections.OrderedDict": _ordered_dict,
    "collections.Counter": _counter,
    "builtins.set": _collection(set),
    "builtins.frozenset": _collection(frozenset),
    "builtins.complex": _complex,
    "builtins.bytearray": _bytearray,
    "builtins.bytes": _bytes_empty,
    "_codecs.encode": _encode,
    "torch.Size": _size,
    "torch.device": _device_of,
    "torch.serialization._get_layout": _get_layout,
}
_CALLABLES = set(map(id, _CALLABLE.values()))
_KNOWN_UNSUPPORTED = {
    "torch._utils._rebuild_sparse_tensor": "sparse tensors",
    "torch._utils._rebuild_qtensor": "quantized tensors",
    "torch._utils._rebuild_nested_tensor": "nested tensors",
    "torch._utils._rebuild_wrapper_subclass": "tensor subclasses",
    "torch._utils._rebuild_device_tensor_from_numpy": "tensors rebuilt from NumPy",
    "torch._utils._rebuild_xla_tensor": "XLA tensors",
    "torch._tensor._rebuild_from_type": "tensor subclasses",
}
_NEVER = ("os", "posix", "nt", "sys", "subprocess", "importlib", "runpy", "shutil", "socket",
          "pty", "ctypes", "code", "pickle", "marshal", "types")
_NEVER_BUILTINS = {"eval", "exec", "compile", "getattr", "setattr", "delattr", "__import__",
                   "open", "input", "globals", "locals", "vars", "breakpoint", "apply",
                   "execfile", "memoryview", "type", "object", "super", "classmethod"}
_safe: dict[str, object] = {}


def _find_global(module: str, name: str):
    module = "builtins" if module == "__builtin__" else module
    full = f"{module}.{name}"
    top = module.split(".")[0]
    if top in _NEVER or module == "builtins" and name in _NEVER_BUILTINS:
        raise UnpicklingError(f"refusing global {full}: a checkpoint never needs it")
    if full in _CALLABLE:
        return _CALLABLE[full]
    if module in ("torch", "torch.storage", "torch.cuda"):
        if name in _STORAGE_CLASSES:
            return _StorageType(_STORAGE_CLASSES[name])
        if name == "UntypedStorage":
            return _StorageType(None)
        if name in dt.BY_NAME or name in _V3_NUMPY:
            return _dtype_named(name)
        if name in _UNSUPPORTED_DTYPES:
            raise UnpicklingError(f"dtype torch.{name} is not supported by ember")
    if full in ("torch.Tensor", "torch._tensor.Tensor"):
        return _TENSOR_TYPE
    if full == "torch.nn.parameter.Parameter":
        return _PARAMETER_TYPE
    if full in _KNOWN_UNSUPPORTED:
        raise UnpicklingError(f"{_KNOWN_UNSUPPORTED[full]} ({full}) are not supported by "
                              "ember.load")
    if full in _safe:
        return _safe[full]
    if _whole_models[0] and (cls := _imported_module_class(module, name)) is not None:
        _safe[full] = cls  # for this load only (load() restores the allowlist)
        return cls
    raise UnpicklingError(
        f"refusing global {full}: ember.load builds only tensors, containers, numbers and "
        "strings. If you trust this file and the class, allow it with "
        "ember.serialization.add_safe_globals([...])")


_whole_models = [False]


def _imported_module_class(module: str, name: str):
    """The nn.Module subclass `module.name` if the program has already imported it, else None.

    `load(..., weights_only=False)` of a whole pickled model names the model's classes;
    they are code the program itself loaded, so rebuilding them runs nothing from the file.
    """
    from ..nn.modules.module import Module

    obj = sys.modules.get(module)
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, Module) else None


def _call(fn, args):
    if id(fn) in _CALLABLES or any(fn is v for v in _safe.values()):
        try:
            return fn(*args)
        except UnpicklingError:
            raise
        except (TypeError, ValueError) as e:
            raise UnpicklingError(f"bad arguments in checkpoint: {e}") from None
    if isinstance(fn, _StorageType):
        raise UnpicklingError("refusing to call a storage class: storages come only from "
                              "the file's storage records")
    raise UnpicklingError(f"refusing to call {type(fn).__name__} object {fn!r}")


def _build(obj, state) -> None:
    if type(obj) is OrderedDict and isinstance(state, dict) and set(state) <= {"_metadata"}:
        for k, v in state.items():
            setattr(obj, k, v)
        return
    if any(type(obj) is v for v in _safe.values()):
        setstate = getattr(obj, "__setstate__", None)
        if setstate is not None and not isinstance(state, dict):
            setstate(state)
        elif isinstance(state, dict):
            obj.__dict__.update(state)
        else:
            raise UnpicklingError(f"cannot restore state of {type(obj).__name__}")
        return
    raise UnpicklingError(f"refusing BUILD on a {type(obj).__name__}: only an OrderedDict's "
                          "_metadata may be restored that way")


def _newobj(cls, args):
    if isinstance(cls, type) and any(cls is v for v in _safe.values()):
        return cls.__new__(cls, *args)
    raise UnpicklingError(f"refusing NEWOBJ of {cls!r}: only classes allowlisted with "
                          "ember.serialization.add_safe_globals may be instantiated")


# --- user allowlist (PyTorch's add_safe_globals) -----------------------------------------------

def add_safe_globals(safe_globals) -> None:
    """Allow checkpoints to name these classes or functions (objects, or (object, "module.name")
    pairs). ember.load will call them with the file's arguments: list only what you trust."""
    for item in safe_globals:
        obj, name = item if isinstance(item, tuple) else (item, None)
        name = name or f"{obj.__module__}.{obj.__qualname__}"
        module, _, short = name.rpartition(".")
        if module.split(".")[0] in _NEVER or module == "builtins" and short in _NEVER_BUILTINS:
            raise ValueError(f"{name} can never be allowed in a checkpoint")
        _safe[name] = obj


def get_safe_globals() -> list:
    return list(_safe.values())


def clear_safe_globals() -> None:
    _safe.clear()


@contextlib.contextmanager
def safe_globals(globals_list):
    """Allow these globals inside the `with` block only."""
    saved = dict(_safe)
    add_safe_globals(globals_list)
    try:
        yield
    finally:
        _safe.clear()
        _safe.update(saved)


# --- load --------------------------------------------------------------------------------------

_KEY = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_LOCATION = re.compile(r"[a-z]{2,16}(:[0-9]{1,4})?")
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def _target_device(location: str, map_location):
    if map_location is None:
        return _device(location)
    if isinstance(map_location, (str, _device)):
        return _device(map_location)
    if isinstance(map_location, dict):
        return _device(map_location.get(location, location))
    raise TypeError(f"unsupported map_location {map_location!r}")


class _Reader:
    """Turns storage records into ember Storages, honouring map_location."""

    def __init__(self, fetch, byteorder: str, map_location) -> None:
        self.fetch = fetch  # (key, np_dtype, nbytes) -> 1-D array or None
        self.byteorder = byteorder
        self.map_location = map_location
        self.seen: dict[str, _LoadedStorage] = {}

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) not in (5, 6) or pid[0] != "storage":
            raise UnpicklingError("a persistent id must be ('storage', class, key, location, "
                                  "numel)")
        cls, key, location, numel = pid[1:5]
        if not isinstance(cls, _StorageType):
            raise UnpicklingError("a persistent id must name a storage class")
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise UnpicklingError(f"bad storage key {key!r}")
        if not isinstance(location, str) or not _LOCATION.fullmatch(location):
            raise UnpicklingError(f"bad storage location {location!r}")
        numel = _int(numel, "storage size")
        if len(pid) == 6 and pid[5] is not None:
            raise UnpicklingError("storage views from torch < 0.4 are not supported")
        d = None if cls.dtype_name is None else _dtype_named(cls.dtype_name)
        old = self.seen.get(key)
        if old is not None:
            if old.dtype is not d or old.numel != numel:
                raise UnpicklingError(f"storage {key} is described twice with different "
                                      "dtypes or sizes")
            return old
        itemsize = 1 if d is None else d.itemsize
        if numel < 0 or numel * itemsize > 2**48:
            raise UnpicklingError(f"storage {key} claims an impossible size {numel}")
        st = self._make(key, d, numel, numel * itemsize, location)
        self.seen[key] = st
        return st

    def _make(self, key, d, numel, nbytes, location) -> _LoadedStorage:
        dev = self._device(location)
        if dev.type == "meta":
            return _LoadedStorage(Storage(None, nbytes, META), d, numel, location)
        np_dtype = np.dtype(np.uint8) if d is None else d.np
        arr = self.fetch(key, np_dtype, nbytes)
        if self.byteorder != sys.byteorder and np_dtype.itemsize > 1:
            if d is None or d.name in _V3_NUMPY:
                raise UnpicklingError("cannot byte-swap this storage's dtype (PyTorch can't "
                                      "either)")
            arr = arr.byteswap()
        st = Storage(arr, nbytes, CPU)
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, _device, dict)):
            res = ml(st, location)  # PyTorch's `lambda storage, loc: ...`
            if isinstance(res, Storage):
                st = res
            elif res is not None:
                dev = _device(res)
        if dev.type != "cpu" and st.device != dev:
            st = _move_storage(st, dev)
        return _LoadedStorage(st, d, numel, location)

    def _device(self, location: str):
        ml = self.map_location
        if callable(ml) and not isinstance(ml, (str, _device, dict)):
            return CPU
        dev = _target_device(location, ml)
        if dev.type == "cuda":
            from .. import cuda

            if not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "torch.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use torch.load with map_location=torch.device('cpu') "
                    "to map your storages to the CPU.")
        return dev


def _move_storage(st: Storage, dev) -> Storage:
    from .._tensor import _make

    return _make(st, (st.nbytes(),), (1,), 0, dt.uint8).to(dev)._ensure_storage_obj()


def _unpickle(data, pos: int, reader: _Reader):
    return Unpickler(data, pos, find_global=_find_global, call=_call, build=_build,
                     persistent_load=reader.persistent_load, newobj=_newobj).load()


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args):
    """Read a checkpoint written by `torch.save` or `ember.save`.

    Only data is built (tensors, parameters, containers, numbers, strings, dtypes,
    devices, plus classes you allowlisted with `add_safe_globals`): ember never runs
    code from a file, whatever `weights_only` says. `map_location` is a device, a
    string, a {saved: wanted} dict or `lambda storage, loc: storage`; `mmap=True`
    maps the file copy-on-write instead of reading it (zip files, paths only).
    """
    if pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if weights_only is False and not _whole_models[0]:
        # NOTE: torch unpickles anything here; ember also accepts the nn.Module classes
        # the program has imported (a whole saved model), and still runs no other code.
        _whole_models[0] = True
        try:
            with safe_globals([]):
                return load(f, map_location, mmap=mmap)
        finally:
            _whole_models[0] = False
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            if mmap:
                if os.fstat(stream.fileno()).st_size == 0:
                    raise CheckpointError(f"{os.fspath(f)} is empty, not a checkpoint")
                buf = _mmap.mmap(stream.fileno(), 0, access=_mmap.ACCESS_COPY)
                if buf[:4] != b"PK\x03\x04":
                    raise ValueError("mmap can only be used with files saved with "
                                     "`torch.save(_use_new_zipfile_serialization=True)`")
                return _load_zip(stream, map_location, buf)
            return _load_stream(stream, map_location)
    if isinstance(f, (bytes, bytearray, memoryview)):
        return _load_stream(io.BytesIO(f), map_location)
    return _load_stream(f, map_location)


def _load_stream(stream, map_location):
    if not (hasattr(stream, "seek") and stream.seekable()):
        stream = io.BytesIO(stream.read())
    start = stream.tell()
    head = stream.read(512)
    stream.seek(start)
    if head[:4] == b"PK\x03\x04":
        return _load_zip(stream, map_location, None)
    if head[:4] == b"\x80\x02\x8a\x0a":
        return _load_legacy(stream.read(), map_location)
    if len(head) > 262 and head[257:262] == b"ustar":
        raise CheckpointError("this is a pre-0.4 tar checkpoint, which ember (like "
                              "torch.load with weights_only=True) does not read")
    if not head:
        raise CheckpointError("the file is empty, not a checkpoint")
    raise CheckpointError("not a PyTorch checkpoint: the file starts with neither a ZIP "
                          "header nor the legacy magic number")


def _load_zip(stream, map_location, mapped):
    try:
        zf = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise CheckpointError(f"not a readable checkpoint (truncated or corrupt ZIP: {e})") \
            from None
    names = zf.namelist()
    prefix = names[0].split("/")[0] if names and "/" in names[0] else None
    if prefix is None or any(not n.startswith(prefix + "/") for n in names):
        raise CheckpointError("checkpoint records must all sit in one top-level folder")
    if f"{prefix}/constants.pkl" in names or any(n.startswith(f"{prefix}/code/")
                                                  for n in names):
        raise CheckpointError("this is a TorchScript archive (torch.jit.save); ember.load "
                              "reads torch.save checkpoints only")
    data_pkl = _read_record(zf, f"{prefix}/data.pkl")
    if f"{prefix}/version" in names:
        version = _read_record(zf, f"{prefix}/version").strip()
        if not version.isdigit() or not 1 <= int(version) <= 20:
            raise CheckpointError(f"unsupported checkpoint version {version!r}")
    byteorder = "little"
    if f"{prefix}/byteorder" in names:
        byteorder = _read_record(zf, f"{prefix}/byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise CheckpointError(f"bad byteorder record {byteorder!r}")
    total = len(mapped) if mapped is not None else None

    def fetch(key, np_dtype, nbytes):
        name = f"{prefix}/data/{key}"
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise CheckpointError(f"checkpoint has no record {name} for a storage it "
                                  "uses") from None
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"record {name} is compressed; checkpoints store them raw")
        if info.file_size != nbytes:
            raise UnpicklingError(f"storage {key} claims {nbytes} bytes but its record holds "
                                  f"{info.file_size}")
        count = nbytes // np_dtype.itemsize
        if mapped is not None:
            try:
                at = payload_offset(mapped, info.header_offset, total)
            except ValueError as e:
                raise CheckpointError(f"record {name}: {e}") from None
            if at + nbytes > total:
                raise CheckpointError(f"record {name} runs past the end of the file")
            return np.frombuffer(mapped, np_dtype, count, at)
        arr = np.empty(count, np_dtype)
        if nbytes:
            try:
                with zf.open(info) as fh:
                    got = fh.readinto(memoryview(arr.view(np.uint8)))
            except (zipfile.BadZipFile, OSError, EOFError) as e:
                raise CheckpointError(f"record {name} is corrupt: {e}") from None
            if got != nbytes:
                raise CheckpointError(f"record {name} is truncated")
        return arr

    reader = _Reader(fetch, byteorder, map_location)
    obj, _ = _unpickle(data_pkl, 0, reader)
    return obj


def _read_record(zf, name: str) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise CheckpointError(f"checkpoint has no {name} record") from None
    if info.file_size > 2**31:
        raise CheckpointError(f"record {name} is implausibly large")
    try:
        return zf.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise CheckpointError(f"record {name} is corrupt: {e}") from None


def _load_legacy(data: bytes, map_location):
    """The 0.4-1.5 stream: magic, protocol, sys_info, the object, its storage keys, then
    each storage as an int64 element count and raw bytes. The object refers to storages
    that come after it, so its pickle is read twice: first to learn each storage's dtype,
    then for real."""
    def small(pos):
        return Unpickler(data, pos, find_global=_find_global, call=_call, build=_build,
                         persistent_load=_no_pid).load()

    magic, pos = small(0)
    if magic != _LEGACY_MAGIC:
        raise CheckpointError("invalid magic number; corrupt file?")
    proto, pos = small(pos)
    if proto != 1001:
        raise CheckpointError(f"invalid protocol version: {proto}")
    sys_info, pos = small(pos)
    if not isinstance(sys_info, dict):
        raise CheckpointError("bad sys_info record")
    byteorder = "little" if sys_info.get("little_endian", True) else "big"
    main_at = pos
    described: dict[str, tuple] = {}

    def note(pid):
        if not isinstance(pid, tuple) or len(pid) != 6 or not isinstance(pid[1], _StorageType):
            raise UnpicklingError("a legacy persistent id must be a 6-tuple naming a storage")
        described.setdefault(pid[2], pid)
        return _PLACEHOLDER

    _, pos = Unpickler(data, main_at, find_global=_find_global, call=_dry_call, build=_dry_build,
                       persistent_load=note, newobj=_newobj).load()
    keys, pos = small(pos)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise CheckpointError("bad storage key list")
    blobs: dict[str, tuple[int, int]] = {}
    for key in keys:
        pid = described.get(key)
        if pid is None:
            raise CheckpointError(f"storage {key!r} is listed but never used")
        cls = pid[1]
        itemsize = 1 if cls.dtype_name is None else _dtype_named(cls.dtype_name).itemsize
        if pos + 8 > len(data):
            raise CheckpointError("legacy checkpoint truncated in its storage section")
        count = int.from_bytes(data[pos:pos + 8], byteorder, signed=True)
        nbytes = count * itemsize
        if count < 0 or pos + 8 + nbytes > len(data):
            raise CheckpointError("legacy checkpoint truncated in its storage section")
        blobs[key] = (pos + 8, nbytes)
        pos += 8 + nbytes

    def fetch(key, np_dtype, nbytes):
        if key not in blobs:
            raise CheckpointError(f"legacy checkpoint has no data for storage {key!r}")
        at, have = blobs[key]
        if have != nbytes:
            raise UnpicklingError(f"storage {key} claims {nbytes} bytes but holds {have}")
        return np.frombuffer(data, np_dtype, nbytes // np_dtype.itemsize, at).copy()

    reader = _Reader(fetch, byteorder, map_location)
    obj, _ = _unpickle(data, main_at, reader)
    return obj


class _Placeholder:
    __slots__ = ()


_PLACEHOLDER = _Placeholder()


def _no_pid(pid):
    raise UnpicklingError("unexpected storage reference in a legacy header record")


def _dry_call(fn, args):
    """First legacy pass: check calls are allowed, but build no tensors yet."""
    if fn in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
              _rebuild_parameter_with_state, _rebuild_from_type_v2):
        return _PLACEHOLDER
    try:
        return _call(fn, args)
    except UnpicklingError:
        if any(a is _PLACEHOLDER for a in args):
            return _PLACEHOLDER
        raise


def _dry_build(obj, state) -> None:
    if obj is not _PLACEHOLDER:
        _build(obj, state)


# --- plain Python pickling of ember tensors (multiprocessing, copy) -----------------------------

class _PickledStorage:
    """Stands for one Storage inside a Python pickle, so views pickle it once."""

    __slots__ = ("ref", "__weakref__")

    def __init__(self, storage: Storage) -> None:
        self.ref = weakref.ref(storage)

    def __reduce__(self):
        s = self.ref()
        if s.device.type == "meta":
            return (_storage_from_bytes, (None, s.nbytes(), "meta"))
        return (_storage_from_bytes, (np.frombuffer(_storage_bytes(s), np.uint8),
                                      s.nbytes(), str(s.device)))


_PICKLED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _storage_from_bytes(buf, nbytes: int, device: str) -> Storage:
    if device == "meta":
        return Storage(None, nbytes, META)
    st = Storage(np.array(buf, np.uint8), nbytes, CPU)
    return st if device == "cpu" else _move_storage(st, _device(device))


def _reduce_tensor(t):
    """`Tensor.__reduce_ex__`: storage (shared between views), view metadata, dtype,
    requires_grad and Python attributes."""
    s = t._ensure_storage_obj()
    ref = _PICKLED.get(s)
    if ref is None:
        ref = _PICKLED[s] = _PickledStorage(s)
    return (_rebuild_pickled, (ref, t._offset, t._shape, t.stride(), t._dtype.name,
                               t.requires_grad, dict(t.__dict__) or None))


def _rebuild_pickled(storage: Storage, offset, shape, stride, dtype_name, requires_grad,
                     attrs=None):
    from .._tensor import _make

    d = dt.BY_NAME.get(dtype_name) or _extra_dtype(dtype_name)
    t = _make(storage, shape, stride, offset, d)
    if requires_grad:
        t.requires_grad_(True)
    if attrs:
        t.__dict__.update(attrs)
    return t


# --- inspection ----------------------------------------------------------------------------------

def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The globals a checkpoint names that ember.load would refuse (nothing is loaded)."""
    import pickletools

    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            raw = stream.read()
    else:
        raw = f.read()
    if raw[:4] == b"PK\x03\x04":
        zf = zipfile.ZipFile(io.BytesIO(raw))
        name = next((n for n in zf.namelist() if n.endswith("/data.pkl")), None)
        if name is None:
            raise CheckpointError("checkpoint has no data.pkl record")
        raw = zf.read(name)
    out, strings = [], []
    for op, arg, _ in pickletools.genops(raw):
        if op.name in ("GLOBAL", "STACK_GLOBAL"):
            module, name = arg.split(" ", 1) if op.name == "GLOBAL" else (
                strings[-2] if len(strings) > 1 else "?", strings[-1] if strings else "?")
            try:
                _find_global(module, name)
            except UnpicklingError:
                full = f"{'builtins' if module == '__builtin__' else module}.{name}"
                if full not in out:
                    out.append(full)
        elif isinstance(arg, str):
            strings.append(arg)
        if op.name == "STOP":
            break
    return out


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
