"""MLX's files: `.npy` (`save`), `.npz` (`savez`, `savez_compressed`),
`.safetensors` (`save_safetensors`) and `.gguf` (`save_gguf`, in `_gguf`), all read back
by `load`. Files are interchangeable with MLX's: the formats are NumPy's, safetensors'
and GGUF's own."""

from __future__ import annotations

import os

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


def load(file, format: str | None = None, return_metadata: bool = False, *,  # noqa: A002
         stream=None):
    """An array (`.npy`) or a dict of arrays (`.npz`, `.safetensors`, `.gguf`); with
    `return_metadata`, `(arrays, metadata)` for safetensors and gguf."""
    name = file if isinstance(file, (str, os.PathLike)) else getattr(file, "name", "")
    fmt = format or os.path.splitext(os.fspath(name))[1].lstrip(".")
    if fmt == "gguf":  # MLX's gguf reader checks the file itself (a path, that exists)
        arrays, metadata = load_gguf(file)
        return (arrays, metadata) if return_metadata else arrays
    file = os.fspath(file)
    if fmt not in ("npy", "npz", "safetensors"):
        raise ValueError(f"[load] Unknown file format {fmt}")
    if return_metadata and fmt != "safetensors":
        raise ValueError(f"[load] metadata not supported for format {fmt}")
    if not os.path.isfile(file):
        raise RuntimeError(f"[load] Failed to open file {file}")
    if fmt == "npy":
        return array_from_numpy(np.load(file, allow_pickle=False))
    if fmt == "npz":
        with np.load(file, allow_pickle=False) as z:
            return {k: array_from_numpy(z[k]) for k in z.files}
    with open(file, "rb") as f:
        arrays, metadata = _st.decode(f.read())
    out = {k: array_from_numpy(a) for k, a in arrays.items()}
    return (out, metadata) if return_metadata else out
