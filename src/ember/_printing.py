"""Tensor repr: PyTorch's printed form, character for character, and `set_printoptions`.

The rules follow `torch/_tensor_str.py`: one formatter per tensor (two for
complex: real and imaginary parts) chooses integer, fixed or scientific notation
from the nonzero finite values that will be shown; every element is right-aligned
to the widest; rows wrap at `linewidth`; tensors with more than `threshold`
elements show only `edgeitems` at each end of every dim, with `...` between.
Suffixes (`device=`, `size=`, `dtype=`, `grad_fn=`) follow the data.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any

import numpy as np

from . import _dtype as dt


class _Options:
    """The current print options (module-global, as in PyTorch)."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self) -> None:
        self.precision = 4
        self.threshold: float = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode: bool | None = None

    def __repr__(self) -> str:  # (PyTorch's is a dataclass named __PrinterOptions)
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"__PrinterOptions({fields})"


OPTS = _Options()

# profile -> (precision, threshold, edgeitems, linewidth)
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print. A profile sets all four numbers; explicit arguments win.

    NOTE: like PyTorch, every call sets `sci_mode` (to None when not given).
    """
    if profile in _PROFILES:
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for `set_printoptions`."""
    return {name: getattr(OPTS, name) for name in _Options.__slots__}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --- element formatting ---------------------------------------------------------------

class _Formatter:
    """Chooses a notation and a common width from the values that will be printed."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            for v in values.reshape(-1).tolist():
                self.width = max(self.width, len(str(v)))
            return
        v = values[np.isfinite(values) & (values != 0)]
        if v.size == 0:
            return
        mag = np.abs(v)
        lo, hi = float(mag.min()), float(mag.max())
        self.int_mode = bool(np.all(v == np.ceil(v)))
        sci = OPTS.sci_mode
        if sci is None:
            sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.sci_mode = bool(sci)
        p = OPTS.precision
        if self.sci_mode:
            widths = (len(f"{x:.{p}e}") for x in v.tolist())
        elif self.int_mode:
            # one more for the '.' that marks an integral float
            widths = (len(f"{x:.0f}") + 1 for x in v.tolist())
        else:
            widths = (len(f"{x:.{p}f}") for x in v.tolist())
        self.width = max(self.width, max(widths))

    def format(self, x) -> str:
        if not self.floating:
            s = str(x)
        elif self.sci_mode:
            s = f"{x:{self.width}.{OPTS.precision}e}"
        elif self.int_mode:
            s = f"{x:.0f}"
            if math.isfinite(x):
                s += "."
        else:
            s = f"{x:.{OPTS.precision}f}"
        return s.rjust(self.width)


class _Printer:
    """Formats one tensor's values: a formatter, or two for complex (real, imaginary)."""

    def __init__(self, shown: np.ndarray, kind: int) -> None:
        self.kind = kind
        if kind == 3:
            self.f1 = _Formatter(shown.real, True)
            self.f2 = _Formatter(shown.imag, True)
        else:
            self.f1 = _Formatter(shown, kind == 2)
            self.f2 = None

    def element_width(self) -> int:
        """Characters per element including the ', ' separator (and 'j' for complex)."""
        w = self.f1.width + 2
        if self.f2 is not None:
            w += self.f2.width + 1
        return w

    def value(self, x) -> str:
        if self.f2 is None:
            return self.f1.format(x)
        real = self.f1.format(x.real)
        imag = (self.f2.format(x.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag

    def python_values(self, a: np.ndarray) -> list:
        if self.kind == 3:
            return a.astype(np.complex128).tolist()
        if self.kind == 2:
            return a.astype(np.float64).tolist()
        return a.tolist()


def _summarized(a: np.ndarray) -> np.ndarray:
    """Only the values a summarised print shows (PyTorch's `get_summarized_data`)."""
    e = OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        # NOTE: with edgeitems=0 PyTorch takes self[:0] and self[-0:], i.e. everything.
        n = a.shape[0]
        return a if e == 0 or n <= 2 * e else np.concatenate((a[:e], a[n - e:]))
    if e == 0:
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            a = np.take(a, np.r_[0:e, n - e:n], axis=axis)
    return a


def _vector_str(a: np.ndarray, indent: int, summarize: bool, pr: _Printer) -> str:
    e = OPTS.edgeitems
    per_line = max(1, (OPTS.linewidth - indent) // pr.element_width())
    n = a.shape[0]
    if summarize and not e:
        items = ["..."]
    elif summarize and n > 2 * e:
        items = [pr.value(x) for x in pr.python_values(a[:e])] + [" ..."] + \
            [pr.value(x) for x in pr.python_values(a[n - e:])]
    else:
        items = [pr.value(x) for x in pr.python_values(a)]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a: np.ndarray, indent: int, summarize: bool, pr: _Printer) -> str:
    if a.ndim == 0:
        return pr.value(pr.python_values(a))
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, pr)
    e = OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = [_nested_str(a[i], indent + 1, summarize, pr) for i in range(e)] + ["..."] + \
            [_nested_str(a[i], indent + 1, summarize, pr) for i in range(n - e, n)]
    else:
        rows = [_nested_str(a[i], indent + 1, summarize, pr) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _data_str(a: np.ndarray, dtype: dt.dtype, indent: int) -> str:
    summarize = a.size > OPTS.threshold
    shown = _summarized(a) if summarize else a
    kind = dtype._kind
    if kind == 2:
        shown = shown.astype(np.float64)
    elif kind == 3:
        shown = shown.astype(np.complex128)
    return _nested_str(a, indent, summarize, _Printer(shown, kind))


# --- the whole repr -----------------------------------------------------------------------

def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    # NOTE: PyTorch's own arithmetic (+1 past the newline, +2 with none); kept for identical wraps.
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            parts.append(", " + s)
            last += len(s) + 2
    parts.append(")")
    return "".join(parts)


def _prefix(t) -> str:
    cls = type(t)
    if cls.__name__ in ("Tensor", "Parameter") and cls.__module__.startswith(("ember", "torch")):
        return "tensor("
    return f"{cls.__name__}("


# set by autograd.forward_ad when it loads (printing stays below the autograd layer):
# t -> t's tangent at the open dual level, or None
forward_tangent = None


def tensor_repr(t, tensor_contents: str | None = None) -> str:
    """`repr(t)` exactly as PyTorch prints it (with ember's name in `dtype=` suffixes)."""
    prefix = _prefix(t)
    indent = len(prefix)
    suffixes = []
    dev = t.device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    d = t._dtype
    default = dt.get_default_dtype()
    shape = tuple(t._shape)
    if dev.type == "meta":
        suffixes.append(f"size={shape}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "..."
    elif t.numel() == 0:
        if len(shape) != 1:
            suffixes.append(f"size={shape}")
        if d is not default:
            suffixes.append(f"dtype={d!r}")
        body = "[]"
    else:
        if not OPTS.edgeitems:
            suffixes.append(f"size={shape}")
        if d not in (default, dt.default_complex(), dt.int64, dt.bool_):
            suffixes.append(f"dtype={d!r}")
        body = None if tensor_contents is not None else \
            _data_str(t.detach()._array(), d, indent)
    if tensor_contents is not None:
        body = tensor_contents
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name().rpartition('::')[2]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    tangent = forward_tangent(t) if forward_tangent is not None else None
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")  # a 0-d tangent formats as its number, as in torch
    return _add_suffixes(prefix + body, suffixes, indent)


def sparse_repr(t) -> str:
    """`repr` of a sparse COO tensor, laid out as PyTorch prints one: its indices and values
    as nested tensor bodies, then size, nnz, dtype (when not a default) and layout."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = [f"size={tuple(t._shape)}", f"nnz={t._nnz()}"]
    d = t._dtype
    if d not in (dt.get_default_dtype(), dt.default_complex(), dt.int64, dt.bool_):
        suffixes.append(f"dtype={d!r}")
    suffixes.append(f"layout={t.layout!r}")
    parts = []
    for name, part in (("indices", t._sp_indices), ("values", t._sp_values)):
        head = f"{name}=tensor("
        a = part._array()
        body = "[]" if a.size == 0 else _data_str(a, part._dtype, indent + len(head))
        if a.size == 0:
            body += f", size={tuple(a.shape)}"
        parts.append(head + body + ")")
    text = prefix + (",\n" + " " * indent).join(parts)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name().rpartition('::')[2]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    # NOTE: PyTorch starts a sparse tensor's suffixes on a line of their own.
    text += ",\n" + " " * indent + suffixes[0]
    return _add_suffixes(text, suffixes[1:], indent)
