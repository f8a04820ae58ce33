"""Least squares and the pseudo-inverse: pinv and lstsq.

One primitive, `linalg_pinv`, computes pinv(A) (through the SVD, or eigh when hermitian)
and, given a second input B, lstsq's pinv(A) @ B. Its VJP and forward rule are the
constant-rank formulas of Golub & Pereyra (`_pinv_vjp_from`, `_pinv_tangent`), written
with ember ops so they differentiate again. Both functions also take PyTorch's older
tolerance spellings (`legacy_tolerances`, shared with matrix_rank).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..amp.autocast_mode import autocast_op
from ..ops._arg_parser_text import need_tensor
from ..ops._common import type_name, write_out
from ..ops._linalg_batch import align, front
from ..ops.reduce import return_type
from ..ops.registry import Primitive, apply, defbatch, defjvp, defvjp
from ._common import check_matrix, eps, hermitian_part, svd_np
from .solvers import _LAPACK_DTYPES

# --- pinv ------------------------------------------------------------------------------

def _tolerance(s_max, atol, rtol):
    return np.maximum(atol, rtol * s_max)


def _pinv_kernel(a, b=None, *, atol, rtol, hermitian, vec=False):
    if b is not None:  # lstsq: pinv(A) @ B
        x = np.matmul(_pinv_kernel(a, atol=atol, rtol=rtol, hermitian=False),
                      b[..., None] if vec else b)
        return np.ascontiguousarray(x[..., 0] if vec else x)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        w, v = np.linalg.eigh(a)
        tol = _tolerance(np.abs(w).max(-1, keepdims=True), atol, rtol)
        winv = np.where(np.abs(w) > tol, 1 / np.where(w == 0, 1, w), 0).astype(w.dtype)
        return np.matmul(v * winv[..., None, :], np.swapaxes(v.conj(), -1, -2))
    u, s, vh = svd_np(a, full_matrices=False)
    tol = _tolerance(s[..., :1], atol, rtol)
    sinv = np.where(s > tol, 1 / np.where(s == 0, 1, s), 0).astype(s.dtype)
    return np.matmul(np.swapaxes(vh.conj(), -1, -2) * sinv[..., None, :],
                     np.swapaxes(u.conj(), -1, -2))


def _pinv_meta(A, B, *, atol, rtol, hermitian, vec=False):
    m, n = A._shape[-2:]
    if B is None:
        return A._shape[:-2] + (n, m), A._dtype
    if vec:
        return broadcast_shapes(A._shape[:-2], B._shape[:-1]) + (n,), A._dtype
    return broadcast_shapes(A._shape[:-2], B._shape[:-2]) + (n, B._shape[-1]), A._dtype


def _pinv_vjp_from(g: Tensor, A: Tensor, P: Tensor) -> Tensor:
    """Gradient through P = pinv(A) given dL/dP = g (valid while the rank stays constant):
    -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A)."""
    ph, gh = P.mH, g.mH
    y = gh @ (P @ ph)
    z = (ph @ P) @ gh
    return -(ph @ g @ ph) + (y - A @ (P @ y)) + (z - (z @ P) @ A)


def _pinv_of(A: Tensor, params: dict) -> Tensor:
    return apply(pinv_p, A, None, **dict(params, vec=False))


def _pinv_grad_a(g, out, A, B, **params):
    if B is None:
        return _pinv_vjp_from(g, A, out)
    gp = g.unsqueeze(-1) * B.conj().unsqueeze(-2) if params["vec"] else g @ B.mH
    return _pinv_vjp_from(gp, A, _pinv_of(A, params))


def _pinv_grad_b(g, out, A, B, **params):
    ph = _pinv_of(A, params).mH
    return (ph @ g.unsqueeze(-1)).squeeze(-1) if params["vec"] else ph @ g


def _pinv_tangent(A: Tensor, P: Tensor, dA: Tensor) -> Tensor:
    """dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P (constant rank)."""
    dh = dA.mH
    x = (P @ P.mH) @ dh
    y = dh @ (P.mH @ P)
    return -(P @ dA @ P) + (x - (x @ A) @ P) + (y - P @ (A @ y))


def _pinv_jvp(primals, tangents, out, **params):
    (A, B), (dA, dB) = primals, tangents
    if params["hermitian"] and dA is not None:
        dA = hermitian_part(dA, "L")  # eigh reads the lower triangle
    if B is None:
        return _pinv_tangent(A, out, dA)
    vec = params["vec"]
    P = _pinv_of(A, params)
    res = None
    if dA is not None:
        dP = _pinv_tangent(A, P, dA)
        res = (dP @ B.unsqueeze(-1)).squeeze(-1) if vec else dP @ B
    if dB is not None:
        pb = (P @ dB.unsqueeze(-1)).squeeze(-1) if vec else P @ dB
        res = pb if res is None else res + pb
    return res


def _pinv_batch(args, dims, **params):
    if args[1] is None:
        return apply(pinv_p, front(args[0], dims[0]), None, **params), 0
    return apply(pinv_p, *align(args, dims, (2, 1 if params["vec"] else 2)), **params), 0


# pinv(A), and lstsq's pinv(A) @ B (B the second input, None for pinv): the same
# pseudo-inverse, PyTorch's two node names
pinv_p = Primitive("linalg_pinv", _pinv_kernel, _pinv_meta,
                   grad_name=lambda args, params: "LinalgPinvBackward0" if args[1] is None
                   else "LinalgLstsqBackward0")
defvjp(pinv_p, _pinv_grad_a, _pinv_grad_b, reads=((0, 1), (0,)), save_output=True)
defjvp(pinv_p, _pinv_jvp)
defbatch(pinv_p, _pinv_batch)


def _tols(A: Tensor, atol, rtol):
    """PyTorch's defaults: rtol = eps * max(m, n) unless a positive atol is given."""
    def arr(v):
        if isinstance(v, Tensor):
            broadcast_shapes(v._shape, A._shape[:-2])  # (the tolerance's size named first)
            return np.asarray(v.detach().numpy())[..., None]
        return 0.0 if v is None else float(v)

    if rtol is None:
        positive_atol = atol is not None and (isinstance(atol, Tensor) or atol > 0)
        rtol = 0.0 if positive_atol else eps(A._dtype) * max(A._shape[-2:], default=0)
    return arr(atol), arr(rtol)


UNSET = object()  # a legacy tolerance (`tol`, `rcond`) not given


def legacy_tolerances(fname: str, legacy: str, A, args: tuple, given, atol, rtol,
                      hermitian: bool) -> tuple:
    """(atol, rtol, hermitian) for pinv / matrix_rank, which PyTorch also takes in an older
    overload: (A, <legacy>, hermitian=False), positional or by keyword. There `legacy` is
    an absolute tolerance for `tol` (matrix_rank) and a relative one for `rcond` (pinv),
    and atol / rtol may not be given too. A call no overload takes raises the parser's
    TypeError."""
    if isinstance(A, Tensor) and not args and given is UNSET:
        return atol, rtol, hermitian
    value = args[0] if args else given
    ok = (isinstance(A, Tensor) and len(args) <= 2 and (given is UNSET or not args)
          and atol is None and rtol is None and isinstance(value, (Tensor, float, int))
          and (len(args) < 2 or isinstance(args[1], bool)))
    if not ok:
        from ..ops._arg_parser_text import keyword_order, tp_name

        # (the keywords in the order they are usually written: the legacy one first)
        named = {k: v for k, v in ((legacy, given), ("atol", atol), ("rtol", rtol))
                 if v is not UNSET and (v is not None or k == legacy)}
        got = [tp_name(v) for v in (A, *args)]
        got += [f"{k}={tp_name(named[k])}" for k in keyword_order(named)]
        rows = [f" * (Tensor input, *, {t} atol = None, {t} rtol = None, bool hermitian = "
                "False, Tensor out = None)" for t in ("Tensor", "float")]
        rows += [f" * (Tensor input, {t} {legacy}, bool hermitian = False, *, Tensor out = "
                 "None)" for t in ("Tensor", "float")]
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n" + "\n".join(rows) + "\n")
    if len(args) == 2:
        hermitian = args[1]
    return (value, 0.0, hermitian) if legacy == "tol" else (0.0, value, hermitian)


def pinv(A: Tensor, *args, atol=None, rtol=None, hermitian: bool = False, rcond=UNSET,
         out=None) -> Tensor:
    """Moore-Penrose pseudo-inverse via the SVD (or eigh when `hermitian`). PyTorch's older
    overload pinv(A, rcond, hermitian=False) is taken too (rcond: a relative tolerance)."""
    atol, rtol, hermitian = legacy_tolerances("linalg_pinv", "rcond", A, args, rcond, atol,
                                              rtol, hermitian)
    if isinstance(A, Tensor) and (A.ndim < 2 or A._dtype not in _LAPACK_DTYPES):
        raise RuntimeError(f"linalg.pinv({type_name(A._dtype)}{{{list(A._shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")
    check_matrix(A, "linalg.pinv")
    a, r = _tols(A, atol, rtol)
    return write_out(apply(pinv_p, A, None, atol=a, rtol=r, hermitian=hermitian), out)


# --- lstsq -----------------------------------------------------------------------------

LstsqResult = return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check_lstsq(A: Tensor, B: Tensor, driver) -> bool:
    if isinstance(A, Tensor) and A.ndim < 2:  # (the ranks first, in PyTorch's own words)
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if isinstance(B, Tensor) and B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if isinstance(A, Tensor) and A._dtype not in _LAPACK_DTYPES:
        raise RuntimeError("This function doesn't handle types other than float and double")
    check_matrix(A, "linalg.lstsq")
    need_tensor(B, "linalg_lstsq", "b", 2)
    if B.ndim < 1 or B.ndim > A.ndim or A.ndim - B.ndim > 1:
        raise RuntimeError(
            "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
            "(input.dim() - other.dim()) <= 1"
        )
    if A._dtype is not B._dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, "
                           f"but got input's dtype {type_name(A._dtype)} and other's dtype "
                           f"{type_name(B._dtype)}")
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"
        )
    vec = B.ndim == A.ndim - 1
    rows = B._shape[-1] if vec else B._shape[-2]
    if rows != A._shape[-2]:
        which = "other.size(-1)" if vec else "other.size(-2)"
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match {which}")
    broadcast_shapes(A._shape[:-2], B._shape[:-1] if vec else B._shape[:-2])
    return vec


@autocast_op("linalg_lstsq")
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
    x = apply(pinv_p, A, B, atol=0.0, rtol=float(rcond), hermitian=False, vec=vec)
    batch = x._shape[:-1] if vec else x._shape[:-2]
    real = A._dtype.to_real()
    rank, sv, full_rank = _rank_and_sv(A, batch, rcond, driver)
    if m > n and driver != "gelsy" and full_rank:
        r = A @ (x.unsqueeze(-1) if vec else x) - (B.unsqueeze(-1) if vec else B)
        residuals = (r.abs() ** 2).sum(-2)
        if residuals._grad_fn is not None:  # (PyTorch's one node for the solve's outputs)
            from ..ops.registry import rename_node

            rename_node(residuals._grad_fn, "LinalgLstsqBackward0")
    elif x._grad_fn is not None:
        # NOTE: PyTorch's empty residuals are an output of its differentiable node too
        # (requires_grad, grad_fn=LinalgLstsqBackward0): an empty real view of the solution
        from ..ops.registry import rename_node

        residuals = x.reshape(-1)[:0].abs()
        rename_node(residuals._grad_fn, "LinalgLstsqBackward0")
    else:
        residuals = _empty((0,), real, A.device)
    return LstsqResult(x, residuals, rank, sv)


def _empty(shape, dtype, device) -> Tensor:
    from ..ops.creation import empty, tensor

    if device.type == "meta":
        return empty(shape, dtype=dtype, device=device)
    return tensor(np.zeros(shape, dtype.np), dtype=dtype)


def _rank_and_sv(A: Tensor, batch, rcond: float, driver: str):
    """rank (all drivers but gels), singular values (gelsd, gelss), both not differentiable,
    and whether every matrix has full column rank (gels assumes it). Metadata and NumPy
    only: no op enters a graph or a transform."""
    from ..ops.creation import tensor

    if A._is_wrapper:
        return _rank_and_sv_batched(A, batch, rcond, driver)
    real = A._dtype.to_real()
    k = min(A._shape[-2:])
    dev = A.device
    if dev.type == "meta":
        rank = _empty(batch if driver != "gels" else (0,), dt.int64, dev)
        sv = _empty(batch + (k,) if driver in ("gelsd", "gelss") else (0,), real, dev)
        return rank, sv, True
    a = A._array()
    s = np.linalg.svd(a, compute_uv=False) if k else np.zeros(A._shape[:-2] + (0,), real.np)
    s = np.broadcast_to(s, tuple(batch) + (k,))
    smax = s[..., :1] if k else np.zeros(s.shape[:-1] + (1,), s.dtype)
    count = (s > rcond * smax).sum(-1).astype(np.int64)
    rank = tensor(count) if driver != "gels" else _empty((0,), dt.int64, dev)
    sv = tensor(np.ascontiguousarray(s)) if driver in ("gelsd", "gelss") else _empty(
        (0,), real, dev)
    return rank, sv, driver == "gels" or bool((count == A._shape[-1]).all())


def _rank_and_sv_batched(A: Tensor, batch, rcond: float, driver: str):
    """_rank_and_sv inside vmap: on the whole batch's values (each level's batch axis moved
    to the front), as PyTorch's batched LAPACK call sees them, then batched again."""
    # NOTE: reaches up to ember.func for `batched` (a vmap level's wrapper): the values of
    # a BatchedTensor are only reachable there
    from ..func._vmap import batched

    levels = []
    while A._is_wrapper:
        levels.append(A._level)
        A = A._value.movedim(A._bdim, 0)
    rank, sv, full_rank = _rank_and_sv(A, tuple(A._shape[:len(levels)]) + tuple(batch), rcond,
                                       driver)

    def rewrap(t: Tensor) -> Tensor:
        if t.numel() == 0 and t.ndim == 1:  # (an empty placeholder is the same everywhere)
            return t
        for level in reversed(levels):
            t = batched(t, 0, level)
        return t

    return rewrap(rank), rewrap(sv), full_rank

