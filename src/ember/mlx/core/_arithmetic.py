"""MLX's arithmetic where it is not PyTorch's: `%` and `//` as MLX's kernels compute them
(division by an integer zero included), arithmetic on two bools, the bitwise functions'
and the rounding functions' refusals (inexact and complex operands), and rounding a
complex number part by part.

MLX computes an op on bool operands in C++'s `bool` (each value 0 or 1, the result
converted back to bool: nonzero is True), where PyTorch refuses most of them. Measured on
mlx 0.32.4 over all four pairs of values:

    a + b  = a or b          a - b  = a xor b        a * b = a and b
    a // b = a and b         a % b  = a and not b    a ** b = a or not b
    a << b, a >> b: in uint8 (MLX shifts bools as uint8)

`-a` and `~`/`abs` have their own rules in the functions that take one array.
"""

from __future__ import annotations

import ember as E

from . import _dtypes as D
from ._dtypes import Dtype


def mlx_remainder(ta, tb):
    """MLX's `%`: C's fmod moved onto the divisor's side when the signs differ, so a zero
    keeps fmod's sign (`-4.0 % 2` is -0.0, where PyTorch's floor-based one gives 0.0).
    NOTE: an integer divided by 0 leaves the dividend (`7 % 0` is 7, for every integer
    type, as MLX's kernel gives it), where PyTorch raises."""
    if ta.dtype.is_floating_point:
        r = E.fmod(ta, tb)
        return E.where((r != 0) & ((r < 0) != (tb < 0)), r + tb, r)
    if ta.dtype.is_complex:
        raise ValueError("[remainder] Complex type not supported.")
    zero = tb == 0
    return E.where(zero, ta, E.remainder(ta, E.where(zero, 1, tb)))


def mlx_floor_divide(ta, tb):
    """MLX's `//`: for floats floor(a / b), the quotient rounded to the type first (so
    float16 7 // 0.035 is 200, and inf // 2 is inf where PyTorch's fmod-based one gives
    NaN); the quotient itself for complex; for integers the floored quotient, and 0 where
    the divisor is 0 (PyTorch raises)."""
    if ta.dtype.is_floating_point:
        return E.floor(E.div(ta, tb))
    if ta.dtype.is_complex:
        return E.div(ta, tb)
    zero = tb == 0
    return E.where(zero, 0, E.floor_divide(ta, E.where(zero, 1, tb)))


def mlx_power(ta, tb):
    """MLX's power: for integers, 0 wherever the exponent is negative, whatever the base
    (MLX's integer kernel returns 0 there, where 1 ** -1 is 1 by the arithmetic)."""
    if ta.dtype.is_floating_point or ta.dtype.is_complex or not tb.dtype.is_signed:
        return E.pow(ta, tb)
    negative = tb < 0
    return E.where(negative, 0, E.pow(ta, E.where(negative, 0, tb)))


def _shift(fn):
    return lambda ta, tb: fn(ta.to(E.uint8), tb.to(E.uint8))


_ON_BOOLS = {
    E.add: E.logical_or,
    E.sub: E.logical_xor,
    E.mul: E.logical_and,
    mlx_floor_divide: E.logical_and,
    mlx_remainder: lambda ta, tb: E.logical_and(ta, E.logical_not(tb)),
    mlx_power: lambda ta, tb: E.logical_or(ta, E.logical_not(tb)),
}
_SHIFTS = {E.bitwise_left_shift: _shift(E.bitwise_left_shift),
           E.bitwise_right_shift: _shift(E.bitwise_right_shift)}


def on_bools(fn, dt: Dtype) -> tuple:
    """(the function, the result's dtype) of binary `fn` on operands promoted to `dt`: for
    two bools, MLX's (see the module's table), else `fn` itself in `dt`."""
    if dt is not D.bool_:
        return fn, dt
    if fn in _SHIFTS:
        return _SHIFTS[fn], D.uint8
    return _ON_BOOLS.get(fn, fn), dt


def _dtype_of(v, other) -> Dtype:
    """The dtype MLX gives operand `v` of a binary function next to `other` (a Python
    number takes an array's dtype where its kind allows, as `_array.operands` reads it)."""
    d = getattr(v, "_dtype", None)
    if d is not None:
        return d
    near = getattr(other, "_dtype", None)
    if isinstance(v, bool):
        return near or D.bool_
    if isinstance(v, int):
        return near if near is not None and near is not D.bool_ else D.int32
    if isinstance(v, float):
        return near if near is not None and near.kind in "fc" else D.float32
    return D.complex64 if isinstance(v, complex) else D.int32


def refuse_floats(name: str, a, b) -> None:
    """MLX's error for bitwise function `name` (`bitwise_and`, `left_shift` ...) on an
    inexact operand (its operators say it otherwise: `_array.bitwise`)."""
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        return  # (refused as operands first)
    da, db = _dtype_of(a, b), _dtype_of(b, a)
    if name == "right_shift":  # (MLX's right_shift names both in their common type)
        da = db = D.promote_types(da, db)
    if da.kind in "fc" or db.kind in "fc":
        raise RuntimeError(f"[{name}] Only allowed on integer or boolean types but got "
                           f"types {da.name} and {db.name}.")


def refuse_complex(name: str, dt: Dtype) -> None:
    """MLX's error for rounding function `name` (floor, ceil, trunc) of a complex array."""
    if dt.kind == "c":
        raise ValueError(f"[{name}] Not supported for {dt.name}.")


def on_parts(fn, t):
    """Complex tensor `t` with `fn` applied to its real and imaginary parts (each part
    kept as it comes, NaN beside a number included: ember's `complex(re, im)` is not)."""
    return E.view_as_complex(E.stack([fn(E.real(t)), fn(E.imag(t))], -1).contiguous())
