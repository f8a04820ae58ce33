"""`ember.storage`: the storage classes PyTorch programs print and index.

`UntypedStorage` is ember's own `Storage` (one flat buffer of bytes, every view of it
shares it). `TypedStorage` is PyTorch's legacy face over it, what `Tensor.storage()`
returns: the same bytes read as elements of one dtype, with the deprecation warning
PyTorch gives on first use. `FloatStorage`, `LongStorage` and the rest name a
`TypedStorage` of one dtype, as in PyTorch: they construct one, and `isinstance` asks
its dtype.
"""

from __future__ import annotations

import warnings

import numpy as np

from . import _dtype as D
from . import _names
from ._storage import Storage, index_of, need_data, storage_text
from ._user_warnings import user_stacklevel

UntypedStorage = Storage
Storage.__name__ = Storage.__qualname__ = "UntypedStorage"
Storage.__module__ = __name__

_warned = False


def warn_typed_storage_removal() -> None:
    """PyTorch's one-time deprecation warning for TypedStorage (once per process), at the
    user's line."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
        "will be the only storage class. This should only matter to you if you are using "
        "storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() "
        "instead of tensor.storage()", UserWarning, stacklevel=user_stacklevel())




class TypedStorage:
    """A storage read as elements of one dtype (PyTorch's legacy storage class): what
    `Tensor.storage()` returns. It is a view: writes reach every tensor over the bytes."""

    is_sparse = False

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None,
                 _internal: bool = False) -> None:
        if not _internal:
            warn_typed_storage_removal()
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage(): with wrap_storage, no positional "
                                   "argument may be given")
            if dtype is None:
                raise RuntimeError("TypedStorage(): with wrap_storage, dtype must be given")
            self._untyped_storage, self.dtype = wrap_storage, dtype
            return
        d = dtype if dtype is not None else D.get_default_dtype()
        if len(args) > 1:
            raise RuntimeError(f"TypedStorage(): too many positional arguments ({len(args)})")
        if not args or isinstance(args[0], int):
            n = args[0] if args else 0
            storage = UntypedStorage(n * d.itemsize, device=device)
        else:
            from .ops.creation import tensor

            t = tensor(list(args[0]), dtype=d, device=device)
            storage = t.untyped_storage()
        self._untyped_storage, self.dtype = storage, d

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def filename(self):
        return None

    def untyped(self) -> Storage:
        return self._untyped_storage

    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def is_shared(self) -> bool:
        return self._untyped_storage.is_shared()

    def share_memory_(self) -> TypedStorage:
        self._untyped_storage.share_memory_()
        return self

    def is_pinned(self, device="cuda") -> bool:
        return False

    def get_device(self) -> int:
        return self._untyped_storage.get_device()

    def cpu(self) -> TypedStorage:
        return self

    def _elements(self) -> np.ndarray:
        u = self._untyped_storage
        need_data(u)
        return u.bytes[: self.size() * self.dtype.itemsize].view(self.dtype.np)

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        j = index_of(i, self.size(), str(type(self)))
        return _python(self._elements()[j], self.dtype)

    def __setitem__(self, i, value) -> None:
        from ._tensor import Tensor

        if isinstance(value, Tensor):
            value = value.item()
        if not isinstance(i, slice):
            i = index_of(i, self.size(), str(type(self)))
        self._elements()[i] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return [_python(v, self.dtype) for v in self._elements()]

    def fill_(self, value) -> TypedStorage:
        self._elements()[...] = value
        return self

    def copy_(self, source, non_blocking: bool = False) -> TypedStorage:
        src = source._elements() if isinstance(source, TypedStorage) else None
        if src is None:
            self._untyped_storage.copy_(source)
            return self
        if src.size != self.size():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src "
                               f"was {source.nbytes()} bytes")
        self._elements()[...] = src.astype(self.dtype.np)
        return self

    def clone(self) -> TypedStorage:
        return TypedStorage(wrap_storage=self._untyped_storage.clone(), dtype=self.dtype,
                            _internal=True)

    def _to(self, dtype) -> TypedStorage:
        if dtype is self.dtype:
            return self.clone()
        vals = self._elements().astype(dtype.np)
        return TypedStorage(wrap_storage=Storage(vals.view(np.uint8).copy(), vals.nbytes,
                                                 self.device), dtype=dtype, _internal=True)

    def double(self): return self._to(D.float64)  # noqa: E704
    def float(self): return self._to(D.float32)  # noqa: E704
    def half(self): return self._to(D.float16)  # noqa: E704
    def bfloat16(self): return self._to(D.bfloat16)  # noqa: E704
    def long(self): return self._to(D.int64)  # noqa: E704
    def int(self): return self._to(D.int32)  # noqa: E704
    def short(self): return self._to(D.int16)  # noqa: E704
    def char(self): return self._to(D.int8)  # noqa: E704
    def byte(self): return self._to(D.uint8)  # noqa: E704
    def bool(self): return self._to(D.bool_)  # noqa: E704
    def cfloat(self): return self._to(D.complex64)  # noqa: E704
    def cdouble(self): return self._to(D.complex128)  # noqa: E704

    def type(self, dtype=None, non_blocking: bool = False) -> str:
        if dtype is not None:
            raise NotImplementedError("TypedStorage.type(dtype): use the dtype conversions "
                                      "(.float(), .double(), ...)")
        return f"{_names.prefix}.{_LEGACY_NAMES.get(self.dtype, 'TypedStorage')}"

    def pickle_storage_type(self) -> str:
        return _LEGACY_NAMES[self.dtype]

    def __str__(self) -> str:
        info = (f"[{_names.prefix}.storage.TypedStorage(dtype={self.dtype}, "
                f"device={self.device}) of size {self.size()}]")
        meta = self._untyped_storage.data is None
        return storage_text([] if meta else self.tolist(), info, meta)

    __repr__ = __str__

    def __reduce__(self):
        raise NotImplementedError("pickling a TypedStorage: save the tensor instead")


def _python(v, dtype):
    if dtype.is_complex:
        return complex(v)
    if dtype.is_floating_point:
        return float(v)
    if dtype is D.bool_:
        return bool(v)
    return int(v)


class _LegacyMeta(type):
    """`isinstance(s, FloatStorage)` asks whether `s` is a TypedStorage of float32."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TypedStorage) and obj.dtype is cls.dtype


def _legacy(name: str, dtype) -> type:
    def new(cls, *args, device=None, **kw):
        if kw:
            raise TypeError(f"{name}.__new__() got unexpected keyword arguments "
                            + ", ".join(kw))
        return TypedStorage(*args, dtype=dtype, device=device)

    return _LegacyMeta(name, (TypedStorage,), {"dtype": dtype, "__new__": new,
                                              "__module__": "ember",
                                              "__doc__": f"A TypedStorage of {dtype}."})


_LEGACY = {
    "DoubleStorage": D.float64, "FloatStorage": D.float32, "HalfStorage": D.float16,
    "BFloat16Storage": D.bfloat16, "LongStorage": D.int64, "IntStorage": D.int32,
    "ShortStorage": D.int16, "CharStorage": D.int8, "ByteStorage": D.uint8,
    "BoolStorage": D.bool_, "ComplexFloatStorage": D.complex64,
    "ComplexDoubleStorage": D.complex128,
}
_LEGACY_NAMES = {d: n for n, d in _LEGACY.items()}
for _name, _d in _LEGACY.items():
    globals()[_name] = _legacy(_name, _d)
del _name, _d


def legacy_storage_class(dtype) -> type:
    """`FloatStorage` for float32, `LongStorage` for int64, ..."""
    return globals()[_LEGACY_NAMES[dtype]]


def is_storage(obj) -> bool:
    """Whether obj is a storage (typed or untyped), as `torch.is_storage`."""
    return isinstance(obj, (Storage, TypedStorage))


def typed_storage_of(t) -> TypedStorage:
    """`Tensor.storage()`: the tensor's whole storage read as its dtype."""
    warn_typed_storage_removal()
    if t.is_sparse:
        raise NotImplementedError(f"Cannot access storage of {type(t).__name__}")
    return TypedStorage(wrap_storage=t.untyped_storage(), dtype=t.dtype, _internal=True)


__all__ = ["TypedStorage", "UntypedStorage", "is_storage", *_LEGACY]
