"""Reductions: sum, mean, nansum, nanmean, prod, any / all, count_nonzero, and
`sum_to_size` (amax / amin, max / min, argmax / argmin and aminmax: extrema.py).

`dim` may be an int, a tuple or None; `keepdim` keeps reduced dims as size 1.
`dtype=` casts the input first, as PyTorch does. float16 / bfloat16 accumulate in
float32 and round once, as PyTorch's CPU kernels do. float32 / float64 sums, means and
products over one run of dims in memory order have C twins (csrc/reduce.c, through
`reduce_lines`, which amax / amin, vector_norm and logsumexp use too) with NumPy's bits.

Two families hold this area's math (and the modules above add members to them):

- `reduce_p`: one tensor reduced over `dims` (a sorted tuple; every dim for a full
  reduction) with `keepdim`: sum, mean, prod, any, count_nonzero here; amax in extrema.py;
  var, norm, median in stats.py; logsumexp in softmax.py. One batch rule serves them all.
- `pick_p`: (values, indices) whose values are elements of the input picked along one
  `dim`: max / min with a dim in extrema.py, median / mode in stats.py, sort / topk /
  kthvalue in sorting.py, cummax / cummin in scan.py. Their tangent is the input's tangent gathered
  at the indices; their gradient is scattered back through them.

A member per PyTorch node name: `x.sum()` is `fn=SUM` (SumBackward0), `x.sum(1)` is
`fn=SUM_DIMS` (SumBackward1), as PyTorch names the two overloads apart.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from .._view import numel, wrap_dim, wrap_dims
from ..amp.autocast_mode import autocast_op
from ..native import calls
from ._arg_parser_text import (
    ABSENT,
    is_dims_arg,
    is_dtype_arg,
    is_int_arg,
    method_aware,
    need_dtype,
    no_overload,
    wrong_type,
)
from ._batching import front
from ._common import (
    _MANY_ROWS,
    _SHORT_ROW,
    along,
    c_type_name,
    cast_input,
    type_name,
    write_out,
)
from ._return_types import as_namedtuple, return_type  # noqa: F401 (imported from here)
from ._size_args import dims_one_by_one
from .registry import (
    Family,
    Member,
    apply,
    bind,
    defbatch,
    defjvp,
    deflinear,
    defvjp,
    keep_given,
    nondifferentiable,
)

_LOW = (np.dtype(np.float16), dt.bfloat16.np)


# --- shared helpers (the other reduction modules use these too) ------------------------

def norm_dims(dim, ndim: int) -> tuple[int, ...]:
    """Reduced dims as a sorted tuple; None or () means every dim."""
    if dim.__class__ is int and -ndim <= dim < ndim:  # (the common call: one dim, in range)
        return (dim + ndim if dim < 0 else dim,)
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        return tuple(sorted(wrap_dims(tuple(dim), builtins.max(ndim, 1))))
    return wrap_dims((dim,), builtins.max(ndim, 1))


def one_dim(dim, ndim: int, name: str) -> int:
    """A single reduction dim (int), wrapped; TypeError for tuples as in PyTorch."""
    if isinstance(dim, (tuple, list)) or not isinstance(dim, (int, np.integer)):
        raise wrong_type(name, "dim", None, "int", dim)
    return wrap_dim(int(dim), ndim)


def reduced_shape(shape, dims, keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def unsqueeze_back(g: Tensor, in_shape, dims, keepdim: bool) -> Tensor:
    """A reduction's result or gradient with its reduced dims back as size 1 (broadcasting
    against the input, as PyTorch's unsqueeze_multiple)."""
    return g if keepdim else g.reshape(reduced_shape(in_shape, dims, True))


def expand_back(g: Tensor, in_shape, dims, keepdim: bool) -> Tensor:
    """Undo a reduction's shape change on a gradient: unsqueeze, then expand."""
    return unsqueeze_back(g, in_shape, dims, keepdim).expand(in_shape)


def _axis(a, dims):
    return dims if a.ndim else None


def c_order(kernel):
    """`kernel` with its result(s) in row-major order: PyTorch's reductions and scans
    return contiguous tensors whatever the input's layout."""
    def wrapped(*args, **params):
        r = kernel(*args, **params)
        if isinstance(r, tuple):
            return tuple(np.asarray(v, order="C") for v in r)
        return np.asarray(r, order="C")

    wrapped.__name__ = kernel.__name__
    return wrapped


def _reduce_meta(x, *, dims, keepdim, **_):
    return reduced_shape(x._shape, dims, keepdim), x._dtype


def no_complex(x: Tensor, name: str) -> None:
    if x._dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")


# --- the two families ---------------------------------------------------------------

reduce_p = Family("reduce")  # fn: a Member below (or in stats.py / softmax.py)
pick_p = Family("pick", n_outputs=2)


def reduction(name: str, kernel, meta=_reduce_meta, grad_name: str | None = None, *,
              ordered: bool = False) -> Member:
    """A member of `reduce_p`: `kernel(a, *, dims, keepdim, ...)`, its result put in
    row-major order (unless `ordered`: the kernel does that itself, on a hot path)."""
    return Member(reduce_p, name, kernel if ordered else c_order(kernel), meta,
                  grad_name=grad_name)


def _reduce_batch(args, bdims, **params):
    """vmap of a reduction: the batch axis first, the reduced dims shifted past it (a full
    reduction becomes one over all but the batch); a 0-d input is its one element."""
    x, bd = args[0], bdims[0]
    if bd is None:
        return bind(reduce_p, x, **params), None
    if params["fn"] in _ACROSS_BATCH:  # (the whole batch's truth: one unbatched answer)
        return bind(reduce_p, x, **{**params, "dims": tuple(range(x.ndim))}), None
    x = front(x, bd)
    if x.ndim == 1:
        params = {**params, "dims": (1,)}
        if "keepdim" in params:
            params["keepdim"] = False
        return bind(reduce_p, x.unsqueeze(1), **params), 0
    params = {**params, "dims": tuple(d + 1 for d in params["dims"])}
    return bind(reduce_p, x, **params), 0


defbatch(reduce_p, _reduce_batch)


def _pick_batch(args, bdims, **params):
    """vmap of a (values, indices) op along `dim`: batch first, `dim` (and the `in_shape`
    the VJP reads) shifted; a 0-d input as a row of one."""
    x, bd = args[0], bdims[0]
    if bd is None:
        return bind(pick_p, x, **params), (None, None)
    x = front(x, bd)
    scalar = x.ndim == 1
    if scalar:
        x = x.unsqueeze(1)
    params = {**params, "dim": 1 if scalar else params["dim"] + 1}
    if "in_shape" in params:
        params["in_shape"] = x._shape
    out = bind(pick_p, x, **params)
    if scalar:
        out = tuple(o.reshape(o._shape[:1]) for o in out)
    return out, (0, 0)


defbatch(pick_p, _pick_batch)


def pick_jvp(primals, tangents, out, *, dim, keepdim=True, **_):
    """The tangent of picked values: the input's tangent gathered at the indices."""
    t = tangents[0]
    if t is None or t.ndim == 0:
        return t, None
    idx = out[1]
    if not keepdim:
        return t.gather(dim, idx.unsqueeze(dim)).squeeze(dim), None
    return t.gather(dim, idx), None


def picker(name: str, kernel, meta, vjp, grad_name: str | None = None, *,
           saves_input: bool = False) -> Member:
    """A member of `pick_p` with its kernel, meta rule, VJP (reading the indices and the
    `in_shape` param) and the gathered tangent. As in PyTorch, the node saves the indices
    and not the values, so an in-place op on the values (`x.sort().values.relu_()`) leaves
    backward intact; `saves_input` keeps the input too, where PyTorch's formula names it
    (cummax, cummin), so an in-place op on the input is refused as there."""
    m = Member(pick_p, name, kernel, meta, grad_name=grad_name)
    defvjp(m, vjp, reads=((0,) if saves_input else (),), save_output=(1,))
    defjvp(m, pick_jvp)
    return m


def masked_share_jvp(t: Tensor, x: Tensor, out: Tensor, dims, keepdim: bool,
                     nan_ties: bool = False) -> Tensor:
    """Tangent of a reduction that picks a value (amax, a full median): the tangent of
    the elements equal to the result, shared equally as the gradient is."""
    from .ternary import where

    o = expand_back(out, x._shape, dims, keepdim)
    mask = where(o != o, x != x, x == o) if nan_ties else x == o
    mask = mask.to(t.dtype)
    return (t * mask).sum(dims, keepdim=keepdim) / mask.sum(dims, keepdim=keepdim)


# --- sum / nansum / mean ---------------------------------------------------------------

def _sum_kernel(a, *, dims, keepdim):
    # NOTE: the hot path (x.sum(), losses, the engine's broadcast undo): in row-major order
    # here rather than through `c_order`, the axis inline
    axis = dims if a.ndim else None
    if a.dtype in _LOW:
        return np.asarray(np.sum(a, axis=axis, keepdims=keepdim, dtype=np.float32),
                          order="C").astype(a.dtype)
    # (the ufunc method: np.sum's Python wrapper costs more than a small reduction)
    return np.asarray(along(np.add.reduce, a, axis, keepdim, dtype=a.dtype), order="C")


def _sum_vjp(g, out, x, *, dims, keepdim, in_shape):
    return expand_back(g, in_shape, dims, keepdim)


# csrc/reduce.c's op codes (its OP_* enum, in order)
_REDUCE_OPS = {op: i for i, op in enumerate(
    ("sum", "mean", "prod", "sum_abs", "norm2", "max", "min", "max_abs", "min_abs"))}


def _as_lines(a, dims, outer_min: int = 1):
    """(`a` in C order, the permutation that made it so or None, outer, n, inner) when the
    reduced `dims` are one run of dims of a C-order array (or of a permuted one, read in
    memory order) with at least `outer_min` blocks of them: the (outer, n, inner) form
    csrc/reduce.c reduces; else None."""
    if a.ndim == 0 or a.size == 0:
        return None
    perm = None
    shape = a.shape
    if not a.flags.c_contiguous:
        # (a permutation of a C-order array, e.g. a transposed matrix: its dims in memory
        # order, as NumPy's reduction walks it)
        nd = a.ndim
        if a.flags.f_contiguous:
            perm = range(nd - 1, -1, -1)
            dims = sorted(nd - 1 - d for d in dims)
            shape = shape[::-1]
        else:
            perm = sorted(range(nd), key=lambda d: -a.strides[d])
            dims = sorted(perm.index(d) for d in dims)
            shape = tuple(shape[d] for d in perm)
    k0, k1 = dims[0], dims[-1] + 1
    outer = math.prod(shape[:k0]) if k0 else 1
    if k1 - k0 != len(dims) or outer < outer_min:
        return None
    if perm is not None:
        a = a.transpose(perm)
        if not a.flags.c_contiguous:
            return None
    return a, perm, outer, math.prod(shape[k0:k1]), math.prod(shape[k1:])


def reduce_lines(lib, a, dims, keepdim: bool, op: str, outer_min: int = 1):
    """`a` reduced over `dims` by csrc/reduce.c's `op` (a key of _REDUCE_OPS), for a float32
    / float64 `a` whose reduced dims are one run in memory order, with at least `outer_min`
    blocks of them; else NotImplemented."""
    sfx = calls.SUFFIX.get(a.dtype)
    got = None if sfx is None else _as_lines(a, dims, outer_min)
    if got is None:
        return NotImplemented
    c, perm, outer, n, inner = got
    out = np.empty(outer * inner, a.dtype)
    calls.entry(lib, f"ember_reduce_{sfx}", [calls.P, calls.P, calls.I64, calls.I64,
                                             calls.I64, calls.INT])(
        calls.ptr(c), calls.ptr(out), outer, n, inner, _REDUCE_OPS[op])
    if perm is not None:  # (the result's dims in memory order, back to the input's)
        kept_perm = [d for d in perm if d not in dims]
        out = out.reshape([a.shape[d] for d in kept_perm])
        out = np.ascontiguousarray(out.transpose(np.argsort(kept_perm)))
    return out.reshape(reduced_shape(a.shape, dims, keepdim))


def short_rows(a, dims) -> bool:
    """Whether `along` reduces `a` over `dims` down the columns of a transposed copy (many
    rows of a short last dim): faster there than csrc/reduce.c's lines, one at a time."""
    return (a.ndim >= 2 and dims == (a.ndim - 1,) and a.shape[-1] <= _SHORT_ROW
            and a.size >= _MANY_ROWS * a.shape[-1] and a.flags.c_contiguous)


def _reduce_native(op: str):
    """The native twin (csrc/reduce.c) of the sum, mean or prod kernel: NumPy's order of
    operations for the layout, so its bits (`reduce_lines`)."""
    def kernel(lib, a, *, dims, keepdim):
        if op == "prod" and math.prod(n for d, n in enumerate(a.shape) if d not in dims) == 1:
            return NotImplemented  # (one product in order: one chain, as fast in NumPy)
        if op != "prod" and short_rows(a, dims):
            return NotImplemented  # (`along` sums these short rows down columns, in order)
        return reduce_lines(lib, a, dims, keepdim, op)

    kernel.__name__ = f"_{op}_native"
    return kernel


SUM = reduction("sum", _sum_kernel, grad_name="SumBackward0", ordered=True)  # everything
SUM_DIMS = reduction("sum_dims", _sum_kernel, grad_name="SumBackward1", ordered=True)
_NATIVE_MIN = 1 << 14  # fewer elements: NumPy's one call costs less than the C call's setup
for _m in (SUM, SUM_DIMS):
    native.register(_m, "reduce", _reduce_native("sum"), min_size=(globals(), "_NATIVE_MIN"))
for _m in (SUM, SUM_DIMS):
    defvjp(_m, _sum_vjp, reads=((),), in_shape=True)
    deflinear(_m)


def _cast_for_sum(x: Tensor, dtype, out=None, fname: str = "sum") -> Tensor:
    """`x` in the dtype a sum-like reduction works in: `dtype`, else `out`'s (PyTorch casts
    the input to it first: floats summed into a long `out` are truncated), else int64."""
    if dtype is not None and dtype.__class__ is not dt.dtype:
        dtype = need_dtype(dtype, fname)
    if isinstance(out, Tensor):
        if dtype is not None and out._dtype is not dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(dtype)}, but "
                               f"got {c_type_name(out._dtype)} instead")
        dtype = out._dtype
    d = dtype if dtype is not None else (dt.int64 if x._dtype._kind < 2 else x._dtype)
    return x if x._dtype is d else cast_input(x, d, out)


class _EveryDim:
    """The default `dim` of sum and mean: PyTorch's `x.sum()` and `x.sum(None)` are two
    overloads, their nodes SumBackward0 and SumBackward1 (whose `_saved_dim` is None)."""

    def __repr__(self) -> str:
        return "<every dim>"


EVERY_DIM = _EveryDim()


def _fits_dims(name: str, input, dim, dtype, out, one: bool = False) -> None:
    """The parser's "invalid combination" TypeError when `dim` (left out: EVERY_DIM or
    ABSENT; `one`: an int, else a "tuple of ints") or `dtype` fits none of the reduction's
    overloads."""
    if dim is EVERY_DIM or dim is ABSENT or (is_int_arg(dim) if one else
                                             is_dims_arg(dim, head=True)):
        if is_dtype_arg(dtype):
            return
    args = (input,) if dim is EVERY_DIM or dim is ABSENT else (input, dim)
    raise no_overload(name, args, {"dtype": dtype, "out": out})


@method_aware
def sum(input: Tensor, dim=EVERY_DIM, keepdim: bool = False, *, dtype=None,
        out=None) -> Tensor:
    """Sum over `dim` (all dims when None or left out); ints and bool sum to int64."""
    if isinstance(dim, dt.dtype):  # (`x.sum(torch.float64)`: the dtype, positionally)
        dim, dtype = EVERY_DIM, dim
    if not (dim.__class__ is int or dim is EVERY_DIM) or dtype is not None:
        _fits_dims("sum", input, dim, dtype, out)
    x = _cast_for_sum(input, dtype, out)
    if dim is EVERY_DIM:
        return write_out(apply(reduce_p, x, fn=SUM, dims=norm_dims(None, x.ndim),
                               keepdim=keepdim), out)
    r = apply(reduce_p, x, fn=SUM_DIMS, dims=norm_dims(dim, x.ndim), keepdim=keepdim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def sum_to_size(x: Tensor, *size) -> Tensor:
    """Sum `x` down to `size` (the shape it was broadcast from); the engine relies on this."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(n) for n in size)
    if x._shape == size:
        return x
    lead = x.ndim - len(size)
    if lead < 0 or builtins.any(n != 1 and n != x._shape[i + lead] for i, n in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(x._shape)}}}.")
    inner = tuple(i + lead for i, n in enumerate(size) if n == 1 and x._shape[i + lead] != 1)
    # The dims are sorted and in range already, so the primitive runs without `sum`'s
    # argument parsing. PyTorch sums with kept dims, then views away the leading ones
    # (its graph: SumBackward1, then ViewBackward0), and to a 0-d size with a plain full
    # sum; without a graph to record, leading dims alone are summed away directly (the
    # same numbers, one op fewer).
    x = _cast_for_sum(x, None)
    keep = bool(inner) or (0 < lead < x.ndim and grad_mode.state.enabled and x._requires_grad)
    r = apply(reduce_p, x, fn=SUM_DIMS if size else SUM, dims=tuple(range(lead)) + inner,
              keepdim=keep)
    return r.reshape(size) if keep and r._shape != size else r


def _nansum_kernel(a, *, dims, keepdim):
    if a.dtype in _LOW:  # (in float32: NumPy's nansum sees no NaN in ml_dtypes' bfloat16)
        return np.nansum(a.astype(np.float32), axis=_axis(a, dims),
                         keepdims=keepdim).astype(a.dtype)
    return np.asarray(np.nansum(a, axis=_axis(a, dims), keepdims=keepdim, dtype=a.dtype))


NANSUM = reduction("nansum", _nansum_kernel)
defvjp(NANSUM, lambda g, out, x, *, dims, keepdim:
       (expand_back(g, x._shape, dims, keepdim) * (x == x)))
defjvp(NANSUM, lambda primals, tangents, out, *, dims, keepdim: apply(
    reduce_p, tangents[0] * (primals[0] == primals[0]), fn=NANSUM, dims=dims, keepdim=keepdim))


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Sum treating NaN as zero."""
    if input._dtype.is_complex:
        norm_dims(dim, input.ndim)  # an out-of-range dim is reported first
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is not None and dtype.is_complex:
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{type_name(dtype)}'")
    x = _cast_for_sum(input, dtype, out, "nansum")
    if dtype is None and x._dtype._kind < 2 and input._dtype._kind >= 2:  # (from out=)
        raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{type_name(x._dtype)}'")
    r = apply(reduce_p, x, fn=NANSUM, dims=norm_dims(dim, x.ndim), keepdim=keepdim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def _mean_kernel(a, *, dims, keepdim):
    if a.size == 0:  # NaN, without NumPy's "mean of empty slice" warning
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.sum(a, axis=_axis(a, dims), keepdims=keepdim, dtype=a.dtype)
            return np.asarray(total / a.dtype.type(0), dtype=a.dtype, order="C")
    axis = dims if a.ndim else None
    if a.dtype in _LOW:
        return np.asarray(np.mean(a, axis=axis, keepdims=keepdim, dtype=np.float32),
                          order="C").astype(a.dtype)
    return np.asarray(along(np.mean, a, axis, keepdim, dtype=a.dtype), order="C")


def _mean_vjp(g, out, x, *, dims, keepdim, in_shape):
    n = numel([in_shape[d] for d in dims]) if in_shape else 1
    # (expanded, then divided, as PyTorch's MeanBackward: a fresh row-major gradient, where
    # `g / n` expanded would be a broadcast view that `.grad` copies into the leaf's strides)
    return expand_back(g, in_shape, dims, keepdim) / n


MEAN = reduction("mean", _mean_kernel, grad_name="MeanBackward0", ordered=True)  # everything
MEAN_DIMS = reduction("mean_dims", _mean_kernel, grad_name="MeanBackward1", ordered=True)
for _m in (MEAN, MEAN_DIMS):
    native.register(_m, "reduce", _reduce_native("mean"), min_size=(globals(), "_NATIVE_MIN"))
    defvjp(_m, _mean_vjp, reads=((),), in_shape=True)
    deflinear(_m)


@method_aware
def mean(input: Tensor, dim=EVERY_DIM, keepdim: bool = False, *, dtype=None,
         out=None) -> Tensor:
    """Mean over `dim` (all dims when None or left out); integer inputs raise unless a
    floating `dtype` is given (as torch)."""
    if isinstance(dim, dt.dtype):
        dim, dtype = EVERY_DIM, dim
    if not (dim.__class__ is int or dim is EVERY_DIM) or dtype is not None:
        _fits_dims("mean", input, dim, dtype, out)
    d = input._dtype if dtype is None else need_dtype(dtype, "mean")
    if d._kind < 2:
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            "mean(): could not infer output dtype. "
            f"{which} dtype must be either a floating point or complex dtype. Got: {type_name(d)}"
        )
    x = input if input._dtype is d else input.to(d)
    if dim is EVERY_DIM:
        return write_out(apply(reduce_p, x, fn=MEAN, dims=norm_dims(None, x.ndim),
                               keepdim=keepdim), out)
    r = apply(reduce_p, x, fn=MEAN_DIMS, dims=norm_dims(dim, x.ndim), keepdim=keepdim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    """Mean of the non-NaN elements (a composite: nansum / count, as in PyTorch, so that a
    complex input is refused by nansum)."""
    if input._dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if input._dtype._kind != 2:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {type_name(input._dtype)}")
    count = (input == input).sum(dim, keepdim=keepdim)
    return write_out(nansum(input, dim, keepdim, dtype=dtype) / count, out)


# --- prod ----------------------------------------------------------------------------

def _prod_kernel(a, *, dims, keepdim):
    if a.dtype in _LOW:
        return np.prod(a, axis=_axis(a, dims), keepdims=keepdim, dtype=np.float32).astype(a.dtype)
    return np.asarray(np.prod(a, axis=_axis(a, dims), keepdims=keepdim, dtype=a.dtype))


def _prod_vjp(g, out, x, *, dims, keepdim):
    # NOTE: each element's gradient is the product of all the other elements, from
    # exclusive cumulative products taken from both ends: exact with any number of zeros,
    # differentiable again, and the same work whatever the values (no rule reads data;
    # PyTorch divides out / x when it finds no zero, which can differ in the last bit).
    g = expand_back(g, x._shape, dims, keepdim)
    if x.numel() == 0 or x.ndim == 0:
        return g
    others = _others(x, dims)
    return g * (others.conj() if x._dtype.is_complex else others)


def _prod_jvp(primals, tangents, out, *, dims, keepdim):
    x, t = primals[0], tangents[0]
    if x.numel() == 0 or x.ndim == 0:
        return t.sum(dims, keepdim=keepdim) * 0 if x.numel() == 0 else t
    return (t * _others(x, dims)).sum(dims, keepdim=keepdim)


def _others(x: Tensor, dims) -> Tensor:
    """For each element, the product of the other elements it is reduced with."""
    if len(dims) == 1:
        return _others_product(x, dims[0])
    keep = [d for d in range(x.ndim) if d not in dims]
    moved = x.permute(keep + list(dims))
    flat = moved.reshape(moved._shape[:len(keep)] + (-1,))
    return _others_product(flat, len(keep)).reshape(moved._shape).permute(
        [(keep + list(dims)).index(d) for d in range(x.ndim)])


def _others_product(x: Tensor, d: int) -> Tensor:
    """For each element, the product of the other elements of its slice along `d`."""
    from .creation import ones
    from .join import cat, flip
    from .scan import cumprod

    n = x._shape[d]
    one = ones(reduced_shape(x._shape, (d,), True), dtype=x._dtype, device=x.device)
    before = cumprod(cat([one, x.narrow(d, 0, n - 1)], d), d)
    after = flip(cumprod(cat([one, flip(x.narrow(d, 1, n - 1), (d,))], d), d), (d,))
    return before * after


PROD = reduction("prod", _prod_kernel, grad_name="ProdBackward0")  # over everything
PROD_DIM = reduction("prod_dim", _prod_kernel, grad_name="ProdBackward1")
for _m in (PROD, PROD_DIM):
    # (the rule reads no result, but PyTorch's prod_backward does, so its node saves the
    # result: an in-place op on it makes backward raise there, and here too)
    native.register(_m, "reduce", _reduce_native("prod"), min_size=(globals(), "_NATIVE_MIN"))
    defvjp(_m, _prod_vjp, save_output=True)
    defjvp(_m, _prod_jvp)


def prod_dims(x: Tensor, dims) -> Tensor:
    """Product over several dims with keepdim (a helper for VJPs)."""
    return apply(reduce_p, x, fn=PROD_DIM, dims=tuple(dims), keepdim=True)


@autocast_op("prod")
def prod(input: Tensor, dim=ABSENT, keepdim: bool = False, *, dtype=None,
         out=None) -> Tensor:
    """Product over one dim (or all); ints and bool multiply in int64."""
    if isinstance(dim, dt.dtype):
        dim, dtype = ABSENT, dim
    if not (dim.__class__ is int or dim is ABSENT) or dtype is not None:
        _fits_dims("prod", input, dim, dtype, out, one=True)
    x = _cast_for_sum(input, dtype, out, "prod")
    if dim is ABSENT:
        return write_out(apply(reduce_p, x, fn=PROD, dims=tuple(range(x.ndim)),
                               keepdim=False), out)
    d = one_dim(dim, builtins.max(x.ndim, 1), "prod")
    r = apply(reduce_p, x, fn=PROD_DIM, dims=(d,), keepdim=keepdim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


# --- shared by the reductions that pick elements (extrema.py, stats.py) ---------------

def amax_vjp(g, out, x, *, dims, keepdim, nan_ties=False):
    """VJP of amax / amin: the elements equal to the result share the gradient."""
    # NOTE: ties share the gradient equally, as in PyTorch's amax/amin backward. For a NaN
    # result amax's gradient is NaN (no input equals it), while max()'s counts every NaN
    # input as a tie (torch's evenly_distribute_backward).
    from .ternary import where

    in_shape = x._shape
    o = expand_back(out, in_shape, dims, keepdim)
    mask = where(o != o, x != x, x == o) if nan_ties else x == o
    mask = mask.to(g.dtype)
    count = mask.sum(dims, keepdim=True)
    return expand_back(g, in_shape, dims, keepdim) * mask / count


def evenly_distribute_vjp(g, out, x, *, dims, keepdim, **_):
    """VJP of a full reduction that picks a value (max(), median()): equal elements share
    the gradient, and a NaN result is shared by the NaN inputs (torch's rule)."""
    return amax_vjp(g, out, x, dims=dims, keepdim=keepdim, nan_ties=True)


def dim_select_meta(x, *, dim, keepdim, **_):
    """Meta rule of a (values, indices) reduction along one dim."""
    shape = reduced_shape(x._shape, (dim,), keepdim) if x.ndim else ()
    return (shape, x._dtype), (shape, dt.int64)


def select_vjp(g, out, x, *, dim, keepdim, in_shape, **_):
    """VJP of a (values, indices) reduction: the gradient goes to the selected index.

    Such primitives take `in_shape` (the input's shape) so the input need not be saved.
    """
    from .index import scatter_into_zeros

    gv, _ = g
    idx = out[1].detach()  # NOTE: under create_graph the engine re-attaches every output
    if not in_shape:
        return gv
    if not keepdim:
        gv, idx = gv.unsqueeze(dim), idx.unsqueeze(dim)
    return scatter_into_zeros(in_shape, dim, idx, gv)


# --- any / all / count_nonzero -----------------------------------------------------------

def _truth_kernel(fn):
    def kernel(a, *, dims, keepdim):
        r = np.asarray(fn(a != 0, axis=_axis(a, dims), keepdims=keepdim))
        return r.astype(np.uint8) if a.dtype == np.uint8 else r

    return kernel


def _truth_meta(x, *, dims, keepdim):
    return reduced_shape(x._shape, dims, keepdim), dt.uint8 if x._dtype is dt.uint8 else dt.bool_


# any and all: the OR and the AND of the elements' truth over `dims`
ANY = reduction("any", _truth_kernel(np.any), _truth_meta)
ALL = reduction("all", _truth_kernel(np.all), _truth_meta)
nondifferentiable(ANY)
nondifferentiable(ALL)


def _truth(every: bool, name: str):
    def op(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
        if not (dim is None or dim.__class__ is int or is_dims_arg(dim, head=True)):
            raise no_overload(name, (input, dim), {"out": out})
        if isinstance(dim, (tuple, list)) and len(dim) == 0:
            dims = ()  # NOTE: torch reduces nothing for an empty dim tuple here
        else:
            dims = norm_dims(dim, input.ndim)
        return write_out(apply(reduce_p, input, fn=ALL if every else ANY, dims=dims,
                               keepdim=keepdim), out)

    op.__name__ = name
    op.__doc__ = f"Whether {name} elements over `dim` are non-zero (bool; uint8 for uint8)."
    return method_aware(op)


any = _truth(False, "any")
all = _truth(True, "all")


# _is_all_true / _is_any_true: a bool tensor's truth as one 0-d bool, for a Python branch
# (the distributions' validation). NOTE: as PyTorch's, under vmap they reduce the batch too
# and come out unbatched (`_reduce_batch`), so such a branch still runs inside vmap.
IS_ALL_TRUE = reduction("is_all_true", _truth_kernel(np.all), _truth_meta)
IS_ANY_TRUE = reduction("is_any_true", _truth_kernel(np.any), _truth_meta)
nondifferentiable(IS_ALL_TRUE)
nondifferentiable(IS_ANY_TRUE)
_ACROSS_BATCH = (IS_ALL_TRUE, IS_ANY_TRUE)


def _is_all_true(input: Tensor, _fn: Member = IS_ALL_TRUE) -> Tensor:
    """Whether every element of a bool tensor is True (0-d bool; under vmap, the batch's)."""
    if input._dtype is not dt.bool_:
        raise RuntimeError("self.scalar_type() == at::kBool INTERNAL ASSERT FAILED: "
                           f"{_fn.name} expects a bool tensor, got {type_name(input._dtype)}")
    return apply(reduce_p, input, fn=_fn, dims=tuple(range(input.ndim)), keepdim=False)


def _is_any_true(input: Tensor) -> Tensor:
    """Whether any element of a bool tensor is True (0-d bool; under vmap, the batch's)."""
    return _is_all_true(input, IS_ANY_TRUE)


def _count_nonzero_kernel(a, *, dims):
    return np.asarray(np.count_nonzero(a != 0, axis=_axis(a, dims)), dtype=np.int64)


COUNT_NONZERO = reduction("count_nonzero", _count_nonzero_kernel,
                          lambda x, *, dims: (reduced_shape(x._shape, dims, False), dt.int64))
nondifferentiable(COUNT_NONZERO)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """Number of non-zero elements over `dim` (int64)."""
    return apply(reduce_p, input, fn=COUNT_NONZERO, dims=norm_dims(dim, input.ndim))


TENSOR_METHODS = {
    "sum": sum, "nansum": nansum, "mean": mean, "nanmean": nanmean, "prod": prod,
    "any": any, "all": all, "count_nonzero": dims_one_by_one(count_nonzero),
    "sum_to_size": sum_to_size, "_is_all_true": _is_all_true, "_is_any_true": _is_any_true,
}

__all__ = ["sum", "nansum", "mean", "nanmean", "prod", "any", "all", "count_nonzero",
           "_is_all_true", "_is_any_true"]
