"""`ember.sparse`: functions on sparse COO tensors (`ember.sparse_coo_tensor`,
`Tensor.to_sparse()`), as `torch.sparse` offers them.

The tensor type and its primitives live in the op layer (`ember/ops/sparse_tensor.py`,
`sparse_ops.py`, `sparse_functions.py`); this package is their public face.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops import sparse_compressed as _compressed
from ..ops import sparse_compressed_ops as _compressed_ops
from ..ops import sparse_functions as _ops
from ..ops import sparse_matmul as _products
from ..ops.sparse_factories import spdiags
from ..ops.sparse_invariants import check_sparse_tensor_invariants
from ..ops.sparse_softmax import log_softmax, softmax


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """mat1 @ mat2 with a sparse operand (or two). Unlike `ember.mm`, the gradient for a
    sparse operand is sparse, on that operand's coalesced pattern (PyTorch's
    SparseAddmmBackward0, SparseSparseMatmulBackward0); a dense mat1 is computed as
    (mat2^T @ mat1^T)^T."""
    if reduce is not None:
        raise NotImplementedError("sparse.mm: the reduce argument is not supported")
    if mat1.__class__ is _compressed.CompressedTensor:
        return _compressed_ops.sparse_mm(mat1, mat2)
    return _products.sparse_mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0) -> Tensor:
    """beta * mat + alpha * (sparse mat1 @ dense mat2), with the sparse gradient of
    `sparse.mm` for mat1 (SparseAddmmBackward0)."""
    if mat1.__class__ is _compressed.CompressedTensor:
        return _compressed_ops.addmm(mat, mat1, mat2, beta=beta, alpha=alpha, masked=True)
    if not mat1.is_sparse and not mat2.is_sparse and not mat.is_sparse:
        from ..ops.matmul import addmm as _dense_addmm

        return _dense_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
    return _products.addmm(mat, mat1, mat2, beta=beta, alpha=alpha, masked=True)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """Sum of every entry (a dense 0-d tensor), or over the sparse dims in `dim`."""
    return _ops.sparse_sum(input, dim, dtype)


__all__ = ["addmm", "check_sparse_tensor_invariants", "log_softmax", "mm", "softmax", "spdiags",
           "sum"]
