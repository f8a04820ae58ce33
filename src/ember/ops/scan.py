"""Scans (cumulative ops along one dim): cumsum, cumprod, cummax, cummin, logcumsumexp.

cumsum, cumprod and logcumsumexp are the members of one family, `scan_p` (a running
reduction along `dim`, the output shaped as the input); cummax / cummin return indices
too, so they are members of `pick_p` (reduce.py).

`cumsum` and `logcumsumexp` take a `reverse` flag internally: each direction's VJP is
the scan in the other direction, so gradients need no flips. Integer and bool inputs
to cumsum / cumprod accumulate in int64; float16 / bfloat16 accumulate in float32.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import _dtype as dt
from .. import _names, native
from .._tensor import Tensor
from .._view import wrap_dim
from ._arg_parser_text import as_method, need_tensors, tp_name, wrong_type
from ._batching import front
from ._common import c_type_name, type_name, write_out
from ._out_checks import check_out_tuple, check_scalar_types
from ._scan_native import cumprod_native, cumsum_native, extreme_native
from .reduce import (
    _LOW,
    _cast_for_sum,
    as_namedtuple,
    c_order,
    pick_p,
    picker,
    return_type,
)
from .registry import (
    Family,
    Member,
    apply,
    apply_given_,
    bind,
    defbatch,
    defjvp,
    deflinear,
    defvjp,
    keep_given,
)


class _Required:
    """The default of a scan's `dim`, so that leaving it out is reported in PyTorch's words
    (its parser's, not Python's)."""

    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Required()


def _int_like(v) -> bool:
    """What PyTorch's parser takes for an int: an int or __index__ object but no bool, or
    a 0-d integer tensor."""
    if isinstance(v, Tensor):
        return v.ndim == 0 and v._dtype._kind == 1
    return not isinstance(v, bool) and hasattr(type(v), "__index__")


def _scan_dim(x: Tensor, dim, name: str, dtype=None, out=None) -> int:
    """`dim` wrapped for `x`, after PyTorch's parser checks of the scan `name`'s arguments.
    NOTE: the parser says "(position N)" only of a positional `dim`; it is named so here
    however it was passed, that is the usual call (N = 1 for the method, 2 the function)."""
    if dim is _REQUIRED:
        raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    if not _int_like(dim):
        pos = 1 if name.endswith("_") or sys._getframe(1).f_code.co_qualname.startswith(
            "Tensor.") else 2
        raise wrong_type(name, "dim", pos, "int", dim)
    if dtype is not None and not isinstance(dtype, dt.dtype):
        raise TypeError(f"{name}(): argument 'dtype' must be {_names.prefix}.dtype, not "
                        f"{tp_name(dtype)}")
    need_tensors(name, ("out", None, out), optional=("out",))
    return wrap_dim(int(dim), max(x.ndim, 1))


def _scan_meta(x, *, dim, **_):
    return x._shape, x._dtype


scan_p = Family("scan")  # fn: CUMSUM, CUMPROD or LOGCUMSUMEXP


def _scan_batch(args, bdims, **params):
    """vmap of a scan: the batch axis first, `dim` shifted past it."""
    x, bd = args[0], bdims[0]
    if bd is None:
        return bind(scan_p, x, **params), None
    x = front(x, bd)
    if x.ndim == 1:  # a 0-d input: a scan over its one element
        return bind(scan_p, x.unsqueeze(1), **{**params, "dim": 1}).reshape(x._shape), 0
    return bind(scan_p, x, **{**params, "dim": params["dim"] + 1}), 0


defbatch(scan_p, _scan_batch)


def _along(fn, a, dim, reverse):
    """`fn(a, axis=dim)` as a fresh array, scanning from the end when `reverse`."""
    if a.ndim == 0:
        return np.array(fn(a.reshape(1), axis=0).reshape(()))
    if not reverse:
        return fn(a, axis=dim)
    flip = [slice(None)] * a.ndim
    flip[dim] = slice(None, None, -1)
    flip = tuple(flip)
    return np.ascontiguousarray(fn(a[flip], axis=dim)[flip])


# --- cumsum ---------------------------------------------------------------------------

# PyTorch's CPU scans carry their running value in `acc_type`: float32 for float16 /
# bfloat16, float64 for float32, complex128 for complex64; each output is rounded from it.
# MLX's scans carry it in the input's own dtype (`own=True`, the MLX face's).
_ACC = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _acc(d: np.dtype, own: bool = False):
    if own:
        return d
    return np.float32 if d in _LOW else _ACC.get(d, d)


def _cumsum_kernel(a, *, dim, reverse=False, own=False):
    acc = _acc(a.dtype, own)
    return _along(lambda v, axis: np.cumsum(v, axis=axis, dtype=acc), a, dim,
                  reverse).astype(a.dtype, copy=False)


def _same_carry(own: bool) -> dict:
    """The `own` flag as a scan's parameters carry it (absent when False)."""
    return {"own": True} if own else {}


CUMSUM = Member(scan_p, "cumsum", c_order(_cumsum_kernel), _scan_meta)
native.register(CUMSUM, "scan", cumsum_native)
defvjp(CUMSUM, lambda g, out, x, *, dim, reverse=False, own=False:
       apply(scan_p, g, fn=CUMSUM, dim=dim, reverse=not reverse, **_same_carry(own)),
       reads=((),))
deflinear(CUMSUM)


def _scan_input(input: Tensor, dtype, out, name: str) -> Tensor:
    """`input` cast to the dtype cumsum / cumprod run in: `dtype`, else `out`'s (PyTorch
    casts the input to it, so cumsum of floats into a long `out` sums truncated values),
    else int64 for ints and bool. PyTorch has no bool kernel for either scan."""
    if dtype is not None:  # (a bool `dtype` is refused before autograd refuses its result)
        _refuse_bool(input, name, dtype)
    x = _cast_for_sum(input, dtype, out)
    _refuse_bool(x, name)
    return x


def _refuse_bool(x: Tensor, name: str, dtype=None) -> None:
    # NOTE: PyTorch returns a 0-d or empty input before reaching its kernel dispatch.
    if (dtype or x._dtype) is dt.bool_ and x.ndim and x.numel():
        raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")


def _inplace_scan_dtype(self: Tensor, dtype, name: str) -> None:
    """cumsum_ / cumprod_ write into `self`, so a `dtype` must be `self`'s own."""
    if dtype is not None and dtype is not self._dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {c_type_name(self._dtype)} "
                           f"and output tensor dtype {c_type_name(dtype)} should match")
    _refuse_bool(self, name)


def cumsum(input: Tensor, dim: int = _REQUIRED, *, dtype=None, out=None) -> Tensor:
    """Running sum along `dim`; ints and bool accumulate in int64."""
    d = _scan_dim(input, dim, "cumsum", dtype, out)
    x = _scan_input(input, dtype, out, "cumsum")
    r = apply(scan_p, x, fn=CUMSUM, dim=d)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def rev_cumsum(x: Tensor, dim: int) -> Tensor:
    """Running sum from the end of `dim` backwards (a VJP helper)."""
    return apply(scan_p, x, fn=CUMSUM, dim=dim, reverse=True)


def cumsum_(self: Tensor, dim: int = _REQUIRED, *, dtype=None) -> Tensor:
    """In-place running sum along `dim`."""
    d = _scan_dim(self, dim, "cumsum_", dtype)
    _inplace_scan_dtype(self, dtype, "cumsum")
    return apply_given_({"dim": dim}, scan_p, self, fn=CUMSUM, dim=d)


# --- cumprod --------------------------------------------------------------------------

def _cumprod_kernel(a, *, dim, own=False):
    acc = _acc(a.dtype, own)
    return _along(lambda v, axis: np.cumprod(v, axis=axis, dtype=acc), a, dim,
                  False).astype(a.dtype, copy=False)


def _cumprod_vjp(g, out, x, *, dim, own=False):  # (own: the gradient as PyTorch's)
    # NOTE: written without looking at the values (no rule reads data). Before a slice's
    # first zero z, grad_i = sum_{k>=i} g_k out_k / x_i; at z it is the gradient of the
    # cumprod with x_z set to 1; after z it is 0. That value is right, but its derivative
    # in x_z is not, so when a graph of the backward is being built the rule takes the
    # pairwise form instead (`_cumprod_vjp_pairs`), exact and differentiable again.
    from .. import _grad_mode as grad_mode
    from .ternary import where

    if x.numel() == 0:
        return g * 0
    if x.ndim == 0:
        return g
    if grad_mode.state.enabled:
        return _cumprod_vjp_pairs(g, x, dim)
    cplx = x._dtype.is_complex
    is_zero = x == 0
    seen = is_zero.cumsum(dim)
    before = seen == 0
    first = is_zero & (seen == 1)
    safe = where(before, x, 1)
    grad_before = rev_cumsum(g * (out.conj() if cplx else out), dim) / (
        safe.conj() if cplx else safe)
    y_out = cumprod(where(first, 1, x), dim)
    at_first = rev_cumsum(g * (y_out.conj() if cplx else y_out), dim)
    return where(before, grad_before, where(first, at_first, 0))


def _cumprod_table(xt: Tensor) -> tuple[Tensor, Tensor]:
    """For slices along the last dim: head[..., i] = prod_{j<i} x_j and the n-by-n table
    spans[..., i, k] = prod_{i<j<=k} x_j (0 for k < i). No division, so zeros need no
    special case, and built from differentiable ops (for higher derivatives)."""
    from .creation import arange, ones
    from .join import cat
    from .ternary import where

    n = xt._shape[-1]
    j = arange(n, device=xt.device)
    later = j.unsqueeze(0) > j.unsqueeze(1)  # [i, j]: j after i
    spans = where(j.unsqueeze(0) >= j.unsqueeze(1),
                  cumprod(where(later, xt.unsqueeze(-2), 1), -1), 0)  # [..., i, k]
    one = ones(xt._shape[:-1] + (1,), dtype=xt._dtype, device=xt.device)
    head = cumprod(cat([one, xt.narrow(-1, 0, n - 1)], -1), -1)
    return head, spans


def _cumprod_vjp_pairs(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """cumprod's gradient as grad_i = prod_{j<i} x_j * sum_{k>=i} g_k prod_{i<j<=k} x_j."""
    cplx = x._dtype.is_complex
    head, spans = _cumprod_table(x.movedim(dim, -1))
    tail = ((spans.conj() if cplx else spans) * g.movedim(dim, -1).unsqueeze(-2)).sum(-1)
    return ((head.conj() if cplx else head) * tail).movedim(-1, dim)


def _cumprod_jvp(primals, tangents, out, *, dim, own=False):
    # d out_k = sum_{i<=k} t_i prod_{j<i} x_j prod_{i<j<=k} x_j, exact with zeros
    x, t = primals[0], tangents[0]
    if x.numel() == 0 or x.ndim == 0:
        return t
    head, spans = _cumprod_table(x.movedim(dim, -1))
    lead = (t.movedim(dim, -1) * head).unsqueeze(-1)  # [..., i, 1]
    return (lead * spans).sum(-2).movedim(-1, dim)


CUMPROD = Member(scan_p, "cumprod", c_order(_cumprod_kernel), _scan_meta)
native.register(CUMPROD, "scan", cumprod_native)
defvjp(CUMPROD, _cumprod_vjp, save_output=True)
defjvp(CUMPROD, _cumprod_jvp)


def cumprod(input: Tensor, dim: int = _REQUIRED, *, dtype=None, out=None) -> Tensor:
    """Running product along `dim`; ints and bool accumulate in int64."""
    d = _scan_dim(input, dim, "cumprod", dtype, out)
    x = _scan_input(input, dtype, out, "cumprod")
    r = apply(scan_p, x, fn=CUMPROD, dim=d)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def cumprod_(self: Tensor, dim: int = _REQUIRED, *, dtype=None) -> Tensor:
    """In-place running product along `dim`."""
    d = _scan_dim(self, dim, "cumprod_", dtype)
    _inplace_scan_dtype(self, dtype, "cumprod")
    return apply_given_({"dim": dim}, scan_p, self, fn=CUMPROD, dim=d)


def scan_in_own_dtype(x: Tensor, dim: int, product: bool = False) -> Tensor:
    """cumsum (or cumprod) carrying the running value in `x`'s own dtype, one rounding a
    step, as MLX's scans do (PyTorch's carry float32 in float64, float16 in float32): the
    MLX face's."""
    return apply(scan_p, x, fn=CUMPROD if product else CUMSUM, dim=dim, own=True)


# --- cummax / cummin --------------------------------------------------------------------

def _cum_extreme_kernel(largest: bool):
    ufunc = np.maximum if largest else np.minimum

    def kernel(a, *, dim, in_shape=None):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        vals = ufunc.accumulate(a, axis=dim)
        # NOTE: ties and NaNs take the latest index, as PyTorch does.
        hit = (a == vals) | (a != a) if a.dtype.kind in "fc" or a.dtype in _LOW else a == vals
        pos = np.arange(a.shape[dim]).reshape([-1 if i == dim else 1 for i in range(a.ndim)])
        idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=dim)
        # (each value is the element at its index: of -0.0 and 0.0, the latest one's sign)
        return np.take_along_axis(a, idx, axis=dim), idx.astype(np.int64)

    return c_order(kernel)


def _cum_extreme_vjp(g, out, x, *, dim, in_shape):
    from .index import _scatter_add_zeros

    gv, _ = g
    if not in_shape or gv.numel() == 0:
        return gv
    return _scatter_add_zeros(gv, out[1].detach(), in_shape, dim)


def _cum_extreme_meta(x, *, dim, in_shape=None):
    return (x._shape, x._dtype), (x._shape, dt.int64)


# cummax and cummin: the running extremum and where it was
CUMMAX = picker("cummax", _cum_extreme_kernel(True), _cum_extreme_meta, _cum_extreme_vjp,
                saves_input=True)
CUMMIN = picker("cummin", _cum_extreme_kernel(False), _cum_extreme_meta, _cum_extreme_vjp,
                saves_input=True)
native.register(CUMMAX, "scan", extreme_native(True))
native.register(CUMMIN, "scan", extreme_native(False))

cummax_result = return_type("cummax", ["values", "indices"])
cummin_result = return_type("cummin", ["values", "indices"])


def _cum_extreme(largest: bool, result, name: str):
    def op(input: Tensor, dim: int = _REQUIRED, *, out=None):
        d = _scan_dim(input, dim, name)
        check_out_tuple(out, name)
        if input._dtype.is_complex:
            raise NotImplementedError(
                f'"{name}_cpu" not implemented for \'{type_name(input._dtype)}\'')
        r = apply(pick_p, input, fn=CUMMAX if largest else CUMMIN, dim=d, in_shape=input._shape)
        if r[0]._grad_fn is not None:
            keep_given(r, dim=dim)
        if out is not None:
            check_scalar_types(r, out)
        return as_namedtuple(result, r, out)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Running {name[3:]}imum along `dim`: a (values, indices) named tuple."
    return op


cummax = _cum_extreme(True, cummax_result, "cummax")
cummin = _cum_extreme(False, cummin_result, "cummin")


# --- logcumsumexp --------------------------------------------------------------------

def _complex_logaddexp_scan(v: np.ndarray, axis: int) -> np.ndarray:
    """Complex logcumsumexp as PyTorch's and MLX's kernels run it: one log-add-exp a step,
    the running value the larger-real-part operand plus log1p(exp(smaller - larger)). So
    the imaginary part accumulates unwrapped (not folded into (-pi, pi]) and a NaN in
    either part makes every later output NaN + NaN j."""
    v = np.moveaxis(v, axis, 0)
    out = np.empty_like(v)
    carry = np.full(v.shape[1:], complex(float("-inf"), 0.0), v.dtype)
    with np.errstate(all="ignore"):
        for k in range(v.shape[0]):
            x, y = v[k], carry
            x_first = x.real < y.real
            lo, hi = np.where(x_first, x, y), np.where(x_first, y, x)
            nan = np.isnan(x) | np.isnan(y)
            both_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
            inf_sum = np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi)))
            carry = np.where(both_inf, inf_sum, np.log1p(np.exp(lo - hi)) + hi)
            carry = np.where(nan, complex(float("nan"), float("nan")), carry)
            out[k] = carry
    return np.moveaxis(out, 0, axis)


def _logcumsumexp_kernel(a, *, dim, reverse=False, own=False):
    # NOTE: PyTorch carries the running value in acc_type (float16 / bfloat16 in float32,
    # float32 in float64, complex64 in complex128) and rounds each output from it; MLX
    # (`own`) carries float32 as float32.
    w = a.astype(_acc(a.dtype, own) if a.dtype not in _LOW else np.float32, copy=False)
    step = _complex_logaddexp_scan if w.dtype.kind == "c" else np.logaddexp.accumulate
    r = _along(step, w, dim, reverse)
    return r.astype(a.dtype, copy=False)


def _logcumsumexp_vjp(g, out, x, *, dim, reverse=False, own=False):
    # grad_i = sum_{k>=i} g_k exp(x_i - out_k). NOTE: kept stable as PyTorch does, by
    # scanning log|g_k| - out_k separately for positive and negative g in log space.
    from .ternary import where

    if x._dtype.is_complex:
        w = (g * (-out).exp().conj())
        return apply(scan_p, w, fn=CUMSUM, dim=dim, reverse=not reverse,
                     **_same_carry(own)) * x.exp().conj()
    if x.numel() == 0:
        return g * 0
    neg_inf = float("-inf")

    def part(mask):
        logg = where(mask, where(mask, g, 1).abs().log() - out, neg_inf)
        return (apply(scan_p, logg, fn=LOGCUMSUMEXP, dim=dim, reverse=not reverse,
                      **_same_carry(own)) + x).exp()

    return part(g > 0) - part(g < 0)


def _logcumsumexp_jvp(primals, tangents, out, *, dim, reverse=False, own=False):
    # d out_k = sum_{i<=k} t_i exp(x_i - out_k), scanned in log space with the positive
    # and negative tangents apart (as the VJP), so that no exp overflows
    from .ternary import where

    x, t = primals[0], tangents[0]
    if x._dtype.is_complex:
        m = x.real.amax(dim, keepdim=True).detach() if x.ndim else x.real
        w = apply(scan_p, t * (x - m).exp(), fn=CUMSUM, dim=dim, reverse=reverse,
                  **_same_carry(own))
        return w * (m - out).exp()
    if x.numel() == 0:
        return t
    neg_inf = float("-inf")

    def part(mask):
        logt = where(mask, where(mask, t, 1).abs().log() + x, neg_inf)
        return (apply(scan_p, logt, fn=LOGCUMSUMEXP, dim=dim, reverse=reverse,
                      **_same_carry(own)) - out).exp()

    return part(t > 0) - part(t < 0)


LOGCUMSUMEXP = Member(scan_p, "logcumsumexp", c_order(_logcumsumexp_kernel), _scan_meta)
defvjp(LOGCUMSUMEXP, _logcumsumexp_vjp, save_output=True)
defjvp(LOGCUMSUMEXP, _logcumsumexp_jvp)


def logcumsumexp(input: Tensor, dim: int = _REQUIRED, *, out=None) -> Tensor:
    """log(cumsum(exp(x))) along `dim`, computed stably."""
    d = _scan_dim(input, dim, "logcumsumexp", out=out)
    check_scalar_types(input, out)  # (PyTorch checks `out` before the input's dtype)
    if input._dtype._kind < 2:
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{type_name(input._dtype)}'")
    r = apply(scan_p, input, fn=LOGCUMSUMEXP, dim=d)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def logcumsumexp_in_own_dtype(x: Tensor, dim: int) -> Tensor:
    """logcumsumexp carrying the running value in `x`'s own dtype, as MLX's scan does
    (PyTorch carries float32 in float64): the MLX face's."""
    return apply(scan_p, x, fn=LOGCUMSUMEXP, dim=dim, own=True)


def _method(fn):
    """`fn` as a Tensor method: a copy whose code is named `Tensor.<name>`, so `_scan_dim`
    can number `dim` as the method's argument 1, but whose own name stays the op's, which
    Python's messages (an unexpected keyword ...) print as PyTorch's do."""
    method = as_method(fn)
    method.__qualname__ = fn.__qualname__
    return method


TENSOR_METHODS = {
    "cumsum": _method(cumsum), "cumsum_": cumsum_, "cumprod": _method(cumprod),
    "cumprod_": cumprod_, "cummax": _method(cummax), "cummin": _method(cummin),
    "logcumsumexp": _method(logcumsumexp),
}

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"]
