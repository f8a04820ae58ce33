"""Functions that keep a sparse COO tensor's pattern and compute new values on it:
`sparse.softmax` / `sparse.log_softmax` (unspecified entries count as -inf, so each
softmax runs over the specified entries of its line) and `Tensor.sparse_mask` (a dense
tensor read at a sparse tensor's coordinates). Composed from ember ops, so gradients flow
to the values (or to the dense tensor) by the ops' own rules.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap
from .._view import wrap_dim
from .registry import apply, rename_node
from .sparse_functions import coalesce, values
from .sparse_ops import sparse_coo_p
from .sparse_tensor import SparseTensor


def _groups(indices: np.ndarray, dim: int) -> tuple[np.ndarray, int]:
    """For each specified entry, the number of its line along sparse dim `dim` (entries
    that agree on every other sparse coordinate), and the number of lines."""
    other = np.delete(indices, dim, axis=0)
    if other.shape[0] == 0:  # (a 1-D pattern: one line)
        return np.zeros(indices.shape[1], np.int64), 1
    _, group = np.unique(other, axis=1, return_inverse=True)
    group = group.reshape(-1).astype(np.int64)
    return group, int(group.max()) + 1 if group.size else 0


def _line_softmax(v: Tensor, group: np.ndarray, lines: int, log: bool) -> Tensor:
    """Softmax of the rows of `v` that share a line number, per dense column."""
    from .creation import zeros

    g = _wrap(group)
    shape = (lines,) + tuple(v.shape[1:])
    where = g.reshape((-1,) + (1,) * (v.ndim - 1)).expand(v.shape)
    peak = zeros(shape, dtype=v.dtype).scatter_reduce(0, where, v.detach(), "amax",
                                                      include_self=False)
    shifted = v - peak[g]
    e = shifted.exp()
    total = zeros(shape, dtype=v.dtype).index_add(0, g, e)
    return shifted - total.log()[g] if log else e / total[g]


def _softmax(input: Tensor, dim: int, dtype, log: bool) -> SparseTensor:
    name = "_sparse_log_softmax" if log else "_sparse_softmax"
    if input.__class__ is not SparseTensor:
        raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the "
                                  "'CPU' backend.")
    d = wrap_dim(dim, len(input._shape))
    s = coalesce(input)
    v = values(s)
    if dtype is not None:
        v = v.to(dtype)
    sd = s.sparse_dim()
    if d >= sd:  # a dense dim: an ordinary softmax of the values
        out = v.log_softmax(d - sd + 1) if log else v.softmax(d - sd + 1)
    else:
        group, lines = _groups(s._sp_indices._array(), d)
        out = _line_softmax(v, group, lines, log)
    return _named(apply(sparse_coo_p, s._sp_indices, out, size=s._shape, coalesced=True),
                  "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0")


def _named(out: SparseTensor, node: str) -> SparseTensor:
    """`out` with its graph node named as PyTorch's (when it has one)."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, node)
    return out


def softmax(input: Tensor, dim: int, *, dtype=None) -> SparseTensor:
    """Softmax along `dim` over the specified entries only (a sparse result, coalesced)."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> SparseTensor:
    """Log-softmax along `dim` over the specified entries only (sparse, coalesced)."""
    return _softmax(input, dim, dtype, log=True)


def sparse_mask(self: Tensor, mask: Tensor) -> SparseTensor:
    """The entries of the dense `self` at the coordinates of the sparse `mask` (its pattern
    as it is, duplicates included), as a sparse tensor."""
    if mask.__class__ is not SparseTensor or self.__class__ is SparseTensor:
        raise NotImplementedError("Could not run 'aten::sparse_mask' with arguments from the "
                                  "'CPU' backend.")
    if tuple(self._shape) != tuple(mask._shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self._shape)} but mask has size {list(mask._shape)}")
    idx = mask._sp_indices
    vals = self[tuple(idx[d] for d in range(mask.sparse_dim()))]
    return _named(apply(sparse_coo_p, idx, vals, size=mask._shape,
                        coalesced=mask._sp_coalesced), "SparseMaskBackward0")


TENSOR_METHODS = {"sparse_mask": sparse_mask}

__all__: list[str] = []
