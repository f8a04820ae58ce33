"""`finfo` / `iinfo`, and MLX's memory functions: active memory is the bytes the live,
computed arrays hold (what MLX's allocator counts for them), the limits are kept as MLX's
CPU allocator keeps them (and not enforced), and there is no buffer cache."""

from __future__ import annotations

import gc
import operator
import os

import ml_dtypes
import numpy as np

from ..._tensor import Tensor
from . import _dtypes as D
from ._binding import bad_call
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


def _buffers() -> dict[int, int]:
    """The distinct buffers the live, computed `mx.array`s hold, by id: their bytes (a
    buffer shared by views counted once, in the arrays' MLX dtype: a carrier's wider
    elements are not MLX's)."""
    from ._array import array

    seen: dict[int, int] = {}
    for obj in gc.get_objects():
        if type(obj) is not array:  # (type(): a proxy's __class__ may run its code)
            continue
        t = obj._t
        if t.__class__ is not Tensor:  # (pending in a lazy graph, or a transform's tracer)
            continue
        a = t._np
        if a is None:
            a = t._storage.data if t._storage is not None else None
        if a is None:
            continue
        ratio = obj._dtype.size / a.itemsize
        a = _root(a)
        seen[id(a)] = int(a.nbytes * ratio)
    return seen


def _root(a: np.ndarray) -> np.ndarray:
    """The array that owns `a`'s memory: up its bases, through the stand-in objects
    `as_strided` / `broadcast_to` put between a view and its base."""
    while True:
        b = a.base
        if not isinstance(b, np.ndarray):
            b = getattr(b, "base", None)  # (NumPy's DummyArray holds the base it views)
            if not isinstance(b, np.ndarray):
                return a
        a = b


_peak = [0]
_at_reset: list = [None]  # the buffers live at `reset_peak_memory`, until one is made after


def _sample() -> int:
    """The active bytes now, raising the peak with them, except while no buffer has been
    made since `reset_peak_memory` (MLX's peak reads 0 until its next allocation)."""
    buffers = _buffers()
    active = sum(buffers.values())
    if _at_reset[0] is not None:
        if buffers.keys() <= _at_reset[0]:
            return active
        _at_reset[0] = None
    _peak[0] = max(_peak[0], active)
    return active


def get_active_memory(*args, **kwargs) -> int:
    """The bytes held by computed arrays (see `_buffers`). NOTE: MLX counts its
    allocator's buffers, so an intermediate freed inside an evaluation and a scalar a
    pending graph holds count there and not here; the bytes of evaluated arrays agree."""
    if args or kwargs:
        raise bad_call("get_active_memory", "get_active_memory() -> int", args, kwargs)
    return _sample()


def get_peak_memory(*args, **kwargs) -> int:
    """The most active memory seen since the start or `reset_peak_memory`. NOTE: MLX sees
    every allocation; ember samples at each memory call (this one included), so its peak
    is a lower bound of MLX's (an intermediate freed between two calls is not seen)."""
    if args or kwargs:
        raise bad_call("get_peak_memory", "get_peak_memory() -> int", args, kwargs)
    _sample()
    return _peak[0]


def get_cache_memory(*args, **kwargs) -> int:
    """0: freed buffers go back to NumPy, ember keeps no cache of its own."""
    if args or kwargs:
        raise bad_call("get_cache_memory", "get_cache_memory() -> int", args, kwargs)
    return 0


def reset_peak_memory(*args, **kwargs) -> None:
    if args or kwargs:
        raise bad_call("reset_peak_memory", "reset_peak_memory() -> None", args, kwargs)
    _peak[0] = 0
    _at_reset[0] = set(_buffers())


def clear_cache(*args, **kwargs) -> None:
    """Nothing cached (see `get_cache_memory`)."""
    if args or kwargs:
        raise bad_call("clear_cache", "clear_cache() -> None", args, kwargs)


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


# MLX's CPU allocator: a memory limit of 0.8 of the machine's memory (8 GiB when unknown),
# a 32 MiB cache limit; on a device without wired memory its limit reads 0 and stays 0
_limits = {"memory": int(0.8 * _physical_memory()) or 1 << 33, "cache": 32 << 20}
_NO = object()


def _set(which: str, args: tuple, kwargs: dict) -> int:
    """Set a limit (a `size_t`: anything with `__index__` in [0, 2**64)), returning the
    one before; refused as MLX's binding refuses it."""
    name = f"set_{which}_limit"
    value = _NO
    if len(args) == 1 and not kwargs:
        value = args[0]
    elif not args and list(kwargs) == ["limit"]:
        value = kwargs["limit"]
    limit = None
    if value is not _NO:
        try:
            limit = operator.index(value)
        except TypeError:
            pass
    if limit is None or not 0 <= limit < 2**64:
        raise bad_call(name, f"{name}(limit: int) -> int", args, kwargs)
    if which == "wired":
        return 0
    old, _limits[which] = _limits[which], limit
    return old


def get_memory_limit() -> int:
    return _limits["memory"]


def set_memory_limit(*args, **kwargs) -> int:
    """Record the limit and return the previous one (ember does not enforce it)."""
    return _set("memory", args, kwargs)


def set_cache_limit(*args, **kwargs) -> int:
    """Record the limit and return the previous one (ember keeps no cache)."""
    return _set("cache", args, kwargs)


def set_wired_limit(*args, **kwargs) -> int:
    """0, the limit of a device without wired memory (MLX's CPU build), whatever is set."""
    return _set("wired", args, kwargs)
