"""matrix_exp and householder_product, composed from matmul, solve and elementwise ops (so
their gradients, and gradients of those, come from the pieces)."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..amp.autocast_mode import autocast_op
from ..ops.creation import arange, eye
from .solvers import solve

__all__ = ["matrix_exp", "householder_product"]

# Pade approximants of exp (numerator coefficients) and the 1-norm up to which each is
# accurate to double precision (Higham, "The scaling and squaring method for the matrix
# exponential revisited", 2005); past the last one the matrix is halved s times first
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1,
          9: 2.097847961257068, 13: 5.371920351148152}


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) of square matrices (batched), by scaling and squaring a Pade approximant."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2] if A.dim() > 1 else ''} by {A.shape[-1]} "
                           "matrices")
    if A.numel() == 0:
        return A.clone()
    norm = float(A.detach().abs().sum(-2).amax().item())  # the largest 1-norm in the batch
    degree = next((m for m in (3, 5, 7, 9) if norm <= _THETA[m]), 13)
    squarings = 0
    if degree == 13 and norm > _THETA[13]:
        squarings = max(0, math.ceil(math.log2(norm / _THETA[13])))
        A = A / (2.0 ** squarings)
    b = _PADE[degree]
    ident = eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
    a2 = A @ A
    if degree == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = A @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
                 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
        v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * ident
    else:
        powers = [ident, a2]
        while len(powers) <= degree // 2:
            powers.append(powers[-1] @ a2)
        u = A @ sum(b[2 * i + 1] * powers[i] for i in range(degree // 2 + 1))
        v = sum(b[2 * i] * powers[i] for i in range(degree // 2 + 1))
    r = solve(v - u, v + u)
    for _ in range(squarings):
        r = r @ r
    return r


@autocast_op("linalg_householder_product")
def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i is column
    i of A (m, n) below the diagonal with a 1 on it (LAPACK's orgqr)."""
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 "
                           "dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(A.shape)
    rows = arange(m, device=A.device)
    for i in reversed(range(k)):
        below = (rows > i).to(A.dtype)
        v = A[..., :, i] * below + (rows == i).to(A.dtype)  # (..., m)
        vq = (v.conj().unsqueeze(-1) * q).sum(-2, keepdim=True)  # v^H Q: (..., 1, n)
        q = q - tau[..., i, None, None] * v.unsqueeze(-1) * vq
    return q
