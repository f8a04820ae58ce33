"""`finfo` / `iinfo`, and MLX's memory functions (the CPU build's answers: memory is
NumPy's, so the counters MLX keeps for its allocator read 0 here)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from . import _dtypes as D
from ._dtypes import Dtype


class finfo:
    """Limits of a floating dtype."""

    def __init__(self, dtype: Dtype) -> None:
        if dtype.kind not in "fc":
            raise ValueError(f"[finfo] dtype {dtype.name} is not inexact.")
        info = ml_dtypes.finfo(dtype.np)  # (NumPy's own knows no bfloat16)
        self.dtype = D.float32 if dtype is D.complex64 else dtype  # (MLX's: the part's)
        self.min, self.max = float(info.min), float(info.max)
        self.eps = float(info.eps)

    def __repr__(self) -> str:
        return f"finfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype.name})"


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, dtype: Dtype) -> None:
        if dtype.kind not in "iu":
            raise ValueError(f"[iinfo] dtype {dtype.name} is not integral.")
        info = np.iinfo(dtype.np)
        self.dtype = D.float32 if dtype is D.complex64 else dtype  # (MLX's: the part's)
        self.min, self.max = int(info.min), int(info.max)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


_limits = {"memory": 0, "cache": 0, "wired": 0}


def get_active_memory() -> int:
    return 0


def get_peak_memory() -> int:
    return 0


def get_cache_memory() -> int:
    return 0


def reset_peak_memory() -> None:
    """Nothing to reset: see the module docstring."""


def clear_cache() -> None:
    """Nothing cached: see the module docstring."""


def _set(which: str, limit: int) -> int:
    old, _limits[which] = _limits[which], int(limit)
    return old


def get_memory_limit() -> int:
    return _limits["memory"]


def set_memory_limit(limit: int) -> int:
    """Record the limit and return the previous one (ember does not enforce it)."""
    return _set("memory", limit)


def set_cache_limit(limit: int) -> int:
    return _set("cache", limit)


def set_wired_limit(limit: int) -> int:
    return _set("wired", limit)
