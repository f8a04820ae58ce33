"""`mlx.core.linalg` on ember: norms, factorisations, inverses and solvers.

The factorisations (qr, svd, eig, eigh, lu, cholesky, inv) run ember.linalg's kernels (NumPy's
LAPACK) on the arrays' tensors, so they also have ember's derivatives, where MLX 0.32.4 has
none. The rest is composed from `mx` ops the way MLX composes it (norm, cross, det and
slogdet for matrices up to 3x3, pinv, cholesky_inv, solve_triangular), so dtypes and
rounding follow MLX's. Validation messages are MLX's. MLX's CPU build accepts
`stream=mx.cpu` here and refuses `mx.gpu` (`__init__` wraps every name in `__all__`).
"""

from __future__ import annotations

import math

import numpy as np

import ember as E
from ember.linalg.decompositions import cholesky_p
from ember.linalg.solvers import _zero_pivot
from ember.ops.registry import apply

from .._listing import listing
from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array, cast
from ._compile_shapes import no_output_shapes as _no_output_shapes
from ._tracers import is_vmap_tracer

_INF = math.inf


def _arr(x) -> array:
    return x if isinstance(x, array) else array(x)


def _check_float(a: array, prefix: str, complex_ok: bool = False) -> None:
    ok = (D.float32, D.float64, D.complex64) if complex_ok else (D.float32, D.float64)
    if a._dtype not in ok:
        kinds = "float32, float64 or complex64" if complex_ok else "float32 or float64"
        raise ValueError(f"{prefix} Arrays must have type {kinds}. Received array with type "
                         f"{a._dtype.name}.")


def _check_matrix(a: array, prefix: str, what: str = "Arrays") -> None:
    if a.ndim < 2:
        raise ValueError(f"{prefix} {what} must have >= 2 dimensions. Received array with "
                         f"{a.ndim} dimensions.")


def _check_square(a: array, message: str) -> None:
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(message)


# -- norms ----------------------------------------------------------------------------------

def _at_least_float(a: array):
    return a._dtype if a._dtype.kind in "fc" else D.promote_types(a._dtype, D.float32)


def _l2(a: array, axis, keepdims: bool) -> array:
    sq = O.square(O.abs(a)) if a._dtype.kind == "c" else O.square(a)
    return O.sqrt(O.sum(sq, axis, keepdims))


def _vector_norm(a: array, ord: float, axis, keepdims: bool) -> array:
    dt = _at_least_float(a)
    if ord == 0:
        return O.sum(O.not_equal(a, array(0)), axis, keepdims).astype(dt)
    if ord == 1:
        return O.sum(O.abs(a), axis, keepdims).astype(dt)
    if ord == 2:
        return _l2(a, axis, keepdims)
    if ord == _INF:
        return O.max(O.abs(a), axis, keepdims).astype(dt)
    if ord == -_INF:
        return O.min(O.abs(a), axis, keepdims).astype(dt)
    return O.power(O.sum(O.power(O.abs(a), array(ord, dt)), axis, keepdims),
                   array(1.0 / ord, dt))


def _singular_values_last(a: array, row: int, col: int) -> array:
    m = (O.moveaxis(O.moveaxis(a, row, -1), col, -1) if row > col
         else O.moveaxis(O.moveaxis(a, col, -1), row, -2))
    return svd(m, compute_uv=False)


def _matrix_norm(a: array, ord, axis, keepdims: bool) -> array:
    row, col = (x % a.ndim for x in axis)
    if ord in ("f", "fro"):
        return _l2(a, list(axis), keepdims)
    if ord == "nuc" or ord in (2, -2):
        s = _singular_values_last(a, row, col)
        s = O.sum(s, -1) if ord == "nuc" else O.max(s, -1) if ord == 2 else O.min(s, -1)
        if keepdims:
            s = O.expand_dims(s, sorted((row, col)))
        return s if ord == "nuc" else s.astype(_at_least_float(a))
    if isinstance(ord, str):
        raise ValueError(f"[linalg::norm] Invalid ord value '{ord}' for matrix norm.")
    dt = _at_least_float(a)
    if ord in (1, -1):
        col -= not keepdims and col > row and col > 0
        pick = O.max if ord == 1 else O.min
        return pick(O.sum(O.abs(a), row, keepdims), col, keepdims).astype(dt)
    if ord in (_INF, -_INF):
        row -= not keepdims and row > col and row > 0
        pick = O.max if ord == _INF else O.min
        return pick(O.sum(O.abs(a), col, keepdims), row, keepdims).astype(dt)
    raise ValueError(f"[linalg::norm] Invalid ord {ord:g} for matrix norm.")


def norm(a, /, ord=None, axis=None, keepdims: bool = False) -> array:
    """Vector or matrix norm, as MLX chooses between them: by the number of axes (all axes
    when `axis` is None and `ord` is given; the flattened 2-norm when both are None)."""
    a = _arr(a)
    axes = [axis] if isinstance(axis, int) else None if axis is None else list(axis)
    if ord is None:
        if axes is None:
            out = _l2(O.flatten(a), [0], keepdims)
            return O.reshape(out, (1,) * a.ndim) if keepdims else out
        if len(axes) > 2:
            raise ValueError("[linalg::norm] Received too many axes for norm.")
        return _l2(a, axes, keepdims)
    if axes is None:
        axes = list(range(a.ndim))
    if isinstance(ord, str):
        if len(axes) != 2:
            raise ValueError(f"[linalg::norm] Norm '{ord}' only supported for matrices, but "
                             f"received {len(axes)} axis/axes.")
        return _matrix_norm(a, ord, axes, keepdims)
    if len(axes) == 1:
        return _vector_norm(a, float(ord), axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(a, float(ord), axes, keepdims)
    raise ValueError("[linalg::norm] Received too many axes for norm.")


# -- factorisations -------------------------------------------------------------------------

# NOTE: MLX 0.32.4 has no vmap rule for its QR and LU primitives (solve factors by LU), and
# the rule of its Inverse primitive drops the triangular flag: under a vmap over the
# matrix, tri_inv (so solve_triangular and cholesky_inv) inverts the whole matrix. Only
# Eigh and Eig of its factorisations can say their output shapes: the others
# (`_no_output_shapes`) are refused inside a shapeless `mx.compile`.

def _no_vmap_rule(a: array, primitive: str) -> None:
    if is_vmap_tracer(a._t):
        raise ValueError(f"[Primitive::vmap] Not implemented for {primitive}.")


def qr(a, /) -> tuple:
    """Reduced QR: Q (..., M, K) and R (..., K, N), K = min(M, N)."""
    a = _arr(a)
    _check_float(a, "[linalg::qr]")
    _check_matrix(a, "[linalg::qr]")
    _no_vmap_rule(a, "QRF")
    _no_output_shapes("QRF")
    q, r = E.linalg.qr(a._t, mode="reduced")
    return _wrap(q, a._dtype), _wrap(r, a._dtype)


def svd(a, /, compute_uv: bool = True):
    """(U, S, Vt) with full U and Vt, or S alone; S is float32 for complex input."""
    a = _arr(a)
    _check_float(a, "[linalg::svd]", complex_ok=True)
    _check_matrix(a, "[linalg::svd]", "Input array")
    _no_output_shapes("SVD")
    s_dt = D.float32 if a._dtype is D.complex64 else a._dtype
    if not compute_uv:
        return _wrap(E.linalg.svdvals(a._t).to(s_dt.carrier), s_dt)
    u, s, vt = E.linalg.svd(a._t, full_matrices=True)
    return _wrap(u, a._dtype), _wrap(s.to(s_dt.carrier), s_dt), _wrap(vt, a._dtype)


def _check_inv(a: array, prefix: str = "[linalg::inv]") -> None:
    _check_float(a, prefix)
    _check_matrix(a, prefix)
    _check_square(a, f"{prefix} Inverses are only defined for square matrices.")


# NOTE: MLX's CPU kernels hand LAPACK the row-major buffer, so getrf factors A^T and
# trtri reads the other triangle (the same diagonal); a failure is LAPACK's `info` (1-based:
# the first exactly-zero pivot, or diagonal element, of the first failing matrix) in a
# RuntimeError. A NaN pivot is not zero: such a matrix inverts to NaNs without an error.

def _stacked_values(t) -> np.ndarray:
    """The values of tensor `t`; inside vmaps, of every example at once (the vmapped axes
    first, outermost first), as MLX's kernel sees the whole batch."""
    if not is_vmap_tracer(t):
        return t.detach().numpy()
    v = _stacked_values(t._value)
    outer = v.ndim - len(t._value.shape)
    return np.moveaxis(v, outer + t._bdim, outer)


def _matrices(a: array) -> np.ndarray:
    """The matrices of `a` (of every vmapped example too) as a NumPy stack."""
    values = _stacked_values(a._t)
    return values.reshape((-1 if values.size else 0,) + a.shape[-2:])


def _raise_lu_failure(mats: np.ndarray) -> None:
    for m in mats:
        info = _zero_pivot(m.T)
        if info:
            raise RuntimeError(f"[Inverse::eval_cpu] LU factorization failed with error code "
                               f"{info}")


def _raise_tri_failure(diagonals) -> None:
    """`diagonals`: the (batch, n) diagonals of the triangles MLX inverts."""
    for d in diagonals:
        zero = (d == 0).nonzero()[0]
        if zero.size:
            raise RuntimeError(f"[Inverse::eval_cpu] triangular inversion failed with error "
                               f"code {int(zero[0]) + 1}")


def _nan_inverse(a: array) -> array:
    """The inverse where each matrix holding a NaN is all NaN (LAPACK spreads it)."""
    bad = O.any(O.isnan(a), axis=(-2, -1), keepdims=True)
    safe = O.where(bad, O.eye(a.shape[-1], dtype=a._dtype), a)
    out = _wrap(E.linalg.inv(safe._t), a._dtype)
    return O.where(bad, array(math.nan, a._dtype), out)


def inv(a, /) -> array:
    """The inverse of each square matrix; a singular one raises MLX's RuntimeError."""
    a = _arr(a)
    _check_inv(a)
    _no_output_shapes("Inverse")
    mats = _matrices(a)
    _raise_lu_failure(mats)
    if np.isnan(mats).any():
        return _nan_inverse(a)
    return _wrap(E.linalg.inv(a._t), a._dtype)


def tri_inv(a, /, upper: bool = False) -> array:
    """The inverse of the lower (or upper) triangle of each square matrix; the other
    triangle is not read. A zero on the diagonal raises MLX's RuntimeError."""
    a = _arr(a)
    _check_inv(a)
    _no_output_shapes("Inverse")
    if is_vmap_tracer(a._t):
        return inv(a)
    if a.size:
        _raise_tri_failure(_matrices(a).diagonal(axis1=-2, axis2=-1))
    t = E.triu(a._t) if upper else E.tril(a._t)
    eye = E.eye(a.shape[-1], dtype=t.dtype).expand(*t.shape)
    res = E.linalg.solve_triangular(t, eye, upper=upper)
    # MLX zeroes the other triangle after trtri (+0.0 where substitution leaves -0.0)
    return _wrap(E.triu(res) if upper else E.tril(res), a._dtype)


def cholesky(a, /, upper: bool = False) -> array:
    """The Cholesky factor of each symmetric positive-definite matrix, from the triangle
    `upper` names. MLX does not check LAPACK's info: a matrix that is not positive-definite
    gives what reference LAPACK's potrf leaves (see `_reference_partial`)."""
    a = _arr(a)
    _check_float(a, "[linalg::cholesky]")
    _check_matrix(a, "[linalg::cholesky]")
    _check_square(a, "[linalg::cholesky] Cholesky decomposition is only defined for square "
                     "matrices.")
    _no_output_shapes("Cholesky")
    return _wrap(apply(cholesky_p, a._t, upper=bool(upper), partial="reference"), a._dtype)


def cholesky_inv(a, /, upper: bool = False) -> array:
    """The inverse of A from its Cholesky factor (lower, or upper), as MLX composes it."""
    a = _arr(a)
    _check_float(a, "[linalg::cholesky_inv]")
    _check_matrix(a, "[linalg::cholesky_inv]")
    _check_square(a, "[linalg::cholesky_inv] Cholesky inverse is only defined for square "
                     "matrices.")
    li = tri_inv(a, upper)
    return O.matmul(li, O.swapaxes(li, -1, -2)) if upper else \
        O.matmul(O.swapaxes(li, -1, -2), li)


def pinv(a, /) -> array:
    """The Moore-Penrose pseudo-inverse, from the SVD with MLX's cutoff
    (10 * max(M, N) * eps * the largest singular value)."""
    a = _arr(a)
    _check_float(a, "[linalg::pinv]")
    _check_matrix(a, "[linalg::pinv]")
    m, n = a.shape[-2:]
    if a.size == 0:
        return O.zeros(a.shape[:-2] + (n, m), a._dtype)
    k = min(m, n)
    u, s, vt = svd(a)
    u = O.swapaxes(u[..., :m, :k], -1, -2)
    v = O.swapaxes(vt[..., :k, :n], -1, -2)
    s = O.expand_dims(s, -2)
    eps = 2.0**-52 if a._dtype is D.float64 else 2.0**-23
    cutoff = O.multiply(array(10.0 * max(m, n) * eps, a._dtype), O.max(s, -1, True))
    rs = O.where(O.greater(s, cutoff), O.reciprocal(s), array(0.0, a._dtype))
    return O.matmul(O.multiply(v, rs), u)


def _eig_checks(a: array, prefix: str) -> None:
    _check_float(a, prefix, complex_ok=True)
    _check_matrix(a, prefix)
    _check_square(a, f"{prefix} Only defined for square matrices.")


def eig(a, /) -> tuple:
    """Eigenvalues and right eigenvectors of general square matrices (complex64)."""
    a = _arr(a)
    _eig_checks(a, "[linalg::eig]")
    w, v = E.linalg.eig(a._t)
    return _wrap(w.to(E.complex64), D.complex64), _wrap(v.to(E.complex64), D.complex64)


def eigvals(a, /) -> array:
    """Eigenvalues of general square matrices (complex64)."""
    a = _arr(a)
    _eig_checks(a, "[linalg::eigvals]")
    return _wrap(E.linalg.eigvals(a._t).to(E.complex64), D.complex64)


def _triangle(uplo: str) -> str:
    """The triangle MLX reads: the lower one when `UPLO` starts with "L", else the upper
    one (MLX validates nothing more: "l", "X" and "" all mean upper)."""
    return "L" if uplo[:1] == "L" else "U"


def eigh(a, /, UPLO: str = "L") -> tuple:  # noqa: N803  (MLX's name)
    """Eigenvalues (ascending) and eigenvectors of symmetric (Hermitian) matrices, from
    the `UPLO` triangle."""
    a = _arr(a)
    _eig_checks(a, "[linalg::eigh]")
    w, v = E.linalg.eigh(a._t, UPLO=_triangle(UPLO))
    w_dt = D.float32 if a._dtype is D.complex64 else a._dtype
    return _wrap(w.to(w_dt.carrier), w_dt), _wrap(v, a._dtype)


def eigvalsh(a, /, UPLO: str = "L") -> array:  # noqa: N803
    """Eigenvalues (ascending) of symmetric (Hermitian) matrices."""
    a = _arr(a)
    _eig_checks(a, "[linalg::eigvalsh]")
    w_dt = D.float32 if a._dtype is D.complex64 else a._dtype
    return _wrap(E.linalg.eigvalsh(a._t, UPLO=_triangle(UPLO)).to(w_dt.carrier), w_dt)


def _lu_checks(a: array, prefix: str) -> None:
    _check_float(a, prefix)
    _check_matrix(a, prefix)


def lu_factor(a, /) -> tuple:
    """(LU, pivots): L and U packed in one matrix, and LAPACK's row swaps, 0-based uint32."""
    a = _arr(a)
    _lu_checks(a, "[linalg::lu_factor]")
    _no_vmap_rule(a, "LUF")
    _no_output_shapes("LUF")
    packed, piv = E.linalg.lu_factor(a._t)
    return _wrap(packed, a._dtype), _wrap((piv - 1).to(E.int64), D.uint32)


def lu(a, /) -> tuple:
    """(row_pivots, L, U) with `(L @ U)[row_pivots] == a`; L is unit lower (M, K), U upper
    (K, N)."""
    a = _arr(a)
    _lu_checks(a, "[linalg::lu]")
    _no_vmap_rule(a, "LUF")
    _no_output_shapes("LUF")
    perm, low, up = E.linalg.lu(a._t)
    # a = P @ L @ U, so row i of a is row argmax(P[i]) of L @ U
    rows = E.argmax(perm, dim=-1)
    return _wrap(rows, D.uint32), _wrap(low, a._dtype), _wrap(up, a._dtype)


# -- solvers --------------------------------------------------------------------------------

def _check_solve(a: array, b: array, prefix: str) -> None:
    if a.ndim < 2:
        raise ValueError(f"{prefix} First input must have >= 2 dimensions. Received array "
                         f"with {a.ndim} dimensions.")
    if b.ndim < 1:
        raise ValueError(f"{prefix} Second input must have >= 1 dimensions. Received array "
                         f"with {b.ndim} dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{prefix} First input must be a square matrix. Received array with "
                         f"shape {_shape(a.shape)}.")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else -1]:
        raise ValueError(f"{prefix} Last dimension of first input with shape {_shape(a.shape)}"
                         " must match second to last dimension of second input with shape "
                         f"{_shape(b.shape)}.")
    dt = D.promote_types(a._dtype, b._dtype)
    if dt not in (D.float32, D.float64):
        raise ValueError(f"{prefix} Input arrays must promote to float32 or float64.  Received "
                         f"arrays with type {a._dtype.name} and {b._dtype.name}.")


def _shape(shape: tuple) -> str:
    return "(" + ",".join(str(s) for s in shape) + ")"


def solve(a, b, /) -> array:
    """x with a @ x = b (b a vector when 1-D, else a stack of matrices)."""
    a, b = _arr(a), _arr(b)
    _check_solve(a, b, "[linalg::solve]")
    _check_permutable(a, b)
    _no_vmap_rule(a, "LUF")
    _no_output_shapes("LUF")
    dt = D.promote_types(a._dtype, b._dtype)
    ta, tb = cast(a._t, a._dtype, dt), cast(b._t, b._dtype, dt)
    if a.size:
        # MLX solves by its LU, then tri_inv of L (unit diagonal) and of U
        _raise_tri_failure(_matrices(lu(a)[2]).diagonal(axis1=-2, axis2=-1))
    return _wrap(E.linalg.solve(ta, tb), dt)


def _check_permutable(a: array, b: array) -> None:
    """MLX permutes b's rows by a's LU pivots with `take_along_axis`, which broadcasts no
    dimensions in: b is a vector only beside one matrix, and a stack of matrices needs as
    many dimensions as a, its batch broadcasting with a's."""
    index_ndim = a.ndim - 1 if b.ndim == 1 else a.ndim
    if index_ndim != b.ndim:
        raise ValueError(f"[take_along_axis] Indices of dimension {index_ndim} does not match "
                         f"array of dimension {b.ndim}.")
    if b.ndim == 1:
        return
    rest, index_rest = (*b.shape[:-2], b.shape[-1]), (*a.shape[:-2], 1)
    for m, n in zip(rest, index_rest):
        if m != n and 1 not in (m, n):
            raise ValueError(f"[broadcast_shapes] Shapes {_shape(rest)} and "
                             f"{_shape(index_rest)} cannot be broadcast.")


def solve_triangular(a, b, /, *, upper: bool = False) -> array:
    """x with tri(a) @ x = b, as MLX computes it: tri_inv(a) @ b."""
    a, b = _arr(a), _arr(b)
    _check_solve(a, b, "[linalg::solve_triangular]")
    return O.matmul(tri_inv(a, upper), b)


# -- determinants ---------------------------------------------------------------------------

def _det_checks(a: array, prefix: str) -> None:
    if a._dtype.kind == "c":
        raise ValueError(f"{prefix} Complex inputs are not supported.")
    _check_matrix(a, prefix)
    _check_square(a, f"{prefix} Only defined for square matrices.")


def _det_small(a: array) -> array:
    n = a.shape[-1]
    if n == 0:
        return O.broadcast_to(array(1.0, a._dtype), a.shape[:-2])

    def e(i, j):
        return a[..., i, j]
    if n == 1:
        return e(0, 0)
    if n == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    return (e(0, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1))
            - e(0, 1) * (e(1, 0) * e(2, 2) - e(1, 2) * e(2, 0))
            + e(0, 2) * (e(1, 0) * e(2, 1) - e(1, 1) * e(2, 0)))


def _as_float(a: array) -> array:
    return a.astype(_at_least_float(a))


def det(a, /) -> array:
    """Determinants: written out for matrices up to 3x3 (as MLX does), from LU beyond."""
    a = _arr(a)
    _det_checks(a, "[linalg::det]")
    a = _as_float(a)
    if a.shape[-1] <= 3:
        return _det_small(a)
    return _wrap(E.linalg.det(a._t), a._dtype)


def slogdet(a, /) -> tuple:
    """(sign, log|det|) of each square matrix."""
    a = _arr(a)
    _det_checks(a, "[linalg::slogdet]")
    a = _as_float(a)
    if a.shape[-1] <= 3:
        d = _det_small(a)
        return O.sign(d), O.log(O.abs(d))
    sign, logabs = E.linalg.slogdet(a._t)
    return _wrap(sign, a._dtype), _wrap(logabs, a._dtype)


# -- products -------------------------------------------------------------------------------

def cross(a, b, /, axis: int = -1) -> array:
    """The cross product of 3-vectors (or 2-vectors, read with a zero third component)."""
    a, b = _arr(a), _arr(b)
    for x in (a, b):
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"[linalg::cross] Invalid axis {axis} for array with {x.ndim} "
                             "dimensions.")
        if not 2 <= x.shape[axis] <= 3:
            raise ValueError("[linalg::cross] The specified axis must have size 2 or 3.")
    a2, b2 = a.shape[axis] == 2, b.shape[axis] == 2
    dt = D.promote_types(a._dtype, b._dtype)
    sa, sb = list(a.shape), list(b.shape)
    sa[axis % a.ndim] = sb[axis % b.ndim] = 3
    out = list(E.broadcast_shapes(tuple(sa), tuple(sb)))
    ax = axis % len(out)
    out[ax] = 2 if a2 else 3
    av = O.split(O.broadcast_to(a.astype(dt), out), 2 if a2 else 3, ax)
    out[ax] = 2 if b2 else 3
    bv = O.split(O.broadcast_to(b.astype(dt), out), 2 if b2 else 3, ax)
    if a2 and b2:
        z = O.zeros_like(av[0])
        parts = [z, z]
    elif b2:
        parts = [O.negative(av[2] * bv[1]), av[2] * bv[0]]
    elif a2:
        parts = [av[1] * bv[2], O.negative(av[0] * bv[2])]
    else:
        parts = [av[1] * bv[2] - av[2] * bv[1], av[2] * bv[0] - av[0] * bv[2]]
    parts.append(av[0] * bv[1] - av[1] * bv[0])
    return O.concatenate(parts, ax)


__all__ = ["cholesky", "cholesky_inv", "cross", "det", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lu", "lu_factor", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_triangular", "svd", "tri_inv"]


__dir__ = listing(globals(), __all__)
