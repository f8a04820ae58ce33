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
import pickle
import pickletools
import re
import struct
import sys
import zipfile
import zlib

import numpy as np

from .. import _dtype as dt
from .._device import CPU, META
from .._device import device as _device
from .._storage import Storage
from ._allowlist import _build, _call, _find_global, _newobj, _whole_models, safe_globals
from ._dtypes import _V3_NUMPY, _dtype_named
from ._limits import budget, describe
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


class EmptyCheckpointError(CheckpointError, EOFError):
    """The file or stream holds no bytes: an EOFError too, which torch.load raises there
    (so `except EOFError` around a load catches a half-written checkpoint in both)."""


class NotACheckpointError(CheckpointError, pickle.UnpicklingError):
    """Bytes that are neither a ZIP checkpoint nor a whole pickle: an UnpicklingError too,
    as torch.load's legacy reader raises when it tries to unpickle them."""


# NOTE: defined here, raised by ember.load; public (and named in tracebacks) as
# ember.serialization.<name>.
for _cls in (CheckpointError, EmptyCheckpointError, NotACheckpointError):
    _cls.__module__ = "ember.serialization"


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
            raise UnpicklingError(f"bad storage key {describe(key)}")
        if not isinstance(location, str) or not _LOCATION.fullmatch(location):
            raise UnpicklingError(f"bad storage location {describe(location)}")
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
        # the program has imported (a whole saved model) and NumPy arrays, scalars and
        # plain dtypes (checked stand-ins, `_numpy.py`), and still runs no other code.
        _whole_models[0] = True
        try:
            with safe_globals([]):
                return load(f, map_location, mmap=mmap)
        finally:
            _whole_models[0] = False
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    try:
        return _load_file(f, map_location, mmap)
    except (CheckpointError, UnpicklingError):
        raise
    except RecursionError:
        raise CheckpointError("the checkpoint nests its objects too deeply to read (hostile "
                              "or corrupt file)") from None
    except MemoryError:
        raise CheckpointError("the checkpoint asks for more memory than this process may "
                              "use (hostile or corrupt file)") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, struct.error, EOFError,
            OverflowError, NotImplementedError) as e:
        raise CheckpointError(f"not a readable checkpoint (truncated or corrupt: "
                              f"{type(e).__name__}: {str(e)[:200]})") from None


def _load_file(f, map_location, mmap):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if not mmap:
                with budget(size):
                    return _load_stream(stream, map_location)
            if size == 0:
                raise CheckpointError(f"{os.fspath(f)} is empty, not a checkpoint")
            try:
                buf = _mmap.mmap(stream.fileno(), 0, access=_mmap.ACCESS_COPY)
            except (OSError, ValueError) as e:
                raise CheckpointError(f"cannot memory-map {os.fspath(f)}: {e}") from None
            if buf[:4] != b"PK\x03\x04":
                buf.close()
                # NOTE: RuntimeError (CheckpointError is one), as torch.load raises here.
                raise CheckpointError("mmap can only be used with files saved with "
                                      "`torch.save(_use_new_zipfile_serialization=True)`; "
                                      "this file does not start with a ZIP header")
            with budget(size):
                return _load_zip(stream, map_location, buf)
    if isinstance(f, (bytes, bytearray, memoryview)):
        f = io.BytesIO(f)
    if not (hasattr(f, "seek") and f.seekable()):
        f = io.BytesIO(f.read())
    start = f.tell()
    size = f.seek(0, io.SEEK_END) - start
    f.seek(start)
    with budget(size):
        return _load_stream(f, map_location)


def _load_stream(stream, map_location):
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
        raise EmptyCheckpointError("the file is empty, not a checkpoint")
    what = ("not a PyTorch checkpoint: the file starts with neither a ZIP header nor the "
            "legacy magic number")
    # (torch's legacy reader unpickles a first object, expecting the magic number)
    if _whole_pickle(io.BytesIO(stream.read(_PICKLE_PEEK))):
        raise CheckpointError(f"{what} (invalid magic number; corrupt file?)")
    raise NotACheckpointError(what)


_PICKLE_PEEK = 1 << 20  # bytes: how much of a non-checkpoint `_whole_pickle` reads


def _whole_pickle(stream) -> bool:
    """Whether `stream` starts with one complete pickle, read as opcodes only (nothing in it
    runs): what decides between torch.load's RuntimeError and its UnpicklingError. (The
    caller hands over a bounded in-memory copy: a hostile length field then reads short.)"""
    try:
        for _ in pickletools.genops(stream):
            pass
    except Exception:  # noqa: BLE001 (any parse failure means: not a whole pickle)
        return False
    return True


_SMALL_RECORD = 64  # bytes: the most a `version` or `byteorder` record may hold


class _Archive:
    """A checkpoint ZIP whose directory has been checked against the file itself: one
    top-level folder, no two records with one name, no record claiming more bytes than
    the file holds, no compression method other than stored or deflated."""

    def __init__(self, stream) -> None:
        start = stream.tell()
        self.total = stream.seek(0, io.SEEK_END) - start
        stream.seek(start)
        try:
            self.zf = zipfile.ZipFile(stream)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
                struct.error) as e:
            raise CheckpointError(f"not a readable checkpoint (truncated or corrupt ZIP: "
                                  f"{str(e)[:200]})") from None
        infos = self.zf.infolist()
        names = [i.filename for i in infos]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            # NOTE: readers disagree on which copy wins (torch takes the first, zipfile the
            # last), so a file could show a scanner one pickle and a loader another.
            raise CheckpointError(f"checkpoint has duplicate records named {describe(dup)}")
        for info in infos:
            end = info.header_offset + info.compress_size
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise CheckpointError(f"record {describe(info.filename)} uses compression "
                                      f"method {info.compress_type}; checkpoints store records")
            if info.compress_type == zipfile.ZIP_STORED and info.file_size != \
                    info.compress_size or end > self.total:
                raise CheckpointError(
                    f"record {describe(info.filename)} claims {info.file_size} bytes "
                    f"({info.compress_size} stored) but the file holds only {self.total}")
        self.names = names
        self.prefix = names[0].split("/")[0] if names and "/" in names[0] else None
        if self.prefix is None or any(not n.startswith(self.prefix + "/") for n in names):
            raise CheckpointError("checkpoint records must all sit in one top-level folder")

    def info(self, name: str, what: str = "") -> zipfile.ZipInfo:
        try:
            return self.zf.getinfo(f"{self.prefix}/{name}")
        except KeyError:
            raise CheckpointError(f"checkpoint has no {self.prefix}/{name} record"
                                  f"{what}") from None

    def data_pkl(self) -> bytes:
        """The pickle record, which must be stored raw (as torch writes it): a compressed
        one could inflate to gigabytes."""
        info = self.info("data.pkl")
        if info.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"record {self.prefix}/data.pkl is compressed; torch stores "
                                  "it raw, and ember refuses a compressed one")
        return self.read(info, self.total)

    def read(self, info: zipfile.ZipInfo, limit: int) -> bytes:
        """A whole record of at most `limit` bytes (declared and inflated), CRC-checked."""
        if info.file_size > limit:
            raise CheckpointError(f"record {info.filename} claims {info.file_size} bytes; at "
                                  f"most {limit} make sense there")
        try:
            with self.zf.open(info) as fh:
                out = fh.read(limit + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, zlib.error,
                NotImplementedError) as e:
            raise CheckpointError(f"record {info.filename} is corrupt: {str(e)[:200]}") \
                from None
        if len(out) != info.file_size:
            raise CheckpointError(f"record {info.filename} is truncated or corrupt")
        return out


def _load_zip(stream, map_location, mapped):
    arc = _Archive(stream)
    prefix, names, zf = arc.prefix, arc.names, arc.zf
    if f"{prefix}/constants.pkl" in names or any(n.startswith(f"{prefix}/code/")
                                                  for n in names):
        raise CheckpointError("this is a TorchScript archive (torch.jit.save); ember.load "
                              "reads torch.save checkpoints only")
    data_pkl = arc.data_pkl()
    if f"{prefix}/version" in names:
        version = arc.read(arc.info("version"), _SMALL_RECORD).strip()
        if not version.isdigit() or not 1 <= int(version) <= 20:
            raise CheckpointError(f"unsupported checkpoint version {describe(version)}")
    byteorder = "little"
    if f"{prefix}/byteorder" in names:
        byteorder = arc.read(arc.info("byteorder"), _SMALL_RECORD).decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise CheckpointError(f"bad byteorder record {describe(byteorder)}")
    total = len(mapped) if mapped is not None else None

    def fetch(key, np_dtype, nbytes):
        name = f"{prefix}/data/{key}"
        info = arc.info(f"data/{key}", " for a storage it uses")
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
        # NOTE: safe to allocate: _Archive checked the record lies inside the file.
        arr = np.empty(count, np_dtype)
        if nbytes:
            try:
                with zf.open(info) as fh:
                    got = fh.readinto(memoryview(arr.view(np.uint8)))
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
                raise CheckpointError(f"record {name} is corrupt: {str(e)[:200]}") from None
            if got != nbytes:
                raise CheckpointError(f"record {name} is truncated")
        return arr

    reader = _Reader(fetch, byteorder, map_location)
    obj, _ = _unpickle(data_pkl, 0, reader)
    return obj


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
        raise CheckpointError(f"invalid protocol version: {describe(proto)}")
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
            raise CheckpointError(f"storage {describe(key)} is listed but never used")
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
            raise CheckpointError(f"legacy checkpoint has no data for storage {describe(key)}")
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

    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as stream:
            raw = stream.read()
    else:
        raw = f.read()
    if raw[:4] == b"PK\x03\x04":
        raw = _Archive(io.BytesIO(raw)).data_pkl()
    try:
        return _globals_named(raw)
    except (ValueError, EOFError, struct.error, RecursionError, MemoryError) as e:
        raise CheckpointError(f"not a readable pickle: {type(e).__name__}: "
                              f"{str(e)[:200]}") from None


def _globals_named(raw: bytes) -> list[str]:
    import pickletools

    out, strings = [], []
    for op, arg, _ in pickletools.genops(raw):
        if op.name in ("GLOBAL", "STACK_GLOBAL"):
            module, name = arg.split(" ", 1) if op.name == "GLOBAL" else (
                strings[-2] if len(strings) > 1 else "?", strings[-1] if strings else "?")
            module, name = module[:128], name[:128]
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
