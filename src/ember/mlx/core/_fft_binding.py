"""How the bindings of `mx.fft` refuse arguments of the wrong types.

MLX binds its `fft` module with nanobind and spelled-out Python types: an `mlx.core.array`
parameter takes an MLX array and nothing else (a list, a NumPy array or a number is
refused), `int` takes what has `__index__` but a float, `str` only a str, and the size
and axis sequences take lists, tuples, ranges and integer arrays of ints. Every parameter
binds by position or by keyword (no `/`), `stream` last. A refused call raises nanobind's
TypeError naming the signature (`_binding.bad_call`), before MLX's own checks run; the
signatures below are the ones mlx 0.32.4 prints. `bound` puts that check in front of
ember's functions of the same names and hands them the converted values.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ._array import array
from ._binding import bad_call
from ._device import Device, DeviceType, Stream, ThreadLocalStream
from ._nb_types import CONVERT, REFUSED

_STREAM = ("stream: mlx.core.Stream | mlx.core.ThreadLocalStream | mlx.core.Device | "
           "mlx.core.DeviceType | None = None")
_ONE = "a: mlx.core.array, n: int | None = None, axis: int = -1, norm: str = 'backward'"
_TWO = ("a: mlx.core.array, s: tuple[int, ...] | None = None, axes: "
        "collections.abc.Sequence[int] | None = [-2, -1], norm: str = 'backward'")
_MANY = ("a: mlx.core.array, s: tuple[int, ...] | None = None, axes: "
         "collections.abc.Sequence[int] | None = None, norm: str = 'backward'")
_SHIFT = "a: mlx.core.array, axes: int | collections.abc.Sequence[int] | None = None"
_FREQ = "n: int, d: float = 1.0"
_PARAMS = {
    **dict.fromkeys(("fft", "ifft", "rfft", "irfft"), _ONE),
    **dict.fromkeys(("fft2", "ifft2", "rfft2", "irfft2"), _TWO),
    **dict.fromkeys(("fftn", "ifftn", "rfftn", "irfftn"), _MANY),
    **dict.fromkeys(("fftshift", "ifftshift"), _SHIFT),
    **dict.fromkeys(("fftfreq", "rfftfreq"), _FREQ),
    "stft": ("x: mlx.core.array, n_fft: int = 2048, hop_length: int | None = None, "
             "win_length: int | None = None, window: mlx.core.array | None = None, center: "
             "bool = True, pad_mode: str = 'reflect', norm: str = 'backward', onesided: "
             "bool | None = None"),
    "istft": ("stft_matrix: mlx.core.array, n_fft: int | None = None, hop_length: int | None "
              "= None, win_length: int | None = None, window: mlx.core.array | None = None, "
              "center: bool = True, norm: str = 'backward', onesided: bool | None = None, "
              "length: int | None = None"),
}


def _is(cls) -> Callable:
    return lambda v: v if isinstance(v, cls) else REFUSED


def _or_none(convert: Callable) -> Callable:
    return lambda v: None if v is None else convert(v)


_STREAMS = (Stream, ThreadLocalStream, Device, DeviceType)
# annotation text -> conversion (REFUSED where nanobind refuses the value)
_CONVERT = {
    "mlx.core.array": _is(array),
    "mlx.core.array | None": _or_none(_is(array)),
    "str": _is(str),
    "int": CONVERT["int"],
    "int | None": CONVERT["int | None"],
    "float": CONVERT["float"],
    "bool": CONVERT["bool"],
    "bool | None": _or_none(CONVERT["bool"]),
    "tuple[int, ...] | None": CONVERT["Sequence[int] | None"],
    "collections.abc.Sequence[int] | None": CONVERT["Sequence[int] | None"],
    "int | collections.abc.Sequence[int] | None": CONVERT["None | int | Sequence[int]"],
    "stream": _or_none(_is(_STREAMS)),
}


def _parse(params: str) -> list:
    """[(name, annotation, has a default)] of a signature's parameter text."""
    out = []
    depth, start = 0, 0
    for i, ch in enumerate(params + ","):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            name, _, rest = params[start:i].strip().partition(": ")
            annotation, _, default = rest.partition(" = ")
            out.append((name, annotation, bool(default)))
            start = i + 1
    return out


def bound(fn: Callable) -> Callable:
    """`fn` behind its MLX binding's type check (see the module); `stream` is taken and
    dropped (ember runs on the CPU)."""
    params = _parse(_PARAMS[fn.__name__])
    signature = (f"{fn.__name__}({_PARAMS[fn.__name__]}, {_STREAM}) -> mlx.core.array")
    shape = inspect.Signature([
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=None if has_default else inspect.Parameter.empty)
        for name, _, has_default in [*params, ("stream", "", True)]])
    converts = [(name, _CONVERT[annotation]) for name, annotation, _ in params]

    def checked(*args, **kwargs):
        try:
            given = shape.bind(*args, **kwargs).arguments
        except TypeError:
            raise bad_call(fn.__name__, signature, args, kwargs) from None
        if _CONVERT["stream"](given.pop("stream", None)) is REFUSED:
            raise bad_call(fn.__name__, signature, args, kwargs)
        values = {}
        for name, convert in converts:
            if name in given:
                values[name] = convert(given[name])
                if values[name] is REFUSED:
                    raise bad_call(fn.__name__, signature, args, kwargs)
        return fn(**values)
    checked.__name__ = checked.__qualname__ = fn.__name__
    checked.__doc__ = fn.__doc__
    checked.binds_stream = True  # (`_lazy` hands it a `stream=` of a wrong type to refuse)
    return checked
