"""Ordering ops: sort / argsort / msort, topk, kthvalue, unique, unique_consecutive
(searchsorted and bucketize: searchsorted.py; bincount and histc: counting.py, re-exported
here).

Sorting is one NumPy argsort (NaN sorts as the largest value, as in PyTorch);
descending order is the ascending sort of the reversed input, read backwards, so
a stable sort keeps ties in their original order. An unstable sort (PyTorch's
std::sort) then puts the ties where std::sort leaves them (_stl_sort.py replays it).
Values that come out of a sort are differentiable: their VJP scatters the gradient
back to where each value came from. Indices, `unique` and the searches have no derivative.

sort, topk and kthvalue are members of the `pick` family (reduce.py): values picked
along one dim, with their indices.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._core import data_dependent
from .._tensor import Tensor
from .._view import is_non_overlapping_and_dense, wrap_dim
from . import _stl_sort
from ._arg_parser_text import (
    called_as_method,
    invalid_combination,
    method_aware,
    need_int,
    need_tensor,
)
from ._common import has_broadcast_dim, iter_order, layout_like, type_name, write_exact, write_out
from ._dynamic_shape import refuse_batched
from ._out_checks import check_out_tuple, check_values_indices_out
from ._pair_sort_native import sort_rows, topk_native
from .index import scatter_into_zeros
from .reduce import pick_p, picker, return_type
from .registry import (
    Primitive,
    apply,
    batch_by_loop,
    derivative_not_defined,
    keep_given,
)

sort_result = return_type("sort", ["values", "indices"])
topk_result = return_type("topk", ["values", "indices"])
kthvalue_result = return_type("kthvalue", ["values", "indices"])


def _argsort(a: np.ndarray, axis: int, descending: bool, stable: bool = True) -> np.ndarray:
    """Argsort along `axis` in PyTorch's order: when stable, ties keep their original order;
    otherwise they come out where PyTorch's `std::sort` leaves them."""
    # NOTE: std::sort is an insertion sort (stable) up to 16 elements; PyTorch leaves the
    # indices of a broadcast dim (stride 0) as they are.
    stable = stable or a.shape[axis] <= 16 or a.strides[axis] == 0
    if a.dtype == dt.bfloat16.np:  # (NumPy orders ml_dtypes' bfloat16 without regard to NaN)
        a = a.astype(np.float32)
    idx = _np_argsort(a, axis, descending, "stable" if stable else "quicksort")
    return idx if stable else _as_std_sort(a, idx, axis, descending)


def _np_argsort(a: np.ndarray, axis: int, descending: bool, kind: str) -> np.ndarray:
    """NumPy's argsort (NaN last ascending, first descending); with kind="stable", ties
    in their original order either way."""
    if not descending:
        return np.argsort(a, axis=axis, kind=kind)
    rev = np.argsort(np.flip(a, axis), axis=axis, kind=kind)
    return a.shape[axis] - 1 - np.flip(rev, axis)


def _as_std_sort(a: np.ndarray, idx: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """`idx` (an argsort along `axis`) with the ties of each row put in the order libstdc++'s
    `std::sort` leaves them, as PyTorch's CPU sort does when not stable: those rows sorted
    again by `std::sort`'s steps, in C on their values where they are floats (or integers
    doubles hold exactly), else on the ranks of their values."""
    n = a.shape[axis]
    rows = np.moveaxis(np.take_along_axis(a, idx, axis=axis), axis, -1).reshape(-1, n)
    # NOTE: PyTorch's comparator: NaNs are equivalent to one another, -0.0 to 0.0.
    new = rows[:, 1:] != rows[:, :-1]
    if rows.dtype.kind in "fc":
        new &= ~(np.isnan(rows[:, 1:]) & np.isnan(rows[:, :-1]))
    tied = np.flatnonzero(~new.all(axis=1))
    if not len(tied):
        return idx  # (no ties: the order is the only one)
    order = np.moveaxis(idx, axis, -1).reshape(-1, n)
    got = sort_rows(_as_floats(np.moveaxis(a, axis, -1).reshape(-1, n)[tied]), descending)
    if got is not None:
        order[tied] = got
        return np.moveaxis(order.reshape(np.moveaxis(idx, axis, -1).shape), -1, axis)
    rank = np.zeros((len(tied), n), np.int64)
    np.cumsum(new[tied], axis=1, out=rank[:, 1:])
    key = np.empty_like(rank)
    np.put_along_axis(key, order[tied], rank, axis=1)
    order[tied] = _stl_sort.sort_rows(key)
    shape = np.moveaxis(idx, axis, -1).shape
    return np.moveaxis(order.reshape(shape), -1, axis)


def _as_floats(rows: np.ndarray) -> np.ndarray:
    """`rows` as float32 / float64 values that order as they do (float16, bools and
    integers doubles hold exactly), or as they are."""
    if rows.dtype == np.float16:
        return rows.astype(np.float32)
    if rows.dtype.kind in "bui" and (rows.dtype.itemsize < 8 or not rows.size or
                                    max(-int(rows.min()), int(rows.max())) < 2**53):
        return rows.astype(np.float64)
    return rows


def _dense_order(a: np.ndarray) -> list[int]:
    """`a`'s dims outermost first by stride, a broadcast dim in its row-major place (as
    PyTorch orders them, `iter_order`)."""
    if has_broadcast_dim(a):
        return iter_order([(a.shape, tuple(abs(s) for s in a.strides))], a.shape)[::-1]
    return sorted(range(a.ndim), key=lambda d: (-abs(a.strides[d]), d))


def _in_input_layout(a: np.ndarray, dim: int, fn):
    """Run `fn(array, axis)` on `a` permuted to its memory order, so that the results keep
    the input's layout (PyTorch's sort returns tensors strided like its input)."""
    order = _dense_order(a)
    back = np.argsort(order)
    outs = fn(a.transpose(order), order.index(dim))
    return tuple(_ones_strided_like(o.transpose(back), a) for o in outs)


def _ones_strided_like(o: np.ndarray, a: np.ndarray) -> np.ndarray:
    """`o` with the strides of its size-1 dims (never stepped) taken from `a`, in elements."""
    st = tuple(a.strides[d] // a.itemsize * o.itemsize if n == 1 else o.strides[d]
               for d, n in enumerate(o.shape))
    return o if st == o.strides else np.lib.stride_tricks.as_strided(o, strides=st)


def _check_sortable(x: Tensor) -> None:
    if x._dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


def _not_for(name: str, x: Tensor, *, bool_too: bool = False) -> None:
    """PyTorch's NotImplementedError for a kernel without complex (or bool) support."""
    if x._dtype.is_complex or (bool_too and x._dtype is dt.bool_):
        raise NotImplementedError(f'"{name}" not implemented for \'{type_name(x._dtype)}\'')


# --- sort / argsort --------------------------------------------------------------------

def _sort_kernel(a, *, dim, descending, stable):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)

    # NOTE: PyTorch radix-sorts (stably) a 1-D integer input of 32768 or more ascending.
    stable = stable or (a.ndim == 1 and a.dtype.kind in "iu" and a.size >= 32768
                        and not descending)

    def run(arr, axis):
        idx = _argsort(arr, axis, descending, stable)
        return np.take_along_axis(arr, idx, axis=axis), np.ascontiguousarray(idx, np.int64)

    return _in_input_layout(a, dim, run)


def _sort_meta(x, *, dim, descending, stable):
    # NOTE: as PyTorch's sort meta: a dense input's own strides, else dense ones inferred
    stride = x.stride() if is_non_overlapping_and_dense(x._shape, x.stride()) else \
        layout_like([x], x._shape)
    return (x._shape, x._dtype, stride), (x._shape, dt.int64, stride)


def _sort_vjp(g, out, x, *, dim, descending, stable):
    gv, idx = g[0], out[1].detach()  # indices carry no gradient, even under create_graph
    if idx.ndim == 0:
        return gv
    return scatter_into_zeros(idx._shape, dim, idx, gv)


SORT = picker("sort", _sort_kernel, _sort_meta, _sort_vjp)
# (PyTorch's `sort.stable` overload, taken whenever `stable=` is passed, even as None or
# False, records its own node class)
SORT_STABLE = picker("sort_stable", _sort_kernel, _sort_meta, _sort_vjp, "SortBackward1")


class _Unset:
    """`stable`'s default: PyTorch picks its overload by whether `stable=` was passed."""

    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN = _Unset()


@method_aware
def sort(input: Tensor, *args, dim: int = _NOT_GIVEN,  # type: ignore[assignment]
         descending: bool = _NOT_GIVEN, stable: bool | None = _NOT_GIVEN,  # type: ignore
         out=None):
    """(values, indices) sorted along `dim` (-1) in ascending order unless `descending`;
    `stable` keeps equal values in their order (otherwise, as in PyTorch, the order of ties
    is unspecified). As in PyTorch, `stable` is keyword-only, and where it is given `dim`
    and `descending` are too (its overload takes them by keyword only)."""
    given = stable is not _NOT_GIVEN
    if given and (args or not (stable is None or isinstance(stable, bool))):
        raise _stable_overload_error("sort", input, args, {
            "dim": dim, "descending": descending, "stable": stable, "out": out},
            called_as_method())
    dim, descending = _dim_descending("sort", args, dim, descending)
    stable = bool(stable) if given else False
    if out is not None and not isinstance(out, (tuple, list)):
        raise _sort_out_error(input, dim, descending, stable, out)
    check_out_tuple(out, "sort")
    _check_sortable(input)
    d = wrap_dim(dim, max(input.ndim, 1))
    r = sort_result(*apply(pick_p, input, fn=SORT_STABLE if given else SORT, dim=d,
                           descending=bool(descending), stable=stable))
    if r[0]._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_exact(r, out) if out is not None else r


_SORT_SIGNATURES = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
    "tuple of Tensors out = None)",
    "(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)",
)
_ARGSORT_SIGNATURES = (
    "(Tensor input, *, bool stable, int dim = -1, bool descending = False, "
    "Tensor out = None)",
    "(Tensor input, int dim = -1, bool descending = False)",
)
# (the Tensor methods print their overloads without `self` and `out`)
_METHOD_SIGNATURES = ("(*, bool stable, int dim = -1, bool descending = False)",
                      "(int dim = -1, bool descending = False)")


def _dim_descending(name: str, args: tuple, dim, descending) -> tuple:
    """`dim` and `descending` as given by position or keyword, with their defaults."""
    if len(args) > 2:
        raise TypeError(f"{name}() takes from 1 to 3 positional arguments but "
                        f"{len(args) + 1} were given")
    given = [dim, descending]
    for i, (value, pname) in enumerate(zip(args, ("dim", "descending"))):
        if given[i] is not _NOT_GIVEN:
            raise TypeError(f"{name}() got multiple values for argument '{pname}'")
        given[i] = value
    return (-1 if given[0] is _NOT_GIVEN else given[0],
            False if given[1] is _NOT_GIVEN else given[1])


def _stable_overload_error(name: str, input, args: tuple, keywords: dict,
                           method: bool) -> TypeError:
    """torch's parser on a `stable=` call that fits neither overload: its `stable` overload
    takes dim and descending by keyword only (and a bool stable: sort's also None), the
    other has no `stable`. Where only the `stable` overload can take as many arguments as
    were given, it names that overload's positional count; otherwise it lists both."""
    kwargs = {k: v for k, v in keywords.items()
              if v is not _NOT_GIVEN and not (k == "out" and v is None)}
    sigs = _METHOD_SIGNATURES if method else (
        _SORT_SIGNATURES if name == "sort" else _ARGSORT_SIGNATURES)
    given = args if method else (input,) + tuple(args)
    plain_max = len([p for p in sigs[1][1:-1].split(", ") if p != "*"])
    if len(given) + len(kwargs) > plain_max:
        lowest, most = (1, 0) if method else (2, 1)
        return TypeError(f"{name}() takes from {lowest} to {most} positional arguments but "
                         f"{len(given)} were given")
    return invalid_combination(name, sigs, given, kwargs)


def _sort_out_error(input, dim, descending, stable, out) -> TypeError:
    """The parser's TypeError for an `out=` that is no tuple: it fits neither overload."""
    # NOTE: torch lists the arguments as the call passed them; ember sees only their values,
    # so a dim or descending other than its default is listed as positional, stable=True
    # as the keyword it must be.
    args = (input,) + tuple(v for v, default in ((dim, -1), (descending, False))
                            if v != default)
    flags = {**({"stable": stable} if stable else {}), "out": out}  # (in the usual order)
    return invalid_combination("sort", _SORT_SIGNATURES, args, flags)


@method_aware
def argsort(input: Tensor, *args, dim: int = _NOT_GIVEN,  # type: ignore[assignment]
            descending: bool = _NOT_GIVEN, stable: bool = _NOT_GIVEN,  # type: ignore
            out=None) -> Tensor:
    """The indices that sort `input` along `dim` (into `out`, which must be int64);
    `stable` is keyword-only and, where given, so are `dim` and `descending` (PyTorch's
    overloads)."""
    if stable is not _NOT_GIVEN and (args or not isinstance(stable, bool)):
        raise _stable_overload_error("argsort", input, args, {
            "dim": dim, "descending": descending, "stable": stable, "out": out},
            called_as_method())
    dim, descending = _dim_descending("argsort", args, dim, descending)
    with grad_mode.no_grad():
        return write_exact(sort(input, dim=dim, descending=descending,
                                stable=stable is True).indices, out)


def msort(input: Tensor, *, out=None) -> Tensor:
    return write_out(sort(input, 0).values, out)


# --- topk / kthvalue ----------------------------------------------------------------

def _topk_kernel(a, *, k, dim, largest, in_shape, sorted=True):
    if a.ndim == 0:
        return a.reshape(()).copy(), np.zeros((), np.int64)
    vals = a
    if a.dtype == dt.bfloat16.np:  # (NumPy orders ml_dtypes' bfloat16 without regard to NaN)
        a = a.astype(np.float32)
    n = a.shape[dim]
    if 0 < k < n // 2:
        # Partition first (O(n)), then sort only the k candidates.
        kth = n - k if largest else k - 1
        part = np.argpartition(a, kth, axis=dim)
        cand = np.take(part, np.arange(n - k, n) if largest else np.arange(k), axis=dim)
        # (ties in any order: _topk_as_torch redoes the rows that have them)
        order = _np_argsort(np.take_along_axis(a, cand, axis=dim), dim, largest, "quicksort")
        idx = np.take_along_axis(cand, order, axis=dim)
    else:
        idx = np.take(_np_argsort(a, dim, largest, "quicksort"), np.arange(k), axis=dim)
    if k:
        idx = _topk_as_torch(a, idx, dim, k, largest, sorted)
    return np.take_along_axis(vals, idx, axis=dim), idx.astype(np.int64)


def _topk_as_torch(a, idx, dim: int, k: int, largest: bool, sorted: bool):
    """`idx` with the rows where PyTorch's pick is not fixed by the values (ties among the
    top k or at the k-th, or any row when unsorted and selected by nth_element) replaced by
    the indices PyTorch's libstdc++ selection leaves there."""
    n = a.shape[dim]
    rows = np.moveaxis(a, dim, -1).reshape(-1, n)
    if rows.dtype.kind not in "iub":  # (float16 / bfloat16 compare as their float32 values)
        rows = rows.astype(np.float64)
    picked = np.moveaxis(idx, dim, -1).reshape(-1, k)
    if not sorted and k * 64 > n and k > 1:
        redo = np.ones(len(rows), bool)
    else:
        vals = np.take_along_axis(rows, picked, axis=1)
        same = _equivalent(vals[:, 1:], vals[:, :-1]).any(axis=1)
        kth = vals[:, -1:]
        # (one more element equivalent to the k-th than were picked: a tie at the boundary)
        same |= _equivalent(rows, kth).sum(axis=1) > _equivalent(vals, kth).sum(axis=1)
        redo = same
    if not redo.any():
        return idx
    picked = picked.copy()
    for r in np.flatnonzero(redo):
        picked[r] = _topk_row(rows[r].tolist(), k, largest, sorted)
    shape = tuple(np.moveaxis(idx, dim, -1).shape)
    return np.moveaxis(picked.reshape(shape), -1, dim)


def _equivalent(x, y):
    """Neither orders before the other in PyTorch's topk comparator: equal (0.0 and -0.0
    too) or both NaN."""
    eq = x == y
    if x.dtype.kind == "f":
        eq |= np.isnan(x) & np.isnan(y)
    return eq


def _topk_row(values: list, k: int, largest: bool, sorted: bool) -> list:
    """ATen's topk_impl_loop on one row: partial_sort when k * 64 <= n, else nth_element
    (then a sort of the first k - 1 when sorted)."""
    isnan = math.isnan
    if largest:
        def lt(x, y):
            return (isnan(x[0]) and not isnan(y[0])) or x[0] > y[0]
    else:
        def lt(x, y):
            return (not isnan(x[0]) and isnan(y[0])) or x[0] < y[0]
    n = len(values)
    q = [(v, j) for j, v in enumerate(values)]
    if k * 64 <= n:
        _stl_sort.partial_sort(q, 0, k, n, lt)
    else:
        _stl_sort.nth_element(q, 0, k - 1, n, lt)
        if sorted:
            _stl_sort.sort(q, 0, k - 1, lt)
    return [j for _, j in q[:k]]


def _topk_meta(x, *, k, dim, largest, in_shape, sorted=True):
    shape = x._shape[:dim] + (k,) + x._shape[dim + 1:] if x.ndim else ()
    return (shape, x._dtype), (shape, dt.int64)


TOPK = picker("topk", _topk_kernel, _topk_meta,
              lambda g, out, x, *, k, dim, largest, in_shape, sorted=True:
              _pick_vjp(g, out, in_shape, dim))
native.register(TOPK, "pair_sort", topk_native)


def _pick_vjp(g, out, in_shape, dim, keepdim=True):
    gv, idx = g[0], out[1].detach()
    if not in_shape:
        return gv.reshape(())
    if not keepdim:
        gv, idx = gv.unsqueeze(dim), idx.unsqueeze(dim)
    return scatter_into_zeros(in_shape, dim, idx, gv)


def _int_args(fname: str, k, dim) -> None:
    """PyTorch's parser takes an int (or anything with __index__ but a bool) for k and dim;
    it names them as positional arguments 2 and 3 (as a call `torch.topk(x, 2.0)` does)."""
    need_int(k, fname, "k", 2)
    need_int(dim, fname, "dim", 3)


@method_aware
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True,
         *, out=None):
    """The k largest (or smallest) values along `dim`, with their indices, in order."""
    _int_args("topk", k, dim)
    check_out_tuple(out, "topk")
    if input._dtype is dt.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if input._dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    d = wrap_dim(dim, max(input.ndim, 1))
    n = input._shape[d] if input.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    r = topk_result(*apply(pick_p, input, fn=TOPK, k=int(k), dim=d, largest=bool(largest),
                           in_shape=input._shape, sorted=bool(sorted)))
    if r[0]._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_exact(r, out) if out is not None else r


def _kthvalue_kernel(a, *, k, dim, keepdim, in_shape):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    key = a.astype(np.float32) if a.dtype == dt.bfloat16.np else a  # (NaN last, as float32)
    idx = np.take(np.argpartition(key, k - 1, axis=dim), [k - 1], axis=dim)
    _kth_ties(key, idx, k, dim)
    vals = np.take_along_axis(a, idx, axis=dim)
    if not keepdim:
        vals, idx = vals.squeeze(dim), idx.squeeze(dim)
    return vals, idx.astype(np.int64)


def _kth_ties(key, idx, k: int, dim: int) -> None:
    """Where the k-th value ties with another (or NaN with NaN), the index PyTorch returns is
    where ATen's quickselect leaves it: replay it on those rows (writing into `idx`)."""
    kth = np.take_along_axis(key, idx, axis=dim)
    same = key == kth
    if key.dtype.kind == "f":
        same |= np.isnan(key) & np.isnan(kth)
    tied = same.sum(axis=dim) > 1
    if not tied.any():
        return
    isnan = math.isnan

    def gt(x, y):
        return (isnan(x) and not isnan(y)) or x > y

    rows = np.moveaxis(key, dim, -1)
    out = np.moveaxis(idx, dim, -1)
    for pos in map(tuple, np.argwhere(tied)):
        out[pos + (0,)] = _stl_sort.aten_quick_select(rows[pos].tolist(), k - 1, gt)[k - 1]


def _kthvalue_meta(x, *, k, dim, keepdim, in_shape):
    if x.ndim == 0:
        shape = ()
    elif keepdim:
        shape = x._shape[:dim] + (1,) + x._shape[dim + 1:]
    else:
        shape = x._shape[:dim] + x._shape[dim + 1:]
    return (shape, x._dtype), (shape, dt.int64)


KTHVALUE = picker(
    "kthvalue", _kthvalue_kernel, _kthvalue_meta,
    lambda g, out, x, *, k, dim, keepdim, in_shape: _pick_vjp(g, out, in_shape, dim, keepdim))


@method_aware
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *, out=None):
    """The k-th smallest value along `dim` (1-based), with its index."""
    _int_args("kthvalue", k, dim)
    d = wrap_dim(dim, max(input.ndim, 1))
    n = input._shape[d] if input.ndim else 1
    if n == 0:  # PyTorch checks this before the dtype
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    _not_for("kthvalue_cpu", input, bool_too=True)
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    check_values_indices_out(input, out, "kthvalue")
    r = kthvalue_result(*apply(pick_p, input, fn=KTHVALUE, k=int(k), dim=d,
                               keepdim=bool(keepdim), in_shape=input._shape))
    if r[0]._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out) if out is not None else r


# --- unique / unique_consecutive ---------------------------------------------------------

def _unique_kernel(a, *, dim, inverse, counts):
    if a.dtype.kind not in "fV" and dim is None:  # (integers: no tie can be told apart)
        vals, inv, cnt = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        return vals, inv.reshape(a.shape).astype(np.int64), cnt.astype(np.int64)
    key = a.astype(np.float32) if a.dtype == dt.bfloat16.np else a
    if dim is None:
        vals, inv, cnt = _unique_sorted(a.reshape(-1, 1), key.reshape(-1, 1), _flat_order)
        return vals.reshape(-1), inv.reshape(a.shape), cnt
    if a.size == 0:
        vals, inv, cnt = np.unique(a, axis=dim, return_inverse=True, return_counts=True)
        return vals, inv.reshape(-1).astype(np.int64), cnt.astype(np.int64)
    rows = np.moveaxis(a, dim, 0)
    vals, inv, cnt = _unique_sorted(rows.reshape(len(rows), -1),
                                    np.moveaxis(key, dim, 0).reshape(len(rows), -1), _rows_order)
    return np.moveaxis(vals.reshape(-1, *rows.shape[1:]), 0, dim), inv, cnt


def _unique_sorted(rows: np.ndarray, key: np.ndarray, order_of):
    """PyTorch's CPU unique over the rows of `rows`: put them in the order `order_of(key)`
    gives, then keep the first row of each run of equal rows, with each row's run (inverse)
    and the runs' lengths (counts)."""
    # NOTE: the order of tied rows decides which of -0.0 and 0.0 a kept row shows, and NaN
    # equals nothing, so each row with a NaN is a run of its own, placed where the sort left it.
    n = len(rows)
    if n == 0:
        return rows, np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = order_of(key)
    ordered = key[order]
    new = np.ones(n, bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    inv = np.empty(n, np.int64)
    inv[order] = np.cumsum(new) - 1
    cnt = np.diff(np.append(starts, n)).astype(np.int64)
    return rows[order[starts]], inv, cnt


def _flat_order(key: np.ndarray) -> np.ndarray:
    """The order `sort` (not stable) leaves the values of a column in, as unique's does."""
    return _argsort(key[:, 0], 0, False, stable=False)


def _rows_order(key: np.ndarray) -> np.ndarray:
    """The order in which `std::sort` leaves the rows, compared lexicographically by `<` and
    `>` (as PyTorch's unique_dim does): a column where neither holds (equal, or a NaN) is
    skipped."""
    if key.dtype.kind != "f" or not np.isnan(key).any():
        # a strict weak order: its ranks (-0.0 ranked with 0.0) replay the sort exactly
        rank = np.unique(key + 0, axis=0, return_inverse=True)[1].reshape(1, -1)
        return _stl_sort.sort_rows(rank)[0]
    # NOTE: with a NaN the comparison is no strict weak order, so std::sort is replayed step
    # by step with it (in Python: rows with NaNs are rare and unique_dim inputs small).
    table = key.tolist()

    def lt(i: int, j: int) -> bool:
        for x, y in zip(table[i], table[j]):
            if x < y:
                return True
            if x > y:
                return False
        return False

    q = list(range(len(table)))
    _stl_sort.sort(q, 0, len(q), lt)
    return np.array(q, np.int64)


unique_p = Primitive("unique", _unique_kernel, None, n_outputs=3)
derivative_not_defined(unique_p, lambda p: "_unique2" if p["dim"] is None else "unique_dim",
                       (True,))
data_dependent(unique_p)
batch_by_loop(unique_p, "how many distinct values there are depends on each element's data")


def _results(vals, inv, cnt, return_inverse: bool, return_counts: bool):
    out = [vals]
    if return_inverse:
        out.append(inv)
    if return_counts:
        out.append(cnt)
    return out[0] if len(out) == 1 else tuple(out)


def _dim_arg(dim, what: str) -> None:
    """An optional dim must be an int (a bool or a float is refused, as PyTorch's parser
    refuses them: `what` is how it names the argument)."""
    if dim is not None and (isinstance(dim, bool) or not hasattr(dim, "__index__")):
        raise TypeError(f"{what} must be int, not {type(dim).__name__}")


def _slice_dim(input: Tensor, dim) -> int | None:
    """`dim` wrapped, for the forms of unique that run over slices (None: the flat form)."""
    if dim is None:
        return None
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, input.ndim)


def _check_zero_sizes(shape: tuple, d: int) -> None:
    """PyTorch's unique over slices refuses a size-0 dim other than the one it runs along."""
    zeros = sum(1 for n in shape if n == 0)
    if shape[d] == 0 and zeros > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                           "be applied ")
    if shape[d] != 0 and zeros:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None):
    """The distinct values (or slices along `dim`), sorted; optionally inverse and counts."""
    need_tensor(input, "_unique2")  # (the ATen op torch.unique calls names itself)
    if input.device.type == "meta":
        raise NotImplementedError("unique's output size depends on the data: it cannot run on "
                                  "'meta'")
    _dim_arg(dim, "unique_dim(): argument 'dim' (position 2)")
    _not_for("unique" if dim is None else "unique_dim", input)
    refuse_batched(input, "aten::_unique2" if dim is None else "aten::unique_dim")
    d = _slice_dim(input, dim)
    if d is not None:
        _check_zero_sizes(input._shape, d)
    vals, inv, cnt = apply(unique_p, input, dim=d, inverse=return_inverse, counts=return_counts)
    return _results(vals, inv, cnt, return_inverse, return_counts)


def _unique_consecutive_kernel(a, *, dim):
    if dim is None:
        rows = a.reshape(-1, 1)
        if a.ndim == 0:
            rows = a.reshape(1, 1)
    else:
        rows = np.moveaxis(a, dim, 0)
        rows = rows.reshape(len(rows), math.prod(rows.shape[1:]))
    n = rows.shape[0]
    new = np.ones(n, bool)
    if n > 1:
        new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    inv = (np.cumsum(new) - 1).astype(np.int64)
    cnt = np.diff(np.append(starts, n)).astype(np.int64)
    if dim is None:
        vals = a.reshape(-1)[starts]
        inv = inv.reshape(a.shape)
    else:
        vals = np.take(a, starts, axis=dim)
    return vals, inv, cnt


unique_consecutive_p = Primitive("unique_consecutive", _unique_consecutive_kernel, None,
                                 n_outputs=3)
derivative_not_defined(unique_consecutive_p, lambda p: "unique_consecutive", (True,))
data_dependent(unique_consecutive_p)
batch_by_loop(unique_consecutive_p, "how many runs there are depends on each element's data")


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """`input` with runs of equal consecutive values (or slices) collapsed to one."""
    if input.device.type == "meta":
        raise NotImplementedError("unique_consecutive's output size depends on the data: it "
                                  "cannot run on 'meta'")
    _dim_arg(dim, "unique_consecutive(): argument 'dim'")
    refuse_batched(input, "aten::unique_consecutive")
    _not_for("unique", input)
    d = _slice_dim(input, dim)
    if d is not None and input.ndim > 1:  # (a 1-D input along dim 0 is the flat form)
        _check_zero_sizes(input._shape, d)
    vals, inv, cnt = apply(unique_consecutive_p, input, dim=d)
    return _results(vals, inv, cnt, return_inverse, return_counts)


from .counting import bincount, histc  # noqa: E402  (their home: counting.py)

TENSOR_METHODS = {
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue,
    "unique": unique, "unique_consecutive": unique_consecutive, "bincount": bincount,
    "histc": histc,
}

__all__ = [
    "sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
    "bincount", "histc",
]
