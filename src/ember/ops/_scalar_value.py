"""A Python number as a value of a tensor dtype, refused where PyTorch refuses it.

`scalar_value` is the one check behind `full`, `fill_`, `masked_fill(_)`, `index_fill(_)`,
`scatter(value=)` and `x[i] = v`: PyTorch converts the number to a `Scalar` (a Python int
must fit int64 or uint64) and then to the tensor's C type, raising instead of wrapping
(300 into int8), saturating (1e6 into float16) or truncating NaN / inf into an integer.
The callers that differ from plain conversion (`x[i] = v`, `index_fill`) say so in one
line before calling it.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import _dtype as dt
from ._float8 import to_float8

C_TYPE = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
          "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
          "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>", "bool": "bool",
          "float8_e4m3fn": "c10::Float8_e4m3fn", "float8_e5m2": "c10::Float8_e5m2",
          "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t"}

_I64_MIN, _U64_END = -(2 ** 63), 2 ** 64
_F32_MAX = float(np.finfo(np.float32).max)
_FLOAT_MAX = {d: float(ml_dtypes.finfo(d.np).max) for d in dt.ALL if d._kind == 2}
_INT_RANGE = {d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)) for d in dt.ALL
              if d._kind == 1}
_INF = float("inf")
_f32 = np.float32


def _overflow(d: dt.dtype) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {C_TYPE[d.name]} without overflow")


def _python_number(value):
    """`value` as a Python number, refusing the ints a PyTorch Scalar cannot hold."""
    if isinstance(value, np.generic):
        value = dt.py_number(value)  # (np.bool_ and complex64 read as floats, as PyTorch)
    elif not isinstance(value, (int, float, complex)) and hasattr(value, "item"):
        value = value.item()  # a 0-d tensor
    if isinstance(value, int) and not isinstance(value, bool):
        if value < _I64_MIN:
            raise OverflowError("can't convert negative int to unsigned")
        if value >= _U64_END:
            raise OverflowError("int too big to convert")
    return value


def scalar_value(value, d: dt.dtype):
    """`value` (a Python or NumPy number, or a 0-d tensor's item) as a NumPy scalar of dtype
    `d`; RuntimeError where PyTorch's conversion would overflow: an integer or float out of
    the integer dtype's range, NaN or inf into an integer dtype, a finite value beyond a
    float dtype's largest (inf and NaN themselves are kept), a complex number with an
    imaginary part into a real dtype. Bool takes any number (nonzero is True)."""
    cls = value.__class__
    if cls is float or cls is int:  # the usual case first: a real Python number
        fast = _FLOAT_FAST.get(d)
        if fast is not None and (cls is float or _I64_MIN <= value < _U64_END):
            top, make = fast
            if -top <= value <= top or value != value or cls is float and abs(value) == _INF:
                return make(value)
            raise _overflow(d)
    value = _python_number(value)
    if d is dt.bool_:
        return np.bool_(value != 0)
    if d.is_complex:
        c = complex(value)
        if d is dt.complex64 and any(math.isfinite(p) and abs(p) > _F32_MAX
                                     for p in (c.real, c.imag)):
            raise _overflow(d)
        return d.np.type(c)
    if isinstance(value, complex):
        if value.imag:
            raise _overflow(d)
        value = value.real
    if d._kind == 1:
        lo, hi = _INT_RANGE[d]
        if isinstance(value, float) and not math.isfinite(value):
            raise _overflow(d)
        # NOTE: as for tensor(), an integer down to -max wraps into an unsigned type; a float
        # does not.
        if lo == 0 and not isinstance(value, float):
            lo = -hi
        if value < lo or value > hi:
            raise _overflow(d)
        return d.np.type(int(value) % (hi + 1) if value < 0 and lo < 0 == _INT_RANGE[d][0]
                         else int(value))
    value = float(value)
    # NOTE: e4m3fn has no infinity: inf overflows it as a finite value beyond 448 does
    if (math.isfinite(value) or d is dt.float8_e4m3fn) and abs(value) > _FLOAT_MAX[d]:
        raise _overflow(d)
    return _as_float(value, d)


_FLOAT_FAST = {d: (_FLOAT_MAX[d], (lambda v, t=d.np.type: t(_f32(v))) if d.itemsize == 2
                   else d.np.type) for d in _FLOAT_MAX if d not in dt.FLOAT8}


def _as_float(value: float, d: dt.dtype):
    """A Python float as a scalar of float dtype `d`; to 16 bits through float32, as PyTorch
    rounds (see ember.ops.copy.cast_array)."""
    if d.itemsize == 2:
        return d.np.type(np.float32(value))
    if d.itemsize == 1:
        return to_float8(np.float32(value), d)[()]
    return d.np.type(value)


def setitem_value(value, d: dt.dtype):
    """`x[i] = value`'s conversion: PyTorch unpacks a Python int as a C long long (ValueError
    beyond int64) and, for float16 / bfloat16 / float8, converts through double (so 1e6
    saturates there, as it does in PyTorch, instead of raising)."""
    cls = value.__class__
    if cls is float and d.itemsize != 2 and d not in dt.FLOAT8:
        return scalar_value(value, d)
    if (cls is int or isinstance(value, int) and cls is not bool) and \
            not _I64_MIN <= value < -_I64_MIN:
        raise ValueError("Overflow when unpacking long long")
    if d is dt.float16 or d is dt.bfloat16 or d in dt.FLOAT8:  # (float8 saturates, as a copy)
        with np.errstate(over="ignore"):
            return _as_float(float(scalar_value(value, dt.float64)), d)
    return scalar_value(value, d)


def uint64_promotion(tensor_dtype: dt.dtype, value) -> None:
    """PyTorch reads a Python int in [2**63, 2**64) as a uint64 Scalar, which a bool tensor
    cannot be promoted with."""
    if tensor_dtype is dt.bool_ and value.__class__ is int and value >= -_I64_MIN:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           "attempted to promote Bool and UInt64")


def integer_operand(value, d: dt.dtype) -> None:
    """A Python int that an op converts to the C type of its integer result `d` (clamp's
    bounds, where's number): refused past the dtype's range, as PyTorch does, not wrapped.
    An unsigned type takes negatives down to -max too (they wrap, two's complement, as
    c10's overflow check lets them)."""
    if value.__class__ is int and d._kind == 1:
        value = _python_number(value)
        lo, hi = _INT_RANGE[d]
        if not (lo <= value <= hi or lo == 0 and -hi <= value < 0):
            raise _overflow(d)


def kernel_number(value, np_dtype: np.dtype) -> np.ndarray:
    """A Python number as a 0-d array of NumPy dtype `np_dtype`, for a kernel, converted as
    PyTorch converts a Scalar: to float16 / bfloat16 through float32 (a double rounded once
    to 16 bits can differ, and ml_dtypes >= 0.7 rounds bfloat16 once), otherwise directly."""
    if np_dtype.itemsize == 2 and np_dtype.kind in "fV" and value.__class__ in (int, float):
        with np.errstate(over="ignore"):
            return np.asarray(np.float32(value)).astype(np_dtype)
    return np.asarray(value).astype(np_dtype)


def real_operand(value, d: dt.dtype):
    """A number argument (lerp's weight, addcmul's value, an activation's slope) as the kernel
    of a real dtype `d` reads it, in the type it computes in (float for 16-bit floats):
    RuntimeError, as c10's Scalar conversion gives, for a complex number with an imaginary
    part or a finite one beyond that type's range; else a complex one's real part (truncated
    for an integer `d`)."""
    cls = value.__class__
    if cls is int:
        _python_number(value)  # (a Scalar holds no int outside int64 and uint64)
    if d.is_complex or cls not in (int, float, complex):
        return value
    opmath = dt.float32 if d._kind == 2 and d.itemsize < 4 else d
    if cls is complex:
        if value.imag:
            raise _overflow(opmath)
        value = int(value.real) if d._kind < 2 else value.real
    if d._kind == 2 and math.isfinite(value) and abs(value) > _FLOAT_MAX[opmath]:
        raise _overflow(opmath)
    if d._kind == 1:
        lo, hi = _INT_RANGE[d]  # (an unsigned type takes negatives down to -max: they wrap)
        if not (math.isfinite(value) and (-hi if lo == 0 else lo) <= value <= hi):
            raise _overflow(d)
    return value
