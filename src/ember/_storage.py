"""Storage: one flat buffer on one device, shared by every view of it.

On the CPU the buffer is a 1-D NumPy array (of whatever dtype it was made
with); tensors reinterpret its bytes through their own dtype, shape, stride and
offset, as PyTorch's untyped storage does. On `meta` there is no buffer, only
a byte count.
"""

from __future__ import annotations

import gc
import mmap
from contextlib import contextmanager

import numpy as np

from . import _names
from ._device import CPU, device
from ._memory import tracker as _memory


class Storage:
    """A flat block of memory: `data` (1-D array, or None on meta) and its size in bytes."""

    __slots__ = ("data", "_nbytes", "device", "_bytes", "__weakref__")

    def __init__(self, data: np.ndarray | None = None, nbytes: int | None = None,
                 dev: device = CPU, *, device=None) -> None:
        if nbytes is None:  # PyTorch's public forms: UntypedStorage(n), ([byte, ...])
            data, nbytes, dev = _public_buffer(data, device)
        self.data = data
        self._nbytes = nbytes
        self.device = dev
        self._bytes = None
        if _memory.on and data is not None:  # (a peak is being measured: count the buffer)
            _memory.add(data)

    @property
    def bytes(self) -> np.ndarray:
        """The buffer as uint8, for views that reinterpret it with another dtype."""
        b = self._bytes
        if b is None:
            b = self._bytes = self.data.view(np.uint8)
        return b

    def data_ptr(self) -> int:
        if self.data is None or not self._nbytes:
            return 0  # meta and zero-byte storages have no address, as in PyTorch
        return self.data.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._nbytes

    size = nbytes
    __len__ = nbytes

    def element_size(self) -> int:
        return 1


    def is_shared(self) -> bool:
        """Whether the buffer lives in memory shared with forked processes."""
        return _is_shared_array(self.data)

    def share_memory_(self) -> Storage:
        """Move the buffer into memory shared with processes forked from now on (a no-op
        if it is there already), as PyTorch's CPU storages do; every tensor over it
        follows."""
        if _deferred is not None:
            _deferred.append(self)
        else:
            share_storages([self])
        return self


    # -- its Python face, as PyTorch's UntypedStorage: bytes as ints -------------------

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self._nbytes)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step "
                                   "of 1 is supported")
            n = max(stop - start, 0)
            return Storage(None if self.data is None else self.bytes[start:start + n], n,
                           self.device)
        j = index_of(i, self._nbytes, str(type(self)))
        need_data(self)
        return int(self.bytes[j])

    def __setitem__(self, i, value) -> None:
        need_data(self)
        if isinstance(i, slice):
            self.bytes[i] = int(value) & 0xFF
            return
        self.bytes[index_of(i, self._nbytes, str(type(self)))] = int(value) & 0xFF

    def tolist(self) -> list:
        need_data(self)
        return self.bytes[: self._nbytes].tolist()

    def __repr__(self) -> str:
        info = (f"[{_names.prefix}.storage.UntypedStorage(device={self.device}) of size "
                f"{self._nbytes}]")
        meta = self.data is None
        return storage_text([] if meta else self.tolist(), info, meta)

    __str__ = __repr__

    def fill_(self, value) -> Storage:
        need_data(self)
        self.bytes[: self._nbytes] = int(value) & 0xFF
        return self

    def copy_(self, source, non_blocking: bool = False) -> Storage:
        src = source.untyped()  # (a typed storage's bytes, or an untyped one itself)
        if src.nbytes() != self._nbytes:
            raise RuntimeError(f"size does not match, self was {self._nbytes} bytes but src "
                               f"was {src.nbytes()} bytes")
        need_data(self)
        self.bytes[: self._nbytes] = src.bytes[: self._nbytes]
        return self

    def clone(self) -> Storage:
        if self.data is None:
            return Storage(None, self._nbytes, self.device)
        return Storage(self.bytes[: self._nbytes].copy(), self._nbytes, self.device)

    def untyped(self) -> Storage:
        return self

    def cpu(self) -> Storage:
        return self

    def is_pinned(self, device="cuda") -> bool:
        return False

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def type(self, dtype=None, non_blocking: bool = False) -> str:
        return f"{_names.prefix}.storage.UntypedStorage"


def index_of(i, size: int, kind: str) -> int:
    """Element i of a storage of `size` (negative counts from the end), in PyTorch's
    errors; `kind` names the storage's class in them."""
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise RuntimeError(f"can't index a {kind} with {type(i)}")
    j = int(i) + size if i < 0 else int(i)
    if not 0 <= j < size:
        raise IndexError(f"index {i} out of range for storage of size {size}")
    return j


def need_data(s: Storage) -> None:
    if s.data is None:
        raise NotImplementedError(f"Not available for '{s.device.type}' device type")


def storage_text(items: list, info: str, meta: bool) -> str:
    """A storage printed as PyTorch prints one: an element a line, then `info`."""
    if meta:
        return "...\n" + info
    return " " + "\n ".join(str(v) for v in items) + "\n" + info


def _public_buffer(arg, device_arg) -> tuple[np.ndarray | None, int, device]:
    """The buffer of `UntypedStorage()`, `UntypedStorage(nbytes)` or
    `UntypedStorage([byte, ...])` (bytes wrap modulo 256, as PyTorch's)."""
    from ._device import as_device

    dev = CPU if device_arg is None else as_device(device_arg)
    if arg is None:
        buf = np.zeros(0, np.uint8)
    elif isinstance(arg, int) and not isinstance(arg, bool):
        if arg < 0:
            raise RuntimeError(f"Storage size must be non-negative, but got {arg}")
        buf = np.zeros(arg, np.uint8)
    elif isinstance(arg, (list, tuple)):
        buf = np.array([int(v) & 0xFF for v in arg], np.uint8)
    else:
        raise TypeError(f"UntypedStorage(): expected a size (int) or a sequence of ints, "
                        f"got {type(arg).__name__}")
    return (None if dev.type == "meta" else buf), buf.size, dev


class _SharedBlock(mmap.mmap):
    """An anonymous shared mapping (MAP_SHARED): fork keeps it one memory in every
    process, which is how Hogwild workers' writes reach their parent."""


def _is_shared_array(arr: np.ndarray | None) -> bool:
    while isinstance(arr, np.ndarray):
        arr = arr.base
    return isinstance(arr, memoryview) and isinstance(arr.obj, _SharedBlock)


_deferred: list | None = None  # storages whose move waits for `deferred_sharing` to end


@contextmanager
def deferred_sharing():
    """Collect the `share_memory_` calls made inside and move them all in one pass at the
    end (the pass over the collector's objects costs the same for one storage as for a
    model's hundreds)."""
    global _deferred
    if _deferred is not None:  # (nested: the outer one moves them)
        yield
        return
    _deferred = []
    try:
        yield
        share_storages(_deferred)
    finally:
        _deferred = None


def share_storages(storages) -> None:
    """Move each CPU storage's buffer into shared memory, copying its bytes, and re-point
    every tensor laid over it.

    A tensor caches its NumPy view (`_np`) of the old buffer, and a storage knows none of
    its tensors: one pass over the collector's referrers finds them (tensors hold their
    storage, and storage-less aliases a graph node saved hold the same NumPy array as
    the tensor they alias). Sharing is rare and done once, before processes fork.
    """
    moving = {}
    for s in storages:
        if s.data is None:
            raise RuntimeError("_share_fd_: only available on CPU")
        if id(s) not in moving and not _is_shared_array(s.data):
            moving[id(s)] = s
    if not moving:
        return
    holders = []  # tensors over a moving storage that cache a NumPy view of it
    owners = {}  # id(such a view) -> (the view, a tensor holding it)
    for t in gc.get_referrers(*moving.values()):
        s = getattr(t, "_storage", None)
        a = getattr(t, "_np", None)
        if s is not None and id(s) in moving and a is not None:
            holders.append(t)
            owners[id(a)] = (a, t)
    for s in moving.values():
        old = s.data
        block = _SharedBlock(-1, max(old.nbytes, 1))  # (a zero-length map is refused)
        new = np.frombuffer(block, dtype=old.dtype, count=old.size)
        new[...] = old
        s.data = new
        s._bytes = None
    if not owners:
        return
    for t in gc.get_referrers(*(a for a, _ in owners.values())):
        a = getattr(t, "_np", None)
        if a is not None and getattr(t, "_storage", 0) is None and id(a) in owners:
            owner = owners[id(a)][1]
            t._storage, t._stride = owner._storage, owner._stride
            t._np = None
    for t in holders:
        t._np = None  # (rebuilt from the storage on first use)
