"""Inverses and linear solves: inv det slogdet solve solve_triangular pinv lstsq.

Each is one primitive whose kernel calls NumPy's LAPACK wrappers (batched over
leading dims) and whose VJP is written with ember ops, so it differentiates again:
  inv:   gA = -X^H g X^H                   (X = A^-1)
  det:   gA = g conj(det A) A^-H
  solve: gB = A^-H g,  gA = -gB X^H        (X = A^-1 B)
  pinv:  the constant-rank formula of Golub & Pereyra (see `_pinv_vjp`).
Results come back column-major per matrix, as LAPACK (and PyTorch) lay them out.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..ops._common import write_out
from ..ops.reduce import return_type
from ..ops.registry import Primitive, apply, defvjp, zero_missing
from ._common import (
    LinAlgError,
    batch_prefix,
    check_float,
    check_matrix,
    check_same_dtype,
    eps,
    fortran,
    fortran_strides,
)

# --- inv ------------------------------------------------------------------------------


def _zero_pivot(m: np.ndarray) -> int:
    """1-based index of the first exactly-zero pivot of LU with partial pivoting (0: none)."""
    u = np.array(m)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        u[[k, p]] = u[[p, k]]
        u[k + 1:, k:] -= np.outer(u[k + 1:, k] / u[k, k], u[k, k:])
    return 0


def _singular(a: np.ndarray, fname: str, what: str) -> LinAlgError:
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        k = _zero_pivot(m)
        if k:
            msg = what.format(k=k)
            return LinAlgError(f"{fname}: {batch_prefix(a.shape, i)}{msg}")
    return LinAlgError(f"{fname}: {what.format(k=1)}")


_INV_MSG = ("The diagonal element {k} is zero, the inversion could not be completed because the "
            "input matrix is singular.")


def _inv_kernel(a):
    try:
        return fortran(np.linalg.inv(a))
    except np.linalg.LinAlgError:
        raise _singular(a, "linalg.inv", _INV_MSG) from None


inv_p = Primitive("linalg_inv", _inv_kernel,
                  lambda A: (A._shape, A._dtype, fortran_strides(A._shape)),
                  grad_name="LinalgInvExBackward0")
defvjp(inv_p, lambda g, out, A: -(out.mH @ g @ out.mH), reads=((),), save_output=True)


def inv(A: Tensor, *, out=None) -> Tensor:
    """Inverse of a (batch of) square matrices; LinAlgError when singular."""
    check_matrix(A, "linalg.inv", square=True)
    return write_out(apply(inv_p, A), out)


# --- det / slogdet ---------------------------------------------------------------------

def _det_kernel(a):
    return np.asarray(np.linalg.det(a)).astype(a.dtype, copy=True)


def _det_vjp(g, out, A):
    # NOTE: the gradient of det is the adjugate's conjugate transpose. det(A) inv(A) would
    # need A invertible, and choosing by whether det(A) == 0 would read data; the adjugate
    # read off an SVD holds for every A (nonzero at rank n-1) and is differentiable again,
    # as PyTorch's own rule is when the graph is kept.
    return g.unsqueeze(-1).unsqueeze(-1) * _adjugate(A).mH


def _adjugate(A: Tensor) -> Tensor:
    """adj(A) = det(A) inv(A), for any square A: with A = U S Vh it is
    det(U) det(Vh) Vh^H diag(prod of the other singular values) U^H."""
    from ..ops.join import cat
    from ..ops.scan import cumprod
    from .decompositions import svd

    U, S, Vh = svd(A)
    one = S[..., :1] * 0 + 1
    left = cumprod(cat([one, S[..., :-1]], -1), -1)
    right = cumprod(cat([one, S.flip(-1)[..., :-1]], -1), -1).flip(-1)
    sign = (det(U) * det(Vh)).unsqueeze(-1).unsqueeze(-1)
    return sign * (Vh.mH * (left * right).unsqueeze(-2).to(A.dtype)) @ U.mH


det_p = Primitive("linalg_det", _det_kernel, lambda A: (A._shape[:-2], A._dtype),
                  grad_name="LinalgDetBackward0")
defvjp(det_p, _det_vjp, reads=((0,),))


def det(A: Tensor, *, out=None) -> Tensor:
    """Determinant of a (batch of) square matrices."""
    check_matrix(A, "linalg.det", square=True)
    return write_out(apply(det_p, A), out)


def _slogdet_kernel(a):
    sign, logabs = np.linalg.slogdet(a)
    return (np.asarray(sign).astype(a.dtype, copy=True),
            np.asarray(logabs).astype(a.dtype.type(0).real.dtype, copy=True))


def _slogdet_meta(A):
    batch = A._shape[:-2]
    return (batch, A._dtype), (batch, A._dtype.to_real())


def _slogdet_vjp(g, out, A):
    g_sign, g_logabs = zero_missing(g, out)
    c = g_logabs
    if A._dtype.is_complex:
        # d log det = tr(A^-1 dA); logabsdet is its real part and sign = exp(i * imag part).
        c = g_logabs.to(A._dtype) + 1j * (out[0].conj() * g_sign).imag
    return c.unsqueeze(-1).unsqueeze(-1) * inv(A).mH


slogdet_p = Primitive("linalg_slogdet", _slogdet_kernel, _slogdet_meta, n_outputs=2,
                      grad_name="LinalgSlogdetBackward0")
defvjp(slogdet_p, _slogdet_vjp, reads=((0,),), save_output=True)

SlogdetResult = return_type("linalg_slogdet", ["sign", "logabsdet"])


def slogdet(A: Tensor, *, out=None):
    """(sign, log|det|) of square matrices: the log-determinant without overflow."""
    check_matrix(A, "linalg.slogdet", square=True)
    return write_out(SlogdetResult(*apply(slogdet_p, A)), out)


def logdet(A: Tensor) -> Tensor:
    """log(det A): nan for a negative determinant, -inf for a singular matrix."""
    sign, logabs = slogdet(A)
    if A._dtype.is_complex:
        return logabs + sign.log()
    from ..ops.ternary import where

    return where(sign < 0, float("nan"), logabs)


# --- solve ---------------------------------------------------------------------------

def _solve_kernel(a, b, *, vec):
    try:
        x = np.linalg.solve(a, b[..., None] if vec else b)
    except np.linalg.LinAlgError:
        raise _singular(a, "torch.linalg.solve",
                        "The solver failed because the input matrix is singular.") from None
    return fortran(x[..., 0] if vec else x)


def _solve_shape(A, B, vec: bool) -> tuple[int, ...]:
    if vec:
        return broadcast_shapes(A._shape[:-2], B._shape[:-1]) + B._shape[-1:]
    return broadcast_shapes(A._shape[:-2], B._shape[:-2]) + B._shape[-2:]


def _solve_meta(A, B, *, vec):
    shape = _solve_shape(A, B, vec)
    return shape, A._dtype, fortran_strides(shape)


def _solve_grad_b(g, out, A, B, *, vec):
    return apply(solve_p, A.mH, g, vec=vec)


def _solve_grad_a(g, out, A, B, *, vec):
    gb = apply(solve_p, A.mH, g, vec=vec)
    if vec:
        return -(gb.unsqueeze(-1) * out.conj().unsqueeze(-2))
    return -(gb @ out.mH)


solve_p = Primitive("linalg_solve", _solve_kernel, _solve_meta,
                    grad_name="LinalgSolveExBackward0")
defvjp(solve_p, _solve_grad_a, _solve_grad_b, reads=((0,), (0,)), save_output=True)


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B (or X A = B when left=False); A square, batches broadcast."""
    check_matrix(A, "linalg.solve", square=True)
    check_float(B, "linalg.solve")
    check_same_dtype("linalg.solve", A, B)
    vec = _is_vector_rhs(A, B)
    n = A._shape[-1]
    rows = B._shape[-1] if vec or not left else B._shape[-2]
    if rows != n or (vec and not left):  # a vector B is n x 1: X A = B has no solution shape
        shape_b = f"{B._shape[-1]}x1" if vec else f"{B._shape[-2]}x{B._shape[-1]}"
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
            f"{shape_b})"
        )
    if not left:
        return write_out(apply(solve_p, A.mT, B.mT, vec=False).mT, out)
    return write_out(apply(solve_p, A, B, vec=vec), out)


# --- solve_triangular -------------------------------------------------------------------

def _triangle(a, upper: bool, unit: bool):
    t = np.triu(a) if upper else np.tril(a)
    if unit:
        np.einsum("...ii->...i", t)[...] = 1
    return t


def _substitute(t, b, upper: bool):
    """Row-by-row substitution: slower than LU, but gives inf / nan for a zero pivot."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    for i in reversed(range(n)) if upper else range(n):
        rest = slice(i + 1, n) if upper else slice(0, i)
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, rest], x[..., rest, :])
        x[..., i, :] = acc / t[..., i, i:i + 1]
    return x


def _solve_tri_kernel(a, b, *, upper, unit):
    t = _triangle(a, upper, unit)
    try:
        return fortran(np.linalg.solve(t, b))
    except np.linalg.LinAlgError:
        # NOTE: a zero on the diagonal gives inf / nan (no error), as LAPACK's trtrs does.
        with np.errstate(divide="ignore", invalid="ignore"):
            return fortran(_substitute(t, b, upper))


def _solve_tri_grad_a(g, out, A, B, *, upper, unit):
    gb = apply(solve_tri_p, A.mH, g, upper=not upper, unit=unit)
    ga = -(gb @ out.mH)
    k = 1 if unit else 0
    return ga.triu(k) if upper else ga.tril(-k)


solve_tri_p = Primitive("linalg_solve_triangular", _solve_tri_kernel,
                        lambda A, B, *, upper, unit: _solve_meta(A, B, vec=False),
                        grad_name="LinalgSolveTriangularBackward0")
defvjp(solve_tri_p, _solve_tri_grad_a,
       lambda g, out, A, B, *, upper, unit: apply(solve_tri_p, A.mH, g, upper=not upper,
                                                  unit=unit),
       reads=((0,), (0,)), save_output=True)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """X with A X = B for triangular A (only the `upper` / lower triangle of A is read)."""
    check_matrix(A, "linalg.solve_triangular", square=True)
    check_float(B, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    check_same_dtype("linalg.solve_triangular", A, B)
    n = A._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B._shape[-2]}x{B._shape[-1]})"
        )
    if not left:
        res = apply(solve_tri_p, A.mT, B.mT, upper=not upper, unit=unitriangular).mT
        return write_out(res, out)
    return write_out(apply(solve_tri_p, A, B, upper=upper, unit=unitriangular), out)


# --- pinv ------------------------------------------------------------------------------

def _tolerance(s_max, atol, rtol):
    return np.maximum(atol, rtol * s_max)


def _pinv_kernel(a, *, atol, rtol, hermitian):
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        w, v = np.linalg.eigh(a)
        tol = _tolerance(np.abs(w).max(-1, keepdims=True), atol, rtol)
        winv = np.where(np.abs(w) > tol, 1 / np.where(w == 0, 1, w), 0).astype(w.dtype)
        return np.matmul(v * winv[..., None, :], np.swapaxes(v.conj(), -1, -2))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    tol = _tolerance(s[..., :1], atol, rtol)
    sinv = np.where(s > tol, 1 / np.where(s == 0, 1, s), 0).astype(s.dtype)
    return np.matmul(np.swapaxes(vh.conj(), -1, -2) * sinv[..., None, :],
                     np.swapaxes(u.conj(), -1, -2))


def _pinv_vjp_from(g: Tensor, A: Tensor, P: Tensor) -> Tensor:
    """Gradient through P = pinv(A) given dL/dP = g (valid while the rank stays constant):
    -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A)."""
    ph, gh = P.mH, g.mH
    y = gh @ (P @ ph)
    z = (ph @ P) @ gh
    return -(ph @ g @ ph) + (y - A @ (P @ y)) + (z - (z @ P) @ A)


pinv_p = Primitive("linalg_pinv", _pinv_kernel,
                   lambda A, **_: (A._shape[:-2] + (A._shape[-1], A._shape[-2]), A._dtype),
                   grad_name="LinalgPinvBackward0")
defvjp(pinv_p, lambda g, out, A, **_: _pinv_vjp_from(g, A, out), reads=((0,),),
       save_output=True)


def _tols(A: Tensor, atol, rtol):
    """PyTorch's defaults: rtol = eps * max(m, n) unless a positive atol is given."""
    def arr(v):
        if isinstance(v, Tensor):
            return np.asarray(v.detach().numpy())[..., None]
        return 0.0 if v is None else float(v)

    if rtol is None:
        positive_atol = atol is not None and (isinstance(atol, Tensor) or atol > 0)
        rtol = 0.0 if positive_atol else eps(A._dtype) * max(A._shape[-2:], default=0)
    return arr(atol), arr(rtol)


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False, out=None) -> Tensor:
    """Moore-Penrose pseudo-inverse via the SVD (or eigh when `hermitian`)."""
    check_matrix(A, "linalg.pinv")
    a, r = _tols(A, atol, rtol)
    return write_out(apply(pinv_p, A, atol=a, rtol=r, hermitian=hermitian), out)


# --- lstsq -----------------------------------------------------------------------------

def _lstsq_kernel(a, b, *, rcond, vec):
    p = _pinv_kernel(a, atol=0.0, rtol=rcond, hermitian=False)
    x = np.matmul(p, b[..., None] if vec else b)
    return np.ascontiguousarray(x[..., 0] if vec else x)


def _lstsq_meta(A, B, *, rcond, vec):
    n = A._shape[-1]
    if vec:
        return broadcast_shapes(A._shape[:-2], B._shape[:-1]) + (n,), A._dtype
    return broadcast_shapes(A._shape[:-2], B._shape[:-2]) + (n, B._shape[-1]), A._dtype


def _lstsq_grad_a(g, out, A, B, *, rcond, vec):
    P = apply(pinv_p, A, atol=0.0, rtol=rcond, hermitian=False)
    gp = g.unsqueeze(-1) * B.conj().unsqueeze(-2) if vec else g @ B.mH
    return _pinv_vjp_from(gp, A, P)


def _lstsq_grad_b(g, out, A, B, *, rcond, vec):
    ph = apply(pinv_p, A, atol=0.0, rtol=rcond, hermitian=False).mH
    return (ph @ g.unsqueeze(-1)).squeeze(-1) if vec else ph @ g


lstsq_p = Primitive("linalg_lstsq", _lstsq_kernel, _lstsq_meta, grad_name="LinalgLstsqBackward0")
defvjp(lstsq_p, _lstsq_grad_a, _lstsq_grad_b, reads=((0, 1), (0,)))

LstsqResult = return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check_lstsq(A: Tensor, B: Tensor, driver) -> bool:
    check_matrix(A, "linalg.lstsq")
    check_float(B, "linalg.lstsq")
    if B.ndim < 1 or B.ndim > A.ndim or A.ndim - B.ndim > 1:
        raise RuntimeError(
            "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    check_same_dtype("torch.linalg.lstsq", A, B, "input", "other")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    vec = B.ndim == A.ndim - 1
    rows = B._shape[-1] if vec else B._shape[-2]
    if rows != A._shape[-2]:
        which = "other.size(-1)" if vec else "other.size(-2)"
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match {which}")
    return vec


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None) -> LstsqResult:
    """Least-squares solution of A X = B (minimum norm when rank-deficient), PyTorch's tuple.

    The solution is pinv(A) @ B with singular values below rcond * s_max dropped, which
    is what the SVD drivers (gelsd, gelss) compute; gelsy agrees on well-posed inputs.
    """
    vec = _check_lstsq(A, B, driver)
    driver = driver or "gelsy"
    m, n = A._shape[-2:]
    if rcond is None:
        rcond = eps(A._dtype) * max(m, n)
    x = apply(lstsq_p, A, B, rcond=float(rcond), vec=vec)
    batch = x._shape[:-1] if vec else x._shape[:-2]
    real = A._dtype.to_real()
    rank, sv = _rank_and_sv(A, batch, rcond, driver)
    residuals = A.new_empty((0,), dtype=real)
    full_rank = driver == "gels" or (A.device.type != "meta" and bool((rank == n).all()))
    if m > n and driver != "gelsy" and full_rank:
        r = A @ (x.unsqueeze(-1) if vec else x) - (B.unsqueeze(-1) if vec else B)
        residuals = (r.abs() ** 2).sum(-2)
    return LstsqResult(x, residuals, rank, sv)


def _rank_and_sv(A: Tensor, batch, rcond: float, driver: str):
    """rank (all drivers but gels) and singular values (gelsd, gelss), not differentiable."""
    from ..ops.creation import empty

    real = A._dtype.to_real()
    k = min(A._shape[-2:])
    dev = A.device
    if dev.type == "meta":
        rank = empty(batch if driver != "gels" else (0,), dtype=dt.int64, device=dev)
        sv = empty(batch + (k,) if driver in ("gelsd", "gelss") else (0,), dtype=real,
                   device=dev)
        return rank, sv
    with grad_mode.no_grad():
        s = np.linalg.svd(A.detach().numpy(), compute_uv=False) if k else np.zeros(
            A._shape[:-2] + (0,), real.np)
        s = np.broadcast_to(s, tuple(batch) + (k,))
        smax = s[..., :1] if k else np.zeros(s.shape[:-1] + (1,), s.dtype)
        count = (s > rcond * smax).sum(-1).astype(np.int64)
    from ..ops.creation import tensor

    rank = tensor(count) if driver != "gels" else empty((0,), dtype=dt.int64)
    sv = tensor(np.ascontiguousarray(s)) if driver in ("gelsd", "gelss") else empty(
        (0,), dtype=real)
    return rank, sv


# --- the *_ex variants: an info code per matrix instead of an error ---------------------

def run_ex(A: Tensor, run, info_of, check_errors: bool):
    """`run(A)` and int32 info codes (0 = fine); failing matrices give nan unless
    `check_errors`, in which case the LinAlgError propagates."""
    from ..ops.creation import eye, tensor, zeros
    from ..ops.ternary import where

    try:
        return run(A), zeros(A._shape[:-2], dtype=dt.int32, device=A.device)
    except LinAlgError:
        if check_errors:
            raise
    a = A.detach().numpy()
    flat = a.reshape((-1,) + a.shape[-2:])
    codes = np.array([info_of(m) for m in flat], np.int32).reshape(a.shape[:-2])
    bad = tensor(codes != 0)
    n = A._shape[-1]
    res = run(where(bad.reshape(bad._shape + (1, 1)), eye(n, dtype=A._dtype), A))
    trailing = res.ndim - len(_batch_of(res, A))
    return where(bad.reshape(bad._shape + (1,) * trailing), float("nan"), res), tensor(codes)


def _batch_of(res: Tensor, A: Tensor) -> tuple[int, ...]:
    """The batch dims of a result: all but its trailing matrix (or vector) dims."""
    return res._shape[:-2] if res.ndim >= A.ndim else res._shape[:-1]


InvExResult = return_type("linalg_inv_ex", ["inverse", "info"])
SolveExResult = return_type("linalg_solve_ex", ["result", "info"])


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None) -> InvExResult:
    """inv(A) with an info code per matrix (the 1-based index of a zero pivot) instead of
    raising for singular input."""
    check_matrix(A, "linalg.inv_ex", square=True)
    return write_out(InvExResult(*run_ex(A, inv, _zero_pivot, check_errors)),
                     out)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out=None) -> SolveExResult:
    """solve(A, B) with an info code per matrix instead of raising for singular A."""
    check_matrix(A, "linalg.solve_ex", square=True)
    res = run_ex(A, lambda a: solve(a, B, left=left), _zero_pivot, check_errors)
    return write_out(SolveExResult(*res), out)
