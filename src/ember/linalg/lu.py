"""LU factorisation with partial pivoting: lu_factor lu_factor_ex lu lu_unpack, and
lu_solve (a composite of solve_triangular on the packed factors).

One primitive, `linalg_lu_factor`, returns LAPACK getrf's packed result (LU, 1-based int32
row-swap pivots, info). The kernel is a right-looking elimination over the batch at
once, choosing as pivot the first entry of largest |re| + |im| in the column (getrf's
rule). `lu` and `lu_unpack` split LU into L and U with ember ops, so their gradients
flow into the one VJP, which for A = P L U (square) is
  gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H,
and for a wide A = P L [U1 U2] or tall A = P [L1; L2] U the trailing block is solved
for and its gradient folded into the square one. The forward rule is the same algebra
the other way: X = L^-1 P^T dA U^-1, dL = L tril(X, -1), dU = triu(X) U (`_lu_jvp`).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..ops._common import has_values, type_name
from ..ops._linalg_batch import leading
from ..ops.creation import eye
from ..ops.join import cat
from ..ops.reduce import return_type
from ..ops.registry import Primitive, apply, defbatch, defjvp, defvjp, nondifferentiable
from ._common import check_float, check_matrix, exact_out, fortran, fortran_strides
from .solvers import named, solve_triangular

LUFactorResult = return_type("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = return_type("linalg_lu", ["P", "L", "U"])
LUUnpackResult = return_type("lu_unpack", ["P", "L", "U"])


def _lu_kernel(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    count = int(np.prod(batch, dtype=np.int64))  # (not -1: a batch may hold no matrix)
    lu = np.array(a.reshape((count, m, n)), dtype=a.dtype)
    piv = np.zeros((count, k), np.int32)
    info = np.zeros(count, np.int32)
    rows = np.arange(count)
    for j in range(k):
        col = lu[:, j:, j]
        size = np.abs(col.real) + np.abs(col.imag) if lu.dtype.kind == "c" else np.abs(col)
        p = j + np.argmax(size, axis=1)
        piv[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = top
        pivot = lu[:, j, j]
        zero = pivot == 0
        info[zero & (info == 0)] = j + 1
        # A zero pivot means the column below is zero too: leave it, as getrf does.
        lu[:, j + 1:, j] /= np.where(zero, 1, pivot)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (fortran(lu.reshape(batch + (m, n))), piv.reshape(batch + (k,)),
            info.reshape(batch))


def _lu_meta(A):
    m, n = A._shape[-2:]
    batch = A._shape[:-2]
    return ((A._shape, A._dtype, fortran_strides(A._shape)),
            (batch + (min(m, n),), dt.int32), (batch, dt.int32))


def _square_grad(L: Tensor, U: Tensor, gL: Tensor, gU: Tensor) -> Tensor:
    """P^T gA for square A = P L U."""
    inner = (L.mH @ gL).tril(-1) + (gU @ U.mH).triu()
    x = solve_triangular(L.mH, inner, upper=True, unitriangular=True)
    return solve_triangular(U.mH, x, upper=False, left=False)


def _lu_vjp(g, out, A, **_):
    gLU = g[0]
    LU, piv, _info = out
    m, n = A._shape[-2:]
    k = min(m, n)
    P = _permutation(piv, m, A._dtype, A.device)
    one = eye(k, dtype=A._dtype, device=A.device)
    L = LU.narrow(-1, 0, k).tril(-1) + (one if m == k else eye(m, k, dtype=A._dtype,
                                                               device=A.device))
    U = LU.narrow(-2, 0, k).triu()
    gL, gU = gLU.narrow(-1, 0, k).tril(-1), gLU.narrow(-2, 0, k).triu()
    if m == n:
        return P @ _square_grad(L, U, gL, gU)
    if m < n:  # A = P L [U1 U2]: U2 = L^-1 P^T A2
        U1, U2 = U.narrow(-1, 0, k), U.narrow(-1, k, n - k)
        gU1, gU2 = gU.narrow(-1, 0, k), gU.narrow(-1, k, n - k)
        g2 = solve_triangular(L.mH, gU2, upper=True, unitriangular=True)
        g1 = _square_grad(L, U1, gL - g2 @ U2.mH, gU1)
        return P @ cat([g1, g2], -1)
    # A = P [L1; L2] U: L2 = (P^T A)_2 U^-1
    L1, L2 = L.narrow(-2, 0, k), L.narrow(-2, k, m - k)
    gL1, gL2 = gL.narrow(-2, 0, k), gL.narrow(-2, k, m - k)
    g2 = solve_triangular(U.mH, gL2, upper=False, left=False)
    g1 = _square_grad(L1, U, gL1, gU - L2.mH @ g2)
    return P @ cat([g1, g2], -2)


lu_factor_p = Primitive("linalg_lu_factor", _lu_kernel, _lu_meta, n_outputs=3,
                        grad_name="LinalgLuFactorExBackward0")
defvjp(lu_factor_p, _lu_vjp, reads=((0,),), save_output=True)


def _square_tangent(L: Tensor, U: Tensor, dA: Tensor) -> tuple[Tensor, Tensor]:
    """dL, dU of square P^T A = L U along P^T dA: with X = L^-1 P^T dA U^-1,
    dL = L tril(X, -1) and dU = triu(X) U."""
    Y = solve_triangular(L, dA, upper=False, unitriangular=True)
    X = solve_triangular(U, Y, upper=True, left=False)
    return L @ X.tril(-1), X.triu() @ U


def _lu_jvp(primals, tangents, out):
    (A,), (dA,) = primals, tangents
    LU, piv, _info = out
    m, n = A._shape[-2:]
    k = min(m, n)
    dA = _permutation(piv, m, A._dtype, A.device).mT @ dA
    L = LU.narrow(-1, 0, k).tril(-1) + eye(m, k, dtype=A._dtype, device=A.device)
    U = LU.narrow(-2, 0, k).triu()
    if m == n:
        dL, dU = _square_tangent(L, U, dA)
        return dL + dU, None, None
    if m < n:  # P^T A = L [U1 U2]: dU2 = L^-1 (P^T dA2 - dL U2)
        dL, dU1 = _square_tangent(L, U.narrow(-1, 0, k), dA.narrow(-1, 0, k))
        rest = dA.narrow(-1, k, n - k) - dL @ U.narrow(-1, k, n - k)
        dU2 = solve_triangular(L, rest, upper=False, unitriangular=True)
        return cat([dL + dU1, dU2], -1), None, None
    # P^T A = [L1; L2] U: dL2 = (P^T dA2 - L2 dU) U^-1
    dL1, dU = _square_tangent(L.narrow(-2, 0, k), U, dA.narrow(-2, 0, k))
    rest = dA.narrow(-2, k, m - k) - L.narrow(-2, k, m - k) @ dU
    dL2 = solve_triangular(U, rest, upper=True, left=False)
    return cat([dL1 + dU, dL2], -2), None, None


defjvp(lu_factor_p, _lu_jvp)
defbatch(lu_factor_p, leading(lu_factor_p))


def _permutation_kernel(p, *, m, dtype):
    k = p.shape[-1]
    flat = p.reshape(int(np.prod(p.shape[:-1], dtype=np.int64)), k)
    perm = np.tile(np.arange(m), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for j in range(k):
        s = flat[:, j] - 1
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, s]
        perm[rows, s] = top
    mats = np.zeros((flat.shape[0], m, m), dtype.np)
    mats[rows[:, None], perm, np.arange(m)] = 1  # row perm[i] of A is row i of L U
    return mats.reshape(p.shape[:-1] + (m, m))


# P (A = P L U) from getrf's sequential 1-based row swaps (the pivots are its input, so
# the rules that need P read no data themselves)
lu_permutation_p = Primitive(
    "lu_permutation", _permutation_kernel,
    lambda piv, *, m, dtype: (tuple(piv._shape[:-1]) + (m, m), dtype))
nondifferentiable(lu_permutation_p)
defbatch(lu_permutation_p, leading(lu_permutation_p))


def _permutation(piv: Tensor, m: int, dtype, device) -> Tensor:
    """P (A = P L U) from the pivots, a constant of `dtype`."""
    return apply(lu_permutation_p, piv, m=m, dtype=dtype)


def _check(A: Tensor, fname: str) -> None:
    # (the rank first, under the name PyTorch's LU meta function gives it, then the kernel)
    if isinstance(A, Tensor) and A.ndim < 2:
        name = "linalg.lu" if fname == "linalg.lu" else "torch.lu_factor"
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._shape)} instead")
    if isinstance(A, Tensor) and (A._dtype._kind < 2 or A._dtype in (dt.float16, dt.bfloat16)):
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{type_name(A._dtype)}\'')
    check_matrix(A, fname)


def _check_pivot(pivot: bool, fname: str) -> None:
    if not pivot:
        raise RuntimeError(f"{fname}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False,
                 out=None) -> LUFactorExResult:
    """Packed LU (unit L below the diagonal, U on and above), pivots, and an info code per
    matrix (i > 0: U[i, i] (1-based) is exactly zero)."""
    _check(A, "linalg.lu_factor_ex")
    _check_pivot(pivot, "linalg.lu_factor")
    LU, piv, info = apply(lu_factor_p, A)
    if check_errors:
        _raise_on(info, "torch.linalg.lu_factor_ex")
    return exact_out(LUFactorExResult(LU, piv, info), out)


def _raise_on(info: Tensor, fname: str) -> None:
    if info.device.type == "meta" or not has_values(info):
        return
    codes = info.numpy().reshape(-1)
    bad = np.flatnonzero(codes)
    if bad.size:
        i = int(bad[0])
        prefix = f"(Batch element {i}): " if info.ndim else ""
        c = int(codes[i])
        raise RuntimeError(  # PyTorch raises a plain RuntimeError here, not LinAlgError
            f"{fname}: {prefix}U[{c},{c}] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider "
            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
        )


def lu_factor(A: Tensor, *, pivot: bool = True, out=None) -> LUFactorResult:
    """Packed LU and pivots; raises when a pivot is exactly zero (use lu_factor_ex not to)."""
    _check(A, "linalg.lu_factor")
    _check_pivot(pivot, "linalg.lu_factor")
    LU, piv, info = apply(lu_factor_p, A)
    _raise_on(info, "torch.linalg.lu_factor")
    return exact_out(LUFactorResult(LU, piv), out)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out=None) -> LUUnpackResult:
    """P, L, U from lu_factor's packed result (empty tensors for the parts not asked for)."""
    if unpack_pivots:
        _check_unpack_pivots(LU_pivots, LU_data._shape[-2])
    P, L, U = _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    return exact_out(LUUnpackResult(P, named(L, "LuUnpackBackward0"),
                                    named(U, "LuUnpackBackward0")), out)


def _unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool,
            unpack_pivots: bool) -> LUUnpackResult:
    from ..ops.creation import empty

    m, n = LU_data._shape[-2:]
    k = min(m, n)
    kw = dict(dtype=LU_data._dtype, device=LU_data.device)
    if unpack_data:
        L = LU_data.narrow(-1, 0, k).tril(-1) + eye(m, k, **kw)
        U = LU_data.narrow(-2, 0, k).triu()
    else:
        L, U = empty(0, **kw), empty(0, **kw)
    if unpack_pivots:
        P = _permutation(LU_pivots, m, LU_data._dtype, LU_data.device)
    else:
        P = empty(0, **kw)
    return LUUnpackResult(P, L, U)


def _check_unpack_pivots(piv: Tensor, m: int) -> None:
    """PyTorch's checks on the pivots lu_unpack turns into P: getrf's int32, 1..m."""
    if piv._dtype is not dt.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    if piv.device.type == "meta" or not has_values(piv) or piv.numel() == 0:
        return
    values = piv.numpy()
    if values.min() < 1 or values.max() > m:
        # (PyTorch's two sentences run together with no space)
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")


def lu(A: Tensor, *, pivot: bool = True, out=None) -> LUResult:
    """A = P L U with L unit lower-trapezoidal (m x k) and U upper-trapezoidal (k x n)."""
    _check(A, "linalg.lu")
    _check_pivot(pivot, "linalg.lu_factor")
    LU, piv, _ = apply(lu_factor_p, A)
    P, L, U = _unpack(LU, piv, True, True)
    return exact_out(LUResult(P, named(L, "LinalgLuBackward0"), named(U, "LinalgLuBackward0")),
                     out)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out=None) -> Tensor:
    """X with A X = B (X A = B when not `left`; A^H for A when `adjoint`), A = P L U given as
    lu_factor's packed LU and pivots. Two triangular solves on the packed factors (the
    unit L below the diagonal, U on and above), so the gradient reaches LU as PyTorch's
    does, through the triangles the solves read."""
    name = "linalg.lu_solve"
    check_float(LU, name, low_ok=True)  # (an integer LU is refused first, low precision last)
    check_matrix(LU, name, low_ok=True)
    if LU._shape[-1] != LU._shape[-2]:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {LU._shape[-2]} by {LU._shape[-1]} matrices")
    if LU._dtype is not B._dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {type_name(LU._dtype)} and B of type {type_name(B._dtype)} "
                           "instead")
    if pivots._dtype is not dt.int32:
        raise RuntimeError(f"{name}: pivots should be a Tensor of scalar type torch.int32")
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    n = LU._shape[-1]
    if (B._shape[-2] if left else B._shape[-1]) != n:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B._shape[-2]}x{B._shape[-1]})")
    if pivots.ndim == 0 or pivots._shape[-1] != n:
        raise RuntimeError(f"{name}: Number of pivots per batch should be same as the dimension "
                           "of the matrix")
    if pivots._shape != LU._shape[:-1]:
        raise RuntimeError(f"{name}: Expected LU.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots._shape)} instead")
    check_float(LU, name)  # (float16 / bfloat16 find no kernel)
    broadcast_shapes(B._shape[:-2], LU._shape[:-2])  # (PyTorch's message names B's size first)
    return exact_out(named(_lu_solve(LU, pivots, B, left, adjoint), "LinalgLuSolveBackward0"),
                     out)


def _lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, left: bool, adjoint: bool) -> Tensor:
    if not left:  # X A = B is A^H X^H = B^H
        return _lu_solve(LU, pivots, B.mH, True, not adjoint).mH
    P = _permutation(pivots, LU._shape[-1], LU._dtype, LU.device)
    if adjoint:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        Y = solve_triangular(LU.mH, B, upper=False)
        return P @ solve_triangular(LU.mH, Y, upper=True, unitriangular=True)
    Y = solve_triangular(LU, P.mT @ B, upper=False, unitriangular=True)
    return solve_triangular(LU, Y, upper=True)
