"""How MLX's `arange` binding takes its arguments.

nanobind tries two overloads in order, `arange(start, stop, step=None, dtype=None)` and
`arange(stop, step=None, dtype=None)` (`stream=` keyword-only in both), and takes their
numbers without conversion: a Python bool, an int within int64 or a float, exactly (a
NumPy scalar, an array, a string or an int subclass is refused). `stop` may be None in
the first (`arange(3, None, 2)` counts to 3), `step` in both; `dtype` is a Dtype or None.
A call neither overload binds gets nanobind's TypeError naming both.
"""

from __future__ import annotations

from ._binding import bad_call
from ._device import is_stream_or_device
from ._dtypes import Dtype

_SIGNATURES = (
    "arange(start : int | float, stop : None | int | float, step : None | int | float, "
    "dtype: Dtype | None = None, *, stream: StreamOrDevice = None) -> array\n    2. "
    "arange(stop : int | float, step : None | int | float = None, dtype: Dtype | None = "
    "None, *, stream: StreamOrDevice = None) -> array")
# (parameter names, the required ones, the ones that may be None), in nanobind's order
_OVERLOADS = ((("start", "stop", "step", "dtype"), ("start", "stop"), ("stop", "step")),
              (("stop", "step", "dtype"), ("stop",), ("step",)))


def _number(value) -> bool:
    """Whether nanobind's no-convert scalar caster takes `value`."""
    kind = value.__class__
    return kind is float or kind is bool or kind is int and -(2**63) <= value < 2**63


def _bind(names: tuple, required: tuple, nullable: tuple, args: tuple, kwargs: dict):
    """The call's arguments by the overload's names, or None where it does not bind."""
    if len(args) > len(names):
        return None
    given = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in given:
            return None
        given[key] = value
    if any(key not in given for key in required):
        return None
    for key, value in given.items():
        if key == "dtype":
            if value is not None and not isinstance(value, Dtype):
                return None
        elif not (_number(value) or value is None and key in nullable):
            return None
    return given


def bind_arange(args: tuple, kwargs: dict) -> tuple:
    """(start or None, stop, step or None, dtype or None) of an `arange` call, or MLX's
    TypeError where neither overload binds it (a `stream=` reaching here is refused:
    a valid one was taken off before)."""
    stream = kwargs.get("stream")
    if stream is None or is_stream_or_device(stream):
        numbers = {k: v for k, v in kwargs.items() if k != "stream"}
        for names, required, nullable in _OVERLOADS:
            given = _bind(names, required, nullable, args, numbers)
            if given is not None:
                start, stop = given.get("start"), given["stop"]
                if stop is None:  # (`arange(stop, None, step)`)
                    start, stop = None, start
                return start, stop, given.get("step"), given.get("dtype")
    raise bad_call("arange", _SIGNATURES, args, kwargs)
