"""Sparse matrices built from dense data: `spdiags` (banded matrices from their diagonals,
the usual way finite-difference operators are assembled)."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _layout
from .._tensor import Tensor
from ._arg_parser_text import need_tensors
from .sparse_functions import sparse_coo_tensor

# PyTorch's C++ names of the layouts, which its messages print
_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr",
                 "sparse_csc": "SparseCsc", "sparse_bsr": "SparseBsr", "sparse_bsc": "SparseBsc"}


def spdiags(diagonals: Tensor, offsets: Tensor, shape, layout=None) -> Tensor:
    """A sparse (rows, cols) matrix with row `k` of `diagonals` on diagonal `offsets[k]`.

    As in SciPy, `diagonals[k, j]` goes to column j (row j - offsets[k]), so the entries of
    a superdiagonal are read from the end of its row and a subdiagonal's from the start.
    COO by default (uncoalesced, diagonal by diagonal), or `layout` sparse_csr / sparse_csc.
    """
    need_tensors("_spdiags", ("diagonals", 1, diagonals), ("offsets", 2, offsets))
    diag2 = diagonals.unsqueeze(0) if diagonals.ndim == 1 else diagonals
    if diag2.ndim != 2:
        raise RuntimeError("Diagonals must be vector or matrix")
    shape = tuple(int(s) for s in shape)
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    off1 = offsets.unsqueeze(0) if offsets.ndim == 0 else offsets
    if off1.ndim != 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if diag2.shape[0] != off1.shape[0]:
        raise RuntimeError(f"Number of diagonals ({diag2.shape[0]}) does not match the number "
                           f"of offsets ({off1.shape[0]})")
    if layout is not None and layout not in (_layout.sparse_coo, _layout.sparse_csr,
                                             _layout.sparse_csc):
        raise RuntimeError("Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, "
                           f"got {_LAYOUT_NAMES.get(layout.name, layout.name)}")
    if off1._dtype is not dt.int64:
        raise RuntimeError("Offset Tensor must have dtype Long but got "
                           f"{dt.SCALAR_TYPE_NAMES[off1._dtype.name]}")
    offs = [int(o) for o in off1.tolist()]
    if len(set(offs)) != len(offs):
        raise RuntimeError("Offset tensor contains duplicate values")
    rows, cols = shape
    length = diag2.shape[1]
    counts = []
    for o in offs:
        # NOTE: PyTorch counts a subdiagonal's entries without the column bound, and a
        # superdiagonal's without the row bound, so a non-square shape can put entries out of
        # bounds there; here each count is also clamped by the other side (the same matrix
        # wherever PyTorch's is valid). A diagonal wholly outside the matrix is an error.
        n = min(rows + o, length, cols) if o <= 0 else min(cols, length) - o
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [2, {n}]")
        counts.append(min(n, rows) if o > 0 else n)
    col = np.concatenate([np.arange(n) + max(o, 0) for o, n in zip(offs, counts)] or
                         [np.zeros(0, np.int64)]).astype(np.int64)
    which = np.repeat(np.arange(len(offs), dtype=np.int64), counts)
    row = col - np.asarray(offs, dtype=np.int64)[which] if len(offs) else col
    from .creation import tensor

    # values gathered as one index op, so autograd reaches `diagonals` (PyTorch's own
    # _spdiags has no derivative; this is a superset)
    values = diag2[tensor(which), tensor(col)]
    out = sparse_coo_tensor(tensor(np.stack([row, col])), values, shape, check_invariants=False)
    if layout is _layout.sparse_csr:
        return out.to_sparse_csr()
    if layout is _layout.sparse_csc:
        return out.to_sparse_csc()
    return out
