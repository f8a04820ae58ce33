"""`np.where(cond, a, b)` in one C pass (csrc/select.c), for `_common.select`.

NumPy's `where` branches per element (about 0.5 ms for 128K float32 under a random mask
here, 60 us even under an all-true one); the C loop blends both sides' bits in vector
registers. It moves bits, so any dtype 4 or 8 bytes wide takes it with the same result as
NumPy's. It takes the common layouts: the condition C-order and of the result's shape, each
side either the same or one element. Anything else (and native kernels off): None, and
the caller selects with NumPy.
"""

from __future__ import annotations

import numpy as np

from .. import native
from ..native import calls
from ..native.kernels import Unavailable

_UNIT = {4: "select_f32", 8: "select_f64"}
_ARGS = [calls.P, calls.P, calls.INT, calls.P, calls.INT, calls.P, calls.I64]


def select_native(cond, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """np.where(cond, a, b) for `a` and `b` of one dtype 4 or 8 bytes wide, or None where
    this layout, dtype or mode is not taken."""
    name = _UNIT.get(a.dtype.itemsize)
    if (name is None or not isinstance(cond, np.ndarray) or cond.dtype != np.bool_
            or not cond.flags.c_contiguous or native.mode() != "native"):
        return None
    shape = cond.shape
    fa, fb = calls.full_or_one(a, shape), calls.full_or_one(b, shape)
    if fa is None or fb is None:
        return None
    lib = native.library("select")
    if lib is None:
        return None
    out = np.empty(shape, a.dtype)
    try:
        fn = calls.entry(lib, name, _ARGS)
    except Unavailable:
        return None
    fn(calls.ptr(cond), calls.ptr(a), fa, calls.ptr(b), fb, calls.ptr(out), out.size)
    return out
