"""NumPy arrays, scalars and dtypes in a checkpoint, for `load(..., weights_only=False)`.

`torch.save` (and `ember.save`) write them as pickle does: an array is
`numpy._core.multiarray._reconstruct(numpy.ndarray, (0,), b'b')` plus a BUILD with its
state `(1, shape, dtype, is_fortran, raw)`; a scalar is `scalar(dtype, raw)`; a dtype is
`numpy.dtype(code, align, copy)` plus a BUILD with its state. `torch.load` refuses them
unless `weights_only=False`; so does ember, and then builds them here. Each stand-in checks
its arguments before NumPy sees them: only plain dtypes (no fields, subarrays or datetime
units, and a state equal to NumPy's own for that code but for the byte order), a fresh
dtype copy (a BUILD never reaches NumPy's shared dtype objects), and element counts that
match the bytes the file holds.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ._limits import charge, describe
from ._standins import _Marker
from ._unpickler import UnpicklingError

_NDARRAY = _Marker("numpy.ndarray")
_CODE = re.compile(r"[biufcOUSV]\d{1,5}")
_MAX_ELEMENTS = 1 << 48


def _dtype(code, align=False, copy=False):
    if type(code) is not str or not _CODE.fullmatch(code) or type(align) is not bool:
        raise UnpicklingError(f"numpy.dtype() of {describe(code)} is not a plain dtype")
    try:
        return np.dtype(code, align, True)  # copy=True: a new object, never NumPy's shared one
    except TypeError as e:
        raise UnpicklingError(f"bad dtype in checkpoint: {str(e)[:100]}") from None


def _reconstruct(cls, shape, typecode):
    if cls is not _NDARRAY or shape != (0,) or typecode != b"b":
        raise UnpicklingError("numpy's _reconstruct is allowed only as pickle writes it, "
                              "(numpy.ndarray, (0,), b'b')")
    return np.ndarray((0,), np.int8)


def _scalar(dtype, raw=None):
    if not isinstance(dtype, np.dtype):
        raise UnpicklingError("numpy scalar() takes a dtype")
    if dtype.hasobject:
        return raw
    if type(raw) is not bytes or len(raw) != dtype.itemsize:
        raise UnpicklingError(f"numpy scalar of {dtype} needs {dtype.itemsize} bytes, got "
                              f"{describe(raw)}")
    return np.frombuffer(raw, dtype)[0].copy()


def set_dtype_state(d: np.dtype, state) -> None:
    """BUILD on a dtype made by `_dtype`: only its own state, in either byte order."""
    own = np.dtype(d.str).__reduce__()[2]
    if type(state) is not tuple or len(state) != len(own) or state[0] != 3 or \
            state[2:] != own[2:] or not (state[1] == own[1] or (
                state[1] in ("<", ">") and own[1] in ("<", ">", "="))):
        raise UnpicklingError(f"refusing the state of numpy dtype {d}: only a plain dtype's "
                              "own state (byte order aside) may be restored")
    d.__setstate__(state)


def set_array_state(a: np.ndarray, state) -> None:
    """BUILD on an array made by `_reconstruct`: shape, dtype and exactly the bytes (or
    objects) that many elements need."""
    if type(state) is not tuple or len(state) != 5 or state[0] != 1:
        raise UnpicklingError("refusing a numpy array state that pickle would not write")
    _, shape, dtype, fortran, raw = state
    if type(shape) is not tuple or len(shape) > 64 or \
            any(type(n) is not int or n < 0 for n in shape):
        raise UnpicklingError(f"bad numpy array shape {describe(shape)}")
    n = math.prod(shape)
    if not isinstance(dtype, np.dtype) or type(fortran) is not bool or n > _MAX_ELEMENTS:
        raise UnpicklingError("bad numpy array state (dtype, order or size)")
    if dtype.hasobject:
        ok = type(raw) is list and len(raw) == n
    else:
        ok = type(raw) is bytes and len(raw) == n * dtype.itemsize
    if not ok:
        raise UnpicklingError(f"a numpy array of shape {shape} and dtype {dtype} does not "
                              f"match the data given ({describe(raw)})")
    charge(n * dtype.itemsize, f"a numpy array of {n} elements")
    a.__setstate__(state)


GLOBALS = {
    "numpy.ndarray": _NDARRAY, "numpy.dtype": _dtype,
    "numpy._core.multiarray._reconstruct": _reconstruct,
    "numpy.core.multiarray._reconstruct": _reconstruct,
    "numpy._core.multiarray.scalar": _scalar, "numpy.core.multiarray.scalar": _scalar,
}
CALLABLES = (_dtype, _reconstruct, _scalar)
