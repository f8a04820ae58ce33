"""Sparse COO functions and the sparse tensor's methods, composed from the primitives in
`sparse_ops.py`: `sparse_coo_tensor`, coalesce, to_dense / to_sparse, transpose, sparse +
sparse, scaling, sums and integer indexing (the products are in `sparse_matmul.py`).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor, _wrap
from .._view import wrap_dim
from .registry import apply, rename_node
from .sparse_invariants import checks_invariants
from .sparse_ops import (
    convert_p,
    gather_p,
    sparse_coo_p,
    transpose_2d,
    values_p,
)
from .sparse_tensor import SparseTensor, make_sparse

# --- public functions -------------------------------------------------------------------

def _long_indices(indices) -> Tensor:
    from .creation import as_tensor

    t = indices if isinstance(indices, Tensor) else as_tensor(indices)
    if t.__class__ is SparseTensor:
        raise TypeError("sparse_coo_tensor(): indices must be a strided tensor")
    if t._dtype is not dt.int64:
        t = t.to(dt.int64)
    return t.detach()


def _check_invariants(idx: np.ndarray, shape) -> None:
    for d in range(idx.shape[0]):
        if idx.shape[1] == 0:
            break
        lo, hi = int(idx[d].min()), int(idx[d].max())
        if lo < 0:
            raise RuntimeError(f"found negative index {lo} for dim {d}")
        if hi >= shape[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{shape[d]} but found index {hi}")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad: bool = False, check_invariants: bool | None = None,
                      is_coalesced: bool | None = None) -> SparseTensor:
    """A sparse COO tensor with `values[k]` at coordinate `indices[:, k]`.

    Duplicate coordinates are kept (they sum on `coalesce()` and `to_dense()`); `size`
    defaults to the smallest one holding every index. Gradients flow to `values`.
    """
    from .creation import as_tensor

    check_invariants = checks_invariants(check_invariants)  # (may warn: sparse_invariants)
    idx = _long_indices(indices)
    vals = values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if dtype is not None and vals._dtype is not dtype:
        vals = vals.to(dtype)
    if device is not None and str(device) != "cpu":
        raise NotImplementedError("sparse tensors are supported on the cpu device only")
    if idx.ndim != 2 and size is not None:
        # (with a size, PyTorch first reads sparse_dim off the indices' first dim and checks
        # the size's length against it, before the indices' rank)
        if idx.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        _check_size_length(len(tuple(size)), idx._shape[0], max(vals.ndim - 1, 0))
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx._shape)}")
    sd, nnz = idx._shape
    if vals.ndim == 0:
        vals = vals.reshape(1)
    if vals._shape[0] != nnz:
        raise RuntimeError("indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vals._shape[0]}")
    dense = tuple(vals._shape[1:])
    if size is None:
        a = idx._array()
        lead = tuple(int(m) + 1 for m in a.max(1)) if nnz else (0,) * sd
        shape = lead + dense
    else:
        shape = tuple(int(s) for s in size)
        _check_size_length(len(shape), sd, len(dense))
        if shape[sd:] != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *shape[sd:]]}, "
                               f"got {list(vals._shape)}")
    if check_invariants:
        _check_invariants(idx._array(), shape)
    coalesced = (nnz <= 1 and sd > 0) or nnz == 0 if is_coalesced is None else is_coalesced
    out = apply(sparse_coo_p, idx, vals, size=shape, coalesced=bool(coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


def _check_size_length(n: int, sparse_dim: int, dense_dim: int) -> None:
    if n != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                           f"{n}, sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")


def coalesce(s: SparseTensor) -> SparseTensor:
    """Sorted, unique coordinates with duplicates summed (`s` itself if already so)."""
    return s if s._sp_coalesced else apply(convert_p, s, layout="coalesced")


def values(s: SparseTensor) -> Tensor:
    """The values of `s`, in the graph (a gradient for them flows back to `s`)."""
    return apply(values_p, s)


def _public_values(self: SparseTensor) -> Tensor:
    if not self._sp_coalesced:
        raise RuntimeError(
            "Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return values(self)


def to_dense(self: Tensor, dtype=None, *, masked_grad: bool | None = None) -> Tensor:
    """The dense tensor; a strided tensor is returned as it is."""
    out = apply(convert_p, self, layout="strided") if self.__class__ is SparseTensor else self
    return out if dtype is None or dtype is out._dtype else out.to(dtype)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout=None, blocksize=None,
              dense_dim: int | None = None) -> SparseTensor:
    """The coalesced sparse COO form of a dense tensor over its first `sparse_dim` dims
    (`layout=` CSR / CSC: `sparse_compressed_ops`)."""
    if (layout is not None and layout.name != "sparse_coo") or blocksize is not None:
        from .sparse_compressed_ops import to_sparse_layout

        return to_sparse_layout(self, layout, blocksize, dense_dim)
    if self.__class__ is SparseTensor:
        return self
    sd = self.ndim if sparse_dim is None else sparse_dim
    if not 0 <= sd <= self.ndim:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{self.ndim}] "
                           f"range, but {sd} is given")
    if sd == 0 and self.ndim:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                           "self.dim()>0")
    # sparse_dim None (all dims) is the overload PyTorch names ToSparseBackward1
    return apply(convert_p, self, layout="sparse", sparse_dim=None if sparse_dim is None else sd)


def transpose(s: SparseTensor) -> SparseTensor:
    """The transpose of a sparse matrix (its index rows swapped)."""
    if len(s._shape) > 2 or s.sparse_dim() < len(s._shape):
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                           f"but self is {s.sparse_dim()} sparse and {s.dense_dim()} dense")
    return s if len(s._shape) < 2 else transpose_2d(s)


def _merge_plan(ia: np.ndarray, ib: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's sparse add as positions: one walk over both coordinate lists, taking the
    smaller coordinate (both when equal); -1 where an output takes nothing from a side."""
    ta, tb = [tuple(c) for c in ia.T.tolist()], [tuple(c) for c in ib.T.tolist()]
    na, nb = len(ta), len(tb)
    pa, pb = [], []
    i = j = 0
    while i < na or j < nb:
        c = -1 if i >= na else 1 if j >= nb else (ta[i] < tb[j]) - (ta[i] > tb[j])
        pa.append(i if c >= 0 else -1)
        pb.append(j if c <= 0 else -1)
        i += c >= 0
        j += c <= 0
    return np.array(pa, np.int64), np.array(pb, np.int64)


def _take_or_zero(v: Tensor, pos: np.ndarray) -> Tensor:
    """Rows `pos` of `v`, a zero row where `pos` is -1 (differentiable in `v`)."""
    from .creation import as_tensor
    from .join import cat

    padded = cat([v, v.new_zeros((1,) + v._shape[1:])])
    pos = np.where(pos < 0, v._shape[0], pos).reshape(1, -1)
    return apply(gather_p, padded, as_tensor(pos))


def add(a: SparseTensor, b, alpha=1) -> SparseTensor:
    """sparse + sparse as PyTorch adds them: one merge walk over both coordinate lists
    (equal coordinates summed), so coalesced inputs give a coalesced sum; where either's
    values are not contiguous (a gradient expanded from a sum), both entry lists
    concatenated instead."""
    from .creation import as_tensor

    if not isinstance(b, Tensor) or b.__class__ is not SparseTensor:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if a._shape != b._shape:
        raise RuntimeError(
            f"add: expected 'self' and 'other' to have same size, but self has size "
            f"{list(a._shape)} while other has size {list(b._shape)} (FYI: dense-sparse "
            "addition does not currently support broadcasting)")
    va, vb = values(a), values(b)
    if alpha != 1:
        vb = vb * alpha
    d = dt.promote_types(va._dtype, vb._dtype)
    if not (va.is_contiguous() and vb.is_contiguous()):  # (PyTorch: both entry lists,
        from .join import cat  # one after the other, not coalesced)

        return apply(sparse_coo_p, cat([a._sp_indices, b._sp_indices], 1),
                     cat([va.to(d), vb.to(d)]), size=a._shape, coalesced=False)
    ia, ib = a._sp_indices._array(), b._sp_indices._array()
    pa, pb = _merge_plan(ia, ib)
    idx = np.where(pa >= 0, ia[:, np.maximum(pa, 0)] if ia.size else 0,
                   ib[:, np.maximum(pb, 0)] if ib.size else 0)
    if alpha != 1 and d is dt.float32 and not (grad_mode.state.enabled and (
            a._requires_grad or b._requires_grad)):
        v = _fused_merge(values(a)._array(), values(b)._array(), pa, pb, alpha)
    else:
        v = _take_or_zero(va.to(d), pa) + _take_or_zero(vb.to(d), pb)
    return apply(sparse_coo_p, as_tensor(idx.reshape(len(ia), -1).astype(np.int64)), v,
                 size=a._shape, coalesced=a._sp_coalesced and b._sp_coalesced)


def _fused_merge(ta: np.ndarray, tb: np.ndarray, pa: np.ndarray, pb: np.ndarray,
                 alpha) -> Tensor:
    """The merged values `a + alpha * b` as PyTorch's merge computes them in float32: `a`'s
    copied, then `alpha * b` added by a BLAS axpy, one rounding per element on an FMA CPU
    (exact float64 products and sums of float32 numbers, rounded once)."""
    out = np.zeros((len(pa),) + ta.shape[1:], np.float64)
    out[pa >= 0] = ta[pa[pa >= 0]]
    out[pb >= 0] += np.float64(np.float32(alpha)) * tb[pb[pb >= 0]].astype(np.float64)
    return _wrap(out.astype(np.float32))


def scale(s: SparseTensor, c) -> SparseTensor:
    """The sparse tensor with every value multiplied by the scalar (or 0-d tensor) `c`."""
    if isinstance(c, Tensor) and (c.__class__ is SparseTensor or c.ndim):
        raise NotImplementedError("sparse * tensor is supported for a scalar factor only")
    return apply(sparse_coo_p, s._sp_indices, values(s) * c, size=s._shape,
                 coalesced=s._sp_coalesced)


def sparse_sum(s: Tensor, dim=None, dtype=None) -> Tensor:
    """Sum over all entries (a dense 0-d tensor) or over the sparse dims `dim` (sparse,
    coalesced; dense when no sparse dim is left)."""
    if s.__class__ is not SparseTensor:  # (PyTorch reads a COO tensor's indices)
        name = "".join(w.capitalize() for w in s.layout.name.split("_"))
        if dim is None:
            raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got {name}")
        backend = "CPU" if name == "Strided" else name + "CPU"
        raise NotImplementedError(f"Could not run 'aten::_indices' with arguments from the "
                                  f"'{backend}' backend.")
    v = values(s)
    if dtype is not None:
        v = v.to(dtype)
    if dim is None:
        return v.sum()
    sd = s.sparse_dim()
    dims = _sum_dims(s, dim)
    dense = [d - sd + 1 for d in dims if d >= sd]
    if dense:  # dense dims reduce within each entry's values
        v = v.sum(dense)
    keep = [d for d in range(sd) if d not in dims]
    if not keep:
        return v.sum(0)
    idx = s._sp_indices[keep]
    shape = tuple(s._shape[d] for d in keep) + tuple(
        n for d, n in enumerate(s._shape) if d >= sd and d not in dims)
    return coalesce(apply(sparse_coo_p, idx, v, size=shape, coalesced=False))


def _sum_dims(s: Tensor, dim) -> list[int]:
    """The reduced dims, wrapped and sorted; a dim named twice is refused in PyTorch's words."""
    dims = [wrap_dim(d, len(s._shape)) for d in ((dim,) if isinstance(dim, int) else dim)]
    for k, d in enumerate(dims):
        if d in dims[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return sorted(dims)


def select_first(s: SparseTensor, i: int) -> Tensor:
    """`s[i]`: the slice at index `i` of the first dim (sparse unless no sparse dim is left)."""
    from .creation import as_tensor

    n = s._shape[0]
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for dimension 0 with size {n}")
    i %= n
    rows = np.nonzero(s._sp_indices._array()[0] == i)[0]
    vals = apply(gather_p, values(s), as_tensor(rows.reshape(1, -1)))
    if s.sparse_dim() == 1:
        return vals.sum(0)
    idx = _wrap(np.ascontiguousarray(s._sp_indices._array()[1:, rows]))
    # (PyTorch flags the slice coalesced only when it holds at most one entry)
    return apply(sparse_coo_p, idx, vals, size=s._shape[1:], coalesced=len(rows) <= 1)


# --- Tensor methods --------------------------------------------------------------------

def _getitem(self: SparseTensor, key):
    if isinstance(key, int) and not isinstance(key, bool) and self._shape:
        return select_first(self, key)
    raise NotImplementedError(
        "Could not run 'aten::index' with arguments from the 'SparseCPU' backend: a sparse "
        "tensor can be indexed with one integer only. Call .to_dense() first.")


def _detach(self: SparseTensor) -> SparseTensor:
    return make_sparse(self._sp_indices, self._sp_values, self._shape, self._sp_coalesced)


def _clone(self: SparseTensor, *, memory_format=None) -> SparseTensor:
    from .copy import clone

    out = apply(sparse_coo_p, self._sp_indices.clone(), clone(values(self)), size=self._shape,
                coalesced=self._sp_coalesced)
    if out.grad_fn is not None:  # (one op in PyTorch: CloneBackward0)
        rename_node(out.grad_fn, "CloneBackward0")
    return out


def divide(s: SparseTensor, c) -> SparseTensor:
    """The sparse tensor with every value divided by the scalar (or 0-d tensor) `c` (a true
    division of each value, as PyTorch's, not a product with 1 / c)."""
    if isinstance(c, Tensor) and (c.__class__ is SparseTensor or c.ndim):
        raise NotImplementedError("sparse / tensor is supported for a scalar divisor only")
    return apply(sparse_coo_p, s._sp_indices, values(s) / c, size=s._shape,
                 coalesced=s._sp_coalesced)


def _add_(self: SparseTensor, other, *, alpha=1) -> SparseTensor:
    """In place: how the engine accumulates a sparse gradient into a sparse `.grad`."""
    return _become(self, add(self, other, alpha))


def _mul_(self: SparseTensor, c) -> SparseTensor:
    """In place scaling (SGD's sparse momentum buffer: `buf.mul_(momentum)`)."""
    # NOTE: PyTorch's in-place sparse mul_ leaves the result marked uncoalesced, even when
    # `self` was coalesced (its div_ and the out-of-place ops keep the mark): so does ember.
    out = _become(self, scale(self, c))
    out._sp_coalesced = False
    return out


def _div_(self: SparseTensor, c) -> SparseTensor:
    return _become(self, divide(self, c))


def _become(self: SparseTensor, res: SparseTensor) -> SparseTensor:
    """`self` given `res`'s pattern and values, as an in-place op (its version bumped)."""
    self._sp_indices, self._sp_values = res._sp_indices, res._sp_values
    self._sp_coalesced = res._sp_coalesced
    self._dtype = res._dtype
    if self._vc is not None:
        self._vc[0] += 1
    return self


def _radd(self: SparseTensor, other):
    if isinstance(other, Tensor):  # dense + sparse is dense, as in PyTorch
        return other + to_dense(self)
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _to(self: SparseTensor, *args, **kwargs) -> SparseTensor:
    v = values(self).to(*args, **kwargs)
    return apply(sparse_coo_p, self._sp_indices, v, size=self._shape,
                 coalesced=self._sp_coalesced)


def _sum(self: SparseTensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    out = sparse_sum(self, dim, dtype)
    if keepdim and dim is not None:  # PyTorch's sum then unsqueeze at each reduced dim
        for d in _sum_dims(self, dim):
            out = out.unsqueeze(d)  # (a sparse result's unsqueeze is sparse_shape's)
    return out


SPARSE_METHODS = {
    "coalesce": coalesce,
    "values": _public_values,
    "_values": lambda self: self._sp_values,
    "to_dense": to_dense,
    "to_sparse": to_sparse,
    "t": transpose,
    "add": add,
    "__add__": add,
    "__radd__": _radd,
    "add_": _add_,
    "__iadd__": _add_,
    "sub": lambda self, other, *, alpha=1: add(self, other, -alpha),
    "__sub__": lambda self, other: add(self, other, -1),
    "__iter__": lambda self: iter([select_first(self, i) for i in range(len(self))]),
    "__deepcopy__": lambda self, memo: _clone(self),
    "mul": scale,
    "__mul__": scale,
    "__rmul__": scale,
    "mul_": _mul_,
    "__imul__": _mul_,
    "div": divide,
    "__truediv__": divide,
    "div_": _div_,
    "__itruediv__": _div_,
    "__neg__": lambda self: scale(self, -1),
    "sum": _sum,
    "__getitem__": _getitem,
    "detach": _detach,
    "clone": _clone,
    "to": _to,
    "double": lambda self: _to(self, dt.float64),
    "float": lambda self: _to(self, dt.float32),
    "half": lambda self: _to(self, dt.float16),
    "bfloat16": lambda self: _to(self, dt.bfloat16),
    "long": lambda self: _to(self, dt.int64),
    "int": lambda self: _to(self, dt.int32),
    "bool": lambda self: _to(self, dt.bool_),
    "__repr__": lambda self, *, tensor_contents=None: _repr(self),
}


def _repr(self: SparseTensor) -> str:
    from .._printing import sparse_repr

    return sparse_repr(self)


for _name, _fn in SPARSE_METHODS.items():
    setattr(SparseTensor, _name, _fn)
del _name, _fn

TENSOR_METHODS = {"to_dense": to_dense, "to_sparse": to_sparse}

__all__ = ["sparse_coo_tensor"]
