"""DLPack exchange through NumPy, plus bfloat16, which NumPy's DLPack does not carry.

NumPy produces and consumes the capsules; for bfloat16 ember moves the bits as
uint16 and rewrites the type code in the capsule's `DLTensor` (kDLUInt <-> kDLBfloat),
so PyTorch sees a real bfloat16 tensor and ember gets one back, without a copy.
"""

from __future__ import annotations

import ctypes

import ml_dtypes
import numpy as np

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]

_KDL_UINT, _KDL_BFLOAT = 1, 4
# Byte offset of DLTensor.dtype: after data (8), device (8) and ndim (4). A versioned
# capsule's DLTensor follows version (8), manager_ctx (8), deleter (8) and flags (8).
_DTYPE_OFFSET = 20
_VERSIONED_HEADER = 32


def _dtype_field(capsule) -> ctypes.Array:
    """The capsule's (type code, bits) bytes, writable in place."""
    name = _get_name(capsule)
    base = _get_pointer(capsule, name)
    offset = _DTYPE_OFFSET + (_VERSIONED_HEADER if name == b"dltensor_versioned" else 0)
    return (ctypes.c_uint8 * 2).from_address(base + offset)


def export(arr: np.ndarray, **kwargs):
    """A DLPack capsule for `arr` (a bfloat16 array is exported with the bfloat16 code)."""
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if arr.dtype != ml_dtypes.bfloat16:
        return arr.__dlpack__(**kwargs)
    capsule = arr.view(np.uint16).__dlpack__(**kwargs)
    _dtype_field(capsule)[0] = _KDL_BFLOAT
    return capsule


class _Relabelled:
    """Wraps a producer (or a bare capsule) so NumPy can import its bfloat16 as uint16."""

    def __init__(self, source) -> None:
        self.source = source
        self.bfloat16 = False
        self.legacy = False

    def __dlpack_device__(self):
        if hasattr(self.source, "__dlpack_device__"):
            return self.source.__dlpack_device__()
        return (1, 0)  # a bare capsule: assume host memory

    def __dlpack__(self, **kwargs):
        if hasattr(self.source, "__dlpack__"):
            capsule = self.source.__dlpack__(**kwargs)
        else:
            capsule = self.source
        self.legacy = _get_name(capsule) == b"dltensor"
        field = _dtype_field(capsule)
        if field[0] == _KDL_BFLOAT and field[1] == 16:
            field[0] = _KDL_UINT
            self.bfloat16 = True
        return capsule


def _writable(arr: np.ndarray) -> np.ndarray:
    """A writable view of the memory `arr` reads (kept alive through the view's base).

    NOTE: NumPy marks an array imported from a legacy (unversioned) capsule read-only,
    since such a capsule cannot say whether its producer allows writes; PyTorch's
    `from_dlpack` treats it as writable, and `torch.to_dlpack` makes only legacy capsules.
    """
    start = arr.__array_interface__["data"][0]
    low = sum(s * (n - 1) for s, n in zip(arr.strides, arr.shape) if s < 0)
    high = sum(s * (n - 1) for s, n in zip(arr.strides, arr.shape) if s > 0)
    span = (ctypes.c_uint8 * (high - low + arr.itemsize)).from_address(start + low)
    span._keep_alive = arr  # the capsule's owner lives as long as any view of `span`
    flat = np.frombuffer(span, dtype=np.uint8)
    return np.ndarray(arr.shape, arr.dtype, buffer=flat, offset=-low, strides=arr.strides)


def import_array(source) -> np.ndarray:
    """A NumPy array sharing memory with any DLPack producer or capsule."""
    wrapped = _Relabelled(source)
    arr = np.from_dlpack(wrapped)
    if arr.size and not arr.flags.writeable and wrapped.legacy:
        arr = _writable(arr)
    return arr.view(ml_dtypes.bfloat16) if wrapped.bfloat16 else arr
