"""Searching sorted sequences: searchsorted and bucketize, as ATen's binary search finds
positions (NaN compares false both ways, so a NaN value lands past every boundary)."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from ._batching import front
from ._common import type_name, write_out
from ._nested_data import type_name as _nested_type_name
from .registry import Primitive, apply, bind, defbatch, nondifferentiable
from .sorting import _not_for

# --- searchsorted / bucketize ----------------------------------------------------------------

def _searchsorted_kernel(seq, values, *, side, int32):
    """ATen's binary search, step for step, for all values at once: the half [start, mid]
    is dropped while `!(seq[mid] >= v)` (`>` for side='right'). Unlike NumPy's search, a NaN
    compares false both ways, so a NaN value lands at the end and a NaN boundary is passed
    over wherever the halving meets it (as it does in an unsorted sequence)."""
    if dt.bfloat16.np in (seq.dtype, values.dtype):
        seq, values = seq.astype(np.float32), values.astype(np.float32)
    m = seq.shape[-1]
    rows = seq.reshape(math.prod(seq.shape[:-1]), m)
    vals = values.reshape(rows.shape[0] if seq.ndim > 1 else 1, -1)
    row = np.arange(vals.shape[0])[:, None]
    start = np.zeros(vals.shape, np.int64)
    end = np.full(vals.shape, m, np.int64)
    with np.errstate(invalid="ignore"):
        while True:
            live = start < end
            if not live.any():
                break
            mid = start + ((end - start) >> 1)
            at = rows[row, np.minimum(mid, m - 1)]
            go_right = ~(at > vals) if side == "right" else ~(at >= vals)
            start = np.where(live & go_right, mid + 1, start)
            end = np.where(live & ~go_right, mid, end)
    return start.reshape(values.shape).astype(np.int32 if int32 else np.int64)


searchsorted_p = Primitive(
    "searchsorted", _searchsorted_kernel,
    lambda seq, values, *, side, int32: (values._shape, dt.int32 if int32 else dt.int64))
nondifferentiable(searchsorted_p)


def _searchsorted_batch(args, bdims, **params):
    """vmap of searchsorted: the batch first in both (an unbatched sequence of one row is
    shared; otherwise the unbatched one is expanded), as an N-D search."""
    seq, values = args
    sd, vd = bdims
    if sd is None and seq.ndim == 1:  # one sorted row for every value
        return bind(searchsorted_p, seq, values, **params), vd
    size = (seq if sd is not None else values)._shape[sd if sd is not None else vd]
    seq = front(seq, sd) if sd is not None else seq.expand((size,) + seq._shape)
    values = front(values, vd) if vd is not None else values.expand(
        (size,) + values._shape)
    if seq.ndim == 2:  # a row per batch element: its values as one row each
        r = bind(searchsorted_p, seq, values.reshape(size, -1), **params)
        return r.reshape(values._shape), 0
    return bind(searchsorted_p, seq, values, **params), 0


defbatch(searchsorted_p, _searchsorted_batch)


def _side(side, right: bool) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    return side


# PyTorch's overloads, as its argument parser lists them when a call matches none
_SEARCHSORTED_SIGS = (
    " * (Tensor sorted_sequence, Tensor input, *, bool out_int32 = False, bool right = False, "
    "str side = None, Tensor sorter = None, Tensor out = None)\n"
    " * (Tensor sorted_sequence, Number self, *, bool out_int32 = False, bool right = False, "
    "str side = None, Tensor sorter = None, Tensor out = None)\n")
_BUCKETIZE_SIGS = (
    " * (Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, "
    "Tensor out = None)\n"
    " * (Number self, Tensor boundaries, *, bool out_int32 = False, bool right = False)\n")
# each keyword's accepted values: a bool flag takes a Python bool only (not 1, not np.bool_)
_KEYWORDS = {"out_int32": "bool", "right": "bool", "side": "str", "sorter": "Tensor",
             "out": "Tensor"}


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, complex)) or (
        isinstance(v, np.generic) and v.dtype.kind in "biufc")


def _is_tensor(v) -> bool:
    return isinstance(v, Tensor)


def _fits(kind: str, v) -> bool:
    if kind == "bool":
        return v.__class__ is bool
    return v is None or isinstance(v, str if kind == "str" else Tensor)


def _parsed(name: str, sigs: str, args: tuple, kwargs: dict, positional: tuple,
            allowed: tuple) -> None:
    """PyTorch's argument parser for searchsorted / bucketize: a TypeError naming the types
    given (keywords in the order its hash map yields them: the reverse of the call's, for
    these few names) unless an overload takes them all. `positional` holds each positional
    parameter's test; `allowed`, the keywords of the overload with the most of them."""
    ok = len(args) == len(positional) and all(
        isinstance(a, Tensor) or t(a) for a, t in zip(args, positional)) and all(
        k in allowed and _fits(_KEYWORDS[k], v) for k, v in kwargs.items())
    if ok and not (name == "bucketize" and not isinstance(args[0], Tensor) and "out" in kwargs):
        return  # (bucketize's Number overload has no `out`)
    if name == "bucketize" and len(args) + len(kwargs) == 5 and len(args) <= 2 and \
            set(kwargs) <= set(allowed):
        # one overload takes five arguments: its parser names the first one that misfits
        for i, (arg, pname) in enumerate(zip(args, ("input", "boundaries"))):
            if not isinstance(arg, Tensor):
                raise TypeError(f"bucketize(): argument '{pname}' (position {i + 1}) must be "
                                f"Tensor, not {_nested_type_name(type(arg))}")
        for k in allowed:
            if k in kwargs and not _fits(_KEYWORDS[k], kwargs[k]):
                raise TypeError(f"bucketize(): argument '{k}' must be {_KEYWORDS[k]}, not "
                                f"{_nested_type_name(type(kwargs[k]))}")
    given = [_given(a) for a in args] + [f"{k}={_given(v)}" for k, v in reversed(kwargs.items())]
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(given)}), but expected one of:\n{sigs}")


def _given(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else _nested_type_name(type(v))


def searchsorted(sorted_sequence: Tensor, input, *args, **kwargs) -> Tensor:
    """Where each value of `input` would be inserted into the innermost dim of
    `sorted_sequence` to keep it sorted. Keywords: out_int32 (bool), right (bool), side
    ('left' / 'right'), sorter (Tensor), out."""
    _parsed("searchsorted", _SEARCHSORTED_SIGS, (sorted_sequence, input) + args, kwargs,
            (_is_tensor, _is_number), ("out_int32", "right", "side", "sorter", "out"))
    return _searchsorted(sorted_sequence, input, **kwargs)


def _searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False,
                  right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                  out=None) -> Tensor:
    s = _side(side, right)
    seq = sorted_sequence
    if sorter is not None:
        _check_sorter(seq, sorter)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if not isinstance(input, Tensor):
        from .creation import scalar_tensor

        if seq.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                               "boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({seq.ndim}) and input value's dim(0) numel(1)")
        input = scalar_tensor(input, device=seq.device)
    if seq.ndim > 1 and seq._shape[:-1] != input._shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq._shape)} and input value tensor {list(input._shape)}")
    want = dt.int32 if out_int32 else dt.int64
    if isinstance(out, Tensor) and out._dtype is not want:
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be "
                           "Int(int32) or Long(int64) depending on whether out_int32 flag is "
                           f"True, but we got output tensor's dtype {type_name(out._dtype)} and "
                           f"out_int32 flag is {bool(out_int32)}")
    for what, t in (("input value", input), ("boundary", seq), ("sorter", sorter)):
        if t is not None and not t.is_contiguous():
            warn_at_user(f"torch.searchsorted(): {what} tensor is non-contiguous, this will "
                         f"lower the performance due to extra data copy when converting "
                         f"non-contiguous tensor to contiguous, please use contiguous {what} "
                         f"tensor if possible. This message will only appear once per "
                         f"program.", once=True)
    # (PyTorch's kernel runs in the promoted dtype: a bool value in an integer sequence is
    # looked up as an integer)
    d = dt.promote_types(seq._dtype, input._dtype)
    seq, input = seq.to(d), input.to(d)
    _not_for("searchsorted_out_cpu", seq, bool_too=True)
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    return write_out(apply(searchsorted_p, seq, input, side=s, int32=bool(out_int32)), out)


def _check_sorter(seq: Tensor, sorter: Tensor) -> None:
    """Refuse a sorter that cannot index `seq`'s innermost dim, as PyTorch does before any
    other check on the boundaries (its shape, then its dtype, then its values)."""
    if sorter._shape != seq._shape:
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, "
                           f"but got boundary tensor {list(seq._shape)}and got sorter tensor "
                           f"{list(sorter._shape)}")
    if sorter._dtype != dt.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got "
                           f"dtype {type_name(sorter._dtype)}")
    if sorter.numel() == 0 or sorter._is_wrapper or sorter.device.type == "meta":
        return  # (a batched sorter inside vmap is gathered as is, without a value check)
    if seq.ndim == 0:  # (PyTorch reads the size of the last dim of a 0-d sorter here)
        raise RuntimeError("ArrayRef: attempted to access back() of empty list")
    values = sorter._array()
    if values.min() < 0 or values.max() >= seq._shape[-1]:
        raise RuntimeError("torch.searchsorted(): sorter index out of range")


def bucketize(input, boundaries: Tensor, *args, **kwargs) -> Tensor:
    """The bucket of each value: i such that boundaries[i-1] < x <= boundaries[i]
    (`right=True`: boundaries[i-1] <= x < boundaries[i]). Keywords: out_int32, right (bool),
    out."""
    _parsed("bucketize", _BUCKETIZE_SIGS, (input, boundaries) + args, kwargs,
            (_is_number, _is_tensor), ("out_int32", "right", "out"))
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _searchsorted(boundaries, input, **kwargs)


__all__ = ["searchsorted", "bucketize"]
TENSOR_METHODS: dict = {}
