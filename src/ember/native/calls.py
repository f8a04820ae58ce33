"""Calling a native kernel from Python: typed entry points and array pointers."""

from __future__ import annotations

import ctypes

import numpy as np

P = ctypes.c_void_p
I64 = ctypes.c_int64
F64 = ctypes.c_double
INT = ctypes.c_int
SUFFIX = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
_entries: dict = {}


def entry(lib: ctypes.CDLL, name: str, argtypes: list, restype=None):
    """`lib.name` with its argument types set (once per library and name)."""
    k = (id(lib), name)
    fn = _entries.get(k)
    if fn is None:
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
        _entries[k] = fn
    return fn


def ptr(a: np.ndarray | None) -> int | None:
    """The address of `a`'s first element (None, a C NULL, for None)."""
    return None if a is None else a.__array_interface__["data"][0]


def suffix(*arrays) -> str | None:
    """"f32" or "f64" when every array has that one float dtype, else None (NumPy's)."""
    s = SUFFIX.get(arrays[0].dtype)
    for a in arrays[1:]:
        if a is not None and a.dtype != arrays[0].dtype:
            return None
    return s
