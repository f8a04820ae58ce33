"""Inverses and linear solves: inv det slogdet solve solve_triangular, and the
composites cholesky_solve and triangular_solve (torch.*'s, legacy) on solve_triangular, and
cholesky_inverse (torch.*'s) on inv.

Four primitives (solve_triangular is `linalg_solve` on a triangle of A), each with a
kernel calling NumPy's LAPACK wrappers (batched over leading dims) and a VJP and forward
rule written with ember ops, so they differentiate again:
  inv:   gA = -X^H g X^H,  dX = -X dA X                  (X = A^-1)
  det:   gA = g conj(det A) A^-H,  d det = tr(adj(A) dA)
  solve: gB = A^-H g,  gA = -gB X^H,  dX = A^-1 (dB - dA X)   (X = A^-1 B)
Results come back column-major per matrix, as LAPACK (and PyTorch) lay them out.
pinv and lstsq are in least_squares.py.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .._view import broadcast_shapes
from ..amp.autocast_mode import autocast_op
from ..ops._common import refuse_out_grad, type_name, write_out
from ..ops._linalg_batch import align, leading
from ..ops.creation import zeros_like
from ..ops.reduce import return_type
from ..ops.registry import Primitive, apply, defbatch, defjvp, defvjp
from ._common import (
    LinAlgError,
    batch_prefix,
    check_float,
    check_matrix,
    check_same_dtype,
    exact_out,
    fortran,
    fortran_strides,
    torch_args,
)
from ._zero_det import sgn, signed_zeros

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


# the dtypes LAPACK works in: pinv, lstsq and matrix_rank name only these in their errors
_LAPACK_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
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
defjvp(inv_p, lambda primals, tangents, out: -(out @ tangents[0] @ out))
defbatch(inv_p, leading(inv_p))


@torch_args("linalg_inv")
@autocast_op("linalg_inv")
def inv(A: Tensor, *, out=None) -> Tensor:
    """Inverse of a (batch of) square matrices; LinAlgError when singular."""
    check_matrix(A, "linalg.inv", square=True)
    return exact_out(apply(inv_p, A), out)


# --- det / slogdet ---------------------------------------------------------------------

def _det_kernel(a):
    det = np.asarray(np.linalg.det(a)).astype(a.dtype, copy=True)
    return signed_zeros(a, det, lambda d: d)


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
# (the rule reads A; PyTorch's linalg_det_backward reads the result as well, so its node
# keeps it: an in-place op on det(A) before backward raises there, and here)
defvjp(det_p, _det_vjp, reads=((0,),), save_output=True)
# d det = tr(adj(A) dA), with the adjugate that holds for singular A too
defjvp(det_p, lambda primals, tangents, out: (
    _adjugate(primals[0]).mT * tangents[0]).sum((-2, -1)))
defbatch(det_p, leading(det_p))


def det(A: Tensor, *, out=None) -> Tensor:
    """Determinant of a (batch of) square matrices."""
    check_matrix(A, "linalg.det", square=True)
    return exact_out(apply(det_p, A), out)


def _slogdet_kernel(a):
    sign, logabs = np.linalg.slogdet(a)
    sign = signed_zeros(a, np.asarray(sign).astype(a.dtype, copy=True), sgn)
    return (sign,
            np.asarray(logabs).astype(a.dtype.type(0).real.dtype, copy=True))


def _slogdet_meta(A):
    batch = A._shape[:-2]
    return (batch, A._dtype), (batch, A._dtype.to_real())


def _slogdet_vjp(g, out, A):
    g_sign, g_logabs = g
    if g_logabs is None:  # (only the sign was reached: its real derivative is zero)
        g_logabs = zeros_like(out[0].real if out[0]._dtype.is_complex else out[0])
    if g_sign is None:
        g_sign = zeros_like(out[0])
    c = g_logabs
    if A._dtype.is_complex:
        # d log det = tr(A^-1 dA); logabsdet is its real part and sign = exp(i * imag part).
        c = g_logabs.to(A._dtype) + 1j * (out[0].conj() * g_sign).imag
    return c.unsqueeze(-1).unsqueeze(-1) * inv(A).mH


slogdet_p = Primitive("linalg_slogdet", _slogdet_kernel, _slogdet_meta, n_outputs=2,
                      grad_name="LinalgSlogdetBackward0")
# (A and the sign, as PyTorch's node keeps them: an in-place op on logabsdet trains)
defvjp(slogdet_p, _slogdet_vjp, reads=((0,),), save_output=(0,))


def _slogdet_jvp(primals, tangents, out):
    # d log det = tr(A^-1 dA): its real part moves log|det|, its imaginary part the phase
    A = primals[0]
    c = apply(solve_p, A, tangents[0], vec=False).diagonal(0, -2, -1).sum(-1)
    if not A._dtype.is_complex:
        return None, c
    return out[0] * (1j * c.imag), c.real


defjvp(slogdet_p, _slogdet_jvp)
defbatch(slogdet_p, leading(slogdet_p))

SlogdetResult = return_type("linalg_slogdet", ["sign", "logabsdet"])


def slogdet(A: Tensor, *, out=None):
    """(sign, log|det|) of square matrices: the log-determinant without overflow."""
    check_matrix(A, "linalg.slogdet", square=True)
    return exact_out(SlogdetResult(*apply(slogdet_p, A)), out)


def logdet(A: Tensor) -> Tensor:
    """log(det A): nan for a negative determinant, -inf for a singular matrix."""
    check_matrix(A, "logdet", square=True)
    sign, logabs = slogdet(A)
    if A._dtype.is_complex:
        return logabs + sign.log()
    from ..ops.ternary import where

    return where(sign < 0, float("nan"), logabs)


# --- solve ---------------------------------------------------------------------------

def _solve_kernel(a, b, *, vec, upper=None, unit=False):
    if upper is not None:
        return _solve_tri_kernel(a, b, upper, unit)
    try:
        x = np.linalg.solve(a, b[..., None] if vec else b)
    except np.linalg.LinAlgError:
        raise _singular(a, "torch.linalg.solve",
                        "The solver failed because the input matrix is singular.") from None
    return fortran(x[..., 0] if vec else x)


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


def _solve_tri_kernel(a, b, upper: bool, unit: bool):
    t = _triangle(a, upper, unit)
    try:
        return fortran(np.linalg.solve(t, b))
    except np.linalg.LinAlgError:
        # NOTE: a zero on the diagonal gives inf / nan (no error), as LAPACK's trtrs does.
        with np.errstate(divide="ignore", invalid="ignore"):
            return fortran(_substitute(t, b, upper))


def _solve_shape(A, B, vec: bool) -> tuple[int, ...]:
    if vec:
        return broadcast_shapes(A._shape[:-2], B._shape[:-1]) + B._shape[-1:]
    return broadcast_shapes(A._shape[:-2], B._shape[:-2]) + B._shape[-2:]


def _solve_meta(A, B, *, vec, upper=None, unit=False):
    shape = _solve_shape(A, B, vec)
    return shape, A._dtype, fortran_strides(shape)


def _adjoint(params: dict) -> dict:
    """The params that solve with A^H: a triangular A's triangle flips."""
    upper = params.get("upper")
    return params if upper is None else dict(params, upper=not upper)


def _read_part(dA: Tensor, upper, unit: bool) -> Tensor:
    """The part of dA the kernel reads: all of it, or (triangular) its triangle."""
    if upper is None:
        return dA
    k = 1 if unit else 0
    return dA.triu(k) if upper else dA.tril(-k)


def _solve_grad_b(g, out, A, B, **params):
    return apply(solve_p, A.mH, g, **_adjoint(params))


def _solve_grad_a(g, out, A, B, **params):
    gb = apply(solve_p, A.mH, g, **_adjoint(params))
    if params["vec"]:
        return -(gb.unsqueeze(-1) * out.conj().unsqueeze(-2))
    return _read_part(-(gb @ out.mH), params.get("upper"), params.get("unit", False))


def _solve_jvp(primals, tangents, out, **params):
    """dX = A^-1 (dB - dA X), dA restricted to what the kernel reads."""
    (A, _), (dA, dB) = primals, tangents
    rhs = dB
    if dA is not None:
        dA = _read_part(dA, params.get("upper"), params.get("unit", False))
        dAX = (dA @ out.unsqueeze(-1)).squeeze(-1) if params["vec"] else dA @ out
        rhs = -dAX if rhs is None else rhs - dAX
    return apply(solve_p, A, rhs, **params)


def _solve_batch(args, dims, **params):
    return apply(solve_p, *align(args, dims, (2, 1 if params["vec"] else 2)), **params), 0


# A X = B, for a general A or (`upper` True / False) the triangle of A, unit on the
# diagonal when `unit`: one primitive, PyTorch's two node names
solve_p = Primitive("linalg_solve", _solve_kernel, _solve_meta,
                    grad_name=lambda args, params: "LinalgSolveExBackward0"
                    if params.get("upper") is None else "LinalgSolveTriangularBackward0")
defvjp(solve_p, _solve_grad_a, _solve_grad_b, reads=((0,), (0,)), save_output=True)
defjvp(solve_p, _solve_jvp)
defbatch(solve_p, _solve_batch)


def named(t: Tensor, name: str) -> Tensor:
    """`t`, its node renamed `name` when a composite ends what PyTorch runs as one op (its
    grad_fn is then PyTorch's, as a program printing it sees)."""
    if t._grad_fn is not None:
        from ..ops.registry import rename_node

        rename_node(t._grad_fn, name)
    return t


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B._shape == A._shape[:-1])


@torch_args("linalg_solve", flags=("left",))
@autocast_op("linalg_solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B (or X A = B when left=False); A square, batches broadcast."""
    check_float(A, "linalg.solve", low_ok=True)  # (an integer A before its shape)
    check_matrix(A, "linalg.solve", square=True, low_ok=True)
    check_same_dtype("linalg.solve", A, B)
    check_float(A, "linalg.solve")  # (low precision fails later, at the kernel)
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
    broadcast_shapes(B._shape[:-1] if vec else B._shape[:-2], A._shape[:-2])  # (B's first)
    if not left:  # (one PyTorch node, not the transposes around the solve)
        res = named(apply(solve_p, A.mT, B.mT, vec=False).mT, "LinalgSolveExBackward0")
        return exact_out(res, out)
    return exact_out(apply(solve_p, A, B, vec=vec), out)


# --- solve_triangular -------------------------------------------------------------------

@torch_args("linalg_solve_triangular", names={"A": "input"},
            flags=("upper", "left", "unitriangular"))
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """X with A X = B for triangular A (only the `upper` / lower triangle of A is read)."""
    check_matrix(A, "linalg.solve_triangular", square=True)
    if B.ndim < 2:
        raise RuntimeError(
            "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."
        )
    if B._dtype is not A._dtype:  # (PyTorch solves in A's dtype, casting B to it)
        B = B.to(A._dtype)
    n = A._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        raise RuntimeError(
            f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B._shape[-2]}x{B._shape[-1]})"
        )
    broadcast_shapes(B._shape[:-2], A._shape[:-2])  # (PyTorch's message names B's size first)
    if not left:
        res = apply(solve_p, A.mT, B.mT, vec=False, upper=not upper, unit=unitriangular).mT
        named(res, "LinalgSolveTriangularBackward0")
    else:
        res = apply(solve_p, A, B, vec=False, upper=upper, unit=unitriangular)
    if isinstance(out, Tensor) and out._dtype is not A._dtype:  # (no casting into `out`)
        refuse_out_grad(res, out)
        raise RuntimeError(f"expected scalar type {type_name(A._dtype)} but found "
                           f"{type_name(out._dtype)}")
    return write_out(res, out)


def _legacy_solve_checks(B: Tensor, A: Tensor, name: str) -> None:
    """What PyTorch's cholesky_solve / triangular_solve check of (b, A), in its words."""
    kname = name + "_cpu"
    if B._dtype is not A._dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{type_name(B._dtype)} and A of type {type_name(A._dtype)} instead.")
    if A._shape[-1] != A._shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A._shape[-2]} by {A._shape[-1]} matrices")
    n = A._shape[-1]
    if B._shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._shape[-2]} by {B._shape[-1]}")
    if A._dtype._kind < 2 or A._dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f'"{kname}" not implemented for \'{type_name(A._dtype)}\'')
    broadcast_shapes(B._shape[:-2], A._shape[:-2])


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """X with A X = B, given A's Cholesky factor (A = L L^H, or U^H U when `upper`): two
    triangular solves, as LAPACK's potrs does."""
    if B.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions "
                           "instead")
    if L.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           "instead")
    _legacy_solve_checks(B, L, "cholesky_solve")
    # NOTE: LAPACK's potrs reads only L's triangle, yet PyTorch's gradient for it is that of
    # (L L^H)^-1 B with L full (its other triangle gets -(gB X^H + X gB^H) L too). So the
    # other triangle enters as zero that carries the gradient (x - x.detach()), and each
    # factor is solved as a full matrix (linalg.solve: a full gradient).
    other = L.tril(-1) if upper else L.triu(1)
    F = (L.triu() if upper else L.tril()) + (other - other.detach())
    first, second = (F.mH, F) if upper else (F, F.mH)
    res = solve(second, solve(first, B))
    if res.grad_fn is not None:
        from ..ops.registry import rename_node

        rename_node(res.grad_fn, "CholeskySolveBackward0")
    return write_out(res, out)


@torch_args("cholesky_inverse", flags=("upper",))
def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """A^-1 from A's Cholesky factor: (L L^H)^-1 = L^-H L^-1, or (U^H U)^-1 = U^-1 U^-H when
    `upper`, as LAPACK's potri forms it (the factor's inverse, then its Gram product)."""
    from ..ops.registry import rename_node

    if input.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 "
                           "dimensions.")
    n = input._shape[-1]
    if input._shape[-2] != n:
        raise RuntimeError("cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {input._shape[-2]} by {n} matrices")
    if input._dtype._kind < 2 or input._dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(
            f"\"cholesky_inverse_out_cpu\" not implemented for '{type_name(input._dtype)}'")
    # NOTE: potri reads only the factor's triangle, yet PyTorch's gradient is that of
    # (L L^H)^-1 with L full, as in cholesky_solve: the other triangle enters as a zero
    # that carries the gradient, and the factor is inverted as a full matrix.
    other = input.tril(-1) if upper else input.triu(1)
    F = (input.triu() if upper else input.tril()) + (other - other.detach())
    try:
        Finv = inv(F)
    except LinAlgError as exc:
        _, rest = str(exc).split(":", 1)
        raise _zero_diagonal(F, "cholesky_inverse") or LinAlgError(
            f"cholesky_inverse:{rest}") from None
    res = Finv @ Finv.mH if upper else Finv.mH @ Finv
    if res.grad_fn is not None:
        rename_node(res.grad_fn, "CholeskyInverseBackward0")
    return write_out(res, out)


def _zero_diagonal(F: Tensor, fname: str) -> LinAlgError | None:
    """PyTorch's error for a triangular factor with a zero on its diagonal (LU's pivoting
    may find a different singular pivot; the triangle's own diagonal is what potri checks).
    None if no diagonal entry is zero."""
    d = np.diagonal(F.detach().numpy(), axis1=-2, axis2=-1)
    flat = d.reshape(-1, d.shape[-1])
    i = next((i for i, row in enumerate(flat) if (row == 0).any()), None)
    if i is None:
        return None
    k = int(np.argmax(flat[i] == 0)) + 1
    return LinAlgError(f"{fname}: {batch_prefix(F._shape, i)}The diagonal element {k} is zero, "
                       "the inversion could not be completed because the input matrix is "
                       "singular.")


TriangularSolveResult = return_type("triangular_solve", ["solution", "cloned_coefficient"])


def triangular_solve(B: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None) -> TriangularSolveResult:
    """(X, copy of A) with A X = B (A^T X = B when `transpose`), A triangular; A's copy is
    broadcast over the batch. Deprecated in PyTorch for linalg.solve_triangular."""
    for what, t in (("b", B), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {what} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    _legacy_solve_checks(B, A, "triangular_solve")
    warn_at_user(  # (PyTorch's TORCH_WARN_ONCE, at the caller's line)
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
        "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has "
        "its arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).", once=True)
    batch = broadcast_shapes(B._shape[:-2], A._shape[:-2])
    X = solve_triangular(A.mT if transpose else A, B, upper=upper != transpose,
                         unitriangular=unitriangular)
    M = A.expand(batch + A._shape[-2:]).clone()
    named(X, "TriangularSolveBackward0")
    named(M, "TriangularSolveBackward0")
    return exact_out(TriangularSolveResult(X, M), out)


# --- the *_ex variants: an info code per matrix instead of an error ---------------------

def run_ex(A: Tensor, run, info_of, check_errors: bool, singular=None):
    """`run(A)` and int32 info codes (0 = fine); failing matrices give `singular(A)` (what
    LAPACK leaves; nan without it) unless `check_errors`, in which case the LinAlgError
    propagates."""
    from ..ops.creation import eye, tensor, zeros
    from ..ops.ternary import where

    try:
        return run(A), zeros(A._shape[:-2], dtype=dt.int32, device=A.device)
    except LinAlgError as exc:
        if check_errors:  # named by the _ex function, as PyTorch's check names it
            name, rest = str(exc).split(":", 1)
            raise LinAlgError(f"{name}_ex:{rest}") from None
    a = A.detach().numpy()
    flat = a.reshape((-1,) + a.shape[-2:])
    codes = np.array([info_of(m) for m in flat], np.int32).reshape(a.shape[:-2])
    bad = tensor(codes != 0)
    n = A._shape[-1]
    res = run(where(bad.reshape(bad._shape + (1, 1)), eye(n, dtype=A._dtype), A))
    trailing = res.ndim - len(_batch_of(res, A))
    fill = float("nan") if singular is None else singular(A.detach())
    return where(bad.reshape(bad._shape + (1,) * trailing), fill, res), tensor(codes)


def _through_lu(A: Tensor, B: Tensor, left: bool, vec: bool) -> Tensor | float | complex:
    """X from getrf + getrs, which run on through a zero pivot of a singular A (x / 0 is
    inf, 0 / 0 nan): what PyTorch's inv_ex and solve_ex return for such a matrix."""
    from .lu import lu_factor_ex, lu_solve  # (a call-time import: lu.py imports this module)

    # NOTE: where PyTorch's kernels (MKL's) leave a pattern this does not reproduce, nan
    # stands for it: complex division by a zero pivot (nan + nanj there) and X A = B
    if A._dtype.is_complex:
        return complex(math.nan, math.nan)
    if not left:
        return math.nan
    LU, piv, _ = lu_factor_ex(A)
    with np.errstate(divide="ignore", invalid="ignore"):
        if vec:
            return lu_solve(LU, piv, B.unsqueeze(-1)).squeeze(-1)
        return lu_solve(LU, piv, B)


def _batch_of(res: Tensor, A: Tensor) -> tuple[int, ...]:
    """The batch dims of a result: all but its trailing matrix (or vector) dims."""
    return res._shape[:-2] if res.ndim >= A.ndim else res._shape[:-1]


InvExResult = return_type("linalg_inv_ex", ["inverse", "info"])
SolveExResult = return_type("linalg_solve_ex", ["result", "info"])


@torch_args("linalg_inv_ex", flags=("check_errors",))
@autocast_op("linalg_inv_ex")
def inv_ex(A: Tensor, *, check_errors: bool = False, out=None) -> InvExResult:
    """inv(A) with an info code per matrix (the 1-based index of a zero pivot) instead of
    raising for singular input."""
    check_matrix(A, "linalg.inv_ex", square=True)
    from ..ops.creation import eye

    def singular(a: Tensor) -> Tensor:
        return _through_lu(a, eye(a._shape[-1], dtype=a._dtype).expand(a._shape), True, False)

    return exact_out(InvExResult(*run_ex(A, inv, _zero_pivot, check_errors, singular)), out)


@torch_args("linalg_solve_ex", flags=("left", "check_errors"))
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out=None) -> SolveExResult:
    """solve(A, B) with an info code per matrix instead of raising for singular A."""
    check_float(A, "linalg.solve_ex", low_ok=True)  # (an integer A before its shape)
    check_matrix(A, "linalg.solve_ex", square=True)
    broadcast_shapes(B._shape[:-1] if _is_vector_rhs(A, B) else B._shape[:-2], A._shape[:-2])
    vec = _is_vector_rhs(A, B)
    res = run_ex(A, lambda a: solve(a, B, left=left), _zero_pivot, check_errors,
                 lambda a: _through_lu(a, B.detach(), left, vec))
    return exact_out(SolveExResult(*res), out)
