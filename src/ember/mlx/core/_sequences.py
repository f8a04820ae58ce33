"""MLX's functions over sequences and sorted order beyond `_ops`: differences, the
cumulative family's other names and `logcumsumexp`, `searchsorted`, fixed-size `unique`,
`median`, `minmax`, `count_nonzero`, `trace`."""

from __future__ import annotations

import builtins
import math

import ember as E
from ember.ops.scan import logcumsumexp_in_own_dtype

from . import _axis_checks as AC
from . import _dtypes as D
from . import _ops as O
from . import _reductions as R
from ._array import _wrap, array, as_array, cast

_arr = as_array  # (the conversion every op's array operands share)


def diff(a, /, n: int = 1, axis: int = -1) -> array:
    """The n-th discrete difference along `axis` (logical xor for bool)."""
    a = _arr(a)
    if n < 0:
        raise ValueError("[diff] Order `n` must be non-negative.")
    if not -a.ndim <= axis < a.ndim:
        raise IndexError("[diff] Axis is out of bounds for the array.")
    for _ in range(n):
        size = a.shape[axis]
        if size == 0:
            break
        hi = _wrap(E.narrow(a._t, axis, 1, size - 1), a._dtype)
        lo = _wrap(E.narrow(a._t, axis, 0, size - 1), a._dtype)
        a = O.not_equal(hi, lo) if a._dtype is D.bool_ else O.subtract(hi, lo)
    return a


def cumulative_sum(a, /, axis: int | None = None, *, reverse: bool = False,
                   inclusive: bool = True, dtype=None) -> array:
    """`cumsum`, in `dtype` when given (the Array API name)."""
    a = _arr(a) if dtype is None else _arr(a).astype(dtype)
    return O.cumsum(a, axis, reverse=reverse, inclusive=inclusive)


def cumulative_prod(a, /, axis: int | None = None, *, reverse: bool = False,
                    inclusive: bool = True, dtype=None) -> array:
    """`cumprod`, in `dtype` when given."""
    a = _arr(a) if dtype is None else _arr(a).astype(dtype)
    return O.cumprod(a, axis, reverse=reverse, inclusive=inclusive)


def logcumsumexp(a, /, axis: int | None = None, *, reverse: bool = False,
                 inclusive: bool = True) -> array:
    """The running log(sum(exp(.))) along `axis` (of the flattened array by default)."""
    a = R._float(_arr(a))
    return R._scan(logcumsumexp_in_own_dtype, a, axis, reverse, inclusive,
                   float("-inf"), "logcumsumexp")


def searchsorted(sorted_sequence, values, /, side: str = "left") -> array:
    """For each value, the index in the sorted 1-D sequence that keeps it sorted: the
    number of elements less than it ("left") or not greater ("right"); uint32."""
    if side not in ("left", "right"):
        raise ValueError(f"[searchsorted] Invalid side '{side}'. Expected 'left' or 'right'.")
    seq, v = _arr(sorted_sequence), _arr(values)
    dt = D.promote_types(seq._dtype, v._dtype)
    st, vt = cast(seq._t, seq._dtype, dt), cast(v._t, v._dtype, dt)
    out = E.searchsorted(st, vt.reshape(-1), right=side == "right")
    return _wrap(out.reshape(v.shape), D.uint32)


def unique(a, /, size: int, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, fill_value=None):
    """The `size` smallest unique elements of the flattened array, padded with `fill_value`
    (by default the first of them): a shape that does not depend on the values, as MLX
    defines it. NaNs are all distinct."""
    a = _arr(a)
    t = a._t.reshape(-1)
    count = t.shape[0]
    if count == 0 and size > 0 and fill_value is None:
        raise ValueError("[unique] A fill value is required for an empty input with a "
                         "non-zero size.")
    order = E.argsort(t, stable=True)
    s = t[order]
    new = E.cat([E.ones(builtins.min(count, 1), dtype=E.bool), s[1:] != s[:-1]])
    group = E.cumsum(new.to(E.int64), 0) - 1  # each sorted position's unique element
    wanted = E.arange(size)
    first = E.searchsorted(group, wanted)
    valid = first < count
    at = E.clamp(first, max=builtins.max(count - 1, 0))
    fill = s[:1] if fill_value is None else cast(_arr(fill_value)._t, _arr(fill_value)._dtype,
                                                 a._dtype)
    outs = [_wrap(E.where(valid, s[at] if count else fill, fill), a._dtype)]
    if return_index:
        index = order[at] if count else E.zeros(size, dtype=E.int64)
        outs.append(_wrap(E.where(valid, index, index[:1]), D.uint32))
    if return_inverse:
        inverse = E.zeros(count, dtype=E.int64).scatter(0, order, E.clamp(group, max=size - 1))
        outs.append(_wrap(inverse.reshape(a.shape), D.uint32))
    if return_counts:
        ends = E.searchsorted(group, wanted, right=True)
        outs.append(_wrap((ends - first).to(E.int32), D.int32))
    return outs[0] if len(outs) == 1 else tuple(outs)


def median(a, /, axis=None, keepdims: bool = False) -> array:
    """The median over `axis` (all axes by default); the mean of the middle two for an
    even count; float32 for integer input. Refused as MLX refuses it: an axis out of
    range or given twice, an empty set of elements to take it of."""
    a = R._float(_arr(a))
    given = list(range(a.ndim)) if axis is None else [axis] if isinstance(axis, int) \
        else list(axis)
    for ax in given:
        if not -a.ndim <= ax < a.ndim:
            raise IndexError(f"[median] axis {ax} is out of bounds for array with {a.ndim} "
                             "dimensions.")
    axes = sorted({ax % a.ndim for ax in given})
    if len(axes) != len(given):
        raise ValueError("[median] Received duplicate axis.")
    if not axes and a.ndim:
        raise ValueError("[flatten] start_axis must be less than or equal to end_axis")
    rest = [d for d in range(a.ndim) if d not in axes]
    t = a._t.permute(*rest, *axes) if a.ndim else a._t
    t = t.reshape(*[a.shape[d] for d in rest], math.prod(a.shape[d] for d in axes))
    n = t.shape[-1]
    if n == 0:
        raise ValueError("[median] Cannot take median along empty axis.")
    s = E.sort(t, dim=-1).values
    mid = s[..., n // 2] if n % 2 else (s[..., n // 2 - 1] + s[..., n // 2]) * 0.5
    mid = E.where(E.isnan(t).any(-1), float("nan"), mid)  # a NaN anywhere wins, as in MLX
    out = _wrap(mid, a._dtype)
    if keepdims:
        out = O.reshape(out, [1 if d in axes else a.shape[d] for d in range(a.ndim)])
    return out


def minmax(a, /, axis=None, keepdims: bool = False) -> tuple:
    """(min, max) over `axis`."""
    return O.min(a, axis, keepdims), O.max(a, axis, keepdims)


def count_nonzero(a, /, *, axis=None, keepdims: bool = False) -> array:
    """How many elements are non-zero over `axis` (int32)."""
    return O.sum(O.not_equal(_arr(a), 0), axis, keepdims).astype(D.int32)


def trace(a, /, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> array:
    """The sum of a diagonal (summed in `dtype` when given, else as `sum` widens)."""
    AC.diagonal_axes("trace", _arr(a).ndim, axis1, axis2)
    d = O.diagonal(a, offset, axis1, axis2)
    return O.sum(d if dtype is None else d.astype(dtype), -1)


__all__ = ["count_nonzero", "cumulative_prod", "cumulative_sum", "diff", "logcumsumexp",
           "median", "minmax", "searchsorted", "trace", "unique"]
