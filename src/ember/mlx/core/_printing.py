"""How MLX prints an array: `array([1.5, 2], dtype=float32)`.

Numbers print as C's `%g` (six significant digits, no trailing zeros), complex numbers as
`1+2j`; columns are not aligned; a dimension longer than six shows its first and last
three entries around `...`; nested rows break onto lines indented under the brackets.
"""

from __future__ import annotations

import math

import numpy as np

_EDGE = 3  # entries kept at each end of a summarised dimension
_LONG = 6  # a dimension longer than this is summarised


def _number(v, kind: str) -> str:
    if kind == "b":
        return "True" if v else "False"
    if kind in "iu":
        return str(int(v))
    if kind == "c":
        return f"{v.real:g}{v.imag:+g}j"
    v = float(v)
    if v != v and math.copysign(1.0, v) < 0:
        return "-nan"  # (C's printf, which MLX prints with, shows NaN's sign)
    return f"{v:g}"


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
    prefix = "array("
    return f"{prefix}{format_values(a, x.dtype.kind, len(prefix))}, dtype={x.dtype.name})"
