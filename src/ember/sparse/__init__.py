"""`ember.sparse`: functions on sparse COO tensors (`ember.sparse_coo_tensor`,
`Tensor.to_sparse()`), as `torch.sparse` offers them.

The tensor type and its primitives live in the op layer (`ember/ops/sparse_tensor.py`,
`sparse_ops.py`, `sparse_functions.py`); this package is their public face.
"""

from __future__ import annotations

from .._tensor import Tensor
from ..ops import sparse_functions as _ops


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """sparse (m, k) @ dense (k, n). Unlike `ember.mm`, the gradient for the sparse operand
    is sparse, on that operand's coalesced pattern (PyTorch's SparseAddmmBackward0)."""
    if reduce is not None:
        raise NotImplementedError("sparse.mm: the reduce argument is not supported")
    if not mat1.is_sparse:
        return mat1.mm(mat2)
    return _ops.mm(mat1, mat2, masked=True)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """Sum of every entry (a dense 0-d tensor), or over the sparse dims in `dim`."""
    return _ops.sparse_sum(input, dim, dtype)


__all__ = ["mm", "sum"]
