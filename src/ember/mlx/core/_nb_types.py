"""Which Python values nanobind converts to the C++ types of MLX's bindings.

A binding refuses a call (its TypeError, `_binding.bad_call`) when a value does not
convert to its parameter's type, before MLX's own checks run. Measured on mlx 0.32.4:
an `int` takes anything with `__index__` but a float (ints, bools, NumPy integers, a
0-d integer array); a `float` takes numbers and one-element arrays, not
strings or None; a `bool` takes True and False only (not 1, not `np.True_`); a
`Sequence[int]` takes a list, tuple, range, NumPy or MLX integer array, not a string or
a dict, and each element must be an `int`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from ._array import array


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


def _int_or_refused(value):
    v = value if value.__class__ is int else as_int(value)
    return REFUSED if v is None else v


def _float_or_refused(value):
    v = value if value.__class__ is float else as_float(value)
    return REFUSED if v is None else v


def _bool_or_refused(value):
    return value if value is True or value is False else REFUSED


def _ints_or_refused(value):
    """An int sequence as nanobind converts it: a tuple of Python ints (a list or tuple
    of Python ints is taken as it is)."""
    if isinstance(value, list | tuple) and all(v.__class__ is int for v in value):
        return value
    if isinstance(value, array | np.ndarray):
        if value.ndim != 1 or value.dtype.kind not in "biu":
            return REFUSED
        return tuple(int(v) for v in value.tolist())
    if not isinstance(value, list | tuple | range):
        return REFUSED
    out = tuple(as_int(v) for v in value)
    return REFUSED if None in out else out


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
    # (as methods' signatures spell them)
    "int | collections.abc.Sequence[int] | None": _either(_none, _int_or_refused,
                                                          _ints_or_refused),
    "int | tuple[int, ...]": _either(_int_or_refused, _ints_or_refused),
}

# the classes each annotation takes as they are, checked before any conversion is called:
# the common call (`axis=1`, `axis=None`) pays one set lookup
_NONE = type(None)
AS_IS: dict[str, frozenset] = {
    "int": frozenset({int}),
    "float": frozenset({float}),
    "bool": frozenset({bool}),
    "int | None": frozenset({int, _NONE}),
    "None | int": frozenset({int, _NONE}),
    "float | None": frozenset({float, _NONE}),
    "Sequence[int]": frozenset(),
    "Sequence[int] | None": frozenset({_NONE}),
    "None | int | Sequence[int]": frozenset({int, _NONE}),
    "int | Sequence[int]": frozenset({int}),
    "int | tuple[int, int]": frozenset({int}),
    "int | tuple[int, int, int]": frozenset({int}),
    "int | Sequence[int] | tuple[Sequence[int], Sequence[int]]": frozenset({int}),
    "str": frozenset({str}),
    "scalar": frozenset({int, float}),
    "int | collections.abc.Sequence[int] | None": frozenset({int, _NONE}),
    "int | tuple[int, ...]": frozenset({int}),
}
