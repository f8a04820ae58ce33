"""MLX's fp8 conversions: `to_fp8` (a float array to e4m3 bytes, uint8) and `from_fp8`
(e4m3 bytes back to a float dtype).

The format is the one MLX's CPU kernels write and read (`ToFP8` / `FromFP8` in
mlx/backend/cpu/unary_ops.h), checked bit for bit against the 0.32.4 wheel:
- encoding goes through float32 and rounds to nearest, ties to even, subnormals included
  (down to 2^-9); magnitudes from 448 up saturate to 448 (0x7e), and so do infinities
  and NaN, each keeping its sign bit: no input encodes to 0x7f;
- decoding reads 0x7f / 0xff as NaN (the OCP e4m3fn format), with the wheel's NaN bits:
  0x7ff00000 / 0xfff00000 in float32, 0x7d00 / 0xfd00 in float16, 0x7fc0 for both in
  bfloat16.
ml_dtypes' `float8_e4m3fn` is the same format with another encoder: it rounds magnitudes
past 464, infinities and NaN to NaN (0x7f), where MLX saturates, so it is not used here.

`to_fp8` is MLX's bit arithmetic written in ember's integer ops on the float32 bits, and
`from_fp8` a lookup in a 256-entry table, so both run lazily and under `vmap` (where
MLX's raise). Neither has a derivative, as in MLX.
"""

from __future__ import annotations

import numpy as np

import ember as E

from . import _dtypes as D
from ._array import _wrap, array, cast

# the wheel's NaN bits for the bytes 0x7f and 0xff, by decoded dtype
_NAN_BITS = {"float32": (np.uint32, 0x7FF00000, 0xFFF00000),
             "float16": (np.uint16, 0x7D00, 0xFD00),
             "bfloat16": (np.uint16, 0x7FC0, 0x7FC0)}


def _incompatible(fn: str, signature: str, value) -> TypeError:
    """The TypeError MLX's binding raises for an argument that is not an array."""
    return TypeError(f"{fn}(): incompatible function arguments. The following argument "
                     f"types are supported:\n    1. {signature}\n\nInvoked with types: "
                     f"{type(value).__name__}")


def to_fp8(x, /) -> array:
    """`x` (a real floating array) as e4m3 bytes: uint8, the same shape."""
    if not isinstance(x, array):
        raise _incompatible("to_fp8", "to_fp8(x: array, *, stream: StreamOrDevice = None) "
                            "-> array", x)
    if x.dtype.kind != "f":
        raise ValueError("[to_fp8] Only real floating types are supported but "
                         f"x.dtype() == {x.dtype.name}.")
    # NOTE: float64 goes through float32 (rounded twice); MLX's CPU kernel reads a float64
    # buffer as float32 values and returns bytes of no meaning.
    bits = cast(x._t, x._dtype, D.float32).view(E.int32)
    sign = E.where(bits < 0, 128, 0)
    mag = E.bitwise_and(bits, 0x7FFFFFFF)
    # below 2^-6: adding 2^14 lets float32's adder round to the subnormal grid (2^-9)
    low = (mag.view(E.float32) + 16384.0).view(E.int32) - (141 << 23)
    # from 2^-6: rebias the exponent, round the 20 dropped bits to nearest even, shift
    odd = E.bitwise_and(E.bitwise_right_shift(mag, 20), 1)
    high = E.bitwise_right_shift(mag + (((7 - 127) << 23) + 0x7FFFF) + odd, 20)
    code = E.where(mag < (121 << 23), low, high)
    code = E.where(mag >= (543 << 21), 0x7E, code)  # |x| >= 448, inf and NaN: 448
    return _wrap(E.bitwise_or(code, sign).to(E.uint8), D.uint8)


def _table(dtype: D.Dtype) -> np.ndarray:
    """The 256 decoded values in `dtype`'s carrier: the byte's low 7 bits placed in a
    float16's exponent and mantissa, times 256 (exact), then the two NaN codes."""
    b = np.arange(256, dtype=np.uint16)
    mag = ((b & 127) << 7).view(np.float16).astype(np.float32) * np.float32(256)
    values = np.where(b & 128, -mag, mag).astype(np.float32)
    values[[127, 255]] = np.nan
    out = values.astype(dtype.carrier.np)
    if dtype.name in _NAN_BITS:
        kind, pos, neg = _NAN_BITS[dtype.name]
        out.view(kind)[[127, 255]] = (pos, neg)
    return out


_TABLES: dict = {}


def from_fp8(x, dtype: D.Dtype = D.bfloat16) -> array:
    """e4m3 bytes `x` (uint8) decoded to the floating `dtype` (bfloat16 by default)."""
    if not isinstance(x, array):
        raise _incompatible("from_fp8", "from_fp8(x: array, dtype: Dtype = bfloat16, *, "
                            "stream: StreamOrDevice = None) -> array", x)
    if x.dtype is not D.uint8:
        raise ValueError("[from_fp8] Input must have type uint8 but "
                         f"x.dtype() == {x.dtype.name}.")
    if dtype.kind != "f":
        raise ValueError("[from_fp8] Only real floating types are supported but "
                         f"dtype == {dtype.name}.")
    # NOTE: float64 gets the exact values (NaN for 0x7f / 0xff); MLX's CPU kernel writes
    # float32 results into the float64 buffer.
    table = _TABLES.get(dtype.name)
    if table is None:
        table = _TABLES[dtype.name] = E.tensor(_table(dtype))
    return _wrap(table[x._t.to(E.int64)], dtype)


__all__ = ["from_fp8", "to_fp8"]
