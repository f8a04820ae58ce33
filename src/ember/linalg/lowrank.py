"""svd_lowrank and pca_lowrank (PyTorch's top-level `torch.svd_lowrank` / `torch.pca_lowrank`):
randomized SVD by a range finder with subspace iteration (Halko, Martinsson and Tropp, 2009,
algorithms 4.4 and 5.1), composed from randn, matmul, qr and a small dense svd.

The random test matrix is drawn from the default generator with the same shape and dtype as
PyTorch draws it, so a seeded program gets the same factors."""

from __future__ import annotations

from .. import _dtype as dtypes
from .._tensor import Tensor
from ..ops.creation import ones
from ..ops.matmul import matmul
from ..ops.random_ops import randn
from ..ops.sparse_matmul import sparse_mm
from .decompositions import qr, svd

__all__ = ["pca_lowrank", "svd_lowrank"]


def _mul(a: Tensor, b: Tensor, adjoint: bool = False) -> Tensor:
    """a @ b (a^H @ b when `adjoint`), where a may be a sparse COO matrix."""
    if a.is_sparse:
        # NOTE: (b^H a)^H rather than a^H b: a sparse matrix transposes only as a whole
        return sparse_mm(b.mH, a).mH if adjoint else sparse_mm(a, b)
    return matmul(a.mH if adjoint else a, b)


def _sampling_dtype(A: Tensor):
    """The dtype of the random test matrix: A's for complex and 16/32/64-bit floats (not
    bfloat16), float32 for everything else."""
    if A.is_complex() or A.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        return A.dtype
    return dtypes.float32


def _range_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M."""

    def times(x: Tensor, adjoint: bool) -> Tensor:
        y = _mul(A, x, adjoint)
        return y if M is None else y - matmul(M.mH if adjoint else M, x)

    probe = randn(A.shape[-1], q, dtype=_sampling_dtype(A), device=A.device)
    Q = qr(times(probe, False)).Q
    for _ in range(niter):
        Q = qr(times(Q, True)).Q
        Q = qr(times(Q, False)).Q
    return Q


def _svd_lowrank(A: Tensor, q: int, niter: int, M: Tensor | None):
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # work on the tall A^H and swap U and V at the end
        A = A.t().conj() if A.is_sparse else A.mH
        M = None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = _mul(A, Q, adjoint=True).mH if A.is_sparse else matmul(Q.mH, A)  # Q^H A
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = svd(B, full_matrices=False)
    U, V = matmul(Q, U), Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank q, by randomized subspace iteration."""
    return _svd_lowrank(A, 6 if q is None else q, 2 if niter is None else niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """The rank-q randomized SVD of A with its column means removed (when `center`): the
    columns of V are the principal directions, S**2 / (m - 1) the explained variances."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if A.is_sparse:
        if A.dim() != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        means = _mul(ones(1, m, dtype=A.dtype, device=A.device), A) / m
        return _svd_lowrank(A, q, niter, means)
    return _svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter, None)
