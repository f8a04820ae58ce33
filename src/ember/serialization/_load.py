"""`ember.load`: recognise the file (zip, pre-1.6 legacy stream, or something else),
read its records, and run its pickle on ember's own interpreter (`_unpickler.py`)
against the allowlist (`_allowlist.py`); `_Reader` turns the storage records into
ember Storages, honouring `map_location` and `mmap`. Also `CheckpointError` and
`get_unsafe_globals_in_checkpoint`, which lists the globals a file names that
`load` would refuse.
"""

from __future__ import annotations

import io
import mmap as _mmap
import os
import re
import sys
import zipfile

import numpy as np

from .. import _dtype as dt
from .._device import CPU, META
from .._device import device as _device
from .._storage import Storage
from ._allowlist import _build, _call, _find_global, _newobj, _whole_models, safe_globals
from ._dtypes import _V3_NUMPY, _dtype_named
from ._standins import (
    _int,
    _LoadedStorage,
    _rebuild_from_type_v2,
    _rebuild_parameter,
    _rebuild_parameter_with_state,
    _rebuild_tensor_v2,
    _rebuild_tensor_v3,
    _StorageType,
)
from ._unpickler import Unpickler, UnpicklingError
from ._zip import payload_offset


class CheckpointError(RuntimeError):
    """A file is not a readable checkpoint: truncated, corrupt, or of another kind."""


# NOTE: defined here, raised by ember.load; public (and named in tracebacks) as
# ember.serialization.CheckpointError.
CheckpointError.__module__ = "ember.serialization"


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
