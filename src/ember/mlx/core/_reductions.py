"""MLX's reductions, scans and softmax on arrays, with MLX's dtypes (sums of small integers
widen to int32 and wrap in the result's type, `argmax` answers uint32, integer means as
MLX computes them) and MLX's axis errors."""

from __future__ import annotations

import builtins
import math

import numpy as np

import ember as E
from ember.ops.scan import scan_in_own_dtype

from . import _complex_order as C
from . import _dtypes as D
from . import _saturating as S
from ._array import _wrap, array, as_array, cast, wrap_result
from ._binding import bad_call
from ._compile_shapes import shape_derived
from ._dtypes import Dtype
from ._strict import binding_text

_arr = as_array


def _float(x: array) -> array:
    """`x` itself if inexact, else as float32 (what MLX's float math does to integers)."""
    return x if x._dtype.kind in "fc" else x.astype(D.float32)


def _axes(axis, ndim: int):
    if axis is None:
        return None
    if isinstance(axis, int):
        return (axis,)
    return tuple(axis)


# -- reductions -----------------------------------------------------------------------------

def _sum_dtype(d: Dtype) -> Dtype:
    if d is D.bool_ or (d.kind == "i" and d.bits < 32):
        return D.int32
    if d.kind == "u" and d.bits < 32:
        return D.uint32
    return d


def _reduce_axes(a: array, axis, name: str | None = None) -> tuple:
    """The sorted axes a reduction of `a` over `axis` (all axes for None) covers, refused
    as MLX refuses them: an axis out of range, one given twice; for `name` (max, min:
    reductions without an identity), an axis of length 0."""
    ndim = a.ndim
    given = range(ndim) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    for ax in given:
        if not -ndim <= ax < ndim:
            raise IndexError(f"Invalid axis {ax} for array with {ndim} dimensions.")
    axes = sorted({ax % ndim for ax in given})
    if len(axes) != len(given):
        raise ValueError("Duplicate axes detected in reduction.")
    for ax in axes if name else ():
        if a.shape[ax] == 0:
            raise ValueError(f"[{name}] Cannot {name} reduce over axis {ax} with size 0.")
    return tuple(axes)


def _reduce(fn, a, axis, keepdims: bool, dtype: Dtype, name: str | None = None) -> array:
    a = _arr(a)
    dims = _reduce_axes(a, axis, name)
    t = cast(a._t, a._dtype, dtype)
    out = fn(t, dims, keepdims) if dims else t
    if out.dtype is not dtype.carrier:  # (torch sums and multiplies integers in int64;
        out = out.to(dtype.carrier)     # MLX in the result's type, wrapping round)
    return wrap_result(out, dtype)


def _mean_axes(a: array, axis, name: str = "mean") -> None:
    """MLX's own check of mean's (and var's, std's, median's) axes, before the sum's."""
    ndim = a.ndim
    for ax in () if axis is None else (axis,) if isinstance(axis, int) else axis:
        if not -ndim <= ax < ndim:
            raise IndexError(f"[{name}] axis {ax} is out of bounds for array with {ndim} "
                             "dimensions.")


def sum(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:  # noqa: A001
    a = _arr(a)
    if not _reduce_axes(a, axis):  # (no axis to reduce: MLX gives `a` itself, dtype and all)
        return a
    return _reduce(lambda t, d, k: E.sum(t, dim=d, keepdim=k), a, axis, keepdims,
                   _sum_dtype(a._dtype))


def prod(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:
    a = _arr(a)
    if not _reduce_axes(a, axis):
        return a

    def fn(t, dims, k):
        for d in sorted(dims, reverse=True):
            t = E.prod(t, dim=d, keepdim=k)
        return t
    return _reduce(fn, a, axis, keepdims, _sum_dtype(a._dtype))


def _times_inverse(total: array, n: int) -> array:
    """`total` times 1/n rounded to its dtype (MLX's normalizer: 1/0 is inf)."""
    carrier = total._dtype.carrier
    scale = shape_derived(E.full((), 1.0 / n if n else math.inf,
                                 dtype=E.float32 if carrier.is_complex else carrier))
    return _wrap(total._t * scale, total._dtype)


def mean(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:
    a = _arr(a)
    _mean_axes(a, axis)
    n = math.prod(a.shape[d] for d in _reduce_axes(a, axis))
    if a._dtype.kind not in "fc":
        # NOTE: MLX's mean of integers is their `sum` (in int32 for the small types,
        # wrapping round) times 1/n in float32, so int32 2**30 four times means 0
        total = sum(a, axis, keepdims)
        return _times_inverse(_wrap(cast(total._t, total._dtype, D.float32), D.float32), n)
    # NOTE: and of floats the sum times 1/n rounded to their dtype, not the sum divided by
    # n: float32 [0.95, 2.05, 0.01, 0.95, 2, 0.0625] means 1.00375009, not 1.00374997
    return _times_inverse(sum(a, axis, keepdims), n)


def _ddof(name: str, a, ddof, correction):
    """`correction`, which MLX takes by keyword only and which replaces `ddof` when given
    (an int or a bool, as its binding converts; anything else refused in its words)."""
    if correction is None:
        return ddof
    if isinstance(correction, (int, np.integer)):
        return int(correction)
    raise bad_call(name, binding_text(name), (a,), {"correction": correction})


def var(a, /, axis=None, keepdims: bool = False, ddof: int = 0, *, correction=None,
        stream=None) -> array:
    ddof = _ddof("var", a, ddof, correction)
    a = _float(_arr(a))
    _mean_axes(a, axis)
    dims = _reduce_axes(a, axis)
    if not dims:  # (each element's own variance: 0, over max(1 - ddof, 0))
        zero = E.zeros_like(a._t)
        return _wrap(zero if ddof < 1 else zero / 0.0, a._dtype)
    # NOTE: MLX's formula, with its roundings: the squared deviations from the mean (their
    # magnitudes for complex numbers) summed, then times 1/n, or over max(n - ddof, 0)
    dev = a._t - mean(a, axis, True)._t
    dtype = a._dtype
    if dtype.kind == "c":  # (a complex array's variance is real: float32)
        dev, dtype = dev.abs(), D.float32
    total = sum(_wrap(dev * dev, dtype), axis, keepdims)
    n = math.prod(a.shape[d] for d in dims)
    if ddof == 0:
        return _times_inverse(total, n)
    # NOTE: MLX makes n an array of the result's dtype before taking ddof off, so in
    # bfloat16 257 elements count as 256 and ddof=1 divides by 255
    count = shape_derived(E.full((), float(n), dtype=dtype.carrier))
    count = (count - float(ddof)).clamp_min(0.0)
    return _wrap(total._t / count, dtype)


def std(a, /, axis=None, keepdims: bool = False, ddof: int = 0, *, correction=None,
        stream=None) -> array:
    v = _float(var(a, axis, keepdims, _ddof("std", a, ddof, correction)))
    return _wrap(E.sqrt(v._t), v._dtype)


def max(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:  # noqa: A001
    return _max_or_min(_arr(a), axis, keepdims, "max", E.amax)


def min(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:  # noqa: A001
    return _max_or_min(_arr(a), axis, keepdims, "min", E.amin)


def _max_or_min(a: array, axis, keepdims: bool, op: str, fn) -> array:
    """max / min: complex values in MLX's order, others by ember's amax / amin."""
    if a._dtype.kind == "c":
        return _complex_extreme(a, axis, keepdims, op)
    return _reduce(lambda t, d, k: fn(t, dim=d, keepdim=k), a, axis, keepdims, a._dtype, op)


def _complex_extreme(a: array, axis, keepdims: bool, op: str) -> array:
    """`max` / `min` of a complex array in MLX's order (`_complex_order`)."""
    dims = _reduce_axes(a, axis, op)
    return _wrap(C.extreme(a._t, dims, keepdims, op), a._dtype) if dims else a


def all(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:  # noqa: A001
    a = _arr(a).astype(D.bool_)
    return _reduce(lambda t, d, k: E.all(t, dim=d, keepdim=k), a, axis, keepdims, D.bool_)


def any(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:  # noqa: A001
    a = _arr(a).astype(D.bool_)
    return _reduce(lambda t, d, k: E.any(t, dim=d, keepdim=k), a, axis, keepdims, D.bool_)


def logsumexp(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:
    a = _float(_arr(a))
    if a.size == 0:
        raise ValueError("[logsumexp] Received empty array.")
    if a.ndim == 0 and axis is not None and _axes(axis, 0):
        raise ValueError("[logsumexp] Received non-empty axes for array with 0 dimensions.")
    return _reduce(lambda t, d, k: E.logsumexp(t, dim=d, keepdim=k), a, axis, keepdims,
                   a._dtype)


def _arg(fn, a, axis, keepdims: bool, name: str) -> array:
    a = _arr(a)
    if isinstance(axis, tuple | list):  # (one axis only: MLX's binding refuses more)
        raise bad_call(name, f"{name}(a: array, /, axis: None | int = None, keepdims: bool = "
                       "False, *, stream: StreamOrDevice = None) -> array", (a, axis))
    if axis is None and keepdims and a.ndim == 0:  # (MLX's vector of ndim - 1 axes)
        raise ValueError("cannot create std::vector larger than max_size()")
    if a.size == 0:
        raise ValueError(f"[{name}] Cannot {name} reduce zero size array.")
    t = a._t if a._dtype is not D.bool_ else a._t.to(E.uint8)  # (torch refuses bool)
    flat = axis is None
    if flat:
        t, axis = t.reshape(-1), 0
    else:
        _reduce_axes(a, axis)
    if a._dtype.kind == "c":  # (MLX's order of complex numbers: `_complex_order`)
        out = C.arg(t, axis, keepdims, name)
    else:
        out = fn(t, dim=axis, keepdim=keepdims)
    if keepdims and flat:  # (over all axes, kept: a 1 for each)
        out = out.reshape((1,) * a.ndim)
    return _wrap(out, D.uint32)


def argmax(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:
    return _arg(E.argmax, a, axis, keepdims, "argmax")


def argmin(a, /, axis=None, keepdims: bool = False, *, stream=None) -> array:
    return _arg(E.argmin, a, axis, keepdims, "argmin")


def _scan(fn, a, axis, reverse: bool, inclusive: bool, ident: int, name: str = "cumsum",
          dtype: Dtype | None = None) -> array:
    a = _arr(a)
    t = a._t
    if axis is None:
        t, axis = t.reshape(-1), 0
    elif not -a.ndim <= axis < a.ndim:
        raise IndexError(f"[{name}] Axis {axis} is out of bounds for array with {a.ndim} "
                         "dimensions.")
    dtype = a._dtype if dtype is None else dtype
    t = cast(t, a._dtype, dtype)
    if reverse:
        t = E.flip(t, (axis,))
    # (an exclusive scan: shifted by one, `ident` first; a complex one folds from `ident`,
    # as MLX's kernel does, which decides what a NaN first does: `_complex_order`)
    before = not inclusive and dtype.kind == "c"
    out = fn(_shifted(t, axis, ident, dtype) if before else t, axis)
    if not inclusive and not before:
        out = _shifted(out, axis, ident, dtype)
    if reverse:
        out = E.flip(out, (axis,))
    return wrap_result(out.to(dtype.carrier), dtype)


def _shifted(t, axis: int, ident, dtype: Dtype):
    """`t` moved one place along `axis`, `ident` (or `ident(dtype)`) first."""
    if not t.shape[axis]:
        return t
    out = E.narrow(t, axis, 0, t.shape[axis] - 1)
    pad = [0, 0] * (t.dim() - 1 - axis % t.dim()) + [1, 0]
    return E.nn.functional.pad(out, pad, value=ident(dtype) if callable(ident) else ident)


def cumsum(a, /, axis=None, *, reverse: bool = False, inclusive: bool = True,
           dtype: Dtype | None = None, stream=None) -> array:
    """Running sums along `axis` (flattened when None); with `dtype`, of the input cast to
    it first, as MLX casts (so a narrow `dtype` wraps, and booleans still sum as int32)."""
    a = _arr(a) if dtype is None else _arr(a).astype(dtype)
    return _scan(scan_in_own_dtype, a, axis, reverse, inclusive, 0, "cumsum",
                 D.int32 if a._dtype is D.bool_ else None)


def cumprod(a, /, axis=None, *, reverse: bool = False, inclusive: bool = True,
            dtype: Dtype | None = None, stream=None) -> array:
    """Running products along `axis`; with `dtype`, of the input cast to it first."""
    a = _arr(a) if dtype is None else _arr(a).astype(dtype)
    return _scan(lambda t, d: scan_in_own_dtype(t, d, product=True), a, axis, reverse,
                 inclusive, 1, "cumprod")


def cummax(a, /, axis=None, *, reverse: bool = False, inclusive: bool = True,
           stream=None) -> array:
    return _scan(lambda t, d: C.cumulative(t, d, "cummax"), a, axis, reverse, inclusive,
                 lambda dt: _extreme(dt, False), "cummax")


def cummin(a, /, axis=None, *, reverse: bool = False, inclusive: bool = True,
           stream=None) -> array:
    return _scan(lambda t, d: C.cumulative(t, d, "cummin"), a, axis, reverse, inclusive,
                 lambda dt: _extreme(dt, True), "cummin")


def _extreme(dt: Dtype, high: bool):
    """The highest (or lowest) value of `dt`, in its carrier: infinity for floats, the
    type's limit for integers (uint64's highest is -1 in its int64 carrier)."""
    if dt.kind == "c":  # (MLX's exclusive complex scans start from inf+infj, -inf-infj)
        return complex(math.inf, math.inf) if high else complex(-math.inf, -math.inf)
    if dt.kind == "f":
        return math.inf if high else -math.inf
    if dt is D.bool_:
        return high
    if dt is D.uint64:
        return -1 if high else 0
    info = np.iinfo(dt.np)
    return int(info.max if high else info.min)


def softmax(a, /, axis=None, *, precise: bool = False, stream=None) -> array:
    """exp(a) normalized over `axis` (all axes by default). MLX's dtypes: a float result
    over the last axis (with only length-1 axes just before it among those reduced), else
    the input's dtype (so integers truncate); an empty array comes back as it is."""
    a = _arr(a)
    if a.size == 0:
        return a
    axes = list(range(a.ndim)) if axis is None else list(_axes(axis, a.ndim))
    if a.ndim == 0 and axes:
        raise ValueError("[softmax] Received non-empty axes for array with 0 dimensions.")
    dims = _reduce_axes(a, axes)
    x = _float(a)
    # NOTE: MLX's exp is 0 below about -87.68 (no subnormals): entries that far under the
    # maximum are masked to -inf first, so they come out (and differentiate) as 0 (_saturating)
    if x._dtype.kind == "c" and dims:  # (MLX's graph: exp(x - max) / sum, max complex)
        e = _wrap(E.exp((x - max(x, dims, keepdims=True))._t), x._dtype)
        out = e / sum(e, dims, keepdims=True)
    elif len(dims) == a.ndim > 1:
        t = S.mask_softmax_input(x._t, dims)
        out = _wrap(E.softmax(t.reshape(-1), 0).reshape(x.shape), x._dtype)
    elif len(dims) == 1:
        out = _wrap(E.softmax(S.mask_softmax_input(x._t, dims), dims[0]), x._dtype)
    elif dims:
        z = x - logsumexp(x, dims, keepdims=True)
        out = _wrap(S.exp(z._t) if z._dtype.kind != "c" else E.exp(z._t), z._dtype)
    else:
        z = x - x  # (each element on its own: 1, NaN where it is not finite)
        out = _wrap(E.exp(z._t), z._dtype)
    last = bool(axes) and axes[-1] in (a.ndim - 1, -1) and builtins.all(
        axes[i] + 1 == axes[i + 1] and a.shape[axes[i]] == 1 for i in range(len(axes) - 1))
    return out if last and a._dtype.kind != "c" else out.astype(a._dtype)


__all__ = [n for n, v in list(globals().items())
           if callable(v) and not n.startswith("_") and getattr(v, "__module__", "") == __name__]
