"""MLX's files: `.npy` (`save`), `.npz` (`savez`, `savez_compressed`),
`.safetensors` (`save_safetensors`) and `.gguf` (`save_gguf`, in `_gguf`), all read back
by `load`. Files are interchangeable with MLX's: the formats are NumPy's, safetensors'
and GGUF's own."""

from __future__ import annotations

import io
import json
import os
import pathlib
import struct
import zipfile

import ml_dtypes
import numpy as np

from ...utils import safetensors as _st
from ._array import array, array_from_numpy, numpy_of
from ._binding import bad_call
from ._gguf import load_gguf, save_gguf  # noqa: F401  (save_gguf is exported from here)
from ._unordered import hash_order, reorder

_SAVE = "save(file: file | str | pathlib.Path, arr: array) -> None"
_SAVE_ST = ("save_safetensors(file: file | str | pathlib.Path, arrays: dict[str, array], "
            "metadata: dict[str, str] | None = None)")
_ST_DTYPES = ("float32", "bfloat16", "float16", "int64", "int32", "int16", "int8", "uint64",
              "uint32", "uint16", "uint8", "bool", "complex64")


def _path(file, suffix: str) -> str:
    file = os.fspath(file)
    return file if file.endswith(suffix) else file + suffix


def _open_to_write(path: str, who: str):
    """`path` opened to write, or MLX's error for a path it cannot open (a missing folder,
    a directory)."""
    try:
        return open(path, "wb")  # noqa: SIM115  (the caller's `with` closes it)
    except OSError:
        raise RuntimeError(f"[{who}] Failed to open file {path}") from None


def _writable(file) -> bool:
    """A file object MLX writes to: one with write, seek and tell."""
    return all(hasattr(file, a) for a in ("write", "seek", "tell"))


def _np(a: array) -> np.ndarray:
    return np.asarray(numpy_of(a), order="C")  # (not ascontiguousarray: it makes 0-d 1-d)


def _named_arrays(arrays: dict, who: str) -> None:
    """Refuse what MLX's binding cannot convert to a dict of str to array (MLX says only
    `std::bad_cast`; the type is its, the message names the key)."""
    for k, v in arrays.items():
        if not isinstance(k, str) or not isinstance(v, array):
            raise RuntimeError(f"[{who}] Expected str keys and array values; got "
                               f"{type(v).__name__} for key {k!r}.")


def _npy_bytes(a: array) -> bytes:
    """The `.npy` file MLX writes: version 1 (2 when the header is long), its own header
    text ("'shape': (2, 3, )"), padding and `fortran_order` (True for a column-contiguous
    array, 1-d and 0-d ones included, whose data go in that order)."""
    data = numpy_of(a)
    if not (data.flags.c_contiguous or data.flags.f_contiguous):
        data = np.ascontiguousarray(data)
    fortran = bool(data.flags.f_contiguous)
    descr = data.dtype.str if data.dtype != ml_dtypes.bfloat16 else "<V2"
    shape = "".join(f"{n}, " for n in data.shape)
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({shape})}}"
    v1 = len(header) + 15 < 0xFFFF
    # NOTE: MLX's padding rule counts a 4-byte length field for version 1 (as written)
    header += " " * ((6 + 2 + 2 + 2 * v1 + len(header) + 1) % 16) + "\n"
    size = struct.pack("<H", len(header)) if v1 else struct.pack("<I", len(header))
    raw = data.T.tobytes() if fortran else data.tobytes()
    return b"\x93NUMPY" + (b"\x01\x00" if v1 else b"\x02\x00") + size + header.encode() + raw


def save(file, arr: array) -> None:
    """Write `arr` as a `.npy` file (the suffix is added to a path when missing) or to a
    writable file object."""
    if not isinstance(arr, array):
        raise bad_call("save", _SAVE, (file, arr))
    if isinstance(file, pathlib.Path):
        file = str(file)
    if isinstance(file, str):
        with _open_to_write(_path(file, ".npy"), "save") as f:
            f.write(_npy_bytes(arr))
    elif _writable(file):
        file.write(_npy_bytes(arr))
    else:
        raise ValueError("[save] Input must be a file-like object, or string")


def _savez(file, args, kwargs, compression: int) -> None:
    _named_arrays(kwargs, "savez")
    _named_arrays({f"arr_{i}": a for i, a in enumerate(args)}, "savez")
    named = dict(kwargs)
    for i, a in enumerate(args):
        if f"arr_{i}" in named:
            raise ValueError(f"[savez] Cannot use un-named variables and keyword arr_{i}")
        named[f"arr_{i}"] = a
    if isinstance(file, (str, pathlib.Path)):
        file = _path(str(file), ".npz")
    # NOTE: MLX collects the arrays in a C++ unordered_map and writes the zip's entries
    # in its order; Python's zipfile does the rest, as in MLX.
    with zipfile.ZipFile(file, mode="w", compression=compression) as z:
        for k in hash_order(named):
            with z.open(k + ".npy", "w", force_zip64=True) as f:  # (as NumPy and MLX)
                f.write(_npy_bytes(named[k]))


def savez(file, *args, **kwargs) -> None:
    """Write arrays to a `.npz` file: positional ones as `arr_0`, `arr_1`, ..."""
    _savez(file, args, kwargs, zipfile.ZIP_STORED)


def savez_compressed(file, *args, **kwargs) -> None:
    _savez(file, args, kwargs, zipfile.ZIP_DEFLATED)


def _safetensors_bytes(arrays: dict, metadata: dict) -> bytes:
    """The file MLX writes: a JSON header with sorted keys (its "__metadata__" null when
    empty) and the data in the order of MLX's unordered_map."""
    header: dict = {"__metadata__": dict(metadata) or None}
    blobs, offset = [], 0
    for k in hash_order(arrays):
        a = _np(arrays[k])
        header[k] = {"data_offsets": [offset, offset + a.nbytes], "dtype": _st._CODE[a.dtype],
                     "shape": list(a.shape)}
        blobs.append(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        offset += a.nbytes
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    raw = text.encode("utf-8", "surrogatepass")
    return struct.pack("<Q", len(raw)) + raw + b"".join(blobs)


def save_safetensors(file, arrays: dict, metadata: dict | None = None) -> None:
    """Write a flat dict of arrays (and string metadata) as a `.safetensors` file (the
    suffix is added to a path when missing) or to a writable file object."""
    if not isinstance(arrays, dict) or not isinstance(metadata, (dict, type(None))):
        given = (file, arrays) if metadata is None else (file, arrays, metadata)
        raise bad_call("save_safetensors", _SAVE_ST, given)
    metadata = metadata or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError("[save_safetensors] Metadata must be a dictionary with string keys "
                         "and values")
    _named_arrays(arrays, "save_safetensors")
    if isinstance(file, pathlib.Path):
        file = str(file)
    if not isinstance(file, str) and not _writable(file):
        raise ValueError("[save_safetensors] Input must be a file-like object, or string")
    if any(a.dtype.name not in _ST_DTYPES for a in arrays.values()):
        raise RuntimeError("[save_safetensors] received invalid dtype.")
    data = _safetensors_bytes(arrays, metadata)
    if isinstance(file, str):
        with _open_to_write(_path(file, ".safetensors"), "save_safetensors") as f:
            f.write(data)
    else:
        file.write(data)


_NPZ = ("[load_npz] Input must be a zip file or a file-like object that can be opened "
        "with zipfile.ZipFile")
_MAX_JSON = 100_000_000  # safetensors: MLX refuses a JSON header this long or longer


class _Source:
    """A file to read, as MLX's readers see it: a path (opened here) or a Python file
    object (read through `readinto`), with the label and short-read message MLX uses for
    each."""

    def __init__(self, file, who: str) -> None:
        self.stream = not isinstance(file, str)
        if self.stream:
            self.label = "python file object"
            self.f = io.BytesIO(_read_stream(file))
            self.total = len(self.f.getvalue())
            return
        self.label = f"file {file}"
        try:
            self.f = open(file, "rb")  # noqa: SIM115  (closed by `close`)
        except OSError:
            if os.path.isdir(file):  # (MLX's stream opens a directory, then cannot read it)
                raise RuntimeError("[read] Unable to read 8 bytes from file.") from None
            raise RuntimeError(f"[{who}] Failed to open file {file}") from None
        self.total = os.fstat(self.f.fileno()).st_size

    def read(self, n: int) -> bytes:
        """`n` bytes, or MLX's error (for a path: naming how many were missing)."""
        try:
            data = self.f.read(n)
        except OSError:  # (a directory opens, but does not read)
            data = b""
        if len(data) < n:
            if self.stream:
                raise RuntimeError("[load] Failed to read from python stream")
            raise RuntimeError(f"[read] Unable to read {n - len(data)} bytes from file.")
        return data

    def close(self) -> None:
        self.f.close()


def _read_stream(file) -> bytes:
    """The rest of a Python file object, read by `readinto` as MLX reads it."""
    chunks, buf = [], bytearray(1 << 16)
    while n := file.readinto(buf):
        chunks.append(bytes(buf[:n]))
    return b"".join(chunks)


def _readable(file) -> bool:
    """A file object MLX reads from: one with readinto, seek and tell."""
    return all(hasattr(file, a) for a in ("readinto", "seek", "tell"))


def _load_npy(src: _Source) -> array:
    """A `.npy` file's array, its header checked as MLX reads it: magic and version, the
    header's length, the header."""
    head = src.read(8)
    if head[:6] != b"\x93NUMPY":
        raise RuntimeError(f"[load] Invalid header in {src.label}")
    size = 2 if head[6] == 1 else 4
    length = int.from_bytes(src.read(size), "little")
    src.read(length)
    src.f.seek(0)
    _check_npy_dtype(src.f)
    src.f.seek(0)
    return _from_npy(np.load(src.f, allow_pickle=False))


# the `.npy` types MLX reads (kind: item sizes), in either byte order; "V2" is its bfloat16
_NPY_TYPES = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8), "c": (8,),
              "V": (2,)}


def _check_npy_dtype(f) -> None:
    """Refuse an `.npy` file (`f`, at its start) of a type MLX does not read, with its
    message, which quotes the first three characters of the header's type text."""
    fmt = np.lib.format
    version = fmt.read_magic(f)
    d = (fmt.read_array_header_1_0 if version[0] == 1 else fmt.read_array_header_2_0)(f)[2]
    if d.itemsize not in _NPY_TYPES.get(d.kind, ()) or d.names is not None:
        raise ValueError("[from_str] Unsupported array protocol type-string: "
                         f"{(d.str + chr(39))[:3]}")


def _npz_entry(z, key: str) -> array:
    """Entry `key` of an open `.npz` (`np.load`'s), its type checked as MLX checks it."""
    name = key + ".npy" if key + ".npy" in z.zip.namelist() else key
    with z.zip.open(name) as f:
        _check_npy_dtype(f)
    return _from_npy(z[key])


def _from_npy(a: np.ndarray) -> array:
    """An array from a `.npy` entry: MLX writes bfloat16 as the 2-byte void type "<V2"
    (NumPy has no bfloat16) and reads that type back as bfloat16; it reads either byte
    order."""
    if a.dtype == np.dtype("V2"):
        a = a.view(ml_dtypes.bfloat16)
    elif not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return array_from_numpy(a)


def _load_safetensors(src: _Source):
    """A `.safetensors` file's arrays and metadata, its header's length checked as MLX
    checks it."""
    length = int.from_bytes(src.read(8), "little")
    if length == 0 or length >= _MAX_JSON:
        raise RuntimeError(f"[load_safetensors] Invalid json header length {src.label}")
    if 8 + length > src.total:
        raise RuntimeError(
            f"[load_safetensors] The JSON header is {length} bytes long but the file is "
            f"only {src.total} bytes. Perhaps an incomplete download or corrupt file?")
    try:
        is_object = isinstance(json.loads(src.f.read(length)), dict)
    except ValueError:
        is_object = True  # (malformed JSON: the decoder below names what is wrong)
    if not is_object:
        raise RuntimeError(f"[load_safetensors] Invalid json metadata {src.label}")
    src.f.seek(0)
    return _st.decode(src.f.read())


def _format(file) -> str:
    """The format named by the text after the last "." of the path (or of a file object's
    `name`), as MLX finds it."""
    if isinstance(file, str):
        name = file
    elif _readable(file):
        name = file.name  # (MLX reads the attribute: AttributeError when there is none)
    else:
        raise ValueError("[load] Input must be a file-like object opened in binary mode, "
                         "or string")
    dot = name.rfind(".")
    if dot < 0:
        raise ValueError("[load] Could not infer file format from extension")
    return name[dot + 1:]


def load(file, format: str | None = None, return_metadata: bool = False, *,  # noqa: A002
         stream=None):
    """An array (`.npy`) or a dict of arrays (`.npz`, `.safetensors`, `.gguf`) from a path
    or a binary file object; with `return_metadata`, `(arrays, metadata)` for safetensors
    and gguf."""
    if isinstance(file, pathlib.Path):
        file = str(file)
    path_like = isinstance(file, str)
    fmt = _format(file) if format is None else format
    if return_metadata and fmt in ("npy", "npz"):
        raise ValueError(f"[load] metadata not supported for format {fmt}")
    if fmt == "gguf":  # MLX's gguf reader checks the file itself (a path, that exists)
        arrays, metadata = load_gguf(file)
        return (arrays, metadata) if return_metadata else arrays
    if fmt not in ("npy", "npz", "safetensors"):
        raise ValueError(f"[load] Unknown file format {fmt}")
    if fmt == "npz":  # (MLX reads it with Python's zipfile: a path or a file object)
        try:
            with zipfile.ZipFile(file):
                pass
        except (OSError, zipfile.BadZipFile):
            raise ValueError(_NPZ) from None
        if not path_like:
            file.seek(0)
        # NOTE: MLX inserts the entries, in the zip's order, into a C++ unordered_map and
        # hands back its order (as for safetensors, whose keys go in sorted).
        with np.load(file, allow_pickle=False) as z:
            return reorder({k: _npz_entry(z, k) for k in z.files})
    if not path_like and not _readable(file):
        raise ValueError(f"[load_{fmt}] Input must be a file-like object, or string")
    src = _Source(file, f"load_{fmt}" if fmt == "safetensors" else "load")
    try:
        if fmt == "npy":
            return _load_npy(src)
        arrays, metadata = _load_safetensors(src)
    finally:
        src.close()
    out = reorder({k: array_from_numpy(a) for k, a in arrays.items()}, sorted(arrays))
    metadata = reorder(metadata, sorted(metadata))
    return (out, metadata) if return_metadata else out
