"""`ember.save`: describe each tensor for the pickler (`_pickler.py`), pickle the object
into `data.pkl`, then write it and one raw record per storage into a stored ZIP
(`_zip.py`) laid out as `torch.save` lays it out. Also `_storage_bytes`, a storage's
raw host bytes, which plain Python pickling (`_pickling.py`) uses too.
"""

from __future__ import annotations

import hashlib
import os
import sys

import numpy as np

from .. import _dtype as dt
from .._storage import Storage
from ._dtypes import _CLASS_OF
from ._pickler import Pickler
from ._zip import ZipWriter


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
