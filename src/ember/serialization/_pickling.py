"""Plain Python pickling of ember tensors (multiprocessing, `copy`): `Tensor.__reduce_ex__`
is `_reduce_tensor`, which pickles each storage once (`_PickledStorage`, so views stay
views) plus the view's metadata, dtype, requires_grad and Python attributes;
`_rebuild_pickled` and `_storage_from_bytes` rebuild them. Pickles name those two
functions as `ember.serialization.<name>`, so their `__module__` says so (they are
re-exported there) and pickles read the same before and after this module existed.
"""

from __future__ import annotations

import weakref

import numpy as np

from .. import _dtype as dt
from .._device import CPU, META
from .._device import device as _device
from .._storage import Storage
from ._dtypes import _extra_dtype
from ._load import _move_storage
from ._save import _storage_bytes


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


# NOTE: pickles reference these by module path; keep it the public package's (see above).
_storage_from_bytes.__module__ = _rebuild_pickled.__module__ = "ember.serialization"
