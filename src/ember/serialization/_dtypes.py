"""The dtype tables of the checkpoint format: PyTorch's typed storage classes
(`torch.FloatStorage` & co.) and the ember dtype each one holds, the dtypes PyTorch
writes through untyped storages that ember has no arithmetic for (loaded as extra
dtype objects by `_extra_dtype`), the dtypes ember refuses, and `_dtype_named`, which
turns a `torch.<name>` dtype in a file into an ember dtype.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .. import _dtype as dt
from ._unpickler import UnpicklingError

_STORAGE_CLASSES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
_CLASS_OF = {v: k for k, v in _STORAGE_CLASSES.items()}
# dtypes PyTorch writes through untyped storages (_rebuild_tensor_v3); ember has no
# dtype of its own for them, so they load as extra dtype objects (see _extra_dtype).
_V3_NUMPY = {
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu,
}
_UNSUPPORTED_DTYPES = {
    "complex32", "chalf", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
    "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
} | {f"uint{i}" for i in range(1, 8)} | {f"int{i}" for i in range(1, 8)}
_EXTRA: dict[str, dt.dtype] = {}


def _extra_dtype(name: str) -> dt.dtype:
    """An ember dtype object for a PyTorch dtype ember has no arithmetic for: enough to
    hold, view, save and `.numpy()` such tensors."""
    d = _EXTRA.get(name)
    if d is None:
        np_dtype = np.dtype(_V3_NUMPY[name])
        d = _EXTRA[name] = dt.dtype(name, np_dtype, 9, 2 if "float" in name else 1)
    return d


def _dtype_named(name: str) -> dt.dtype:
    if name in dt.BY_NAME:
        return dt.BY_NAME[name]
    if name in _V3_NUMPY:
        return _extra_dtype(name)
    raise UnpicklingError(f"dtype torch.{name} is not supported by ember")
