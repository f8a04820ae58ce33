"""Counting ops: bincount (occurrences of each non-negative integer, or their summed
weights) and histc (a histogram of equal-width bins), with PyTorch's argument checks and
words; neither has a derivative. (The ordering ops, and unique: sorting.py.)
"""

from __future__ import annotations

import functools
import math
import numbers
import sys

import numpy as np

from .. import _dtype as dt
from .._core import data_dependent
from .._tensor import Tensor
from ._arg_parser_text import method_aware, tp_name
from ._common import c_type_name, type_name, write_out
from .registry import (
    Primitive,
    apply,
    batch_by_loop,
    derivative_not_implemented,
    nondifferentiable,
)

_BINCOUNT_DOMAIN = "bincount only supports 1-d non-negative integral inputs."


def _bincount_kernel(a, *weights, minlength):
    w = weights[0] if weights else None
    if a.size and a.min() < 0:
        raise RuntimeError(_BINCOUNT_DOMAIN)
    if a.size == 0:  # (PyTorch returns int64 zeros for no input, weights or not)
        return np.zeros(minlength, np.int64)
    if w is not None and w.dtype == np.float32:
        # NOTE: float32 weights add up in float32, one at a time in input order, as PyTorch's
        # loop does (np.bincount would sum in float64 and round once).
        out = np.zeros(max(minlength, int(a.max()) + 1), np.float32)
        np.add.at(out, a, w)
        return out
    out = np.bincount(a, weights=w, minlength=minlength)
    return out.astype(np.int64 if w is None else np.float64)


bincount_p = Primitive("bincount", _bincount_kernel, None)
derivative_not_implemented(bincount_p, "bincount", (False, True))
data_dependent(bincount_p)
batch_by_loop(bincount_p, "the output's length is the largest value of each element's data")


def _parsed_as(params: dict):
    """An op whose parameters after `input` (name -> the kind PyTorch's parser wants: int,
    Number or Tensor?) are checked as that parser checks them, with its words: "histc():
    argument 'bins' (position 2) must be int, not float" (no position for a keyword; a
    Tensor method counts from its first argument after self)."""
    def fits(v, kind: str) -> bool:
        if kind == "int":
            if isinstance(v, Tensor):
                return v.ndim == 0 and v._dtype._kind == 1
            return hasattr(v, "__index__") and not isinstance(v, (bool, np.bool_))
        if kind == "Number":
            return isinstance(v, numbers.Number) or isinstance(v, Tensor) and v.ndim == 0
        return v is None or isinstance(v, Tensor)

    def decorate(fn):
        fname = fn.__name__

        @functools.wraps(fn)
        def op(input, *args, **kwargs):
            first = 1 if sys._getframe(0).f_code.co_qualname.startswith("Tensor.") else 2
            given = [(name, v, first + i) for i, (name, v) in enumerate(zip(params, args))]
            given += [(k, v, None) for k, v in kwargs.items() if k in params]
            for name, v, pos in given:
                kind = params[name]
                if not fits(v, kind):
                    where = "" if pos is None else f" (position {pos})"
                    raise TypeError(f"{fname}(): argument '{name}'{where} must be "
                                    f"{kind.rstrip('?')}, not {tp_name(v)}")
            return fn(input, *args, **kwargs)

        return method_aware(op)

    return decorate


@_parsed_as({"weights": "Tensor?", "minlength": "int"})
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in 1-D `input` (optionally weighted)."""
    if input._dtype._kind != 1:
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{type_name(input._dtype)}'")
    if input.device.type == "meta":
        raise NotImplementedError("bincount's output size depends on the data: it cannot run "
                                  "on 'meta'")
    # (a batched input inside vmap runs once per example: the kernel checks its values)
    if input.ndim != 1 or (input.numel() and not input._is_wrapper and
                           input._array().min() < 0):
        raise RuntimeError(_BINCOUNT_DOMAIN)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return apply(bincount_p, input, minlength=minlength)
    if weights.ndim != 1 or weights._shape != input._shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights._dtype.is_complex:  # (PyTorch casts them to double: real parts, and a warning)
        weights = weights.to(dt.float64)
    return apply(bincount_p, input, weights, minlength=minlength)


def _histc_kernel(a, *, bins, lo, hi):
    if lo == hi:  # the data's own range (widened by one each side when it is one value)
        if a.size:
            lo, hi = float(a.min()), float(a.max())
            if a.size > 1 and lo != lo:
                # NOTE: PyTorch's vectorized aminmax marks a NaN with all bits set: a NaN
                # with its sign bit set, which the message prints as "-nan"
                lo = hi = -math.nan
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        _check_histc_range(lo, hi)
    lo_, hi_ = a.dtype.type(lo), a.dtype.type(hi)
    inside = a[(a >= lo_) & (a <= hi_)]
    # NOTE: PyTorch's bin rule: (x - lo) * bins / (hi - lo), truncated, each step rounded to
    # the input's dtype (float16 too); x == hi goes to the last bin.
    pos = ((inside - lo_) * bins / (hi_ - lo_)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    return np.bincount(pos, minlength=bins)[:bins].astype(a.dtype)


histc_p = Primitive("histc", _histc_kernel,
                    lambda x, *, bins, lo, hi: ((bins,), x._dtype))
nondifferentiable(histc_p)
batch_by_loop(histc_p, "with min == max the bin range comes from each element's data")


@_parsed_as({"bins": "int", "min": "Number", "max": "Number"})
def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out=None) -> Tensor:
    """A histogram of `input` with `bins` equal bins over [min, max] (data range if equal)."""
    if input._dtype._kind != 2:
        # NOTE: PyTorch's kernel names: bool fails making the bin edges, complex finding the
        # data's range when min == max (the default), everything else histogramming
        kname = "linspace_cpu" if input._dtype is dt.bool_ else "aminmax_cpu" \
            if input._dtype.is_complex and float(min) == float(max) else "histogram_cpu"
        raise NotImplementedError(f'"{kname}" not implemented for '
                                  f"'{type_name(input._dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo != hi:  # (equal: the kernel takes the data's range)
        _check_histc_range(lo, hi)
    if out is not None and out._dtype is not input._dtype:  # (histc casts nothing into out)
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same "
                           f"dtype, but got input {c_type_name(input._dtype)} and hist "
                           f"{c_type_name(out._dtype)}")
    return write_out(apply(histc_p, input, bins=int(bins), lo=lo, hi=hi), out)


def _check_histc_range(lo: float, hi: float) -> None:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{cpp_double(lo)}, {cpp_double(hi)}] is "
                           "not finite")


def cpp_double(v: float) -> str:
    """A double as C++'s ostream prints it: a NaN with its sign bit set is "-nan" (0 / 0
    makes one on x86), a quiet NaN typed in is "nan"."""
    if v != v:
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return f"{v:g}"


