"""lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
generalized problem A x = lambda B x, by Knyazev's locally optimal block preconditioned
conjugate gradient method, as `torch.lobpcg`.

Each step takes the Rayleigh-Ritz pairs of A on the span of the current block X, its
(preconditioned) residuals and the previous step's direction, B-orthonormalised by SVQB
(Stathopoulos and Wu, 2002). `method` "basic" and "ortho" name PyTorch's two bookkeeping
variants of the same iteration; ember runs this one for both: the eigenpairs they converge
to agree within the tolerance, not the iterates. The iteration runs in float64 NumPy.

Gradients flow to A (and B) through the eigenvalues: when A or B requires grad, E is
returned as the Rayleigh quotient x^T A x / x^T B x of each (fixed) eigenvector, whose
derivative x x^T / x^T B x (and -E times that for B) is the eigenvalue's. The eigenvectors'
derivative (PyTorch's partial-eigenspace formula) is not built: X does not require grad.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..ops.creation import from_numpy
from ..ops.random_ops import randn
from ..ops.registry import rename_node

__all__ = ["lobpcg"]

_FEPS = {dt.float32: 1.2e-07, dt.float64: 2.23e-16}


def _b_orthonormal(S: np.ndarray, B: np.ndarray | None) -> np.ndarray:
    """Columns spanning what S spans, B-orthonormal, near-dependent directions dropped."""
    for _ in range(2):  # (a second pass repairs what rounding left of the first)
        G = S.T @ (S if B is None else B @ S)
        d = np.sqrt(np.abs(np.diag(G)))
        d[d == 0] = 1.0
        w, V = np.linalg.eigh((G / d[:, None] / d[None, :] + G.T / d[:, None] / d[None, :]) / 2)
        keep = w > max(w.max(), 0.0) * 1e-14
        S = (S / d) @ (V[:, keep] / np.sqrt(w[keep]))
    return S


def _ritz(S: np.ndarray, A: np.ndarray, n: int, largest: bool):
    w, C = np.linalg.eigh((S.T @ A @ S + (S.T @ A @ S).T) / 2)
    order = np.argsort(-w if largest else w, kind="stable")[:n]
    return w[order], S @ C[:, order]


def _run(A, B, X, iK, k: int, niter: int, tol: float, largest: bool):
    """(E, X): n Ritz pairs after the iteration, the first k converged (or niter spent)."""
    n = X.shape[1]
    a_norm = np.linalg.norm(A, 2)
    b_norm = 1.0 if B is None else np.linalg.norm(B, 2)
    E, X = _ritz(_b_orthonormal(X, B), A, n, largest)
    P = None
    for _ in range(niter):
        BX = X if B is None else B @ X
        R = A @ X - BX * E
        rerr = np.linalg.norm(R, axis=0) / (np.linalg.norm(X, axis=0)
                                            * (a_norm + np.abs(E) * b_norm))
        if np.all(rerr[:k] < tol):
            break
        W = R if iK is None else iK @ R
        blocks = [X, W] if P is None else [X, W, P]
        S = _b_orthonormal(np.hstack(blocks), B)
        if S.shape[1] < n:
            break
        E, Xn = _ritz(S, A, n, largest)
        P = Xn - X @ (BX.T @ Xn)  # (the step's direction: the new block off the old one)
        X = Xn
    return E, X


def _rayleigh(A: Tensor, B: Tensor | None, X: Tensor) -> Tensor:
    """diag(X^T A X) / diag(X^T B X) for fixed X: the eigenvalues, differentiable in A, B."""
    X = X.detach()
    num = (X * (A @ X)).sum(-2)
    E = num if B is None else num / (X * (B @ X)).sum(-2)
    rename_node(E.grad_fn, "LOBPCGAutogradFunctionBackward")
    return E


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(E, X): the k largest (`largest`, the default) or smallest eigenvalues of the
    symmetric A (generalized: A x = E B x) and their eigenvectors, by LOBPCG."""
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    d = A.dtype if A.dtype in _FEPS else dt.float32
    tol = _FEPS[d] ** 0.5 if tol is None else tol
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows "
                         f"(={m}) is smaller than 3 x the number of requested eigenpairs "
                         f"(={n})")
    niter = 1000 if niter is None else niter
    largest = True if largest is None else largest
    grad = A.requires_grad or (B is not None and B.requires_grad)
    if grad:  # (as PyTorch: symmetric parts, so a gradient step keeps A symmetric)
        A = (A + A.mT) / 2
        B = (B + B.mT) / 2 if B is not None else None
    batch = tuple(A.shape[:-2])
    a = np.asarray(A.detach().numpy(), np.float64).reshape((-1, m, m))
    b = None if B is None else np.asarray(B.detach().numpy(), np.float64).reshape((-1, m, m))
    pre = None if iK is None else np.asarray(iK.detach().numpy(), np.float64)
    x0 = None if X is None else np.asarray(X.detach().numpy(), np.float64).reshape((-1, m, n))
    Es, Xs = [], []
    for i in range(a.shape[0]):
        xi = randn(m, n, dtype=d).numpy().astype(np.float64) if x0 is None else x0[i]
        if xi.shape != (m, n):
            raise AssertionError(f"X shape mismatch: got {tuple(xi.shape)}, expected {(m, n)}")
        E_, X_ = _run(a[i], None if b is None else b[i], xi, pre, k, niter, tol, largest)
        Es.append(E_[:k])
        Xs.append(X_[:, :k])
    E = from_numpy(np.stack(Es).reshape(batch + (k,)).astype(d.np))
    Xr = from_numpy(np.stack(Xs).reshape(batch + (m, k)).astype(d.np))
    if grad:
        E = _rayleigh(A, B, Xr)
    return E, Xr
