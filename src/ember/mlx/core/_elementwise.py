"""MLX's elementwise functions beyond `_ops`: its aliases (acos, pow, conj, ...), rounding
toward zero, complex parts, infinity tests and `nan_to_num`, `divmod`."""

from __future__ import annotations

import ember as E

from . import _complex_close as CC
from . import _dtypes as D
from . import _ops as O
from ._arithmetic import refuse_complex
from ._array import _wrap, array, as_array, operands

_arr = as_array  # (the conversion every op's array operands share)


def trunc(a, /) -> array:
    """Round toward zero (integers come back unchanged)."""
    a = _arr(a)
    refuse_complex("trunc", a._dtype)
    return a if a._dtype.kind in "biu" else _wrap(E.trunc(a._t), a._dtype)


def real(a, /) -> array:
    """The real part (float32 for complex64; other arrays come back unchanged)."""
    a = _arr(a)
    return _wrap(E.real(a._t), D.float32) if a._dtype.kind == "c" else a


def imag(a, /) -> array:
    """The imaginary part (float32 for complex64; zeros of the same dtype otherwise)."""
    a = _arr(a)
    return _wrap(E.imag(a._t), D.float32) if a._dtype.kind == "c" else O.zeros_like(a)


def conjugate(a, /) -> array:
    """The complex conjugate (other arrays come back unchanged)."""
    a = _arr(a)
    return _wrap(E.conj(a._t).resolve_conj(), a._dtype) if a._dtype.kind == "c" else a


def conj(a, /) -> array:
    """Alias of `conjugate`."""
    return conjugate(a)


def positive(a, /) -> array:
    """`+a`: the array itself."""
    return _arr(a)


def bitwise_invert(a, /) -> array:
    """`~a` on integers (logical not on bool); floats refused in this function's words."""
    a = _arr(a)
    if a.dtype.kind not in "iub":
        raise ValueError("[bitwise_invert] Bitwise inverse only allowed on integer types.")
    return ~a


def isposinf(a, /) -> array:
    """Whether each element is +inf (a complex one: equal to +inf, so its imaginary part 0)."""
    a = _arr(a)
    if a._dtype.kind == "c":
        return _wrap(CC.signed_inf(a._t, 1), D.bool_)
    return _wrap(E.isposinf(a._t), D.bool_)


def isneginf(a, /) -> array:
    """Whether each element is -inf (a complex one: equal to -inf, so its imaginary part 0)."""
    a = _arr(a)
    if a._dtype.kind == "c":
        return _wrap(CC.signed_inf(a._t, -1), D.bool_)
    return _wrap(E.isneginf(a._t), D.bool_)


def logical_xor(a, b, /) -> array:
    """Elementwise exclusive or of the truth values."""
    ta, tb, _ = operands(a, b)
    return _wrap(E.logical_xor(ta, tb), D.bool_)


def nan_to_num(a, nan: float = 0, posinf: float | None = None,
               neginf: float | None = None) -> array:
    """NaN to `nan`, +-inf to `posinf`/`neginf` (by default the dtype's largest finite
    values); integer arrays come back unchanged."""
    a = _arr(a)
    if a._dtype.kind == "c":
        raise ValueError(f"[nan_to_num] Does not yet support given type: {a._dtype.name}.")
    if a._dtype.kind != "f":
        return a
    return _wrap(E.nan_to_num(a._t, nan=nan, posinf=posinf, neginf=neginf), a._dtype)


def divmod(a, b, /) -> list:  # noqa: A001  (MLX's name)
    """[a // b, a % b], Python's floor convention. NOTE: for two bools MLX's kernel gives
    [a, False] (measured; its `//` and `%` give a and b, a and not b)."""
    ta, tb, dt = operands(a, b)
    if dt is D.bool_:
        both = E.logical_and(ta, E.ones_like(tb))  # (a, in the broadcast shape)
        return [_wrap(both, dt), _wrap(E.zeros_like(both), dt)]
    return [O.floor_divide(a, b), O.remainder(a, b)]


# MLX's aliases (the Array API names)
acos, acosh, asin, asinh = O.arccos, O.arccosh, O.arcsin, O.arcsinh
atan, atanh, atan2 = O.arctan, O.arctanh, O.arctan2
bitwise_left_shift, bitwise_right_shift, pow = O.left_shift, O.right_shift, O.power  # noqa: A001

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift", "conj", "conjugate", "divmod", "imag",
           "isneginf", "isposinf", "logical_xor", "nan_to_num", "positive", "pow", "real",
           "trunc"]
