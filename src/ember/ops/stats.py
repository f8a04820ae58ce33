"""Statistics: norm, median, nanmedian, mode, quantile,
nanquantile, and dist (a composite of other ops; cov and corrcoef: covariance.py).

Order statistics (median, mode, quantile) pick elements, so their gradient flows to
the chosen positions only (a scatter / gather); an index-finding kernel does the
sorting and the values are gathered with differentiable ops.

var / std / var_mean / std_mean live in spread.py (re-exported here); the vector norm and
the full median are members of the `reduce` family;
median / nanmedian with a dim and mode are members of `pick` (see reduce.py).
"""

from __future__ import annotations

import builtins
import functools
import math
import numbers
import sys

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._layout import strided
from .._tensor import Tensor
from .._view import is_non_overlapping_and_dense
from ..amp.autocast_mode import autocast_op
from . import _complex_math, _stl_sort
from . import reduce as _reduce
from ._arg_parser_text import (
    ABSENT,
    invalid_combination,
    method_aware,
    need_dims,
    need_int,
    need_number,
    need_tensors,
)
from ._batching import front
from ._common import type_name, write_out
from ._out_checks import check_values_indices_out
from ._stable_pick import stable_pick
from .counting import cpp_double
from .reduce import (
    _LOW,
    as_namedtuple,
    c_order,
    dim_select_meta,
    evenly_distribute_vjp,
    masked_share_jvp,
    norm_dims,
    one_dim,
    pick_p,
    picker,
    reduce_lines,
    reduce_p,
    reduced_shape,
    reduction,
    return_type,
    select_vjp,
    unsqueeze_back,
)
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    defjvp,
    defvjp,
    keep_given,
    nondifferentiable,
    rename_node,
    shows,
)
from .sorting import _argsort as sort_order
from .spread import std, std_mean, var, var_mean


def _axis(a, dims):
    return dims if a.ndim else None


def _work(a):
    return a.astype(np.float32) if a.dtype in _LOW else a


def _real_meta(x, *, dims, keepdim, **_):
    return reduced_shape(x._shape, dims, keepdim), x._dtype.to_real()


# --- norm ----------------------------------------------------------------------------

def _vnorm_kernel(a, *, ord, dims, keepdim):
    if a.ndim == 0:
        return _vnorm_kernel(a.reshape(1), ord=ord, dims=(0,), keepdim=False).reshape(())
    w = _work(a)
    m = _complex_math.modulus(w) if w.dtype.kind == "c" else np.abs(w)  # (as `abs`, to the bit)
    axis = _axis(a, dims)
    if math.isinf(ord):
        if m.size == 0:
            _empty_inf_norm(a.shape, dims)
        r = (np.max if ord > 0 else np.min)(m, axis=axis, keepdims=keepdim)
    elif ord == 0:
        r = np.sum(m != 0, axis=axis, keepdims=keepdim, dtype=m.dtype)
    elif ord == 1:
        r = np.sum(m, axis=axis, keepdims=keepdim)
    elif ord == 2:
        r = np.sqrt(np.sum(np.multiply(m, m, out=m), axis=axis, keepdims=keepdim))
    else:
        with np.errstate(divide="ignore"):
            r = np.sum(m ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(r, dtype=a.real.dtype if a.dtype.kind == "c" else a.dtype)


def _empty_inf_norm(shape, dims):
    if len(dims) == len(shape):
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor "
                           "because the operation does not have an identity")
    for d in dims:
        if shape[d] == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the inf norm on the dimension {d}because "
                "this dimension is empty and the operation does not have an identity")


def _vnorm_vjp(g, out, x, *, ord, dims, keepdim):
    # PyTorch's linalg_vector_norm_backward, with safe denominators so that double
    # backward stays finite where the norm (or an element) is zero.
    from .ternary import where

    # (unsqueezed, not expanded, as PyTorch's: the per-row work stays per row)
    g = unsqueeze_back(g, x._shape, dims, keepdim)
    n = unsqueeze_back(out, x._shape, dims, keepdim)
    if ord == 0:
        return x * 0
    if ord == 1:
        return g * x.sgn()
    if math.isinf(ord):
        # NOTE: ties share the gradient equally, as for amax; a NaN element counts as one
        # of them (so a NaN norm's gradient is 0, as PyTorch's: sgn(NaN) is 0)
        a = x.abs()
        mask = ((a == n) | a.isnan()).to(g.dtype)
        return x.sgn() * ((g / mask.sum(dims, keepdim=True)) * mask)
    zero_n = n == 0
    safe_n = where(zero_n, 1, n)
    if ord == 2:
        # (as PyTorch: g * (x / n), x / n masked to +0.0 where the norm is 0, so such an
        # element takes g's sign)
        return g * where(zero_n, 0, x / safe_n)
    if ord < 1:
        zero_x = x == 0
        scaled = x.sgn() * where(zero_x, 0, where(zero_x, 1, x.abs()) ** (ord - 1))
        return scaled * g * n ** (1 - ord)
    if ord < 2:
        scaled = x.sgn() * x.abs() ** (ord - 1)
    else:
        scaled = x * x.abs() ** (ord - 2)
    return scaled * where(zero_n, 0, g / safe_n ** (ord - 1))


def _vnorm_jvp(primals, tangents, out, *, ord, dims, keepdim):
    # the gradient of the (real) norm, paired with the tangent: sum(Re(conj(grad) t))
    from .creation import ones_like

    x, t = primals[0], tangents[0]
    grad = _vnorm_vjp(ones_like(out), out, x, ord=ord, dims=dims, keepdim=keepdim)
    prod = (grad.conj() * t).real if x._dtype.is_complex else grad * t
    return prod.sum(dims, keepdim=keepdim)


_NORM_OPS = {1.0: "sum_abs", 2.0: "norm2", math.inf: "max_abs", -math.inf: "min_abs"}


def _vnorm_native(lib, a, *, ord, dims, keepdim):
    """vector_norm of ord 1, 2 or +-inf in one pass (csrc/reduce.c): the values the NumPy
    kernel reduces (|v|, or v * v: |v| * |v| to the bit), in its order, so its bits."""
    op = _NORM_OPS.get(ord)
    return NotImplemented if op is None else reduce_lines(lib, a, dims, keepdim, op)


VECTOR_NORM = reduction("linalg_vector_norm", _vnorm_kernel, _real_meta)
native.register(VECTOR_NORM, "reduce", _vnorm_native, min_size=(vars(_reduce), "_NATIVE_MIN"))
defvjp(VECTOR_NORM, _vnorm_vjp, save_output=True)
defjvp(VECTOR_NORM, _vnorm_jvp)


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """`linalg.vector_norm`: (sum |x|^ord)^(1/ord) over `dim` (all dims when None)."""
    if x._dtype._kind < 2:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {type_name(x._dtype)}")
    if dtype is not None:
        x = _cast_for_norm(x, dtype)
    if dim is not None and dim.__class__ is not int:
        need_dims(dim, "linalg_vector_norm", "dim", 3, method=False)
    given_ord, ord = ord, float(need_number(ord, "linalg_vector_norm", "ord", 2, method=False))
    dims = norm_dims((dim,) if isinstance(dim, int) else dim, x.ndim)
    if (ord < 0 or ord == float("inf")) and x.ndim and any(x._shape[d] == 0 for d in dims):
        # a max / min / negative power over nothing has no value to start from
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                           "tensor because the operation does not have an identity")
    r = apply(reduce_p, x, fn=VECTOR_NORM, ord=ord, dims=dims, keepdim=keepdim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim, ord=given_ord)
    return r


def _cast_for_norm(x: Tensor, dtype) -> Tensor:
    if dtype._kind < 2:
        raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                           f"but got {type_name(dtype)}")
    if x._dtype.is_complex and not dtype.is_complex:
        raise RuntimeError("linalg.vector_norm: dtype should be complex for complex inputs, "
                           f"but got {type_name(dtype)}")
    if not dt.can_cast(x._dtype, dtype) or (
            dt.promote_types(x._dtype, dtype) is not dtype):
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({type_name(x._dtype)}) should be "
            f"convertible without narrowing to the specified dtype ({type_name(dtype)})")
    return x.to(dtype)


def _matrix_norm(x: Tensor, p, dims, keepdim: bool, dtype) -> Tensor:
    """torch.norm's matrix branch ('nuc', or errors): `linalg.matrix_norm` does the work."""
    from ..linalg import matrix_norm

    if x._dtype in (dt.float16, dt.bfloat16) and p == "nuc":
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. "
                           f"Got {type_name(x._dtype)}")
    return matrix_norm(x, p, dims, keepdim, dtype=dtype)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, out=None,
         dtype=None) -> Tensor:
    """`torch.norm`: a vector p-norm ('fro' is the 2-norm), or the nuclear norm ('nuc')."""
    # (torch's Python norm reads `input.layout` first: a non-tensor fails there)
    if input.layout is not strided and out is None and "norm" in type(input).__dict__:
        return input.norm(p, dim, keepdim, dtype=dtype)  # (a sparse layout's own norm)
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            r = vector_norm(input, 2, dims, keepdim, dtype=dtype)
        else:
            dims = list(range(input.ndim)) if dims is None else dims
            r = _matrix_norm(input, p, list(dims), keepdim, dtype)
    else:
        r = vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)
    return write_out(r, out)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float, *, out=None) -> Tensor:
    """Each slice along `dim` whose p-norm exceeds `maxnorm` scaled to norm ~maxnorm: by
    maxnorm / (norm + 1e-7), for 16-bit floats the norm taken in float32 and the factor
    rounded to the input's dtype, as PyTorch does."""
    from .._view import wrap_dim
    from .binary import div
    from .ternary import where

    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    d = wrap_dim(dim, input.ndim)
    wide = dt.float32 if input._dtype in (dt.float16, dt.bfloat16) else None
    dims = [i for i in range(input.ndim) if i != d]
    norm = vector_norm(input, p, dims, True, dtype=wide)
    if input.requires_grad and grad_mode.state.enabled:
        # (PyTorch's gradient of a slice left as it is, a NaN one too, is the gradient
        # itself: such a slice's norm is taken again on zeros, so that no NaN of its norm's
        # derivative meets the zero that `where` sends it)
        norm = vector_norm(where(norm.detach() > maxnorm, input, 0.0), p, dims, True,
                           dtype=wide)
    # NOTE: PyTorch's kernel divides maxnorm by the norm (one rounding), where the Python
    # `maxnorm / tensor` takes a reciprocal then multiplies (two), an ulp apart
    scale = div(norm.new_full((), maxnorm), norm + 1e-7)
    factor = where(norm > maxnorm, scale, 1.0)
    if wide is not None:  # (the factor is rounded to the input's dtype before the product)
        factor = factor.to(input._dtype)
    return write_out(shows(input * factor, "RenormBackward0", dim=dim, maxnorm=maxnorm, p=p,
                           self=input), out)


def renorm_(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In-place `renorm` (computed from a copy, so the gradient sees the old values)."""
    old = self.clone()
    self.copy_(renorm(old, p, dim, maxnorm))
    if self.grad_fn is not None and type(self.grad_fn).__name__ == "CopyBackwards":
        # (PyTorch's in-place node, which saves the values it overwrote)
        shows(self, "RenormBackward0", dim=dim, maxnorm=maxnorm, p=p, self=old)
    return self


# --- median / nanmedian / mode ------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _all_nan_pick(n: int) -> int:
    """The index nanmedian(dim) returns for an all-NaN slice of length n."""
    q = list(range(n))
    _stl_sort.nth_element(q, 0, 0, n, lambda i, j: False)
    return q[0]


def _median_index(a, axis: int, ignore_nan: bool):
    """Index (kept dim) of the lower median along `axis`; NaN handling as in PyTorch."""
    w = _work(a)
    n = a.shape[axis]
    if w.dtype.kind != "f":
        return stable_pick(w, (n - 1) // 2, axis)
    nan = np.isnan(w)
    if ignore_nan:
        nans = nan.sum(axis, keepdims=True)
        k = np.maximum((n - nans - 1) // 2, 0)
        # NOTE: PyTorch's nth_element treats NaNs as all equivalent, so an all-NaN slice
        # answers wherever libstdc++'s introselect leaves position 0 (it depends on n only).
        return np.where(nans == n, _all_nan_pick(n), stable_pick(w, k, axis))
    idx = stable_pick(w, (n - 1) // 2, axis)
    # NOTE: a slice holding NaN has median NaN, at its first NaN (as PyTorch).
    return np.where(nan.any(axis, keepdims=True), np.argmax(nan, axis, keepdims=True), idx)


def _median_all_kernel(ignore_nan: bool):
    def kernel(a, *, dims, keepdim):
        """The median over `dims` (every dim for median(); fewer under vmap)."""
        keep = [d for d in range(a.ndim) if d not in dims]
        n = math.prod(a.shape[d] for d in dims) if a.ndim else 1
        rows = a.transpose(keep + list(dims)).reshape([a.shape[d] for d in keep] + [n])
        if n == 0:
            fill = np.nan if a.dtype.kind == "f" or a.dtype in _LOW else np.iinfo(a.dtype).min
            r = np.full(rows.shape[:-1], fill, dtype=a.dtype)
        else:
            r = _row_median(rows, ignore_nan) if rows.size == n else None
            if r is None:
                r = np.take_along_axis(rows, _median_index(rows, rows.ndim - 1, ignore_nan),
                                       axis=-1)[..., 0]
            if not keep:
                r = _zero_as_nth_element(r, _in_memory_order(a), ignore_nan)
        return r.reshape(reduced_shape(a.shape, dims, True)) if keepdim and a.ndim else r

    return kernel


def _row_median(rows: np.ndarray, ignore_nan: bool) -> np.ndarray | None:
    """The lower median of one row by selection rather than a sort (the value at the sorted
    middle, which ties cannot change; the sign of a zero median is settled after), or None
    for an all-NaN row under nanmedian (its NaN is the one nth_element leaves)."""
    w = _work(rows.reshape(-1))
    nan = np.isnan(w) if w.dtype.kind == "f" else None
    if nan is not None and nan.any():
        if not ignore_nan:  # (the first NaN, as PyTorch)
            return rows.reshape(-1)[np.argmax(nan)].reshape(rows.shape[:-1])
        w = w[~nan]
        if not w.size:
            return None
    k = (w.size - 1) // 2
    return np.partition(w, k)[k].astype(rows.dtype).reshape(rows.shape[:-1])


def _in_memory_order(a: np.ndarray) -> np.ndarray:
    """`a`'s elements in the order PyTorch's clone of it holds them: its memory order when
    it covers its memory densely (clone keeps those strides), else row-major."""
    strides = [st // a.itemsize for st in a.strides]
    if a.ndim < 2 or not is_non_overlapping_and_dense(a.shape, strides):
        return a.reshape(-1)
    order = sorted(range(a.ndim), key=lambda d: (-strides[d], d))
    return a.transpose(order).reshape(-1)


def _zero_as_nth_element(r: np.ndarray, flat: np.ndarray, ignore_nan: bool) -> np.ndarray:
    """The full median `r` (0-d) with the sign of zero that PyTorch's kernel returns."""
    # NOTE: PyTorch's median() runs std::nth_element on a copy of the values (NaN last):
    # when the median is zero and both -0.0 and 0.0 occur, which one lands in the middle
    # is up to its steps, so they are replayed (only then: nowhere else can ties differ).
    w = _work(flat)
    if w.dtype.kind != "f" or r != 0 or not ignore_nan and np.isnan(w).any():
        return r
    zeros = np.signbit(w[w == 0])
    if zeros.all() or not zeros.any():
        return r
    q = w.tolist()
    k = (len(q) - int(np.isnan(w).sum()) - 1) // 2
    _stl_sort.nth_element(q, 0, k, len(q), lambda x, y: x < y or (y != y and x == x))
    return np.copysign(r, q[k]).astype(r.dtype)


def _median_dim_kernel(ignore_nan: bool):
    name = "nanmedian" if ignore_nan else "median"

    def kernel(a, *, dim, keepdim, in_shape=None):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        if a.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        idx = _median_index(a, dim, ignore_nan)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            vals, idx = vals.squeeze(dim), idx.squeeze(dim)
        return vals, idx.astype(np.int64)

    return c_order(kernel)


# NOTE: a full median's gradient is shared by all elements equal to it (torch's
# evenly_distribute_backward); with `dim` it goes to the returned index.
def _median_all_jvp(primals, tangents, out, *, dims, keepdim):
    return masked_share_jvp(tangents[0], primals[0], out, dims, keepdim, nan_ties=True)


MEDIAN = reduction("median", _median_all_kernel(False))
NANMEDIAN = reduction("nanmedian", _median_all_kernel(True))
for _m in (MEDIAN, NANMEDIAN):
    defvjp(_m, evenly_distribute_vjp, save_output=True)
    defjvp(_m, _median_all_jvp)
MEDIAN_DIM = picker("median_dim", _median_dim_kernel(False), dim_select_meta, select_vjp,
                    grad_name="MedianBackward1")
NANMEDIAN_DIM = picker("nanmedian_dim", _median_dim_kernel(True), dim_select_meta, select_vjp,
                       grad_name="NanmedianBackward1")

median_result = return_type("median", ["values", "indices"])
nanmedian_result = return_type("nanmedian", ["values", "indices"])
mode_result = return_type("mode", ["values", "indices"])


def _check_orderable(x: Tensor, kernel: str, allow_bool: bool = False) -> None:
    if x._dtype.is_complex or (x._dtype is dt.bool_ and not allow_bool):
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{type_name(x._dtype)}\'')


def _median_like(result, name: str, ignore_nan: bool):
    def op(input: Tensor, dim=ABSENT, keepdim: bool = False, *, out=None):
        if dim is ABSENT and out is not None:  # (the full median has no out=: only `dim`'s)
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        # (a None dim is refused too: no overload takes it)
        dim = None if dim is ABSENT else need_int(dim, name, "dim", 2)
        d = None if dim is None else one_dim(dim, builtins.max(input.ndim, 1), name)
        if d is not None and input.ndim and input._shape[d] == 0:  # before the dtype check
            # (nanmedian's message names median, as ATen's shared check does)
            raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
        # (ATen names the kernel of the full median median_cpu, of the per-dim one median_out)
        _check_orderable(input, "median_cpu" if dim is None else "median_out")
        if dim is None:
            r = apply(reduce_p, input, fn=NANMEDIAN if ignore_nan else MEDIAN,
                      dims=tuple(range(input.ndim)), keepdim=False)
            return write_out(r, out)
        check_values_indices_out(input, out, "median", name)
        r = apply(pick_p, input, fn=NANMEDIAN_DIM if ignore_nan else MEDIAN_DIM, dim=d,
                  keepdim=keepdim, in_shape=input._shape)
        if r[0]._grad_fn is not None:
            keep_given(r, dim=dim)
        return as_namedtuple(result, r, out)

    op.__name__ = name
    op.__doc__ = (f"The lower median{' ignoring NaN' if ignore_nan else ''}; with `dim`, a "
                  "(values, indices) named tuple. The gradient goes to the chosen element.")
    return method_aware(op)


median = _median_like(median_result, "median", False)
nanmedian = _median_like(nanmedian_result, "nanmedian", True)


def _mode_kernel(a, *, dim, keepdim, in_shape=None):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    if a.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    moved = np.moveaxis(a, dim, -1)
    lead, n = moved.shape[:-1], moved.shape[-1]
    idx = _mode_positions(_work(moved).reshape(-1, n)).reshape(lead + (1,))
    vals = np.take_along_axis(moved, idx, axis=-1)
    idx, vals = np.moveaxis(idx, -1, dim), np.moveaxis(vals, -1, dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx.astype(np.int64)


def _mode_positions(rows: np.ndarray) -> np.ndarray:
    """Where in each row PyTorch's CPU mode kernel finds the mode: it `std::sort`s the
    (value, position) pairs on `value <`, takes the first of the longest runs of values
    equal under `!=` (so the smallest value among ties, and NaNs never repeat), and reports
    the position of that run's last pair, which depends on how std::sort left the ties."""
    n = rows.shape[1]
    order = np.empty(rows.shape, np.int64)
    has_nan = np.isnan(rows).any(axis=1) if rows.dtype.kind == "f" else np.zeros(len(rows), bool)
    clean = np.flatnonzero(~has_nan)
    if len(clean):  # (ranks order the pairs as the values do: -0.0 and 0.0 tie)
        rank = np.unique(rows[clean].ravel(), return_inverse=True)[1].reshape(len(clean), n)
        order[clean] = _stl_sort.sort_rows(rank)
    for r in np.flatnonzero(has_nan):
        # NOTE: `<` with NaN is no strict weak order, so no rank stands in: replay the pairs
        pairs = list(zip(rows[r].tolist(), range(n)))
        _stl_sort.sort(pairs, 0, n, lambda p, q: p[0] < q[0])
        order[r] = [i for _, i in pairs]
    s = np.take_along_axis(rows, order, axis=1)
    ends = np.ones(s.shape, bool)
    ends[:, :-1] = s[:, :-1] != s[:, 1:]
    pos = np.arange(n)
    last_end = np.maximum.accumulate(np.where(ends, pos, -1), axis=1)
    before = np.concatenate([np.full((len(s), 1), -1), last_end[:, :-1]], axis=1)
    run = np.where(ends, pos - before, 0)
    return np.take_along_axis(order, np.argmax(run, axis=1)[:, None], axis=1)[:, 0]


MODE = picker("mode", c_order(_mode_kernel), dim_select_meta, select_vjp)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out=None):
    """The most frequent value along `dim` (the smallest on ties) and its index."""
    d = one_dim(dim, builtins.max(input.ndim, 1), "mode")
    _check_orderable(input, "mode_cpu", allow_bool=True)
    check_values_indices_out(input, out, "mode")
    r = apply(pick_p, input, fn=MODE, dim=d, keepdim=keepdim, in_shape=input._shape)
    if r[0]._grad_fn is not None:
        keep_given(r, dim=dim)
    return as_namedtuple(mode_result, r, out)


# --- quantile ----------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_index_kernel(a, *, qs, dim, interpolation, ignore_nan):
    """Positions (lo, hi) along `dim` of each quantile, and the weight between them.

    Shapes are (len(qs),) + a.shape with `dim` kept as size 1.
    """
    n = a.shape[dim]
    # NOTE: PyTorch sorts each slice with `sort` (not stable, NaNs last): of tied -0.0 and
    # 0.0, the one that sort leaves first decides the sign of a quantile of zero
    order = sort_order(a, dim, descending=False, stable=False)
    nan = np.isnan(a)
    count = n - nan.sum(dim, keepdims=True) if ignore_nan else np.full(
        reduced_shape(a.shape, (dim,), True), n)
    q = np.asarray(qs, dtype=a.dtype).reshape((-1,) + (1,) * a.ndim)
    rank = q * np.maximum(count - 1, 0).astype(a.dtype)
    if interpolation == "nearest":
        rank = np.round(rank)  # half to even, like torch.round
    below, above = np.floor(rank), np.ceil(rank)
    if interpolation == "lower":
        above = below
    elif interpolation == "higher":
        below = above
    weight = (rank - below) if interpolation == "linear" else np.full_like(rank, 0.5)
    shape = np.broadcast_shapes(rank.shape, count.shape)
    lo = np.take_along_axis(order[None], np.broadcast_to(below.astype(np.int64), shape), dim + 1)
    hi = np.take_along_axis(order[None], np.broadcast_to(above.astype(np.int64), shape), dim + 1)
    if not ignore_nan:
        # NOTE: a slice holding NaN has quantile NaN: point both ends at a NaN.
        has_nan = nan.any(dim, keepdims=True)
        first = np.argmax(nan, dim, keepdims=True)
        lo = np.where(has_nan, first, lo)
        hi = np.where(has_nan, first, hi)
    weight = np.ascontiguousarray(np.broadcast_to(weight, shape), dtype=a.dtype)
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi), weight


def _quantile_index_meta(x, *, qs, dim, interpolation, ignore_nan):
    shape = (len(qs),) + reduced_shape(x._shape, (dim,), True)
    return (shape, dt.int64), (shape, dt.int64), (shape, x._dtype)


quantile_index_p = Primitive("quantile_index", _quantile_index_kernel, _quantile_index_meta,
                             n_outputs=3)
nondifferentiable(quantile_index_p)


def _quantile_index_batch(args, bdims, *, dim, **params):
    # the outputs lead with the quantile levels, so the batch comes second
    x = front(args[0], bdims[0])
    return bind(quantile_index_p, x, dim=dim + 1, **params), (1, 1, 1)


defbatch(quantile_index_p, _quantile_index_batch)


def _quantile_qs(input: Tensor, q, name: str):
    """The quantile levels as a tuple of floats, and whether q was a scalar."""
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._dtype is not input._dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs = tuple(float(v) for v in q.reshape(-1).tolist())
        if any(not 0 <= v <= 1 for v in qs):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        return qs, q.ndim == 0
    qv = float(q)
    if not 0 <= qv <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {cpp_double(qv)}")
    return (qv,), True


def _quantile(input, q, dim, keepdim, interpolation, out, ignore_nan, name):
    from .index import gather
    from .ternary import lerp

    if input._dtype not in (dt.float32, dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    # (ATen checks nanquantile with quantile's own checks: their messages say quantile())
    qs, scalar = _quantile_qs(input, q, "quantile")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if out is not None and out._dtype is not input._dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else one_dim(dim, builtins.max(input.ndim, 1), name)
    if x.ndim == 0:
        x = x.reshape(1)
    if x._shape[d] > 1 << 24:
        # NOTE: PyTorch refuses slices past 2**24 elements (the largest count whose ranks
        # float32 holds exactly), for float64 too and with quantile's name for nanquantile
        raise RuntimeError("quantile() input tensor is too large")
    lo, hi, w = apply(quantile_index_p, x, qs=qs, dim=d, interpolation=interpolation,
                      ignore_nan=ignore_nan)
    # NOTE: PyTorch gathers from the slices laid along the last dim, so its result keeps a
    # trailing 1 that one in-place squeeze_(-1) drops: its graph ends in SqueezeBackward4,
    # whatever q, dim and keepdim. Gather the same way: from `base`, the slices last, shaped
    # as the result (keepdim's 1s, the q levels first unless q is a scalar) plus that dim
    base = x.movedim(d, -1)
    if keepdim and input.ndim > 0:
        base = base.unsqueeze(d) if dim is not None else base.reshape((1,) * input.ndim + (-1,))
    if not scalar:
        base = base.unsqueeze(0).expand((len(qs),) + tuple(base._shape))
    where = tuple(base._shape[:-1]) + (1,)
    lo, hi, w = (t.movedim(d + 1, -1).reshape(where) for t in (lo, hi, w))
    if interpolation == "linear" and isinstance(q, Tensor) and q.requires_grad:
        w = w + _rank_slope(x, q, d, ignore_nan, where)
    r = gather(base, -1, lo)
    if interpolation in ("linear", "midpoint"):
        # NOTE: PyTorch interpolates with lerp_, whose formula changes at weight 0.5 (from
        # below, or back from above), so the last bit follows it only through lerp
        r = lerp(r, gather(base, -1, hi), w)
    # (PyTorch's squeeze_ is in place; squeeze, whose node differs in name only, also runs
    # on batched tensors under vmap, which have no storage to squeeze in place)
    r = _named(r.squeeze(-1), "SqueezeBackward4")
    return write_out(r, out)


def _rank_slope(x: Tensor, q: Tensor, d: int, ignore_nan: bool, where: tuple) -> Tensor:
    """Zero-valued, with the gradient a linear quantile's weight has in q, as PyTorch's
    (its rank is q times the slice's count less one: NaN slices of quantile, and empty
    ones of nanquantile, have a fixed rank)."""
    nan = x.isnan()
    if ignore_nan:
        slope = ((~nan).sum(d, keepdim=True) - 1).clamp(min=0).to(x._dtype)
    else:
        slope = (~nan.any(d, keepdim=True)).to(x._dtype) * (x._shape[d] - 1)
    from .ternary import where as where_

    levels = q.reshape((-1,) + (1,) * x.ndim)
    slope = slope.unsqueeze(0)
    # (masked after the product: a NaN slice's lerp sends NaN back, which PyTorch's fixed
    # rank stops)
    t = where_(slope > 0, (levels - levels.detach()) * slope, 0)
    return t.movedim(d + 1, -1).reshape(where)


_QUANTILE_TAIL = ('int dim = None, bool keepdim = False, *, str interpolation = "linear", '
                  'Tensor out = None)')
_QUANTILE_SIGS = (f"(Tensor input, Tensor q, {_QUANTILE_TAIL}",
                  f"(Tensor input, float q, {_QUANTILE_TAIL}")


def _is_int_arg(v) -> bool:
    """What torch's parser takes for an `int`: an integer (no bool) or a one-element
    tensor of an integer dtype."""
    if isinstance(v, Tensor):
        return v.ndim == 0 and v._dtype._kind == 1
    return hasattr(v, "__index__") and not isinstance(v, (bool, np.bool_))


def _quantile_fits(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Whether a (nan)quantile call fits one of torch's two overloads (q a Tensor or a real
    number: a list of levels is the usual mistake, torch wants a Tensor)."""
    return (isinstance(input, Tensor) and (isinstance(q, (Tensor, numbers.Real)))
            and (dim is None or _is_int_arg(dim)) and type(keepdim) is bool
            and isinstance(interpolation, str) and (out is None or isinstance(out, Tensor)))


def _quantile_op(ignore_nan: bool):
    """(nan)quantile from its documented signature, checking the call as torch's parser
    does: a call that fits neither overload raises its "invalid combination" words, which
    quote the arguments as passed (by position or keyword), hence the *args entry."""
    def decorate(template):
        name = template.__name__

        @functools.wraps(template)
        def op(*args, **kwargs):
            if not _fits_call(_quantile_fits, args, kwargs):
                # (the frame above is the autocast wrapper: on Tensor, Tensor.<name>)
                method = sys._getframe(1).f_code.co_qualname.startswith("Tensor.")
                if not method:
                    raise invalid_combination(name, _QUANTILE_SIGS, args, kwargs)
                sigs = tuple("(" + s[len("(Tensor input, "):].replace(", Tensor out = None)", ")")
                             for s in _QUANTILE_SIGS)
                raise invalid_combination(name, sigs, args[1:], kwargs, typed_by=_QUANTILE_SIGS)
            return _quantile_bound(ignore_nan, name, *args, **kwargs)

        return method_aware(op)

    return decorate


def _fits_call(check, args, kwargs) -> bool:
    try:
        return check(*args, **kwargs)
    except TypeError:  # a missing, repeated or unknown argument
        return False


def _quantile_bound(ignore_nan, name, input, q, dim=None, keepdim=False, *,
                    interpolation="linear", out=None):
    if isinstance(dim, Tensor):
        dim = int(dim)
    return _quantile(input, q, dim, keepdim, interpolation, out, ignore_nan, name)


@autocast_op("quantile")
@_quantile_op(ignore_nan=False)
def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear", out=None) -> Tensor:
    """The q-th quantiles along `dim` (of the flattened input when None); NaN if any NaN."""


@autocast_op("nanquantile")
@_quantile_op(ignore_nan=True)
def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear", out=None) -> Tensor:
    """`quantile` ignoring NaN (NaN only where a slice is all NaN)."""


# --- distance ---------------------------------------------------------------------

@method_aware
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    need_tensors("dist", ("input", 1, input), ("other", 2, other))
    from ..linalg import vector_norm

    diff = input - other
    if diff._dtype._kind < 2:  # (PyTorch's dist is its own kernel, with its own words)
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {type_name(diff._dtype)} instead.")
    # (PyTorch's dist node saves both operands and the result: the norm saves the last)
    r = vector_norm(diff, p)
    return shows(r, "DistBackward0", other=other, p=p, result=r, self=input)


def _named(out: Tensor, node: str) -> Tensor:
    """`out`, its graph node (if any) given the class PyTorch's one kernel for the op has."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, node)
    return out


TENSOR_METHODS = {
    "var": var, "std": std, "norm": norm, "renorm": renorm, "renorm_": renorm_,
    "median": median, "nanmedian": nanmedian,
    "mode": mode, "quantile": quantile, "nanquantile": nanquantile, "dist": dist,
}

__all__ = ["var", "std", "var_mean", "std_mean", "norm", "renorm", "median", "nanmedian",
           "mode", "quantile", "nanquantile", "dist"]
