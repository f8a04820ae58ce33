"""Sparse COO primitives: construction, values, the conversions (to_dense, to_sparse,
coalesce: one primitive) and a gather at coordinates (the public functions composed from
them are in `sparse_functions.py`, the products in `sparse_matmul.py`).

A sparse operand reaches a kernel as a `COO` record (NumPy indices, values, shape,
coalesced flag); a kernel returns either a NumPy array (a dense result) or a `COO` (a
sparse one). `_eval_sparse` is these primitives' eager evaluation: the standard path
would read a strided array off every operand, which a sparse tensor does not have.

Gradients follow PyTorch: a sparse input's gradient is a sparse tensor on its own
coalesced pattern (`to_dense`); the values of `sparse_coo_tensor(i, v)` get a dense
gradient gathered at `i`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import autograd, run_quiet
from .._tensor import Tensor, _wrap
from .registry import Primitive, apply, batch_by_loop, defjvp, defvjp, vjp_rule
from .sparse_tensor import SparseTensor, make_sparse

_grad_state = grad_mode.state
_LOW = (np.dtype(np.float16), dt.bfloat16.np)


class COO(NamedTuple):
    """A sparse operand or result as a kernel sees it."""

    indices: np.ndarray  # int64, (sparse_dim, nnz)
    values: np.ndarray  # (nnz, *dense_shape)
    shape: tuple
    coalesced: bool


# How the sparse layouts meet their kernels: a tensor class -> its kernel record (COO here;
# sparse_compressed.py adds CSR / CSC), and a record type -> the tensor it becomes.
RECORDS = {SparseTensor: lambda a: COO(a._sp_indices._array(), a._sp_values._array(), a._shape,
                                       a._sp_coalesced)}
RESULTS = {COO: lambda r: make_sparse(_wrap(r.indices), _wrap(r.values), r.shape, r.coalesced)}


def _eval_sparse(prim, args: tuple, params: dict):
    """Eager evaluation of a sparse primitive: kernel on arrays and layout records (COO,
    CSR / CSC), the result wrapped as a dense or sparse tensor, and a graph node when an
    input requires grad."""
    arrays = []
    grad = False
    for a in args:
        if isinstance(a, Tensor):
            if a.device.type != "cpu":
                raise NotImplementedError(
                    f"{prim.name}: sparse tensors are supported on the cpu device only")
            record = RECORDS.get(a.__class__)
            arrays.append(a._array() if record is None else record(a))
            grad = grad or a._requires_grad
        else:
            arrays.append(a)
    res = run_quiet(prim.kernel, *arrays, **params)
    wrap = RESULTS.get(type(res))
    out = _wrap(res) if wrap is None else wrap(res)
    if grad and _grad_state.enabled:
        autograd.record(prim, vjp_rule(prim, params), args, params, out)
    return out


def _no_meta(*args, **params):
    raise NotImplementedError("sparse tensors cannot be on the 'meta' device")


def _sparse_prim(name: str, kernel, meta=_no_meta, **kw) -> Primitive:
    return Primitive(name, kernel, meta, impl=_eval_sparse, **kw)


# --- NumPy helpers ----------------------------------------------------------------------

def _up(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype in _LOW else a


def _scatter_sum(shape, index, values: np.ndarray) -> np.ndarray:
    """zeros(shape) with `values` added at `index` (duplicates summed), in values' dtype;
    half types accumulate in float32 and round once."""
    out = np.zeros(shape, _up(values).dtype)
    np.add.at(out, index, _up(values))
    return out.astype(values.dtype, copy=False)


def _torch_sort_order(lin: np.ndarray) -> np.ndarray:
    """The permutation PyTorch's CPU `sort()` (not stable) gives a 1-D int64 array."""
    from .sorting import _sort_kernel

    return _sort_kernel(lin, dim=0, descending=False, stable=False)[1]


def _coalesce_arrays(indices: np.ndarray, values: np.ndarray, shape) -> COO:
    """Sorted unique coordinates with the values of duplicates summed."""
    sd = indices.shape[0]
    if indices.shape[1] == 0 or sd == 0:
        if sd == 0 and indices.shape[1] > 1:  # every entry at the one coordinate ()
            return COO(indices[:, :1], values.sum(0, keepdims=True), shape, True)
        return COO(indices, values, shape, True)
    lin = np.ravel_multi_index(tuple(indices), shape[:sd])
    uniq, inv = np.unique(lin, return_inverse=True)
    # NOTE: PyTorch adds duplicates one after another in the order its (unstable) sort of
    # the flat coordinates leaves them, which moves the last bits of a sum of many
    perm = _torch_sort_order(lin)
    vals = _scatter_sum((len(uniq),) + values.shape[1:], inv.reshape(-1)[perm], values[perm])
    idx = np.stack(np.unravel_index(uniq, shape[:sd])).astype(np.int64).reshape(sd, -1)
    return COO(idx, vals, shape, True)


# --- construction and coalesce -------------------------------------------------------------

def _coo_kernel(indices, values, *, size, coalesced):
    return COO(indices, values, tuple(size), coalesced)


sparse_coo_p = _sparse_prim("sparse_coo", _coo_kernel,
                            grad_name="SparseCooTensorWithDimsAndTensorsBackward0")


def _values_grad(g, out, indices, values, *, size, coalesced):
    return apply(gather_p, g, indices)  # g dense or sparse: the kernel tells the patterns


defvjp(sparse_coo_p, None, _values_grad, reads=((), (0,)))
defjvp(sparse_coo_p, lambda primals, tangents, out, **params: None if tangents[1] is None
       else apply(sparse_coo_p, primals[0], tangents[1], **params))


values_p = _sparse_prim("values", lambda s: s.values, lambda s: ((s._nnz(),) + s._shape[
    s.sparse_dim():], s._dtype))
defvjp(values_p, lambda g, out, s: apply(sparse_coo_p, s._sp_indices, g, size=s._shape,
                                         coalesced=s._sp_coalesced))
# a sparse tangent has its primal's pattern, so its values line up with the primal's
defjvp(values_p, lambda primals, tangents, out: apply(values_p, tangents[0]))


# --- conversions: to_dense, to_sparse, coalesce --------------------------------------------

def _to_dense_kernel(s: COO) -> np.ndarray:
    return _scatter_sum(s.shape, tuple(s.indices), s.values)


def _to_sparse_kernel(a: np.ndarray, *, sparse_dim: int | None) -> COO:
    if sparse_dim is None:
        sparse_dim = a.ndim
    if sparse_dim == 0:  # one entry holding the whole tensor
        return COO(np.zeros((0, 1), np.int64), a[None].copy(), a.shape, True)
    lead = a.shape[:sparse_dim]
    mask = (a != 0).reshape(lead + (-1,)).any(-1) if a.ndim > sparse_dim else a != 0
    nz = np.nonzero(mask)
    return COO(np.stack(nz).astype(np.int64), a[nz], a.shape, True)


def _coalesce_kernel(s: COO) -> COO:
    return s if s.coalesced else _coalesce_arrays(s.indices, s.values, s.shape)


def _transpose_kernel(s: COO) -> COO:
    """The index rows swapped: no longer sorted, so not flagged coalesced (as in PyTorch)."""
    return COO(np.ascontiguousarray(s.indices[::-1]), s.values, s.shape[::-1], False)


def _convert_kernel(a, *, layout, **params):
    if layout == "strided":
        return _to_dense_kernel(a)
    if layout == "transposed":
        return _transpose_kernel(a)
    return _to_sparse_kernel(a, **params) if layout == "sparse" else _coalesce_kernel(a)


def _convert_meta(x, *, layout, **params):
    if layout == "strided":
        return x._shape, x._dtype
    return _no_meta()


def _convert_vjp(g, out, x, *, layout, **params):
    if layout == "transposed":  # the cotangent transposed, sparse or dense as it came
        return transpose_2d(g)
    if layout == "sparse":  # to_sparse: the gradient goes back dense
        return apply(convert_p, g, layout="strided") if g.__class__ is SparseTensor else g
    if layout == "coalesced":
        # the cotangent as it is (PyTorch's CoalesceBackward0): dense, or sparse on the
        # coalesced pattern, whose every entry is the sum of the input's duplicates there
        # (onto the input's own pattern, each duplicate would count the entry again)
        return g
    return _grad_at(g, x, coalesce=True)  # to_dense: onto the coalesced pattern


def _convert_jvp(primals, tangents, out, *, layout, **params):
    t = tangents[0]
    if layout == "transposed":
        return transpose_2d(t)
    if layout != "sparse":  # linear, and a sparse tangent shares its primal's pattern
        return apply(convert_p, t, layout=layout, **params)
    # to_sparse: the tangent on the pattern the values picked
    return apply(sparse_coo_p, out._sp_indices, apply(gather_p, t, out._sp_indices),
                 size=out._shape, coalesced=True)


# One conversion primitive, `layout` the result's: "strided" (to_dense), "sparse"
# (to_sparse of a dense tensor, over `sparse_dim` dims), "coalesced" (coalesce) or
# "transposed" (a sparse matrix's `t()`, whose gradient is the cotangent transposed, so a
# gradient reaching `s` through `s.t()` keeps the layout and pattern the product gave it,
# as in PyTorch), with PyTorch's node names
convert_p = _sparse_prim(
    "sparse_convert", _convert_kernel, _convert_meta,
    grad_name=lambda args, params: _CONVERT_NAMES[
        params["layout"], params.get("sparse_dim", 0) is None])
_CONVERT_NAMES = {("strided", False): "ToDenseBackward0", ("sparse", False): "ToSparseBackward0",
                  ("sparse", True): "ToSparseBackward1", ("coalesced", False): "CoalesceBackward0",
                  ("transposed", False): "TBackward0"}
defvjp(convert_p, _convert_vjp)
defjvp(convert_p, _convert_jvp)


# --- gather -----------------------------------------------------------------------------------

def _gather_kernel(a, indices: np.ndarray) -> np.ndarray:
    if isinstance(a, COO):  # a sparse gradient: its values as they are on its own pattern
        if a.indices.shape == indices.shape and np.array_equal(a.indices, indices):
            return a.values
        a = _to_dense_kernel(a)
    return np.ascontiguousarray(a[tuple(indices)])


gather_p = _sparse_prim("gather_coo", _gather_kernel,
                        lambda a, i: ((i._shape[1],) + a._shape[i._shape[0]:], a._dtype),
                        grad_name="IndexBackward0")
defvjp(gather_p, lambda g, out, a, i, in_shape: apply(
    convert_p, apply(sparse_coo_p, i, g, size=in_shape, coalesced=False), layout="strided"),
    None, reads=((1,), ()), in_shape=True)
defjvp(gather_p, lambda primals, tangents, out: apply(gather_p, tangents[0], primals[1]))


def _pattern(s: SparseTensor, coalesce: bool) -> Tensor:
    """`s`'s indices, or those of its coalesced form."""
    if coalesce and not s._sp_coalesced:
        with grad_mode.no_grad():
            plain = make_sparse(s._sp_indices, s._sp_values, s._shape, False)
            return apply(convert_p, plain, layout="coalesced")._sp_indices
    return s._sp_indices


def _grad_at(g: Tensor, s: SparseTensor, coalesce: bool) -> Tensor:
    """`g` (dense or sparse) as a sparse gradient on `s`'s pattern (coalesced if asked)."""
    pattern = _pattern(s, coalesce)
    vals = apply(gather_p, g, pattern)
    # (a leaf's .grad is flagged as PyTorch's engine stores it: autograd.engine._sparse_grad)
    return apply(sparse_coo_p, pattern, vals, size=s._shape,
                 coalesced=coalesce or s._sp_coalesced)


# --- transpose ------------------------------------------------------------------------------

def transpose_2d(s: Tensor) -> Tensor:
    """The transpose of a 2-D sparse tensor (or of a dense cotangent), in the graph."""
    return apply(convert_p, s, layout="transposed") if s.__class__ is SparseTensor else s.mT


_LOOP = ("a COO tensor has no batch axis to vectorise over (its nnz, and so its shape, "
         "differ per element)")
for _prim in (sparse_coo_p, values_p, convert_p, gather_p):
    batch_by_loop(_prim, _LOOP)
