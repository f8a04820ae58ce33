"""How MLX prints an array: `array([1.5, 2], dtype=float32)`.

Numbers print as C's `%g` (six significant digits, no trailing zeros), complex numbers as
`1+2j`; columns are not aligned; a dimension longer than six shows its first and last
three entries around `...`; nested rows break onto lines indented under the brackets.

`set_printoptions(precision=p)` (or the `printoptions` context manager) switches floats and
complex parts to fixed-point with `p` decimals (C++'s `std::fixed`: a negative `p` other
than -1 means 6); -1 restores `%g`. The options live in one module-level `PrintOptions`.
"""

from __future__ import annotations

import math
import operator

import numpy as np

_EDGE = 3  # entries kept at each end of a summarised dimension
_LONG = 6  # a dimension longer than this is summarised


class PrintOptions:
    """MLX's print options: `precision`, the decimals floats print with (-1: `%g`)."""

    __slots__ = ("precision",)

    def __init__(self) -> None:
        self.precision = -1


_options = PrintOptions()  # what `_number` reads


def _precision(value, fn: str) -> int:
    """`precision` as MLX's binding takes it: a C int (bools and `__index__` objects too)."""
    ok = not isinstance(value, float) and hasattr(value, "__index__")
    if ok and -(2**31) <= operator.index(value) < 2**31:
        return operator.index(value)
    result = "mlx.core._PrintOptionsContext" if fn == "printoptions" else "None"
    raise TypeError(
        f"{fn}(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. {fn}(precision: int = -1) -> {result}\n\n"
        f"Invoked with types: kwargs = {{ precision: {type(value).__name__} }}")


def set_printoptions(precision: int = -1) -> None:
    """Print floats with `precision` decimals from now on (-1: MLX's default `%g`)."""
    _options.precision = _precision(precision, "set_printoptions")


def get_printoptions() -> PrintOptions:
    """A copy of the current print options (changing it changes nothing, as in MLX)."""
    copy = PrintOptions()
    copy.precision = _options.precision
    return copy


class _PrintOptionsContext:
    """Sets the options on entry and restores the previous ones on exit."""

    def __init__(self, precision: int) -> None:
        self._precision, self._saved = precision, -1

    def __enter__(self) -> _PrintOptionsContext:
        self._saved = _options.precision
        _options.precision = self._precision
        return self

    def __exit__(self, *exc) -> None:
        _options.precision = self._saved


def printoptions(precision: int = -1) -> _PrintOptionsContext:
    """A context manager printing with `precision` decimals inside its block."""
    return _PrintOptionsContext(_precision(precision, "printoptions"))


PrintOptions.__module__ = _PrintOptionsContext.__module__ = "mlx.core"


def _real(v: float) -> str:
    if v != v:  # (C's printf, which MLX prints with, shows NaN's sign)
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    p = _options.precision
    if p == -1:
        return f"{v:g}"
    return f"{v:.{p if p >= 0 else 6}f}"  # (std::setprecision(p < 0) is 6)


def _number(v, kind: str) -> str:
    if kind == "b":
        return "True" if v else "False"
    if kind in "iu":
        return str(int(v))
    if kind == "c":
        # NOTE: MLX writes "+" and the imaginary part as it prints, unless that part is
        # below zero ("-" and its magnitude then): so -0.0 and a negative NaN print as
        # `1+-0j` and `1+-nanj`
        imag = float(v.imag)
        if imag >= 0 or imag != imag:
            return f"{_real(float(v.real))}+{_real(imag)}j"
        return f"{_real(float(v.real))}-{_real(-imag)}j"
    return _real(float(v))


def _rows(a: np.ndarray, kind: str, depth: int, indent: int) -> str:
    n = a.shape[0]
    picks = list(range(n)) if n <= _LONG else [*range(_EDGE), None, *range(n - _EDGE, n)]
    if a.ndim == 1:
        return "[" + ", ".join("..." if i is None else _number(a[i], kind) for i in picks) + "]"
    sep = ",\n" + " " * (indent + depth + 1)
    inner = [("..." if i is None else _rows(a[i], kind, depth + 1, indent)) for i in picks]
    return "[" + sep.join(inner) + "]"


def format_values(a: np.ndarray, kind: str, indent: int) -> str:
    """The bracketed values of NumPy array `a` as MLX prints them."""
    if a.ndim == 0:
        return _number(a.reshape(()).item() if kind != "c" else complex(a), kind)
    return _rows(a, kind, 0, indent)


def array_repr(x) -> str:
    from ._array import numpy_of
    a = numpy_of(x)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        a = a.astype(np.float64)
    if x.dtype.name == "bfloat16":
        # NOTE: MLX's bfloat16 from a float writes one NaN, positive (its `bfloat16_t`
        # constructor), so every bfloat16 NaN MLX computes prints as `nan`
        a = np.where(np.isnan(a), np.nan, a)
    prefix = "array("
    return f"{prefix}{format_values(a, x.dtype.kind, len(prefix))}, dtype={x.dtype.name})"
