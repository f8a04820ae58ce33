"""MLX's files: `.npy` (`save`), `.npz` (`savez`, `savez_compressed`),
`.safetensors` (`save_safetensors`) and `.gguf` (`save_gguf`, in `_gguf`), all read back
by `load`. Files are interchangeable with MLX's: the formats are NumPy's, safetensors'
and GGUF's own."""

from __future__ import annotations

import os
import zipfile

import numpy as np

from ...utils import safetensors as _st
from ._array import array, array_from_numpy, numpy_of
from ._gguf import load_gguf, save_gguf  # noqa: F401  (save_gguf is exported from here)


def _path(file, suffix: str) -> str:
    file = os.fspath(file)
    return file if file.endswith(suffix) else file + suffix


def _np(a) -> np.ndarray:
    if not isinstance(a, array):
        raise ValueError(f"[save] Expected an array, got {type(a).__name__}.")
    return np.ascontiguousarray(numpy_of(a))


def save(file, arr: array) -> None:
    """Write `arr` as a `.npy` file (the suffix is added when missing)."""
    with open(_path(file, ".npy"), "wb") as f:
        np.save(f, _np(arr), allow_pickle=False)


def _savez(file, args, kwargs, writer) -> None:
    named = {f"arr_{i}": _np(a) for i, a in enumerate(args)}
    for k, a in kwargs.items():
        if k in named:
            raise ValueError(f"[savez] Cannot use un-named variables and keyword {k}")
        named[k] = _np(a)
    with open(_path(file, ".npz"), "wb") as f:
        writer(f, **named)


def savez(file, *args, **kwargs) -> None:
    """Write arrays to a `.npz` file: positional ones as `arr_0`, `arr_1`, ..."""
    _savez(file, args, kwargs, np.savez)


def savez_compressed(file, *args, **kwargs) -> None:
    _savez(file, args, kwargs, np.savez_compressed)


def save_safetensors(file, arrays: dict, metadata: dict | None = None) -> None:
    """Write a flat dict of arrays (and string metadata) as a `.safetensors` file."""
    for k, v in arrays.items():
        if not isinstance(v, array):
            raise RuntimeError(f"[save_safetensors] Value of key {k!r} is a "
                               f"{type(v).__name__}, not an array.")
    data = _st.encode({str(k): _np(v) for k, v in arrays.items()}, metadata)
    with open(_path(file, ".safetensors"), "wb") as f:
        f.write(data)


_NPZ = ("[load_npz] Input must be a zip file or a file-like object that can be opened "
        "with zipfile.ZipFile")
_MAX_JSON = 100_000_000  # safetensors: MLX refuses a JSON header this long or longer


def _read(f, n: int) -> bytes:
    """`n` bytes of `f`, or MLX's error naming how many were missing."""
    try:
        data = f.read(n)
    except OSError:  # (a directory opens, but does not read)
        data = b""
    if len(data) < n:
        raise RuntimeError(f"[read] Unable to read {n - len(data)} bytes from file.")
    return data


def _open(file: str, who: str):
    try:
        return open(file, "rb")
    except OSError:
        if os.path.isdir(file):  # (MLX's stream opens a directory, then cannot read it)
            raise RuntimeError("[read] Unable to read 8 bytes from file.") from None
        raise RuntimeError(f"[{who}] Failed to open file {file}") from None


def _load_npy(file: str) -> array:
    """A `.npy` file's array, its header checked as MLX reads it: magic and version, the
    header's length, the header."""
    with _open(file, "load") as f:
        head = _read(f, 8)
        if head[:6] != b"\x93NUMPY":
            raise RuntimeError(f"[load] Invalid header in file {file}")
        size = 2 if head[6] == 1 else 4
        length = int.from_bytes(_read(f, size), "little")
        _read(f, length)
        f.seek(0)
        return array_from_numpy(np.load(f, allow_pickle=False))


def _load_safetensors(file: str):
    """A `.safetensors` file's arrays and metadata, its header's length checked as MLX
    checks it."""
    with _open(file, "load_safetensors") as f:
        length = int.from_bytes(_read(f, 8), "little")
        total = os.fstat(f.fileno()).st_size
        if length >= _MAX_JSON:
            raise RuntimeError(f"[load_safetensors] Invalid json header length file {file}")
        if 8 + length > total:
            raise RuntimeError(
                f"[load_safetensors] The JSON header is {length} bytes long but the file is "
                f"only {total} bytes. Perhaps an incomplete download or corrupt file?")
        f.seek(0)
        return _st.decode(f.read())


def load(file, format: str | None = None, return_metadata: bool = False, *,  # noqa: A002
         stream=None):
    """An array (`.npy`) or a dict of arrays (`.npz`, `.safetensors`, `.gguf`); with
    `return_metadata`, `(arrays, metadata)` for safetensors and gguf."""
    path_like = isinstance(file, (str, os.PathLike))
    name = file if path_like else getattr(file, "name", "")
    fmt = format or os.path.splitext(os.fspath(name))[1].lstrip(".")
    if not fmt:
        raise ValueError("[load] Could not infer file format from extension")
    if fmt == "gguf":  # MLX's gguf reader checks the file itself (a path, that exists)
        arrays, metadata = load_gguf(file)
        return (arrays, metadata) if return_metadata else arrays
    if fmt not in ("npy", "npz", "safetensors"):
        raise ValueError(f"[load] Unknown file format {fmt}")
    if return_metadata and fmt != "safetensors":
        raise ValueError(f"[load] metadata not supported for format {fmt}")
    if fmt == "npz":  # (MLX reads it with Python's zipfile: a path or a file object)
        try:
            with zipfile.ZipFile(file):
                pass
        except (OSError, zipfile.BadZipFile):
            raise ValueError(_NPZ) from None
        if not path_like:
            file.seek(0)
        with np.load(file, allow_pickle=False) as z:
            return {k: array_from_numpy(z[k]) for k in z.files}
    file = os.fspath(file)
    if fmt == "npy":
        return _load_npy(file)
    arrays, metadata = _load_safetensors(file)
    out = {k: array_from_numpy(a) for k, a in arrays.items()}
    return (out, metadata) if return_metadata else out
