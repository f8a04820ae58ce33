"""Arrays and the memory under them: `from_dlpack` (an array from another library's
buffer, copied, as MLX's CPU build does) and `get_array_buffer_size` (the bytes of the
buffers computed arrays hold, each buffer once)."""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np

from ..._dlpack import _VERSIONED_HEADER, _get_name, _get_pointer, import_array
from . import _dtypes as D
from ._array import array, array_from_numpy, numpy_of
from ._binding import bad_call
from ._trees import leaves

# -- from_dlpack ----------------------------------------------------------------------------

_FROM_DLPACK = "from_dlpack(x: DLPackCompatible, /, *, copy: bool | None = None) -> array"

# the MLX dtype of each NumPy dtype MLX imports (64-bit floats become 32-bit ones, as in
# MLX's DLPack table); any other is refused
_IMPORTED = {np.dtype(t): d for t, d in (
    (np.bool_, D.bool_), (np.uint8, D.uint8), (np.uint16, D.uint16), (np.uint32, D.uint32),
    (np.uint64, D.uint64), (np.int8, D.int8), (np.int16, D.int16), (np.int32, D.int32),
    (np.int64, D.int64), (np.float16, D.float16), (ml_dtypes.bfloat16, D.bfloat16),
    (np.float32, D.float32), (np.float64, D.float32), (np.complex64, D.complex64),
    (np.complex128, D.complex64))}

_KDL_CPU, _KDL_CUDA, _KDL_METAL, _KDL_CUDA_MANAGED = 1, 2, 8, 13


def _device_type(capsule) -> int:
    """The DLDevice type of a DLPack capsule's tensor (after its data pointer)."""
    name = _get_name(capsule)
    base = _get_pointer(capsule, name)
    offset = 8 + (_VERSIONED_HEADER if name == b"dltensor_versioned" else 0)
    return ctypes.c_int32.from_address(base + offset).value


def _imported(x, args: tuple, kwargs: dict) -> np.ndarray:
    """`x`'s data as a NumPy array (sharing its memory), taken as MLX's binding takes it: a
    DLPack capsule, else `__dlpack__()`, else the buffer protocol, else the framework's own
    `to_dlpack` (PyTorch's exports a tensor that requires grad); else its TypeError."""
    if isinstance(x, array):  # (MLX's own arrays export DLPack)
        return numpy_of(x)
    capsule = x if type(x).__name__ == "PyCapsule" else None
    if capsule is None and hasattr(x, "__dlpack__"):
        try:
            capsule = x.__dlpack__()
        except Exception:  # noqa: BLE001  (the next way is tried, as in the binding)
            capsule = None
    if capsule is None:
        try:
            a = np.asarray(memoryview(x))
        except TypeError:
            a = None
        if a is not None:
            if a.dtype.isnative and a.dtype in _IMPORTED:  # (the formats the binding reads)
                return a
            raise bad_call("from_dlpack", _FROM_DLPACK, args, kwargs)
        capsule = _to_dlpack(x)
        if capsule is None:
            raise bad_call("from_dlpack", _FROM_DLPACK, args, kwargs)
    device = _device_type(capsule)
    if device in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ValueError("[convert] CUDA import is not supported.")
    if device == _KDL_METAL:
        raise ValueError("Metal DLPack import is not available.")
    if device != _KDL_CPU:
        raise ValueError("[convert] Unsupported device.")
    try:
        return import_array(capsule)
    except (BufferError, TypeError, ValueError, RuntimeError):
        raise ValueError("[convert] Cannot convert array to mlx.") from None


def _to_dlpack(x):
    """A capsule from PyTorch's `to_dlpack` for a torch tensor, else None."""
    if not type(x).__module__.startswith("torch"):
        return None
    try:
        from torch.utils.dlpack import to_dlpack

        return to_dlpack(x)
    except Exception:  # noqa: BLE001
        return None


def from_dlpack(*args, **kwargs) -> array:
    """An array of the data of `x`, any object with `__dlpack__` (or the buffer protocol),
    copied: MLX's CPU build cannot share it (`copy=False` raises). 64-bit floats become
    32-bit ones, as in MLX."""
    copy = kwargs.get("copy")
    if len(args) != 1 or set(kwargs) - {"copy"} or not (copy is None or copy.__class__ is bool):
        raise bad_call("from_dlpack", _FROM_DLPACK, args, kwargs)
    a = _imported(args[0], args, kwargs)
    dtype = _IMPORTED.get(a.dtype)
    if dtype is None:
        raise ValueError("[convert] Cannot convert array to mlx.")
    if copy is False:
        raise ValueError("[convert] Cannot import a CPU array without a copy.")
    for n, s in zip(a.shape, a.strides):
        if n == 0:
            break
        if s < 0:
            raise ValueError("Cannot convert DLPack arrays with negative strides to mlx array.")
    return array_from_numpy(a, dtype)


# -- get_array_buffer_size ------------------------------------------------------------------

def _root(a: np.ndarray) -> np.ndarray:
    """The NumPy array that owns the memory `a` views."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def get_array_buffer_size(*args) -> int:
    """The bytes of the buffers under the arrays in `args` (arrays, or trees of them; other
    leaves are ignored), each buffer counted once: a view of an array is the array's
    buffer. Arrays must be computed.

    NOTE: ember computes factories (`zeros`, `arange` ...) at once, where MLX waits for
    `eval`, so those count here where MLX raises; and ember keeps an array made from a
    strided NumPy view as a compact copy, where MLX copies the strided span."""
    total, seen = 0, set()
    for x in leaves(list(args)):
        if not isinstance(x, array):
            continue
        t = x._t
        if t._is_lazy or t._is_pending:
            raise ValueError("[get_array_buffer_size] Arrays must be evaluated before "
                             "querying buffer size.")
        data = t._storage.data if t._storage is not None else t._np
        root = _root(data)
        if id(root) in seen:
            continue
        seen.add(id(root))
        # (in the dtype's own width: a uint32 array is carried in int64)
        total += root.nbytes // t._dtype.itemsize * x._dtype.size
    return total
