"""Index-driven ops: index_select / add / copy / fill / reduce and the scatter family (take
and put: flat_index.py; masked_fill / select / scatter: masked_ops.py).

Each is a primitive (a NumPy kernel on a fresh copy) with its VJP, JVP and batch rule
beside it: selecting ops transpose to scatter-adds, writing ops zero the overwritten
positions in the gradient and gather it for the written values. index_select is the
`index` primitive with `select=True`; scatter_reduce is the reducing member of the
`scatter` family (ops/index.py holds the primitive and its other members).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .._view import wrap_dim
from ..amp.autocast_mode import autocast_op
from . import index_checks as checks
from ._arg_parser_text import method_aware, need_tensor, wrong_type
from ._batching import batch_size, front, loop, pad_front
from ._common import (
    preserve_copy,
    refuse_out_grad,
    same_meta,
    type_name,
    write_exact,
    write_out,
)
from ._gather_adds import add_slices
from ._scalar_value import kernel_number, scalar_value
from ._scatter_native import index_add_native
from .index import (
    check_gather_index,
    gather_p,
    index_p,
    linear_in,
    put_into_zeros,
    scatter_accumulator,
    scatter_add_fn,
    scatter_fn,
    scatter_p,
    scatter_target,
    scatter_value_fn,
    scatter_zeros_at,
    src_part,
)
from .index_key import TENSOR_SLOT
from .movement import layout_own
from .registry import (
    Member,
    Primitive,
    apply,
    apply_,
    apply_given_,
    bind,
    defbatch,
    defjvp,
    defvjp,
    keep_given,
    shows,
)
from .scatter_legacy import scatter_legacy_fn
from .ternary import where

_grad_state = grad_mode.state


# For VJP rules: gather / scatter-add / scatter-reduce bound directly, without the public
# wrappers' bounds checks (which read the index; a rule reads no data, and the forward
# already checked these indices).

def _take(t: Tensor, dim: int, idx: Tensor) -> Tensor:
    return apply(gather_p, t, idx, dim=wrap_dim(dim, max(t.ndim, 1)))


def _add_at(t: Tensor, dim: int, idx: Tensor, src: Tensor) -> Tensor:
    return apply(scatter_p, t, idx, src, fn=scatter_add_fn, dim=wrap_dim(dim, max(t.ndim, 1)))


def _reduce_at(t: Tensor, dim: int, idx: Tensor, src: Tensor, reduce: str, *,
               include_self: bool) -> Tensor:
    return apply(scatter_p, t, idx, src, fn=scatter_reduce_fn, dim=wrap_dim(dim, max(t.ndim, 1)),
                 reduce=reduce, include_self=include_self)


def _key(dim: int, idx) -> tuple:
    return (slice(None),) * dim + (idx,)


def _fill_value(value, d: dt.dtype, name: str):
    """A fill value as a NumPy scalar of dtype `d`, or a 0-d tensor cast to `d`; either
    refused (as PyTorch does) when its value overflows `d`."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        if value.device.type != "meta" and not value._is_wrapper:  # (a transform's value
            scalar_value(value.item(), d)  # per example: vmap checks none)
        return value if value._dtype is d else value.to(d)
    value = dt.py_number(value)  # (a NumPy scalar is the number the parser reads)
    if not isinstance(value, numbers.Number):
        raise wrong_type(name, "value", None, "Number", value)
    if name == "index_fill_" and isinstance(value, complex) and not d.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    return scalar_value(value, d)


# --- index_select / index_add / index_copy / index_fill -----------------------------------

def index_add_zeros(shape, dim, idx, src):
    """Zeros of `shape` with `src` added at `idx` along `dim`: the index is an input of
    index_add, so the rule never looks at its values."""
    from .creation import zeros

    if len(shape) == 0:
        return src.reshape(())
    base = zeros(shape, dtype=src._dtype, device=src.device)
    return apply(index_copy_p, base, idx, src, dim=dim, accumulate=True)


@method_aware
def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """The slices of `input` along `dim` at the positions in 1-D `index`."""
    if input.__class__ is not Tensor and out is None \
            and (own := layout_own(input, "index_select")) is not None:
        return own(input, dim, index)
    d = checks.index_select(input, dim, index)
    res = apply(index_p, input, index, key=(slice(None),) * d + (TENSOR_SLOT,), select=True)
    if res._grad_fn is not None:
        keep_given(res, dim=dim)
    if isinstance(out, Tensor) and out._dtype is not input._dtype:  # (after the grad check)
        refuse_out_grad(res, out)
        raise RuntimeError("index_select(): self and result must have the same scalar type")
    return write_out(res, out)


def _index_copy_kernel(a, idx, src, *, dim, accumulate=False, alpha=1, fill=False):
    out = preserve_copy(a) if fill else a.copy()  # (index_fill keeps the input's layout)
    if out.size == 0:  # (no slice to write: PyTorch reads no index either)
        return out
    if accumulate and out.dtype == np.bool_:  # (a bool sum is a logical or)
        key = ... if a.ndim == 0 else _key(dim, idx.reshape(-1))
        np.logical_or.at(out, key, np.reshape(np.asarray(src, bool) & bool(alpha),
                                              () if a.ndim == 0 else np.shape(src)))
    elif accumulate:
        if alpha != 1 and out.dtype.kind in "fV":  # (alpha read in the dtype, a Scalar's
            alpha = kernel_number(alpha, out.dtype)  # cast: a 16-bit product rounds there)
        if a.ndim == 0:
            out += np.reshape(src, ()) * alpha
        else:
            flat, add = idx.reshape(-1), src if alpha == 1 else src * alpha
            if not add_slices(out, dim, flat, add):
                np.add.at(out, _key(dim, flat), add)
    elif a.ndim == 0:
        if idx.size:  # (an empty index leaves a 0-d input alone)
            out[...] = np.reshape(src, ())
    else:
        out[_key(dim, idx.reshape(-1))] = src
    return out


def _index_copy_meta(x, idx, src, *, dim, accumulate=False, alpha=1, fill=False):
    return same_meta(x) if fill else (x._shape, x._dtype)


def _index_copy_name(args, params) -> str:
    if params.get("accumulate"):
        return "IndexAddBackward0"
    if params.get("fill"):  # (a number, or a 0-d tensor value: PyTorch's two overloads)
        return "IndexFillBackward1" if isinstance(args[2], Tensor) else "IndexFillBackward0"
    return "IndexCopyBackward0"


# The slices of x at idx along dim replaced by src's (index_copy), by one value (index_fill:
# `fill`), or with alpha * src added (index_add: `accumulate`). A value's gradient is the
# selected slices' sum, which the engine's fit to its 0-d shape does.
index_copy_p = Primitive("index_copy", _index_copy_kernel, _index_copy_meta,
                         grad_name=_index_copy_name)
native.register(index_copy_p, "scatter", index_add_native)


def _index_copy_grad_x(g, out, x, idx, src, *, dim, accumulate=False, alpha=1, fill=False):
    return g if accumulate else apply(index_copy_p, g, idx, 0, dim=dim, fill=True)


def _index_copy_grad_src(g, out, x, idx, src, *, dim, accumulate=False, alpha=1, fill=False):
    if g.ndim == 0:
        return _alpha(g, alpha)
    return _alpha(apply(index_p, g, idx, key=(slice(None),) * dim + (TENSOR_SLOT,),
                        select=True), alpha)


# (the source's rule reads its shape only, but PyTorch's formula `expand_as(source)` names
# it, so its node keeps the source)
defvjp(index_copy_p, _index_copy_grad_x, None, _index_copy_grad_src, reads=((1,), (), (1, 2)))
linear_in(index_copy_p, 0, 2)  # (x, and src or the fill value, jointly)


def _index_copy_batch(args, dims, *, dim, accumulate=False, alpha=1, fill=False):
    x, idx, src = args
    dx, di, ds = dims
    nd = x.ndim - (dx is not None)
    if nd == 0:  # (a 0-d target reads its one value; not worth a vectorised form)
        return loop(index_copy_p, args, dims, dim=dim, accumulate=accumulate, alpha=alpha,
                    fill=fill)
    b = batch_size(args, dims)
    x = front(x, dx) if dx is not None else x.unsqueeze(0).expand((b,) + x._shape)
    src = pad_front(src, ds, nd)  # (b or 1, ...): broadcasts against the selected slices
    if di is None:
        return bind(index_copy_p, x, idx, src, dim=dim + 1, accumulate=accumulate,
                    alpha=alpha, fill=fill), 0
    # each example's own index: a scatter along dim + 1 with the index spread over the slices
    idx = front(idx, di).reshape(b, -1)
    sel = x._shape[:dim + 1] + (idx._shape[1],) + x._shape[dim + 2:]
    idx = idx.reshape((b,) + (1,) * dim + (-1,) + (1,) * (nd - dim - 1)).expand(sel)
    if isinstance(src, Tensor):
        src = src.expand(sel)
    if accumulate and alpha != 1:
        src = src * alpha
    return bind(scatter_p, x, idx, src, fn=scatter_add_fn if accumulate else (
        scatter_fn if isinstance(src, Tensor) else scatter_value_fn), dim=dim + 1), 0


defbatch(index_copy_p, _index_copy_batch)


def _alpha(t: Tensor, alpha) -> Tensor:
    return t if alpha == 1 else t * alpha


@method_aware
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1,
              out=None) -> Tensor:
    """`input` with `alpha * source` added at `index` along `dim` (repeats accumulate)."""
    d = checks.index_add(input, dim, index, source, alpha)
    r = apply(index_copy_p, input, index, source, dim=d, accumulate=True, alpha=alpha)
    if r._grad_fn is not None:  # (source_dim: shown even when the source is not saved)
        keep_given(r, dim=dim, source_dim=source.ndim)
    return write_exact(r, out)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    need_tensor(index, "index_add_", "index", 3, method=True)
    d = checks.index_add(self, dim, index, source, alpha)
    return apply_given_({"dim": dim, "source_dim": source.ndim}, index_copy_p, self, index,
                        source, dim=d, accumulate=True, alpha=alpha)


@autocast_op("index_copy")
@method_aware
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, *, out=None) -> Tensor:
    """`input` with the slices at `index` along `dim` replaced by `source`'s."""
    d = checks.index_copy(input, dim, index, source)
    r = apply(index_copy_p, input, index, source, dim=d)
    if r._grad_fn is not None:
        keep_given(r, dim=dim, source_dim=source.ndim)
    return write_exact(r, out)


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    need_tensor(index, "index_copy_", "index", 3, method=True)
    d = checks.index_copy(self, dim, index, source)
    return apply_given_({"dim": dim, "source_dim": source.ndim}, index_copy_p, self, index,
                        source, dim=d)


def _index_reduce_args(x: Tensor, dim, index: Tensor, source: Tensor, reduce: str, incl):
    """scatter_reduce's arguments for index_reduce: the index laid along `dim` of `source`
    (each slice of source reduced into the slice of x its index names)."""
    d = checks.index_reduce(x, dim, index, source, reduce, bool(incl))
    shape = [1] * source.ndim
    if source.ndim:
        shape[d] = -1
    return d, index.to(dt.int64).reshape(shape).expand(source._shape)


@method_aware
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True, out=None) -> Tensor:
    """`input` with each slice of `source` along `dim` reduced (prod, mean, amax, amin) into
    the slice its `index` names; `include_self` counts the input's own values in."""
    d, idx = _index_reduce_args(input, dim, index, source, reduce, include_self)
    _scatter_reduce_args(input, d, idx, source, reduce)
    r = apply(scatter_p, input, idx, source, fn=scatter_reduce_fn, dim=d, reduce=reduce,
              include_self=bool(include_self), wide=False)
    return write_exact(_shown_as_index_reduce(r, dim, index, source, reduce, include_self), out)


def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """In-place `index_reduce`."""
    need_tensor(index, "index_reduce_", "index", 3, method=True)
    d, idx = _index_reduce_args(self, dim, index, source, reduce, include_self)
    _scatter_reduce_args(self, d, idx, source, reduce)
    r = apply_(scatter_p, self, idx, source, fn=scatter_reduce_fn, dim=d, reduce=reduce,
               include_self=bool(include_self), wide=False)
    return _shown_as_index_reduce(r, dim, index, source, reduce, include_self)


def _shown_as_index_reduce(r: Tensor, dim, index, source, reduce, include_self) -> Tensor:
    """`r`, its scatter_reduce node shown as PyTorch's IndexReduceBackward0: the arguments
    as given (the index unspread), the input and result the node saved."""
    node = r._grad_fn
    if node is None or type(node).__name__ != "ScatterReduceBackward0":
        return r
    return shows(r, "IndexReduceBackward0", dim=dim, include_self=bool(include_self),
                 index=index, reduce=reduce, result=node._saved_result, self=node._saved_self,
                 source=source)


def _index_fill_args(x: Tensor, dim, index: Tensor, value):
    d = checks.index_fill(x, dim, index)
    return d, _fill_value(value, x._dtype, "index_fill_")


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """`input` with the slices at `index` along `dim` set to the scalar `value`."""
    d, v = _index_fill_args(input, dim, index, value)
    r = apply(index_copy_p, input, index, v, dim=d, fill=True)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return r


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    d, v = _index_fill_args(self, dim, index, value)
    return apply_given_({"dim": dim}, index_copy_p, self, index, v, dim=d, fill=True)


# --- scatter family --------------------------------------------------------------------------

_UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
          "amin": np.minimum}


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f" or dtype == dt.bfloat16.np:
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _scatter_reduce_kernel(a, idx, src, *, dim, reduce, include_self, wide=True):
    # (float16 / bfloat16 accumulate in float32; index_reduce's `wide=False` rounds each step)
    out = scatter_accumulator(a) if wide else a.copy()
    flat, key, shape = scatter_target(out, idx, dim)
    src = src_part(src, shape)
    if not include_self:
        flat[key] = _identity(reduce, a.dtype)
    _UFUNC[reduce].at(flat, key, src)
    out = out.astype(a.dtype, copy=False)
    if reduce == "mean":
        # NOTE: the sum is rounded to the input's dtype before the division, as PyTorch
        # divides the scattered sum in place.
        # index_reduce counts in the input's dtype too (a bfloat16 count stops at 256).
        flat = scatter_target(out, idx, dim)[0]
        count = np.full(flat.shape, 1 if include_self else 0, np.int64 if wide else out.dtype)
        np.add.at(count, key, 1)
        count = np.maximum(count, 1)
        if flat.dtype.kind in "iub":
            flat[...] = np.floor_divide(flat, count)
        else:
            flat[...] = flat / count.astype(flat.dtype)
    return out


# the scatter family's reducing member: src reduced into x at idx along dim
scatter_reduce_fn = Member(
    scatter_p, "scatter_reduce", _scatter_reduce_kernel,
    lambda x, idx, src, *, dim, reduce, include_self, wide=True: (x._shape, x._dtype))


def _scatter_reduce_vjp(g, out, x, idx, src, *, dim, reduce, include_self, wide=True):
    """(grad_self, grad_src), following PyTorch's scatter_reduce_backward."""
    if reduce == "sum":
        gs, gsrc = g, _take(g, dim, idx)
    elif reduce == "mean":
        ones = (x * 0 + 1) if include_self else x * 0
        n = _add_at(ones, dim, idx, _ones_like(src, idx))
        n = n.masked_fill(n == 0, 1)
        gs = g / n
        gsrc = _take(gs, dim, idx)
    elif reduce == "prod":
        gs, gsrc = _prod_grads(g, out, x, idx, src, dim, include_self)
    else:
        # NOTE: ties share the gradient evenly; like PyTorch, `self` is counted among the
        # ties even when include_self=False (its share is then dropped below).
        value = _take(out, dim, idx)
        self_is = (x == out).to(g.dtype)
        src_is = (_src_view(src, idx) == value).to(g.dtype)
        share = g / _add_at(self_is, dim, idx, src_is)
        gs = self_is * share
        gsrc = src_is * _take(share, dim, idx)
    if not include_self:
        gs = scatter_zeros_at(gs, idx, dim)
    return gs, _pad_to(gsrc, idx, src)


def _src_view(src: Tensor, idx: Tensor) -> Tensor:
    if src._shape == idx._shape:
        return src
    if src.ndim == 0:
        return src.reshape(idx._shape)
    return src[tuple(slice(0, n) for n in idx._shape)]


def _ones_like(src: Tensor, idx: Tensor) -> Tensor:
    return _src_view(src, idx) * 0 + 1


def _pad_to(gsrc: Tensor, idx: Tensor, src: Tensor) -> Tensor:
    if gsrc._shape == src._shape:
        return gsrc
    if src.ndim == 0:
        return gsrc.reshape(())
    key = tuple(slice(0, n) for n in idx._shape)
    return put_into_zeros(src._shape, key, gsrc)


def _prod_grads(g, out, x, idx, src, dim, include_self):
    # NOTE: as PyTorch does, zeros are handled by recomputing the product with each zero
    # masked to one, so a lone zero still receives the product of the others.
    s = _src_view(src, idx)
    masked_self = x.masked_fill(x == 0, 1)
    masked_self_result = _reduce_at(masked_self, dim, idx, s, "prod",
                                        include_self=include_self)
    gs = g * masked_self_result / masked_self
    src_zero = s == 0
    zeros_per_slot = _add_at(x * 0, dim, idx, src_zero.to(x.dtype))
    src_single_zero = src_zero & (_take(zeros_per_slot, dim, idx) == 1)
    masked_src = s.masked_fill(src_single_zero, 1)
    masked_src_result = _reduce_at(x, dim, idx, masked_src, "prod",
                                       include_self=include_self)
    gsrc = where(src_single_zero, _take(g * masked_src_result, dim, idx),
                 _take(g * out, dim, idx) / s.masked_fill(src_zero, 1))
    return gs, gsrc


def _sr_self(g, out, x, idx, src, **params):
    return _scatter_reduce_vjp(g, out, x, idx, src, **params)[0]


def _sr_src(g, out, x, idx, src, **params):
    return _scatter_reduce_vjp(g, out, x, idx, src, **params)[1]


defvjp(scatter_reduce_fn, _sr_self, None, _sr_src, save_output=True)


def _scatter_reduce_jvp(primals, tangents, out, *, dim, reduce, include_self, wide=True):
    """Each element of x and src reaches one output element, so the tangent is each one's
    partial derivative (the VJP of a cotangent of ones: products of the others for prod,
    an even share among ties for amax / amin) times its tangent, summed per output."""
    x, idx, src = primals
    tx, tsrc = tangents[0], tangents[2]
    if tx is None and tsrc is None:
        return None
    from .creation import ones_like, zeros_like

    dx, dsrc = _scatter_reduce_vjp(ones_like(out), out, x, idx, src, dim=dim, reduce=reduce,
                                   include_self=include_self)
    t = dx * tx if tx is not None else zeros_like(out)
    return t if tsrc is None else _add_at(t, dim, idx, dsrc * tsrc)


defjvp(scatter_reduce_fn, _scatter_reduce_jvp)

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_args(name: str, x: Tensor, dim, index: Tensor, src):
    d = wrap_dim(dim, max(x.ndim, 1))
    if isinstance(src, Tensor) and src._dtype is not x._dtype and (
            not isinstance(index, Tensor) or index.numel() == 0):
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    check_gather_index(name, x, d, index, src if isinstance(src, Tensor) else None)
    return d


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None, reduce=None,
            out=None) -> Tensor:
    """`input` with `src` (or the scalar `value`) written at `index` along `dim`."""
    r = _scatter(input, dim, index, src, value, reduce, apply)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_exact(r, out)


def scatter_(self: Tensor, dim: int, index: Tensor, src=None, *, value=None,
             reduce=None) -> Tensor:
    return _scatter(self, dim, index, src, value, reduce,
                    lambda *a, **k: apply_given_({"dim": dim}, *a, **k))


def _scatter(x, dim, index, src, value, reduce, run):
    if src is None:
        src = value
    d = _scatter_args("scatter", x, dim, index, src)
    if reduce is not None:
        # (PyTorch warns of the deprecated overload before it reads the reduction's name)
        if isinstance(src, Tensor):
            warn_at_user("The reduce argument of torch.scatter with Tensor src is deprecated and "
                         "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                         "instead for more reduction options.", once=True)
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if not isinstance(src, Tensor):
            src = _fill_value(src, x._dtype, "scatter")
        return run(scatter_p, x, index, src, fn=scatter_legacy_fn, dim=d, reduce=reduce)
    if isinstance(src, Tensor):
        return run(scatter_p, x, index, src, fn=scatter_fn, dim=d)
    return run(scatter_p, x, index, _fill_value(src, x._dtype, "scatter"), fn=scatter_value_fn,
               dim=d)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, *, out=None) -> Tensor:
    """`input` with `src` added at `index` along `dim` (repeated indices accumulate)."""
    d = _scatter_args("scatter_add", input, dim, index, src)
    r = apply(scatter_p, input, index, src, fn=scatter_add_fn, dim=d)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_exact(r, out)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    d = _scatter_args("scatter_add", self, dim, index, src)
    return apply_given_({"dim": dim}, scatter_p, self, index, src, fn=scatter_add_fn, dim=d)


def _scatter_reduce_args(x, dim, index, src, reduce):
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch takes these too
    if reduce not in _REDUCES:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if (x._dtype.is_complex and reduce in ("amax", "amin")) or (
            x._dtype is dt.bool_ and reduce == "mean"):
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not implemented '
                                  f"for '{type_name(x._dtype)}'")
    return _scatter_args("scatter_reduce", x, dim, index, src), reduce


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True, out=None) -> Tensor:
    """`input` with `src` reduced into it at `index` along `dim` (sum/prod/mean/amax/amin)."""
    d, kernel_reduce = _scatter_reduce_args(input, dim, index, src, reduce)
    r = apply(scatter_p, input, index, src, fn=scatter_reduce_fn, dim=d, reduce=kernel_reduce,
              include_self=bool(include_self))
    if r._grad_fn is not None:
        keep_given(r, dim=dim, reduce=reduce)
    return write_exact(r, out)


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    d, kernel_reduce = _scatter_reduce_args(self, dim, index, src, reduce)
    return apply_given_({"dim": dim, "reduce": reduce}, scatter_p, self, index, src,
                        fn=scatter_reduce_fn, dim=d, reduce=kernel_reduce,
                        include_self=bool(include_self))


TENSOR_METHODS = {
    "index_select": index_select, "index_add": index_add, "index_add_": index_add_,
    "index_copy": index_copy, "index_copy_": index_copy_, "index_fill": index_fill,
    "index_fill_": index_fill_, "index_reduce": index_reduce, "index_reduce_": index_reduce_,
    "scatter": scatter, "scatter_": scatter_,
    "scatter_add": scatter_add, "scatter_add_": scatter_add_,
    "scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_,
}

__all__ = [
    "index_select", "index_add", "index_copy", "index_fill", "index_reduce", "scatter",
    "scatter_add", "scatter_reduce",
]
