"""A tensor as PyTorch's C++ error messages print it (ATen's `operator<<`).

`TORCH_CHECK(cond, "...", tensor)` streams the tensor with ATen's own printer, not
Python's repr: the values in float64, one shared column width and number style chosen
from the largest and smallest magnitudes, matrices split into "Columns a to b" blocks at
80 characters, higher dimensions as "(i,j,.,.) = " slices (the first index counting
fastest), and a closing `[ torch.FloatTensor{2,3} ]` (legacy type names where they exist,
`CPUBoolType`-style names otherwise).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor

__all__ = ["aten_text"]

_LINE = 80


def _style(values: np.ndarray) -> tuple[float, int, str]:
    """(scale, column width, format spec) shared by every value printed together."""
    finite = values[np.isfinite(values)]
    int_mode = bool(np.all(finite == np.ceil(finite)))
    exp_min = exp_max = 1.0
    if finite.size:
        lo, hi = float(np.abs(finite).min()), float(np.abs(finite).max())
        exp_min = math.floor(math.log10(lo)) + 1 if lo != 0 else 1
        exp_max = math.floor(math.log10(hi)) + 1 if hi != 0 else 1
    if int_mode:
        return (1.0, 11, ".4e") if exp_max > 9 else (1.0, int(exp_max) + 1, "g")
    if exp_max - exp_min > 4:
        return 1.0, 12 if abs(exp_max) > 99 or abs(exp_min) > 99 else 11, ".4e"
    if exp_max > 5 or exp_max < 0:
        return 10.0 ** (exp_max - 1), 7, ".4f"
    return 1.0, 7 if exp_max == 0 else int(exp_max) + 6, ".4f"


def _shortest(x: float) -> str:
    """A double as C++'s fmt `{}` writes it: the shortest round trip, no trailing `.0`."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _matrix(values: np.ndarray, indent: int) -> str:
    scale, width, spec = _style(values)
    per_line = (_LINE - indent) // (width + 1)
    rows, cols = values.shape
    out, first = [], 0
    while first < cols:
        last = min(first + per_line, cols) - 1
        if per_line < cols:
            # NOTE: ATen writes no newline after the header: the first row follows it
            out.append(("\n" if first else "") + f"Columns {first + 1} to {last + 1}"
                       + " " * indent)
        if scale != 1:
            out.append(f"{_shortest(scale)} *\n" + " " * indent)
        for r in range(rows):
            cells = (format(v / scale, f">{width}{spec}") for v in values[r, first:last + 1])
            out.append(" ".join(cells) + "\n")
            if r != rows - 1:
                out.append(" " * indent + (" " if scale != 1 else ""))
        first = last + 1
    return "".join(out)


def aten_text(t: Tensor) -> str:
    """`t` as ATen's C++ `operator<<` writes it into a PyTorch error message."""
    if t._dtype.is_complex:  # ATen converts to double: the imaginary part is dropped
        values = np.asarray(t.detach().cpu().numpy().real, dtype=np.float64)
    else:
        values = np.asarray(t.detach().cpu().numpy(), dtype=np.float64)
    shape = tuple(values.shape)
    sizes = ",".join(str(s) for s in shape)
    tail = f"[ {dt.cpu_type_text(t._dtype)}{{{sizes}}} ]"
    if values.ndim == 0:
        return f"{_shortest(values.item())}\n{tail}"
    if values.size == 0:
        return tail
    if values.ndim == 1:
        scale, width, spec = _style(values)
        head = f"{_shortest(scale)} *\n" if scale != 1 else ""
        return head + "".join(format(v / scale, f">{width}{spec}") + "\n"
                              for v in values) + tail
    if values.ndim == 2:
        return _matrix(values, 0) + tail
    blocks = []
    # the slices of the leading dims, first index fastest (ATen's counter runs that way)
    for index in itertools.product(*(range(n) for n in reversed(shape[:-2]))):
        index = tuple(reversed(index))
        label = "".join(f"{i + 1}," for i in index)
        blocks.append(f"({label}.,.) = \n" + _matrix(values[index], 1))
    return "\n".join(blocks) + tail
