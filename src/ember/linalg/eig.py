"""Eigen-decomposition of general square matrices: eig eigvals.

The kernel is LAPACK geev through NumPy (as PyTorch on CPU): eigenvalues in geev's
order, eigenvectors of unit norm with their largest component real; results are always
complex. The VJP is the standard one for distinct eigenvalues,
  gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(E)) V^H,
E_ij = L_j - L_i off the diagonal, with the real part taken for a real A. A loss that
depends on the free phase of an eigenvector (Im diag(V^H gV) != 0) is refused, as in
PyTorch.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ..amp.autocast_mode import autocast_op
from ..ops._common import type_name, write_out
from ..ops._linalg_batch import leading
from ..ops.creation import eye
from ..ops.linalg_ops import diag_embed
from ..ops.reduce import return_type
from ..ops.registry import Primitive, apply, defbatch, defjvp, defvjp, zero_missing
from ._common import check_matrix, fortran, fortran_strides
from .solvers import solve

EigResult = return_type("linalg_eig", ["eigenvalues", "eigenvectors"])


def _eig_kernel(a, *, compute_v):
    c = np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128
    if not np.isfinite(a).all():  # (NumPy would raise its own LinAlgError)
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if not compute_v:
        return np.ascontiguousarray(np.linalg.eigvals(a).astype(c)), np.zeros((0,), c)
    w, v = np.linalg.eig(a)
    return np.ascontiguousarray(w.astype(c)), fortran(v.astype(c))


def _eig_meta(A, *, compute_v):
    c = A._dtype.to_complex()
    w = (A._shape[:-1], c)
    if not compute_v:
        return w, ((0,), c)
    return w, (A._shape, c, fortran_strides(A._shape))


def _eig_vjp(g, out, A, *, compute_v):
    gL, gV = zero_missing(g, out)
    L, V = out
    if not compute_v:
        raise RuntimeError(
            "linalg.eig: the derivative needs the eigenvectors; call it with compute_v=True"
        )
    n = A._shape[-1]
    one = eye(n, dtype=L._dtype, device=L.device)
    Lc = L.conj()
    E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + one
    VhgV = V.mH @ gV
    phase = VhgV.diagonal(0, -2, -1).imag.detach().numpy()
    if np.abs(phase).max(initial=0.0) > 1e-2:
        raise RuntimeError(
            "linalg_eig_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined."
        )
    inner = VhgV - V.mH @ (V * VhgV.diagonal(0, -2, -1).real.unsqueeze(-2))
    inner = inner / E * (1 - one) + diag_embed(gL)
    gA = solve(V.mH, inner @ V.mH)
    return gA if A._dtype.is_complex else gA.real


eig_p = Primitive("linalg_eig", _eig_kernel, _eig_meta, n_outputs=2,
                  grad_name="LinalgEigBackward0")
defvjp(eig_p, _eig_vjp, reads=((0,),), save_output=True)


def _eig_jvp(primals, tangents, out, *, compute_v):
    """With C = V^-1 dA V: dL = diag(C), and dV = V (F o C) (F_ij = 1 / (l_j - l_i) off
    the diagonal), then kept in geev's gauge: each column of unit norm (the real part of
    v^H dv removed) with its largest component real (the imaginary part there removed)."""
    (A,), (dA,) = primals, tangents
    L, V = out if compute_v else apply(eig_p, A, compute_v=True)
    C = solve(V, dA.to(V._dtype) @ V)
    dL = C.diagonal(0, -2, -1)
    if not compute_v:
        return dL, None
    one = eye(A._shape[-1], dtype=L._dtype, device=L.device)
    dV = V @ ((1 - one) / (L.unsqueeze(-2) - L.unsqueeze(-1) + one) * C)
    dV = dV - V * (V.conj() * dV).sum(-2, keepdim=True).real
    top = V.abs().argmax(-2, keepdim=True)
    dV = dV - V * ((dV.gather(-2, top) / V.gather(-2, top)).imag * 1j)
    return dL, dV


defjvp(eig_p, _eig_jvp)
defbatch(eig_p, leading(eig_p, lambda params: () if params["compute_v"] else (1,)))


def _check(A: Tensor, fname: str) -> None:
    if isinstance(A, Tensor):
        d = A._dtype
        if d._kind < 2:
            raise RuntimeError(f"Unknown Complex ScalarType for {type_name(d)}")
    check_matrix(A, fname, square=True, low_ok=True)
    if A._dtype in (dt.float16, dt.bfloat16):  # (no kernel, found after the shape checks)
        raise NotImplementedError(
            f'"linalg_eig_out_cpu" not implemented for \'{type_name(A._dtype)}\'')


@autocast_op("linalg_eig")
def eig(A: Tensor, *, out=None) -> EigResult:
    """Eigenvalues and unit eigenvectors of a square matrix, both complex."""
    _check(A, "linalg.eig")
    res = EigResult(*apply(eig_p, A, compute_v=True))
    _check_out_cast("torch.linalg.eig", res, out, ("eigenvalues", "eigenvectors"))
    return write_out(res, out)


def _check_out_cast(fname: str, res, out, names) -> None:
    """`out=` takes what the complex results cast to safely, refused in eig's own words."""
    if out is None:
        return
    pairs = zip(res, out, names) if isinstance(out, (tuple, list)) else [(res, out, names[0])]
    for r, o, name in pairs:
        if isinstance(o, Tensor) and not dt.can_cast(r._dtype, o._dtype):
            raise RuntimeError(f"{fname}: Expected {name} to be safely castable from "
                               f"{type_name(r._dtype)} dtype, but got {name} with dtype "
                               f"{type_name(o._dtype)}")


@autocast_op("linalg_eigvals")
def eigvals(A: Tensor, *, out=None) -> Tensor:
    """Eigenvalues of a square matrix (complex); vectors only when a gradient needs them."""
    _check(A, "linalg.eigvals")
    uv = A._requires_grad and grad_mode.state.enabled
    res = apply(eig_p, A, compute_v=uv)[0]
    _check_out_cast("torch.linalg.eigvals", res, out, ("eigenvalues",))
    return write_out(res, out)
