"""`mx.pad`: constant, edge, reflect and symmetric padding with MLX's width forms and its
errors (negative widths, an empty axis reflected)."""

from __future__ import annotations

import builtins
import operator

import numpy as np

import ember as E

from ._array import _to_carrier, _wrap, array, as_array, numpy_of, to_array
from ._indexing import shape_text

_arr = as_array

__all__ = ["pad"]


def pad(a, /, pad_width, mode: str = "constant", constant_values=0, *, stream=None) -> array:
    """`a` padded by `pad_width` (an int, a (low, high) pair for every axis, or one pair
    per axis) with `constant_values`, or (`mode`) with its edge values, or reflected about
    its edge values ("reflect", period 2(n-1)) or about its edges ("symmetric", period 2n),
    as NumPy's modes of those names; widths may pass the axis length."""
    a = _arr(a)
    widths = _pad_widths(pad_width, a.ndim)
    if len(widths) != a.ndim:
        raise ValueError("Invalid number of padding sizes passed to pad with axes of size "
                         f"{a.ndim}")
    for ax, (lo, hi) in enumerate(widths):
        for side, w in (("low", lo), ("high", hi)):
            if w < 0:
                raise ValueError(f"Invalid {side} padding size ({w}) passed to pad for axis "
                                 f"{ax}. Padding sizes must be non-negative")
    if mode == "constant":
        first = numpy_of(to_array(constant_values, a._dtype)).reshape(-1)[:1]  # (MLX reads
        value = _to_carrier(first, a._dtype)[0].item()                         # the first)
        flat = [x for lo_hi in reversed(widths) for x in lo_hi]
        return _wrap(E.nn.functional.pad(a._t, flat, value=value), a._dtype)
    if mode not in ("edge", "reflect", "symmetric"):
        raise ValueError(f"Invalid padding mode ({mode}) passed to pad")
    t = a._t
    for ax, (lo, hi) in enumerate(widths):
        n = a.shape[ax]
        if not lo and not hi:
            continue
        if n == 0:
            t = _empty_axis_pad(t, ax, lo, hi, mode)
            continue
        t = E.index_select(t, ax, E.tensor(_pad_positions(n, lo, hi, mode)))
    return _wrap(t, a._dtype)


def _is_int(v) -> bool:
    """Whether MLX's binding takes `v` as an int: an int or bool, or what has `__index__`
    (NumPy integers, integer 0-d arrays), never a float."""
    if isinstance(v, float):
        return False
    try:
        operator.index(v)
    except (TypeError, ValueError):  # (ValueError: an array of more than one element)
        return False
    return True


def _is_sequence(v) -> bool:
    """Whether MLX's binding takes `v` as a sequence: sized and iterable, not a string."""
    if isinstance(v, str | bytes) or _is_int(v):
        return False
    try:
        len(v)
        iter(v)
    except TypeError:
        return False
    return True


def _binds_int(v) -> bool:
    """Whether the binding takes `v` as a C++ int: an int within int32."""
    return _is_int(v) and -(2**31) <= operator.index(v) < 2**31


def pad_width_binds(pw) -> bool:
    """Whether `pw` has one of the types MLX's `pad` binding takes for `pad_width`: int,
    tuple[int], tuple[int, int] or list[tuple[int, int]] (any sequences, C++ ints; others
    end in nanobind's TypeError naming the signature, as `_strict` raises)."""
    if _is_int(pw):
        return _binds_int(pw)
    if not _is_sequence(pw):
        return False
    items = list(pw)
    if len(items) in (1, 2) and builtins.all(_binds_int(v) for v in items):
        return True
    return builtins.all(_is_sequence(p) and len(p) == 2 and builtins.all(_binds_int(v)
                                                                          for v in p)
                        for p in items)


def _pad_widths(pad_width, ndim: int) -> list:
    """[(low, high)] per axis from MLX's forms of `pad_width`: an int, (int,), one pair
    for every axis, or a list of pairs (one of which is for every axis)."""
    if _is_int(pad_width):
        return [(operator.index(pad_width),) * 2] * ndim
    pw = list(pad_width)
    if len(pw) in (1, 2) and builtins.all(_is_int(p) for p in pw):
        return [(operator.index(pw[0]), operator.index(pw[-1]))] * ndim
    pairs = [tuple(operator.index(v) for v in p) for p in pw]
    return pairs * ndim if len(pairs) == 1 else pairs


def _pad_positions(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """The source position of each element of an axis of length `n` padded by (lo, hi):
    clamped for "edge", folded back and forth about the edge values ("reflect") or edges
    ("symmetric") as often as the widths need."""
    j = np.arange(-lo, n + hi)
    if mode == "edge":
        return np.clip(j, 0, n - 1)
    if mode == "reflect" and n == 1:
        return np.zeros_like(j)
    period = 2 * (n - 1) if mode == "reflect" else 2 * n
    k = j % period
    back = period - k if mode == "reflect" else period - 1 - k
    return np.where(k < n, k, back)


def _empty_axis_pad(t, ax: int, lo: int, hi: int, mode: str):
    """Padding an axis of length 0 (so `t` has no elements): MLX refuses it for
    "reflect"/"symmetric"; for "edge" it fills zeros, after a broadcast that fails unless
    both sides are padded."""
    if mode != "edge":
        raise ValueError(f"[pad] Cannot pad empty axis {ax} using mode '{mode}'.")
    shape = list(t.shape)
    if not (lo and hi):
        done = [*shape[:ax], lo + hi, *shape[ax + 1:]]  # (the axes before are padded)
        want = [*shape[:ax], lo or hi, *shape[ax + 1:]]
        src = [*done[:ax], 0, *done[ax + 1:]]
        raise ValueError(f"Cannot broadcast array of shape {shape_text(src)} into shape "
                         f"{shape_text(want)}.")
    shape[ax] = lo + hi
    return E.zeros(shape, dtype=t.dtype)
