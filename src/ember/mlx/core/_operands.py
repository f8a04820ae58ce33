"""The operands of `mx.array`'s operators and of the functions that share their rules:
how a Python number or an array next to an array is read (MLX's weak scalars, overflow
checks), which types an operator takes (the TypeError of one it refuses), and the
binary, bitwise, division and comparison ops they all go through."""

from __future__ import annotations

import numbers

import numpy as np

import ember as E

from ... import _tensor
from . import _dtypes as D
from ._arithmetic import on_bools
from ._array import (
    _BUFFERS,
    _accessed,
    _numeric_numpy,
    _python_int,
    _to_carrier,
    _wrap,
    array,
    as_array,
    cast,
    wrap_result,
)
from ._binding import bad_call, type_name
from ._dtypes import Dtype
from ._errors import check_broadcast

Tensor = _tensor.Tensor


def _check_scalar(v, dtype: Dtype) -> None:
    """MLX refuses a Python int that the array's integer type (of up to 4 bytes) cannot
    hold."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        return
    _python_int(v)  # (read as a C int64 first, next to any dtype)
    if dtype.kind not in "iu" or dtype.size == 8:
        return
    info = np.iinfo(dtype.np)
    if not info.min <= v <= info.max:
        raise ValueError(f"Converting {v} to {dtype.name} would result in overflow.")


def _scalar_dtype(v, other: Dtype) -> Dtype:
    """The dtype a weak Python scalar takes next to an array of dtype `other`."""
    if isinstance(v, bool):
        return other
    if isinstance(v, numbers.Integral):
        _check_scalar(v, other)
        return D.int32 if other is D.bool_ else other
    if isinstance(v, numbers.Real):
        return other if other.kind in "fc" else D.float32
    if isinstance(v, numbers.Complex):
        return D.complex64
    raise TypeError(f"unsupported operand type: {type(v).__name__}")


def to_array(v, dtype: Dtype) -> array:
    """A value going next to or into an array of `dtype` (`x.at[i].add(v)`, `x[i] = v`),
    read as MLX reads it: an array as it is; a Python int in `dtype` (checked for
    overflow; int32 for bool), a float in `dtype` if floating (else float32), a bool in
    `dtype`; NumPy values cast to `dtype`; an object through its `__mlx_array__`. Anything
    else (a list too) is refused."""
    if isinstance(v, array):
        return v
    if isinstance(v, bool):
        return array(v, dtype)
    if isinstance(v, int):
        _check_scalar(v, dtype)
        return array(v, D.int32 if dtype is D.bool_ else dtype)
    if isinstance(v, float):
        return array(v, dtype if dtype.kind == "f" else D.float32)
    if isinstance(v, complex):
        return array(v, D.complex64)
    if _numeric_numpy(v) or isinstance(v, _BUFFERS):
        return array(v, dtype)
    if hasattr(v, "__mlx_array__"):
        return _accessed(v)
    raise ValueError(f"Invalid type {type_name(v)} received in array initialization.")


def _read_operands(a, b) -> tuple:
    """MLX's reading of two operands that are not both arrays: an object with
    `__mlx_array__` is its array; next to an array a Python scalar stays a weak number
    and a NumPy value is cast to the array's dtype; two operands neither of which is an
    array are both read as arrays of their own types."""
    if not _is_scalar(a) and not isinstance(a, array) and hasattr(a, "__mlx_array__"):
        a = _accessed(a)
    if not _is_scalar(b) and not isinstance(b, array) and hasattr(b, "__mlx_array__"):
        b = _accessed(b)
    a_arr, b_arr = isinstance(a, array), isinstance(b, array)
    if a_arr and not b_arr:
        return a, _next_to(b, a._dtype)
    if b_arr and not a_arr:
        return _next_to(a, b._dtype), b
    return (a, b) if a_arr else (as_array(a), as_array(b))


def _next_to(v, dtype: Dtype):
    if _is_scalar(v):
        return v
    if _numeric_numpy(v) or isinstance(v, _BUFFERS):
        return array(v, dtype)
    return as_array(v)  # (a list: refused, as MLX's functions refuse it)


def operands(a, b, floating: bool = False, numbers: bool = False) -> tuple:
    """(ta, tb, dtype): both operands as tensors in the carrier of their MLX promotion (a
    Python scalar is weak: it takes the array's dtype where its kind allows; see
    `_read_operands`). `floating` lifts integer results to float32 (true division). With
    `numbers`, a Python number next to a float32/float64 array stays a number (see
    `_NUMBER_DTYPES`)."""
    a_arr, b_arr = isinstance(a, array), isinstance(b, array)
    if not (a_arr and b_arr):
        a, b = _read_operands(a, b)
        a_arr, b_arr = isinstance(a, array), isinstance(b, array)
    if a_arr and b_arr:
        dt = D.promote_types(a._dtype, b._dtype)
        if a._t.shape != b._t.shape:
            check_broadcast(tuple(a._t.shape), tuple(b._t.shape))
    elif a_arr:
        dt = _scalar_dtype(b, a._dtype)
    else:
        dt = _scalar_dtype(a, b._dtype)
    if floating and dt.kind not in "fc":
        dt = D.float32
    if numbers and dt in _NUMBER_DTYPES:
        return _number_operand(a, dt), _number_operand(b, dt), dt
    return _operand(a, dt), _operand(b, dt), dt


# (ember takes a Python number next to a tensor of these dtypes as the dtype's own value,
# as MLX does: no 0-d tensor to make, and in a recorded graph it is a scalar argument)
_NUMBER_DTYPES = (D.float32, D.float64)
_NUMBER_OPS = (E.add, E.sub, E.mul)


def _number_operand(v, dt: Dtype):
    if v.__class__ is float or v.__class__ is int and -(1 << 24) <= v <= 1 << 24:
        return v
    return _operand(v, dt)


_NUMBER_CLASSES = (bool, int, float, complex)
_OPERAND_CLASSES = frozenset((array, *_NUMBER_CLASSES))


def _is_scalar(v) -> bool:
    """Whether `v` is a Python number (np.float64, a float, is one; np.float32 is not)."""
    return isinstance(v, _NUMBER_CLASSES)


def _operand(v, dt: Dtype) -> Tensor:
    if isinstance(v, array):
        return cast(v._t, v._dtype, dt)
    if isinstance(v, np.generic | int):  # (an int wraps into dt, as MLX casts its int64)
        return E.tensor(_to_carrier(np.array(v), dt))
    return E.tensor(v, dtype=dt.carrier)


# what MLX's operators take besides arrays and Python numbers: NumPy numbers, buffers, and
# objects with `__mlx_array__`; their signature in its TypeError for None
_OPERAND_TYPES = ("bool | int | float | mlx.core.array | ndarray[writable=False] | complex | "
                  "mlx.core.ArrayLike")


def comparable(x: array, o, method: str) -> bool:
    """Whether operator `method` of array `x` takes `o` (None: MLX's TypeError)."""
    if o.__class__ in _OPERAND_CLASSES or isinstance(o, _NUMBER_CLASSES):
        return True
    if o is None:
        result = "mlx.core.array | bool" if method in ("__eq__", "__ne__") else "mlx.core.array"
        raise bad_call(method, f"{method}(self, other: {_OPERAND_TYPES}) -> {result}", (x, o))
    return _numeric_numpy(o) or isinstance(o, _BUFFERS) or hasattr(o, "__mlx_array__")


def check_operand(x: array, o, method: str, action: str) -> None:
    """Refuse what operator `method` ("__add__") of MLX refuses, naming its `action`
    ("addition"): lists, strings and other objects."""
    if not comparable(x, o, method):
        raise ValueError(f"Cannot perform {action} on an mlx.core.array and {type_name(o)}")


def binary(fn, a, b, numbers: bool = False) -> array:
    """`fn` on MLX-promoted operands; the result in the promoted dtype. `fn` takes a
    Python number as an operand where it is one of `_NUMBER_OPS` or `numbers` says so."""
    ta, tb, dt = operands(a, b, numbers=numbers or fn in _NUMBER_OPS)
    fn, dt = on_bools(fn, dt)
    return wrap_result(fn(ta, tb), dt)


def bitwise(fn, a, b, action: str) -> array:
    """A bitwise operator (`&`, `<<`, ...), refusing floating operands as MLX's do."""
    ta, tb, dt = operands(a, b)
    if dt.kind in "fc":
        raise ValueError(f"Floating point types not allowed with {action}.")
    fn, dt = on_bools(fn, dt)
    return wrap_result(fn(ta, tb), dt)


def divide(a, b) -> array:
    ta, tb, dt = operands(a, b, floating=True)
    return _wrap(E.div(ta, tb), dt)


def compare(fn, a, b) -> array:
    ta, tb, dt = operands(a, b)
    if dt.kind == "c" and fn in (E.lt, E.le, E.gt, E.ge):
        return _wrap(complex_order(fn, ta, tb), D.bool_)
    return _wrap(fn(ta, tb), D.bool_)


def complex_order(fn, ta: Tensor, tb: Tensor) -> Tensor:
    """Comparison `fn` (lt, le, gt, ge) of complex tensors in MLX's order: by real part,
    then by imaginary part (NaN in a part compares false, as it does for reals)."""
    ra, rb = E.real(ta), E.real(tb)
    strict = E.lt if fn in (E.lt, E.le) else E.gt
    return strict(ra, rb) | (ra == rb) & fn(E.imag(ta), E.imag(tb))
