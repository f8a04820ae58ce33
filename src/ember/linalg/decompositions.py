"""Factorisations: cholesky qr svd eigh (and svdvals / eigvalsh on top of them).

Kernels call NumPy's LAPACK wrappers, batched over leading dims; results come back
column-major per matrix as in PyTorch. The VJPs are the standard formulas, written
with ember ops so they differentiate again:
  cholesky  gA = L^-H Phi(L^H gL) L^-1, Phi = lower triangle + its mirror, half the diagonal
  qr        gA = (gQ + Q copyltu(M)) R^-H, M = R gR^H - gQ^H Q (m >= n; wide A splits)
  eigh      gA = V (diag(gL) + F o (X - X^H) / 2) V^H, X = V^H gV, F_ij = 1 / (l_j - l_i)
  svd       the formula for distinct singular values (see `_svd_vjp`).
The forward rules beside them differentiate what the kernel reads: cholesky and eigh
read one triangle of A (LAPACK's), so their tangent is that triangle's, mirrored.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ..amp.autocast_mode import autocast_op
from ..ops._linalg_batch import leading
from ..ops.creation import eye, zeros
from ..ops.join import cat
from ..ops.linalg_ops import diag_embed
from ..ops.reduce import return_type
from ..ops.registry import Primitive, apply, defbatch, defjvp, defvjp, zero_missing
from ._common import (
    LinAlgError,
    batch_prefix,
    check_matrix,
    exact_out,
    fortran,
    fortran_strides,
    hermitian_part,
    svd_np,
    torch_args,
)
from .solvers import solve_triangular

# --- cholesky ---------------------------------------------------------------------------


def _fails(m: np.ndarray) -> bool:
    """Whether LAPACK's potrf stops on `m` (lower triangle read): a pivot that is not
    positive, or NaN (OpenBLAS, under NumPy, lets a NaN pivot through; LAPACK does not)."""
    try:
        return bool(np.isnan(np.diagonal(np.linalg.cholesky(m))).any())
    except np.linalg.LinAlgError:
        return True


def _not_pd_order(m: np.ndarray) -> int:
    """Order of the first leading minor that is not positive-definite (binary search)."""
    lo, hi = 1, m.shape[-1]
    while lo < hi:
        mid = (lo + hi) // 2
        if _fails(m[:mid, :mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _partial_factor(m: np.ndarray, k: int) -> np.ndarray:
    """What potrf leaves when pivot `k` (1-based) fails: the first k-1 columns of L, the
    failing pivot's value (a_kk minus its row's squares, not rooted) on the diagonal, and
    the rest of the lower triangle as it was read."""
    j = k - 1
    out = np.tril(m)
    if j:
        L11 = np.linalg.cholesky(m[:j, :j])
        out[:j, :j] = L11
        out[j:, :j] = np.linalg.solve(L11, m[j:, :j].conj().T).conj().T
    out[j, j] = m[j, j].real - np.sum(np.abs(out[j, :j]) ** 2)
    return out


def _potrf2(a: np.ndarray) -> int:
    """Reference LAPACK's recursive potrf2 on the lower triangle of `a`, in place: factor
    the leading half, solve the block below it, update the trailing half, recurse. Returns
    the 1-based order of a failing pivot, 0 when all factor."""
    n = a.shape[0]
    if n == 1:
        d = a[0, 0].real
        if not d > 0:
            return 1
        a[0, 0] = np.sqrt(d)
        return 0
    n1 = n // 2
    k = _potrf2(a[:n1, :n1])
    if k:
        return k
    a[n1:, :n1] = np.linalg.solve(a[:n1, :n1], a[n1:, :n1].conj().T).conj().T
    a[n1:, n1:] -= np.tril(a[n1:, :n1] @ a[n1:, :n1].conj().T)
    k = _potrf2(a[n1:, n1:])
    return k + n1 if k else 0


def _reference_partial(m: np.ndarray) -> np.ndarray:
    """What reference LAPACK's potrf (MLX's) leaves: blocks of 64 columns, each updated by
    the columns before it and factored by potrf2, the rows below solved once it factors."""
    a = np.tril(m)
    n, nb = a.shape[0], 64
    for j in range(0, n, nb):
        e = min(j + nb, n)
        a[j:e, j:e] -= np.tril(a[j:e, :j] @ a[j:e, :j].conj().T)
        if _potrf2(a[j:e, j:e]):
            break
        a[e:, j:e] -= a[e:, :j] @ a[j:e, :j].conj().T
        a[e:, j:e] = np.linalg.solve(a[j:e, j:e], a[e:, j:e].conj().T).conj().T
    return a


def _factor_lower(m: np.ndarray, partial) -> np.ndarray:
    """L of each matrix's lower triangle; a matrix that does not factor raises PyTorch's
    error, or gives the partial factor that PyTorch's LAPACK (`partial` True: cholesky_ex)
    or reference LAPACK (`partial` "reference": MLX's) leaves."""
    try:
        low = np.linalg.cholesky(m)
        if not np.isnan(np.diagonal(low, axis1=-2, axis2=-1)).any():
            return low
    except np.linalg.LinAlgError:
        pass
    flat = m.reshape((-1,) + m.shape[-2:])
    out = np.empty_like(flat)
    for i, mi in enumerate(flat):
        k = _not_pd_order(mi) if _fails(mi) else 0
        if k and not partial:
            raise LinAlgError(
                f"linalg.cholesky: {batch_prefix(m.shape, i)}The factorization could not be "
                "completed because the input is not positive-definite (the leading minor of "
                f"order {k} is not positive-definite).")
        if k and partial == "reference":
            out[i] = _reference_partial(mi)
        else:
            out[i] = _partial_factor(mi, k) if k else np.linalg.cholesky(mi)
    return out.reshape(m.shape)


def _cholesky_kernel(a, *, upper, partial=False):
    # NOTE: LAPACK reads the triangle it is told to: `upper` factors A's upper triangle as
    # U^H U, which is the lower factor of A^H (conjugate-transposed back).
    if not upper:
        return fortran(_factor_lower(a, partial))
    u = np.triu(np.swapaxes(_factor_lower(np.swapaxes(a, -1, -2).conj(), partial), -1, -2)
                .conj())
    if np.iscomplexobj(u):  # a real diagonal (+0j, as LAPACK's, not conj's -0j)
        idx = np.arange(u.shape[-1])
        u[..., idx, idx] = u[..., idx, idx].real
    return fortran(u)


def _cholesky_vjp(g, out, A, *, upper, partial=False):
    L = out.mH if upper else out
    gL = g.mH if upper else g
    P = (L.mH @ gL).tril()
    # Phi*(L^H gL) made Hermitian off the diagonal: 0.5 * (P + P^H - diag(P)), as PyTorch.
    M = 0.5 * (P + P.tril(-1).mH)
    S = solve_triangular(L.mH, M, upper=True)
    return solve_triangular(L, S, upper=False, left=False)


cholesky_p = Primitive("linalg_cholesky", _cholesky_kernel,
                       lambda A, *, upper, partial=False: (A._shape, A._dtype,
                                                           fortran_strides(A._shape)),
                       grad_name="LinalgCholeskyExBackward0")
defvjp(cholesky_p, _cholesky_vjp, reads=((),), save_output=True)


def _cholesky_jvp(primals, tangents, out, *, upper, partial=False):
    """dL = L Phi(L^-1 dA L^-H), Phi = the strict lower triangle and half the diagonal;
    dA is what the kernel reads (its lower or upper triangle, mirrored)."""
    L = out.mH if upper else out
    dA = hermitian_part(tangents[0], "U" if upper else "L")
    Y = solve_triangular(L, dA, upper=False)
    X = solve_triangular(L, Y.mH, upper=False)
    dL = L @ (X.tril(-1) + 0.5 * diag_embed(X.diagonal(0, -2, -1)))
    return dL.mH if upper else dL


defjvp(cholesky_p, _cholesky_jvp)
defbatch(cholesky_p, leading(cholesky_p))


@torch_args("linalg_cholesky", names={"A": "input"}, flags=("upper",))
@autocast_op("linalg_cholesky")
def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """L with A = L L^H for Hermitian positive-definite A (U = L^H when `upper`)."""
    check_matrix(A, "linalg.cholesky", square=True)
    return exact_out(apply(cholesky_p, A, upper=upper), out)


CholeskyExResult = return_type("linalg_cholesky_ex", ["L", "info"])


@torch_args("linalg_cholesky_ex", names={"A": "input"}, flags=("upper", "check_errors"))
@autocast_op("linalg_cholesky_ex")
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,
                out=None) -> CholeskyExResult:
    """cholesky(A) with an info code per matrix (the order of the first leading minor that
    is not positive-definite) instead of raising; a failing matrix gives what LAPACK's
    potrf leaves (its factored columns and the failing pivot), as PyTorch returns."""
    check_matrix(A, "linalg.cholesky_ex", square=True)
    if check_errors:
        try:
            L = cholesky(A, upper=upper)
        except LinAlgError as exc:  # named by the _ex function, as PyTorch's check names it
            name, rest = str(exc).split(":", 1)
            raise LinAlgError(f"{name}_ex:{rest}") from None
    else:
        L = apply(cholesky_p, A, upper=upper, partial=True)
    # a factored pivot is positive; the failing one is not (or NaN): its order is the code
    d = L.detach().diagonal(0, -2, -1)
    bad = ~((d.real if d.is_complex() else d) > 0)
    if L._shape[-1] == 0:  # (nothing to fail)
        info = zeros(L._shape[:-2], dtype=dt.int32, device=L.device)
    else:
        info = ((bad.to(dt.int32).argmax(-1) + 1) * bad.any(-1)).to(dt.int32)
    return exact_out(CholeskyExResult(L, info), out)


# --- qr -------------------------------------------------------------------------------

QRResult = return_type("linalg_qr", ["Q", "R"])


def _qr_kernel(a, *, mode):
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.zeros((0,), a.dtype), fortran(r)
    q, r = np.linalg.qr(a, mode=mode)
    return fortran(q), fortran(r)


def _qr_meta(A, *, mode):
    m, n = A._shape[-2:]
    k = min(m, n)
    batch = A._shape[:-2]
    rq = k if mode != "complete" else m
    r_shape = batch + (rq, n)
    q_shape = (0,) if mode == "r" else batch + (m, rq)
    return ((q_shape, A._dtype, fortran_strides(q_shape)),
            (r_shape, A._dtype, fortran_strides(r_shape)))


def _copyltu(M: Tensor) -> Tensor:
    """The Hermitian matrix with M's strict lower triangle, and the real part of its diagonal."""
    low = M.tril(-1)
    return low + low.mH + diag_embed(M.diagonal(0, -2, -1).real)


def _qr_tall_vjp(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor) -> Tensor:
    M = R @ gR.mH - gQ.mH @ Q
    b = gQ + Q @ _copyltu(M)
    return solve_triangular(R.mH, b, upper=False, left=False)


def _qr_differentiable(mode: str, m: int, n: int) -> None:
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."
        )
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def _qr_vjp(g, out, A, *, mode, in_shape):
    gQ, gR = zero_missing(g, out)
    Q, R = out
    m, n = in_shape[-2:]
    _qr_differentiable(mode, m, n)
    if m >= n:
        return _qr_tall_vjp(gQ, gR, Q, R)
    # Wide A = [X | Y]: X = Q R1 is a square QR, and Y = Q R2 just rides along.
    gR1, gR2 = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
    Y = Q @ R.narrow(-1, m, n - m)
    gX = _qr_tall_vjp(gQ + Y @ gR2.mH, gR1, Q, R.narrow(-1, 0, m))
    gY = Q @ gR2
    put_x = eye(m, n, dtype=Q._dtype, device=Q.device)
    put_y = eye(n, dtype=Q._dtype, device=Q.device).narrow(0, m, n - m)
    return gX @ put_x + gY @ put_y


# The factorisations' rules read their outputs and the input's shape, not the input: as in
# PyTorch, an in-place op on A after the call leaves backward intact.
qr_p = Primitive("linalg_qr", _qr_kernel, _qr_meta, n_outputs=2, grad_name="LinalgQrBackward0")
defvjp(qr_p, _qr_vjp, reads=((),), save_output=True, in_shape=True)


def _qr_tall_jvp(dA: Tensor, Q: Tensor, R: Tensor) -> tuple[Tensor, Tensor]:
    """With C = Q^H dA R^-1: Q^H dQ = Om (skew-Hermitian, from C's strict lower triangle)
    and dR R^-1 = C - Om (upper triangular)."""
    C = solve_triangular(R, Q.mH @ dA, upper=True, left=False)
    low = C.tril(-1)
    Om = low - low.mH
    if C._dtype.is_complex:  # R's diagonal is real: the imaginary diagonal is Q's
        Om = Om + diag_embed(C.diagonal(0, -2, -1).imag * 1j)
    K = C - Om
    return solve_triangular(R, dA, upper=True, left=False) - Q @ K, K @ R


def _qr_jvp(primals, tangents, out, *, mode):
    (A,), (dA,) = primals, tangents
    Q, R = out
    m, n = A._shape[-2:]
    _qr_differentiable(mode, m, n)
    if m >= n:
        return _qr_tall_jvp(dA, Q, R)
    # wide A = [X | Y]: X = Q R1 is a square QR and R2 = Q^H Y
    dQ, dR1 = _qr_tall_jvp(dA.narrow(-1, 0, m), Q, R.narrow(-1, 0, m))
    dR2 = dQ.mH @ A.narrow(-1, m, n - m) + Q.mH @ dA.narrow(-1, m, n - m)
    return dQ, cat([dR1, dR2], -1)


defjvp(qr_p, _qr_jvp)
defbatch(qr_p, leading(qr_p, lambda params: (0,) if params["mode"] == "r" else ()))


@autocast_op("linalg_qr")
def qr(A: Tensor, mode: str = "reduced", *, out=None) -> QRResult:
    """Q R factorisation (Householder, as LAPACK's geqrf): mode 'reduced', 'complete' or 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'"
        )
    check_matrix(A, "linalg.qr")
    return exact_out(QRResult(*apply(qr_p, A, mode=mode)), out)


# --- svd ------------------------------------------------------------------------------

SVDResult = return_type("linalg_svd", ["U", "S", "Vh"])


def _svd_kernel(a, *, full_matrices, compute_uv):
    m, n = a.shape[-2:]
    k = min(m, n)
    real = a.real.dtype
    batch = a.shape[:-2]
    if k == 0:
        s = np.zeros(batch + (0,), real)
        if not compute_uv:
            return np.zeros((0,), a.dtype), s, np.zeros((0,), a.dtype)
        u = np.broadcast_to(np.eye(m, m if full_matrices else 0, dtype=a.dtype), batch + (m, m
                            if full_matrices else 0)).copy()
        vh = np.broadcast_to(np.eye(n if full_matrices else 0, n, dtype=a.dtype), batch + (
            n if full_matrices else 0, n)).copy()
        return fortran(u), s, fortran(vh)
    if not compute_uv:
        s = svd_np(a, compute_uv=False)
        return np.zeros((0,), a.dtype), np.ascontiguousarray(s), np.zeros((0,), a.dtype)
    u, s, vh = svd_np(a, full_matrices=full_matrices)
    return fortran(u), np.ascontiguousarray(s), fortran(vh)


def _svd_meta(A, *, full_matrices, compute_uv):
    m, n = A._shape[-2:]
    k = min(m, n)
    batch = A._shape[:-2]
    s = (batch + (k,), A._dtype.to_real())
    if not compute_uv:
        return ((0,), A._dtype), s, ((0,), A._dtype)
    u = batch + (m, m if full_matrices else k)
    vh = batch + (n if full_matrices else k, n)
    return (u, A._dtype, fortran_strides(u)), s, (vh, A._dtype)


def _phase_dependent(excess: Tensor) -> bool:
    """Whether a loss depends on the free phase of complex singular / eigen vectors: any
    entry of `excess` (how far it is past PyTorch's allclose tolerance) above zero. A host
    read, as PyTorch's check is; skipped for a tensor a transform batches or traces."""
    if excess.__class__ is not Tensor:
        return False
    return bool(np.max(excess.detach().numpy(), initial=0.0) > 0)


def _svd_vjp(g, out, A, *, full_matrices, compute_uv, in_shape):
    """Gradient of A = U diag(S) Vh for distinct, nonzero singular values:
    U [F o (skew(U^H gU) S + S skew(V^H gV)) + diag(gS)] Vh + the parts of gU, gVh outside
    the spans of U and V, with F_ij = 1 / (s_j^2 - s_i^2) and skew(X) = X - X^H."""
    gU, gS, gVh = zero_missing(g, out)
    U, S, Vh = out
    if not compute_uv:
        raise RuntimeError(
            "linalg.svd: the derivative needs the singular vectors; call it with compute_uv=True"
        )
    m, n = in_shape[-2:]
    k = min(m, n)
    if full_matrices and m != n:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    dtype = U._dtype  # (the input's)
    if g[0] is None and g[2] is None:
        # only S is used: U diag(gS) Vh, finite for repeated or zero singular values
        return (U * gS.to(dtype).unsqueeze(-2)) @ Vh
    Sc = S.to(dtype)
    UhgU = U.mH @ gU
    VhgV = Vh @ gVh.mH
    if dtype.is_complex and (g[0] is not None or g[2] is not None):
        # PyTorch's check: Im diag(U^H gU) == -Im diag(V^H gV) (allclose, 1e-2 both ways)
        a, b = UhgU.diagonal(0, -2, -1).imag, -VhgV.diagonal(0, -2, -1).imag
        if _phase_dependent((a - b).abs() - 1e-2 - 1e-2 * b.abs()):
            raise RuntimeError(
                "svd_backward: The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "phase term, making it ill-defined.")
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye(k, dtype=S._dtype, device=S.device)
    inner = ((UhgU - UhgU.mH) * Sc.unsqueeze(-2) + Sc.unsqueeze(-1) * (VhgV - VhgV.mH)) / E
    inner = inner + diag_embed(gS.to(dtype))
    if dtype.is_complex:
        # NOTE: the phase of each singular pair is free; only U^H gU's imaginary diagonal
        # reaches A, through Im(diag(U^H gU)) / s (PyTorch's svd_backward keeps this term).
        inner = inner + diag_embed(UhgU.diagonal(0, -2, -1).imag / S * 1j)
    gA = U @ inner @ Vh
    if m > k:
        gA = gA + ((gU - U @ UhgU) / Sc.unsqueeze(-2)) @ Vh
    if n > k:
        gA = gA + U @ ((gVh - VhgV.mH @ Vh) / Sc.unsqueeze(-1))
    return gA


svd_p = Primitive("linalg_svd", _svd_kernel, _svd_meta, n_outputs=3,
                  grad_name="LinalgSvdBackward0")
defvjp(svd_p, _svd_vjp, reads=((),), save_output=True, in_shape=True)


def _svd_jvp(primals, tangents, out, *, full_matrices, compute_uv):
    """With P = U^H dA V: dS = Re diag(P), U^H dU = F o (P S + S P^H), V^H dV =
    F o (S P + P^H S) (F_ij = 1 / (s_j^2 - s_i^2), zero diagonal; a complex U takes the
    free phase, i Im(P_ii) / s_i), plus the parts of dA outside the spans of U and V."""
    (A,), (dA,) = primals, tangents
    m, n = A._shape[-2:]
    k = min(m, n)
    if not compute_uv:
        U, S, Vh = apply(svd_p, A, full_matrices=False, compute_uv=True)
        return None, (U.mH @ dA @ Vh.mH).diagonal(0, -2, -1).real, None
    if full_matrices and m != n:
        raise RuntimeError(
            "linalg.svd: forward-mode differentiation of the singular vectors needs "
            "full_matrices=False when the matrix is not square")
    U, S, Vh = out
    V = Vh.mH
    P = U.mH @ dA @ V
    dS = P.diagonal(0, -2, -1).real
    Sc = S.to(A._dtype)
    one = eye(k, dtype=S._dtype, device=S.device)
    s2 = S * S
    F = (1 - one) / (s2.unsqueeze(-2) - s2.unsqueeze(-1) + one)
    Ph = P.mH
    wU = F * (P * Sc.unsqueeze(-2) + Sc.unsqueeze(-1) * Ph)
    wV = F * (Sc.unsqueeze(-1) * P + Ph * Sc.unsqueeze(-2))
    if A._dtype.is_complex:
        wU = wU + diag_embed(P.diagonal(0, -2, -1).imag / S * 1j)
    dU = U @ wU
    dV = V @ wV
    if m > k:
        dU = dU + (dA @ V - U @ P) / Sc.unsqueeze(-2)
    if n > k:
        dV = dV + (dA.mH @ U - V @ Ph) / Sc.unsqueeze(-2)
    return dU, dS, dV.mH


defjvp(svd_p, _svd_jvp)
defbatch(svd_p, leading(svd_p, lambda params: () if params["compute_uv"] else (0, 2)))


def _needs_grad(A: Tensor) -> bool:
    return A._requires_grad and grad_mode.state.enabled


def _no_driver(driver) -> None:
    """`driver=` picks a cuSOLVER routine; on the CPU there is only gesdd to pick."""
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


@autocast_op("linalg_svd")
def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None) -> SVDResult:
    """A = U diag(S) Vh, singular values descending (LAPACK gesdd, as PyTorch on CPU)."""
    check_matrix(A, "linalg.svd")
    _no_driver(driver)
    return exact_out(SVDResult(*apply(svd_p, A, full_matrices=full_matrices,
                                      compute_uv=True)), out)


@autocast_op("linalg_svdvals")
def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """Singular values, descending; vectors are computed only when a gradient needs them."""
    check_matrix(A, "linalg.svd")
    _no_driver(driver)
    uv = _needs_grad(A)
    return exact_out(apply(svd_p, A, full_matrices=False, compute_uv=uv)[1], out)


# --- eigh -----------------------------------------------------------------------------

EighResult = return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])


def _eigh_kernel(a, *, uplo, compute_v):
    if not compute_v:
        return np.ascontiguousarray(np.linalg.eigvalsh(a, UPLO=uplo)), np.zeros((0,), a.dtype)
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return np.ascontiguousarray(w), fortran(v)


def _eigh_meta(A, *, uplo, compute_v):
    w = (A._shape[:-1], A._dtype.to_real())
    if not compute_v:
        return w, ((0,), A._dtype)
    return w, (A._shape, A._dtype, fortran_strides(A._shape))


def _eigh_vjp(g, out, A, *, uplo, compute_v, in_shape):
    gL, gV = zero_missing(g, out)
    L, V = out
    if not compute_v:
        raise RuntimeError(
            "linalg.eigh: the derivative needs the eigenvectors; call it with compute_v=True"
        )
    if g[1] is None:  # only the eigenvalues are used: V diag(gL) V^H, finite when repeated
        return (V * gL.to(V._dtype).unsqueeze(-2)) @ V.mH
    n = in_shape[-1]
    one = eye(n, dtype=L._dtype, device=L.device)
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + one
    X = V.mH @ gV
    if V._dtype.is_complex and g[1] is not None and _phase_dependent(
            X.diagonal(0, -2, -1).imag.abs() - 1e-2):
        raise RuntimeError(
            "linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined.")
    inner = (X - X.mH) * 0.5 / E * (1 - one) + diag_embed(gL.to(V._dtype))
    return V @ inner @ V.mH


eigh_p = Primitive("linalg_eigh", _eigh_kernel, _eigh_meta, n_outputs=2,
                   grad_name="LinalgEighBackward0")
defvjp(eigh_p, _eigh_vjp, reads=((),), save_output=True, in_shape=True)


def _eigh_jvp(primals, tangents, out, *, uplo, compute_v):
    """With C = V^H dA V (dA: what the kernel reads, its `uplo` triangle mirrored):
    dL = Re diag(C), dV = V (F o C), F_ij = 1 / (l_j - l_i) off the diagonal."""
    (A,), (dA,) = primals, tangents
    L, V = out if compute_v else apply(eigh_p, A, uplo=uplo, compute_v=True)
    C = V.mH @ hermitian_part(dA, uplo) @ V
    dL = C.diagonal(0, -2, -1).real
    if not compute_v:
        return dL, None
    one = eye(A._shape[-1], dtype=L._dtype, device=L.device)
    F = (1 - one) / (L.unsqueeze(-2) - L.unsqueeze(-1) + one)
    return dL, V @ (F * C)


defjvp(eigh_p, _eigh_jvp)
defbatch(eigh_p, leading(eigh_p, lambda params: () if params["compute_v"] else (1,)))


def _check_uplo(UPLO: str) -> str:
    """UPLO as "L" or "U": PyTorch takes either case."""
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


@autocast_op("linalg_eigh")
def eigh(A: Tensor, UPLO: str = "L", *, out=None) -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors of a Hermitian matrix."""
    check_matrix(A, "linalg.eigh", square=True)
    UPLO = _check_uplo(UPLO)
    return exact_out(EighResult(*apply(eigh_p, A, uplo=UPLO, compute_v=True)), out)


@autocast_op("linalg_eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """Eigenvalues (ascending) of a Hermitian matrix."""
    check_matrix(A, "linalg.eigvalsh", square=True)
    UPLO = _check_uplo(UPLO)
    return exact_out(apply(eigh_p, A, uplo=UPLO, compute_v=_needs_grad(A))[0], out)
