"""float32 <-> float16 and float32 -> bfloat16 casts in C (csrc/casts.c), NumPy's bits.

NumPy converts float16 element by element in software (a 256x512 float32 tensor to float16:
~250 us here against torch's 15), and every float16 / bfloat16 op computes in float32 and
rounds back, so each of them paid two such casts. `cast(a, d)` is `a.astype(d)` with the
same bits (NaN payloads as NumPy writes them), through C for C-contiguous arrays of 4K
elements or more where native kernels are on; NumPy's cast otherwise.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .. import native
from ..native import calls
from ..native.kernels import Unavailable

_F32, _F16, _BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
_KERNELS = {(_F32, _F16): "half_from_float_f32", (_F16, _F32): "float_from_half_f32",
            (_F32, _BF16): "bfloat_from_float_f32"}
_HALF = ("half_from_float_f32", "float_from_half_f32")
_MIN = 1 << 12  # elements: below this NumPy's cast costs less than the call
_state: dict = {}


def _kernel(name: str):
    """The C function `name`, or None (native kernels off, no compiler, no F16C)."""
    lib = native.library("casts")
    if lib is None:
        return None
    try:
        if name in _HALF:
            half = _state.get("half")
            if half is None:
                half = _state["half"] = bool(
                    calls.entry(lib, "casts_have_half_f32", [], calls.INT)())
            if not half:
                return None
        return calls.entry(lib, name, [calls.P, calls.P, calls.I64])
    except Unavailable:
        return None


def cast(a: np.ndarray, d: np.dtype) -> np.ndarray:
    """`a.astype(d, order="K")`: a fresh array of `a`'s values cast to `d`."""
    name = _KERNELS.get((a.dtype, d))
    if name is None or a.size < _MIN or not a.flags.c_contiguous or \
            native.mode() != "native":
        return a.astype(d, order="K")
    fn = _kernel(name)
    if fn is None:
        return a.astype(d, order="K")
    out = np.empty(a.shape, d)
    fn(calls.ptr(a), calls.ptr(out), a.size)
    return out


def widen(a: np.ndarray) -> np.ndarray:
    """A float16 / bfloat16 array in float32 (a kernel's working type)."""
    return cast(a, _F32)
