"""Which Python values nanobind converts to the C++ types of MLX's bindings.

A binding refuses a call (its TypeError, `_binding.bad_call`) when a value does not
convert to its parameter's type, before MLX's own checks run. Measured on mlx 0.32.4:
an `int` takes anything with `__index__` but a float (ints, bools, NumPy integers, a
0-d integer array); a `float` takes numbers and one-element arrays, not
strings or None; a `bool` takes True and False only (not 1, not `np.True_`); a
`Sequence[int]` takes a list, tuple, range, NumPy or MLX integer array, not a string or
a dict, and each element must be an `int`.

Integers are C++ `int`s (int32) unless said otherwise, measured on mlx 0.32.4: an `int`
or an element of a `Sequence[int]` outside int32 is refused (`axis=2**31`, `k=2**32`). A
shape (a parameter named `shape` or `slice_size`) binds as MLX's `Shape` caster: an
element outside int32 but inside int64 raises OverflowError ("Integer value ... is outside
the supported range"), one outside int64 is refused; a bare int shape (`zeros(2**31)`)
raises the OverflowError MLX's creation functions give ("Shape dimension ...").
`as_strided`'s strides are int64 and its offset a size_t (`WIDE`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from ._array import array

_INT32 = (-(2**31), 2**31)  # [low, high) of a C++ int
_INT64 = (-(2**63), 2**63)
_SIZE_T = (0, 2**64)


def as_int(value):
    """`value` as nanobind's `int` conversion gives it, or None where it refuses."""
    if value.__class__ is int:
        return value
    if isinstance(value, float | np.floating):
        return None
    try:
        return operator.index(value)
    except (TypeError, ValueError):
        return None


def as_float(value):
    """`value` as nanobind's `float` conversion gives it, or None where it refuses."""
    if value.__class__ is float:
        return value
    if isinstance(value, int | float | np.integer | np.floating | np.bool_) or (
            isinstance(value, array) and value.size == 1):
        return float(value)
    return None


class nb_func:  # noqa: N801  (the name the type of MLX's function objects prints)
    """A function object as nanobind makes one (`<nanobind.nb_func object ...>`): what
    `import_function` and `fast.metal_kernel` return in MLX. Like nanobind's, each has
    its call signature as `__doc__`, an empty `__name__` and no `__module__`."""

    def __init__(self, call: Callable, doc: str) -> None:
        self._call = call
        self.__doc__ = doc
        self.__name__ = ""
        self.__module__ = None

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)


nb_func.__module__ = "nanobind"


REFUSED = object()  # a converter's answer where nanobind refuses the value


def _int_or_refused(value, bounds: tuple[int, int] = _INT32):
    v = value if value.__class__ is int else as_int(value)
    return v if v is not None and bounds[0] <= v < bounds[1] else REFUSED


def _float_or_refused(value):
    v = value if value.__class__ is float else as_float(value)
    return REFUSED if v is None else v


def _bool_or_refused(value):
    return value if value is True or value is False else REFUSED


def _ints_or_refused(value, bounds: tuple[int, int] = _INT32):
    """An int sequence as nanobind converts it: a tuple of Python ints (a list or tuple
    of Python ints is taken as it is), each within `bounds`."""
    if isinstance(value, list | tuple) and all(v.__class__ is int for v in value):
        out = value
    elif isinstance(value, array | np.ndarray):
        if value.ndim != 1 or value.dtype.kind not in "biu":
            return REFUSED
        out = tuple(int(v) for v in value.tolist())
    elif not isinstance(value, list | tuple | range):
        return REFUSED
    else:
        out = tuple(as_int(v) for v in value)
        if None in out:
            return REFUSED
    low, high = bounds
    return out if all(low <= v < high for v in out) else REFUSED


def _wide_ints(value):
    """A `Sequence[int]` of C++ int64s (`as_strided`'s strides)."""
    return _ints_or_refused(value, _INT64)


def _size_t(value):
    """An `int` bound as a C++ size_t (`as_strided`'s offset): no negative int."""
    return _int_or_refused(value, _SIZE_T)


def _shape_or_refused(value):
    """A shape as MLX's `Shape` caster converts it: int32 elements; one inside int64 but
    outside int32 raises its OverflowError."""
    out = _ints_or_refused(value, _INT64)
    if out is not REFUSED:
        for v in out:
            if not _INT32[0] <= v < _INT32[1]:
                raise OverflowError(f"Integer value {v} is outside the supported range "
                                    f"[{_INT32[0]}, {_INT32[1] - 1}].")
    return out


def _shape_dim_or_refused(value):
    """A bare int shape (`zeros(n)`), which MLX's creation functions check as one
    dimension."""
    v = _int_or_refused(value, _INT64)
    if v is not REFUSED and not _INT32[0] <= v < _INT32[1]:
        raise OverflowError(f"Shape dimension {v} is outside the supported range "
                            f"[{_INT32[0]}, {_INT32[1] - 1}]. MLX currently uses 32-bit "
                            "integers for shape dimensions.")
    return v


def _ints_of(n: int) -> Callable:
    """A `tuple[int, ...]` of `n` ints as nanobind converts it: any sequence of that length
    (a list, a range, a NumPy or MLX array too), each element an `int`."""
    def convert(value):
        if isinstance(value, str | bytes | dict):
            return REFUSED
        out = _ints_or_refused(value if isinstance(value, list | tuple | range | array |
                                                   np.ndarray) else None)
        return out if out is REFUSED or len(out) == n else REFUSED
    return convert


def _str_or_refused(value):
    return value if isinstance(value, str) else REFUSED


def _int_seq_pair(value):
    """A `tuple[Sequence[int], Sequence[int]]`: two int sequences (conv_general's low and
    high padding)."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return REFUSED
    low, high = _ints_or_refused(value[0]), _ints_or_refused(value[1])
    return REFUSED if low is REFUSED or high is REFUSED else (low, high)


def _int_seqs(value):
    """A `list[Sequence[int]]` (`tensordot`'s axes): a list or tuple of int sequences."""
    if not isinstance(value, list | tuple):
        return REFUSED
    out = [_ints_or_refused(v) for v in value]
    return REFUSED if any(v is REFUSED for v in out) else out


def _either(*converters: Callable) -> Callable:
    """The first conversion of `converters` that takes the value."""
    def convert(value):
        for c in converters:
            out = c(value)
            if out is not REFUSED:
                return out
        return REFUSED
    return convert


def _none(value):
    return None if value is None else REFUSED


# the annotation texts of MLX's signatures whose values `_strict` converts -> the
# conversion (REFUSED where nanobind refuses the value)
CONVERT: dict[str, Callable] = {
    "int": _int_or_refused,
    "float": _float_or_refused,
    "bool": _bool_or_refused,
    "int | None": _either(_none, _int_or_refused),
    "None | int": _either(_none, _int_or_refused),
    "float | None": _either(_none, _float_or_refused),
    "Sequence[int]": _ints_or_refused,
    "Sequence[int] | None": _either(_none, _ints_or_refused),
    "None | int | Sequence[int]": _either(_none, _int_or_refused, _ints_or_refused),
    "int | Sequence[int]": _either(_int_or_refused, _ints_or_refused),
    "int | tuple[int, int]": _either(_int_or_refused, _ints_of(2)),
    "int | tuple[int, int, int]": _either(_int_or_refused, _ints_of(3)),
    "int | Sequence[int] | tuple[Sequence[int], Sequence[int]]": _either(
        _int_or_refused, _ints_or_refused, _int_seq_pair),
    "str": _str_or_refused,
    "scalar": _float_or_refused,  # (a double: `linspace`'s bounds)
    "None | int | list[int]": _either(_none, _int_or_refused, _ints_or_refused),
    "int | tuple[int]": _either(_int_or_refused, _ints_or_refused),
    "None | int | tuple[int]": _either(_none, _int_or_refused, _ints_or_refused),
    "int | list[Sequence[int]]": _either(_int_or_refused, _int_seqs),
    # (as methods' signatures spell them)
    "int | collections.abc.Sequence[int] | None": _either(_none, _int_or_refused,
                                                          _ints_or_refused),
    "int | tuple[int, ...]": _either(_int_or_refused, _ints_or_refused),
}

# the classes each annotation takes as they are, checked before any conversion is called:
# the common call (`axis=None`) pays one set lookup (an int is range-checked, so it is
# converted)
_NONE = type(None)
AS_IS: dict[str, frozenset] = {
    "int": frozenset(),
    "float": frozenset({float}),
    "bool": frozenset({bool}),
    "int | None": frozenset({_NONE}),
    "None | int": frozenset({_NONE}),
    "float | None": frozenset({float, _NONE}),
    "Sequence[int]": frozenset(),
    "Sequence[int] | None": frozenset({_NONE}),
    "None | int | Sequence[int]": frozenset({_NONE}),
    "int | Sequence[int]": frozenset(),
    "int | tuple[int, int]": frozenset(),
    "int | tuple[int, int, int]": frozenset(),
    "int | Sequence[int] | tuple[Sequence[int], Sequence[int]]": frozenset(),
    "str": frozenset({str}),
    "None | int | list[int]": frozenset({_NONE}),
    "int | tuple[int]": frozenset(),
    "None | int | tuple[int]": frozenset({_NONE}),
    "int | list[Sequence[int]]": frozenset(),
    "scalar": frozenset({int, float}),
    "int | collections.abc.Sequence[int] | None": frozenset({_NONE}),
    "int | tuple[int, ...]": frozenset(),
}

# the conversions of parameters whose C++ type the annotation text does not say: a shape
# (by its name) and `as_strided`'s int64 strides and size_t offset
SHAPE: dict[str, Callable] = {
    "Sequence[int]": _shape_or_refused,
    "Sequence[int] | None": _either(_none, _shape_or_refused),
    "int | Sequence[int]": _either(_shape_dim_or_refused, _shape_or_refused),
}
WIDE: dict[tuple[str, str], Callable] = {
    ("as_strided", "strides"): _either(_none, _wide_ints),
    ("as_strided", "offset"): _size_t,
}
