"""Inverse and solve of tensors read as matrices: tensorinv and tensorsolve reshape their
operand to a square matrix, as PyTorch does, and call linalg.inv / linalg.solve."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..amp.autocast_mode import autocast_op
from ..ops._common import write_out
from ._common import LinAlgError
from .solvers import inv, solve


@autocast_op("linalg_tensorinv")
def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The tensor X with tensordot(X, A, ind) the identity: A's first `ind` dims and the rest
    read as one square matrix, inverted, and shaped A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = A._shape[ind:], A._shape[:ind]
    n, m = math.prod(rows), math.prod(cols)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {n} != {m}")
    try:
        X = inv(A.reshape(n, n))
    except LinAlgError as exc:  # (PyTorch names the check "inv" here, not "linalg.inv")
        raise LinAlgError("inv:" + str(exc).split(":", 1)[1]) from None
    return write_out(X.reshape(rows + cols), out)


@autocast_op("linalg_tensorsolve")
def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B: A (its `dims` moved last first) read as a
    (B.numel(), rest) square matrix; X has the shape of A's trailing dims."""
    if dims is not None:
        dims = tuple(dims)
        A = A.movedim(dims, tuple(range(A.ndim - len(dims), A.ndim)))
    shape = A._shape[B.ndim:]
    n, m = math.prod(shape), math.prod(B._shape)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {n} != {m}")
    return write_out(solve(A.reshape(m, n), B.flatten()).reshape(shape), out)
