"""ember's arrays reuse large freed buffers: the runtime's buffer cache (csrc/buffers.c) as
NumPy's memory handler.

A training step frees and reallocates the same buffers every step, and the C library gives
large freed blocks back to the OS, so each step page-faults them in again (measured on the
MNIST CNN step: about 3,000 faults and 30 ms of kernel time a step, a third of its time).
NumPy lets a program choose the allocator of its arrays' data (its "memory handler", held
in a context variable: each thread, or asyncio context, has its own). When ember's native
runtime loads (the first op that runs a native kernel), it makes its buffer cache the
handler of the context it runs in (the native kernels take their scratch memory from the
same cache): freed blocks of 64 KiB or more are kept, up to 512 MiB in all, and handed back
to the next array of the same size (pages rounded); smaller ones go on to the handler NumPy
had (its default keeps a cache of tiny blocks). Arrays
made in other threads keep NumPy's own handler; an array is always freed by the handler
that made it.

Nothing changes at import, nor in the C library's settings (unlike `tune_allocator`, which
changes how the whole process's malloc returns memory). `EMBER_BUFFER_CACHE=0` leaves
NumPy's handler alone, and `release()` gives the cached blocks back.
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

NAME = "ember_buffers"
_CAPSULE_NAME = b"mem_handler"  # (NumPy's name for a handler capsule; kept alive here)
_SET_HANDLER = 304  # PyDataMem_SetHandler's place in NumPy's C API table (since 1.22)
_GET_HANDLER = 305  # and PyDataMem_GetHandler's
_state: dict = {"lib": None, "capsule": None, "before": None}  # (the runtime library, once
# loaded; ember's handler capsule; the one NumPy had before, which small blocks go to)


def _multiarray():
    core = getattr(np, "_core", None) or np.core
    return core._multiarray_umath


def handler_name() -> str:
    """The name of the memory handler NumPy uses in this context."""
    return _multiarray().get_handler_name()


def install(lib: ctypes.CDLL | None = None) -> bool:
    """Make the buffer cache of the runtime library `lib` (by default the one loaded)
    NumPy's memory handler in the calling context (the thread, or asyncio context, it runs
    in). False where it cannot be (no runtime, a NumPy without handlers) or is switched off
    (`EMBER_BUFFER_CACHE=0`)."""
    if lib is not None:
        lib.ember_buffers_stats.argtypes = [ctypes.c_void_p]
        lib.ember_buffers_release.restype = ctypes.c_int
        _state["lib"] = lib
    lib = _state["lib"]
    if lib is None or os.environ.get("EMBER_BUFFER_CACHE", "1").strip() == "0":
        return False
    if handler_name() == NAME:
        return True
    try:
        api = ctypes.pythonapi
        api.PyCapsule_New.restype = ctypes.py_object
        api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        table = ctypes.cast(api.PyCapsule_GetPointer(_multiarray()._ARRAY_API, None),
                            ctypes.POINTER(ctypes.c_void_p))
        if _state["capsule"] is None:
            # (small blocks go on to the handler NumPy has now: its default, which keeps a
            # cache of tiny blocks; its capsule is kept alive here)
            before = ctypes.PYFUNCTYPE(ctypes.py_object)(table[_GET_HANDLER])()
            lib.ember_buffers_fall_back_to.argtypes = [ctypes.c_void_p]
            lib.ember_buffers_fall_back_to(api.PyCapsule_GetPointer(before, _CAPSULE_NAME))
            handler = ctypes.addressof(ctypes.c_char.in_dll(lib, "ember_buffers_handler"))
            _state["before"] = before
            _state["capsule"] = api.PyCapsule_New(handler, _CAPSULE_NAME, None)
        ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(table[_SET_HANDLER])(
            _state["capsule"])
    except (AttributeError, ValueError, TypeError, OSError):
        return False
    return handler_name() == NAME


def stats() -> dict:
    """Bytes the cache holds now, and the large requests it served (hits) or passed to
    malloc (misses) so far."""
    lib = _state["lib"]
    if lib is None:
        return {"held": 0, "hits": 0, "misses": 0}
    out = (ctypes.c_int64 * 3)()
    lib.ember_buffers_stats(out)
    return {"held": out[0], "hits": out[1], "misses": out[2]}


def release() -> bool:
    """Give every cached block back to the C library (False if another thread was using
    the cache at that moment)."""
    lib = _state["lib"]
    return bool(lib.ember_buffers_release()) if lib else True
