"""Products with a sparse COO operand, in every spelling PyTorch has for them.

One primitive carries the math, `sparse_mm_p(c, a, b, masked=, beta=, alpha=)`, run by
`_eval_sparse` (a sparse operand reaches the kernel as a `COO` record): a 2-D product with
at least one sparse operand, sparse @ dense (`b` a matrix or a vector), dense @ sparse,
sparse @ sparse (a sparse result); with `c`, beta * c + alpha * (sparse @ dense) (addmm).

`masked` is `torch.sparse.mm` / `torch.sparse.addmm`: the gradient for a sparse operand is
sparse, on that operand's pattern (SparseAddmmBackward0, SparseSparseMatmulBackward0).
Without it (`torch.mm`, `@`, `matmul`, `spmm`, `addmm`, `mv`) the gradient is the product
rule with whatever layouts the operands have (MmBackward0, AddmmBackward0, MvBackward0): a
dense gradient for a sparse operand times a dense one, a sparse one for sparse @ sparse.
`smm`, `hspmm` and `sspaddmm` (sparse results) are composed from it. The routing from
the dense functions (`ember.mm` ...) to these is in `matmul.py`.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ._common import type_name, write_out
from .registry import (
    apply,
    apply_,
    batch_by_loop,
    bump_version,
    check_inplace,
    defjvp,
    defvjp,
    write_into,
)
from .sparse_ops import (
    COO,
    _coalesce_kernel,
    _grad_at,
    _sparse_prim,
    _up,
    sparse_coo_p,
    transpose_2d,
    values_p,
)
from .sparse_tensor import SparseTensor

_grad_state = grad_mode.state
_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def _is_sparse(t) -> bool:
    return t.__class__ is SparseTensor


# --- kernels ----------------------------------------------------------------------------

def _fma_rows(rows, cols, vals, d, m: int, init=None, max_rounds: int = 256) -> np.ndarray:
    """out = init (or zeros); out[rows[j]] += vals[j] * d[cols[j]] for j in order, each step
    one fused multiply-add rounded to float32.

    NOTE: PyTorch's CPU kernel walks the entries in their stored order with an axpy per
    entry (a fused multiply-add), so the float32 rounding depends on that order. Here the
    j-th entry of every row goes in round j: one vectorized step per round, computed in
    float64 (a float32 product is exact there) and rounded once. Past `max_rounds` entries
    in a row, the rest are summed in float64 and rounded once (off by an ulp at most)."""
    out = np.zeros((m, d.shape[1]), np.float32) if init is None else init.astype(np.float32)
    nnz = len(rows)
    if nnz == 0:
        return out
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
    rank = np.empty(nnz, np.int64)
    rank[order] = np.arange(nnz) - np.repeat(starts, np.diff(np.r_[starts, nnz]))
    by_rank = np.argsort(rank, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(rank))]
    v64, d64 = vals.astype(np.float64), d.astype(np.float64)
    for r in range(min(len(bounds) - 1, max_rounds)):
        j = by_rank[bounds[r]:bounds[r + 1]]
        rj = rows[j]
        out[rj] = out[rj].astype(np.float64) + v64[j, None] * d64[cols[j]]
    if len(bounds) - 1 > max_rounds:
        j = by_rank[bounds[max_rounds]:]
        rest = out.astype(np.float64)
        np.add.at(rest, rows[j], v64[j, None] * d64[cols[j]])
        out = rest.astype(np.float32)
    return out


def _axpy_rows(rows, cols, vals, d: np.ndarray, m: int, init=None, alpha=1) -> np.ndarray:
    """out[rows[j]] += (alpha * vals[j]) * d[cols[j]] over the entries in stored order,
    starting from `init` (or zeros): PyTorch's sparse @ dense kernel (an axpy per entry,
    the scale `alpha * value` rounded in the dtype first)."""
    dtype = d.dtype
    if alpha != 1:
        vals = vals * np.asarray(alpha).astype(_up(vals).dtype)
    if dtype == np.float32 or dtype in _LOW:
        out = _fma_rows(rows, cols, _up(vals), _up(d), m, None if init is None else _up(init))
        return out.astype(dtype, copy=False)
    out = np.zeros((m, d.shape[1]), dtype) if init is None else init.astype(dtype)
    np.add.at(out, rows, vals[:, None] * d[cols])
    return out


def _sparse_dense(s: COO, d: np.ndarray, init=None, alpha=1) -> np.ndarray:
    vec = d.ndim == 1
    out = _axpy_rows(s.indices[0], s.indices[1], s.values, d[:, None] if vec else d,
                     s.shape[0], init, alpha)
    return out[:, 0] if vec else out


def _dense_sparse(d: np.ndarray, s: COO) -> np.ndarray:
    """d @ s as PyTorch computes it: (s^T @ d^T)^T, so the result is a transposed array
    (strides (1, rows)) and s's entries go in their stored order."""
    if len(s.shape) == 1:  # a sparse vector: a one-column matrix
        cols = np.zeros_like(s.indices[0])
        return _axpy_rows(cols, s.indices[0], s.values, d.T, 1).T[:, 0]
    return _axpy_rows(s.indices[1], s.indices[0], s.values, d.T, s.shape[1]).T


def _sparse_sparse(a: COO, b: COO) -> COO:
    """a @ b, coalesced: every product a[i, k] b[k, j] summed per (i, j) in order of k,
    starting from zero (PyTorch's row-by-row kernel); a coordinate some product reaches
    is kept even when its sum is zero."""
    a, b = _coalesce_kernel(a), _coalesce_kernel(b)
    (ai, ak), (bk, bj) = a.indices, b.indices
    m, n = a.shape[0], b.shape[1]
    starts = np.searchsorted(bk, np.arange(b.shape[0] + 1))  # b's rows (b is sorted)
    count = starts[ak + 1] - starts[ak]
    which_a = np.repeat(np.arange(len(ak)), count)
    which_b = starts[ak][which_a] + np.arange(len(which_a)) - np.repeat(
        np.cumsum(count) - count, count)
    lin = ai[which_a] * n + bj[which_b]
    order = np.argsort(lin, kind="stable")  # (within a coordinate: a's order, so k's)
    coords, group = np.unique(lin[order], return_inverse=True)
    prods = a.values[which_a[order]] * b.values[which_b[order]]
    vals = np.zeros(len(coords), np.result_type(a.values, b.values))
    np.add.at(vals, group.reshape(-1), prods)
    idx = np.stack([coords // max(n, 1), coords % max(n, 1)]).astype(np.int64)
    return COO(idx.reshape(2, -1), vals, (m, n), True)


def _mm_kernel(c, a, b, *, masked: bool, beta=0, alpha=1):
    if isinstance(a, COO) and isinstance(b, COO):
        return _sparse_sparse(a, b)
    if not isinstance(a, COO):
        return _dense_sparse(a, b)
    init = None  # addmm: beta * c to start from (PyTorch skips c when beta is 0)
    if c is not None and beta == 1:
        init = c
    elif c is not None and beta != 0:
        init = c * np.asarray(beta).astype(_up(c).dtype)
    return _sparse_dense(a, b, init, alpha)


def _mm_meta(c, a, b, *, masked, beta=0, alpha=1):
    shape = (a._shape[0],) if len(b._shape) == 1 else (a._shape[0], b._shape[1])
    return shape, (b if a.__class__ is SparseTensor else a)._dtype


def _mm_name(args, params) -> str:
    c, a, b = args
    if c is not None:
        return "SparseAddmmBackward0" if params["masked"] else "AddmmBackward0"
    if params["masked"]:
        return "SparseSparseMatmulBackward0" if _is_sparse(b) else "SparseAddmmBackward0"
    return "MvBackward0" if len(b._shape) == 1 else "MmBackward0"


# One primitive for every product with a sparse operand: `c` None for the plain products
# (`masked` names torch.sparse.mm's), else beta * c + alpha * (a @ b) (addmm)
sparse_mm_p = _sparse_prim("sparse_mm", _mm_kernel, _mm_meta, grad_name=_mm_name)


# --- derivatives ------------------------------------------------------------------------

def _adjoint(x: Tensor) -> Tensor:
    """The conjugate transpose of a matrix, sparse (in the graph) or dense."""
    if not _is_sparse(x):
        return x.mH
    t = transpose_2d(x)
    if not x._dtype.is_complex:
        return t
    return apply(sparse_coo_p, t._sp_indices, apply(values_p, t).conj(), size=t._shape,
                 coalesced=False)


def product(x: Tensor, y: Tensor) -> Tensor:
    """x @ y for the gradients: the sparse primitive when an operand is sparse."""
    if _is_sparse(x) or _is_sparse(y):
        return apply(sparse_mm_p, None, x, y, masked=False)
    return x @ y


def _scaled(x: Tensor, s) -> Tensor:
    if s == 1:
        return x
    s = s.conjugate() if isinstance(s, complex) else s
    if _is_sparse(x):
        return apply(sparse_coo_p, x._sp_indices, apply(values_p, x) * s, size=x._shape,
                     coalesced=x._sp_coalesced)
    return x * s


def _masked_like(x: SparseTensor, gx: Tensor) -> Tensor:
    """SparseSparseMatmulBackward0's gradient for `x` from the full product `gx` (sparse,
    coalesced): on x's own pattern when x is coalesced with fewer entries than gx, else on
    gx's pattern with zeros where x has no entry (PyTorch picks whichever search is
    cheaper, and the pattern follows)."""
    if not _is_sparse(gx) or (x._sp_coalesced and x._nnz() < gx._nnz()):
        return _grad_at(gx, x, coalesce=True)
    n = x._shape[1]
    own = x._sp_indices._array()
    pat = gx._sp_indices._array()
    keep = np.isin(pat[0] * n + pat[1], own[0] * n + own[1])
    from .creation import as_tensor

    vals = apply(values_p, gx) * as_tensor(keep.astype(gx._dtype.np))
    return apply(sparse_coo_p, gx._sp_indices, vals, size=gx._shape, coalesced=True)


def _grad_c(g, out, c, a, b, *, masked, beta=0, alpha=1):
    return _scaled(g, beta)


def _grad_a(g, out, c, a, b, *, masked, beta=0, alpha=1):
    if len(b._shape) == 1:  # mv: the outer product with the vector (dense)
        vec = b.to_dense() if _is_sparse(b) else b
        return g.unsqueeze(1) * (vec.conj() if vec._dtype.is_complex else vec).unsqueeze(0)
    ga = _scaled(product(g, _adjoint(b)), alpha)
    if not masked:
        return ga
    # sparse.mm / sparse.addmm: on a's pattern (the whole product first, then its entries:
    # PyTorch's order, so its rounding)
    return _masked_like(a, ga) if _is_sparse(b) else _grad_at(ga, a, coalesce=True)


def _grad_b(g, out, c, a, b, *, masked, beta=0, alpha=1):
    gb = _scaled(product(_adjoint(a), g), alpha)
    return _masked_like(b, gb) if masked and _is_sparse(b) else gb


defvjp(sparse_mm_p, _grad_c, _grad_a, _grad_b)


def _mm_jvp(primals, tangents, out, *, masked, beta=0, alpha=1):
    """Linear in c, bilinear in (a, b)."""
    (_, a, b), (tc, ta, tb) = primals, tangents
    terms = [] if tc is None else [_scaled(tc, beta)]
    for x, y in ((ta, b), (a, tb)):
        if x is not None and y is not None:
            terms.append(_scaled(product(x, y), alpha))
    return sum(terms[1:], terms[0]) if terms else None


defjvp(sparse_mm_p, _mm_jvp)
batch_by_loop(sparse_mm_p, "a COO tensor has no batch axis to vectorise over (its nnz, and "
                           "so its shape, differ per element)")


# --- the sparse-result products, composed --------------------------------------------------

def _product_rows(s: SparseTensor, d: Tensor, alpha=1) -> tuple[np.ndarray, Tensor]:
    """The rows of mat1 that have an entry, and alpha * (s @ d) at those rows, summed in
    s's coalesced order: what PyTorch's hspmm and sspaddmm kernels compute.

    NOTE: composed here, so differentiable, where PyTorch has no derivative for them."""
    from .sparse_functions import coalesce

    sc = coalesce(s)
    rows = np.unique(sc._sp_indices._array()[0])
    full = apply(sparse_mm_p, None, sc, d, masked=False, alpha=alpha)
    return rows, full[_long(rows)]


def _long(a: np.ndarray) -> Tensor:
    from .creation import as_tensor

    return as_tensor(np.ascontiguousarray(a, np.int64))


# --- argument checks (PyTorch's messages) -----------------------------------------------

def _layout_name(t: Tensor) -> str:
    return "Sparse" if _is_sparse(t) else "Strided"


def _check_sparse_matrix(s: SparseTensor, what: str = "addmm") -> None:
    if s.sparse_dim() != 2:
        raise RuntimeError(f"{what}: matrices expected, got {s.sparse_dim()}D tensor")
    if s.dense_dim() != 0:
        raise RuntimeError(f"{what}: scalar values expected, got {s.dense_dim()}D values")


def _check_dtypes(s: SparseTensor, *others: Tensor) -> None:
    for t in others:
        if t._dtype is not s._dtype:
            raise RuntimeError(f"expected scalar type {type_name(s._dtype)} but found "
                               f"{type_name(t._dtype)}")
    if s._dtype is dt.bool_:
        raise NotImplementedError("\"addmm_sparse_dense\" not implemented for 'Bool'")


def _check_dense_matrix(s: SparseTensor, d: Tensor) -> None:
    """`d` is the dense matrix of sparse @ dense (PyTorch builds the (m, n) result from
    d's last dim first, so another rank fails that expand, or the rank check)."""
    if d.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but "
                         f"got {1 if d.ndim == 1 else -2})")
    if d.ndim > 2 and d._shape[1] != d._shape[-1]:
        raise RuntimeError(
            f"The expanded size of the tensor ({d._shape[1]}) must match the existing size "
            f"({d._shape[-1]}) at non-singleton dimension 1.  Target sizes: "
            f"[{s._shape[0]}, {d._shape[1]}].  Tensor sizes: [{s._shape[0]}, {d._shape[-1]}]")
    if d.ndim != 2:
        raise RuntimeError(f"addmm: matrices expected, got {d.ndim}D tensor")
    if d._shape[0] != s._shape[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._shape[1]}, "
                           f"got {d._shape[0]}")


def _sparse_times_dense(s: SparseTensor, d: Tensor, masked: bool) -> Tensor:
    _check_sparse_matrix(s)
    _check_dense_matrix(s, d)
    _check_dtypes(s, d)
    return apply(sparse_mm_p, None, s, d, masked=masked)


def _dense_times_sparse(d: Tensor, s: SparseTensor) -> Tensor:
    """d @ s (MmBackward0), checked as PyTorch checks it: as s^T @ d^T."""
    if s.sparse_dim() < 2:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {s.sparse_dim()}, d0: 0, d1: 1")
    _check_sparse_matrix(s)
    if d.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                         "got -2)")
    if d.ndim != 2:
        raise RuntimeError(f"addmm: matrices expected, got {d.ndim}D tensor")
    if d._shape[1] != s._shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._shape[0]}, "
                           f"got {d._shape[1]}")
    _check_dtypes(s, d)
    return apply(sparse_mm_p, None, d, s, masked=False)


def _sparse_times_sparse(a: SparseTensor, b: SparseTensor, masked: bool) -> Tensor:
    for s in (a, b):
        _check_sparse_matrix(s)
    if a._dtype is not b._dtype:
        raise RuntimeError(f"mat1 dtype {type_name(a._dtype)} does not match mat2 dtype "
                           f"{type_name(b._dtype)}")
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x"
                           f"{a._shape[1]} and {b._shape[0]}x{b._shape[1]})")
    if not (a._dtype.is_floating_point or a._dtype.is_complex) or a._dtype.np in _LOW:
        raise NotImplementedError(
            f"\"sparse_matmul\" not implemented for '{type_name(a._dtype)}'")
    return apply(sparse_mm_p, None, a, b, masked=masked)


# --- the spellings ---------------------------------------------------------------------

def mm(input: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """`torch.mm` (and `spmm`, `Tensor.mm`) with a sparse operand: MmBackward0, the
    gradient of a sparse operand dense unless the other is sparse too."""
    if _is_sparse(input):
        res = _sparse_times_sparse(input, mat2, False) if _is_sparse(mat2) \
            else _sparse_times_dense(input, mat2, False)
    else:
        res = _dense_times_sparse(input, mat2)
    return write_out(res, out)


def mv(input: Tensor, vec: Tensor, *, out=None) -> Tensor:
    """Sparse matrix @ dense vector, or dense matrix @ sparse vector (MvBackward0)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"mv: two tensor dim should be 2 and 1, but got {input.ndim} and "
                           f"{vec.ndim}")
    if vec._shape[0] != input._shape[1]:
        raise RuntimeError("mv: expected self.size(-1) == vec.size(-1)")
    if _is_sparse(input) and _is_sparse(vec):
        raise NotImplementedError("mv: a sparse matrix times a sparse vector is not supported")
    s = input if _is_sparse(input) else vec
    if _is_sparse(input):
        _check_sparse_matrix(s)
    elif s.sparse_dim() != 1:
        raise RuntimeError("mv: expected a sparse vector with sparse values")
    _check_dtypes(s, vec if s is input else input)
    return write_out(apply(sparse_mm_p, None, input, vec, masked=False), out)


def _dot_refused() -> NotImplementedError:
    return NotImplementedError(
        "Could not run 'aten::dot' with arguments from the 'SparseCPU' backend: a sparse "
        "vector times a vector is not supported. Call .to_dense() first.")


def matmul(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """`@` / `torch.matmul` with a sparse operand, by the ranks as PyTorch folds them."""
    from .movement import unsafe_view

    if _is_sparse(input):
        if input.ndim > 2:
            raise RuntimeError("reshape is not implemented for sparse tensors")
        if input.ndim == 1:
            if other.ndim != 2 or _is_sparse(other):
                raise _dot_refused()
            return write_out(mm(_as_row(input), other).squeeze_(0), out)
        if other.ndim == 1:
            return mv(input, other, out=out)
        if other.ndim > 2:
            raise RuntimeError("expand is unsupported for Sparse tensors")
        return mm(input, other, out=out)
    if other.ndim == 1:
        if input.ndim == 1:
            raise _dot_refused()
        return mv(input, other, out=out)
    if input.ndim == 1:  # a row, as PyTorch's matmul makes it (SqueezeBackward4)
        return write_out(mm(input.unsqueeze(0), other).squeeze_(0), out)
    if input.ndim > 2:  # the batch folded into the rows, viewed back (UnsafeViewBackward0)
        rows = input.reshape(-1, input._shape[-1])
        return write_out(unsafe_view(mm(rows, other), input._shape[:-1] + other._shape[-1:]),
                         out)
    return mm(input, other, out=out)


def _as_row(v: SparseTensor) -> SparseTensor:
    """A sparse vector as a (1, n) sparse matrix (in the graph)."""
    from .join import cat

    idx = cat([v._sp_indices.new_zeros((1, v._nnz())), v._sp_indices])
    return apply(sparse_coo_p, idx, apply(values_p, v), size=(1,) + v._shape,
                 coalesced=v._sp_coalesced)


def _addmm_operands(input: Tensor, mat1: Tensor, mat2: Tensor) -> None:
    if _is_sparse(input):  # (expanded to the result's shape first, when it is not that)
        expand = _is_sparse(mat1) and input._shape != (mat1._shape[0], mat2._shape[-1])
        raise RuntimeError("expand is unsupported for Sparse tensors" if expand else
                           "addmm_sparse_dense: expected strided result tensor, got tensor "
                           "with layout Sparse")
    if not _is_sparse(mat1) or _is_sparse(mat2):
        raise RuntimeError(
            "addmm_sparse_dense: expected either 'mat1' to have sparse layout and 'mat2' to "
            f"have strided layout, got 'mat1' with layout {_layout_name(mat1)} and 'mat2' "
            f"with layout {_layout_name(mat2)}")
    _check_sparse_matrix(mat1)
    _check_dense_matrix(mat1, mat2)
    _check_dtypes(mat1, input, mat2)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None,
          masked: bool = False) -> Tensor:
    """beta * input + alpha * (sparse mat1 @ dense mat2), input broadcast to the result
    (AddmmBackward0; `masked` is torch.sparse.addmm, SparseAddmmBackward0)."""
    _addmm_operands(input, mat1, mat2)
    c = input.expand(mat1._shape[0], mat2._shape[1])
    return write_out(apply(sparse_mm_p, c, mat1, mat2, beta=beta, alpha=alpha,
                           masked=masked), out)


def addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """`self.addmm_(sparse, dense)`: written into self, which must have the result's shape."""
    _addmm_operands(self, mat1, mat2)
    if self._shape != (mat1._shape[0], mat2._shape[1]):
        raise RuntimeError(f"addmm: Argument #1 (t): Expected dim 0 size {mat1._shape[0]}, "
                           f"got {self._shape[0]}")
    params = {"beta": beta, "alpha": alpha, "masked": False}
    if _grad_state.enabled and (self.requires_grad or mat1._requires_grad or
                                mat2._requires_grad):
        return apply_(sparse_mm_p, self, mat1, mat2, **params)  # (computed out of place)
    check_inplace(self)
    write_into(self, apply(sparse_mm_p, self, mat1, mat2, **params))
    bump_version(self)
    return self


def sparse_mm(mat1: Tensor, mat2: Tensor) -> Tensor:
    """`torch.sparse.mm`: sparse @ dense with a sparse gradient on mat1's pattern
    (SparseAddmmBackward0), sparse @ sparse likewise (SparseSparseMatmulBackward0); a dense
    mat1 goes as the transpose of mat2^T @ mat1^T (TransposeBackward0), as in PyTorch."""
    if _is_sparse(mat1):
        if _is_sparse(mat2):
            return _sparse_times_sparse(mat1, mat2, True)
        return _sparse_times_dense(mat1, mat2, True)
    if _is_sparse(mat2):
        _check_sparse_matrix(mat2)
        return _sparse_times_dense(transpose_2d(mat2), mat1.mT, True).transpose(0, 1)
    return (mat2.mT @ mat1.mT).transpose(0, 1)


def sspaddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1,
             out=None) -> SparseTensor:
    """beta * input + alpha * (mat1 @ mat2), sparse: input's entries, then one full row of
    the product for every row of mat1 that has an entry (uncoalesced; no derivative)."""
    if not _is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if not _is_sparse(mat1) or _is_sparse(mat2):
        raise RuntimeError(f"sspaddmm: expected 'mat2' to have strided layout, got 'mat2' with "
                           f"layout {_layout_name(mat2)}")
    _check_sparse_matrix(mat1, "sspaddmm: Argument #2")
    if mat2.ndim != 2:
        raise RuntimeError(f"sspaddmm: Argument #2: matrices expected, got {mat2.ndim}D tensor")
    m, k, n = mat1._shape[0], mat1._shape[1], mat2._shape[1]
    for arg, dim, want, got in (("#3", 0, k, mat2._shape[0]), ("#1", 0, m, input._shape[0]),
                                ("#1", 1, n, input._shape[1])):
        if want != got:
            raise RuntimeError(f"sspaddmm: Argument {arg}: Expected dim {dim} size {want}, "
                               f"got {got}")
    _check_dtypes(mat1, mat2)
    if input._dtype is not mat1._dtype:
        raise RuntimeError(f"expected scalar type {type_name(mat1._dtype)} but found "
                           f"{type_name(input._dtype)}")
    if out is not None:
        raise NotImplementedError("sspaddmm: out= is not supported for sparse results")
    from .join import cat

    rows, block = _product_rows(mat1, mat2, alpha)
    idx = np.stack([np.repeat(rows, n), np.tile(np.arange(n), len(rows))])
    tv = apply(values_p, input)
    vals = cat([tv if beta == 1 else tv * beta, block.reshape(-1)])
    return apply(sparse_coo_p, cat([input._sp_indices, _long(idx)], 1), vals, size=(m, n),
                 coalesced=False)


def smm(input: Tensor, mat2: Tensor) -> SparseTensor:
    """sparse @ dense as a sparse result (sspaddmm onto nothing)."""
    from .sparse_functions import sparse_coo_tensor

    if not _is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    n = mat2._shape[1] if mat2.ndim > 1 else 0
    empty = sparse_coo_tensor(np.zeros((2, 0), np.int64), np.zeros(0, input._dtype.np),
                              (input._shape[0], n), check_invariants=False)
    return sspaddmm(empty, input, mat2, beta=0, alpha=1)


def hspmm(mat1: Tensor, mat2: Tensor) -> SparseTensor:
    """sparse @ dense as a hybrid sparse tensor: one sparse dim (the rows of mat1 that have
    an entry) holding dense rows of the product (no derivative)."""
    if not _is_sparse(mat1):
        raise NotImplementedError(
            "Could not run 'aten::hspmm' with arguments from the 'CPU' backend: mat1 must be "
            "a sparse COO tensor")
    if _is_sparse(mat2):
        raise RuntimeError("addmm_sparse_dense: expected strided result tensor, got tensor "
                           "with layout Sparse")
    _check_sparse_matrix(mat1, "hspmm: Argument #2")
    if mat2.ndim != 2:
        raise RuntimeError(f"hspmm: Argument #3: matrices expected, got {mat2.ndim}D tensor")
    if mat2._shape[0] != mat1._shape[1]:
        raise RuntimeError(f"hspmm: Argument #3: Expected dim 0 size {mat1._shape[1]}, got "
                           f"{mat2._shape[0]}")
    _check_dtypes(mat1, mat2)
    rows, block = _product_rows(mat1, mat2)
    return apply(sparse_coo_p, _long(rows.reshape(1, -1)), block,
                 size=(mat1._shape[0], mat2._shape[1]), coalesced=False)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """`torch.spmm`: `torch.mm` under an older name (either operand may be sparse)."""
    from .matmul import mm as _mm

    return _mm(input, mat2)


TENSOR_METHODS = {"smm": smm, "sspaddmm": sspaddmm}

__all__ = ["spmm", "smm", "hspmm", "sspaddmm"]
