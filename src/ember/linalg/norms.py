"""Norms and rank: norm, vector_norm, matrix_norm, cond, matrix_rank.

`vector_norm` is the one `linalg_vector_norm` primitive (defined in ops/stats.py,
where `torch.norm` also uses it); matrix norms compose it with amax / amin, and
the spectral and nuclear norms compose `svdvals`, so their gradients come for free.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .._view import wrap_dim
from ..amp.autocast_mode import autocast_op
from ..ops._arg_parser_text import need_tensor, wrong_type
from ..ops._common import type_name, write_out
from ..ops.creation import zeros
from ..ops.stats import vector_norm as _vector_norm
from ._common import check_float, check_matrix, exact_out
from .decompositions import eigvalsh, svdvals
from .least_squares import UNSET, _tols, legacy_tolerances


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:
    """(sum |x|^ord)^(1/ord) over `dim` (every dim when None); ord may be inf, -inf or 0."""
    if not isinstance(ord, (int, float, complex, Tensor)):  # (PyTorch's argument parser)
        raise wrong_type("linalg_vector_norm", "ord", None, "Number", ord)
    check_float(x, "linalg.vector_norm", low_ok=True)
    return exact_out(_vector_norm(x, ord, dim, keepdim, dtype=dtype), out)


def _matrix_dims(A: Tensor, dim) -> tuple[int, int]:
    if isinstance(dim, int):
        raise TypeError(f"linalg_matrix_norm(): argument 'dim' must be tuple of ints, not int "
                        f"({dim})")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    d0, d1 = wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return d0, d1


def _spectral(A: Tensor, d0: int, d1: int, keepdim: bool, reduce: str) -> Tensor:
    """A function of the singular values of the (d0, d1) matrices: sum, amax or amin."""
    perm = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
    s = svdvals(A.permute(perm))
    if reduce == "amax" and s._shape[-1] == 0:
        reduce = "sum"  # (an empty matrix's spectral norm is 0, as PyTorch's; amax refuses)
    r = getattr(s, reduce)(-1, keepdim=keepdim)
    if keepdim:
        # NOTE: like torch, put the two kept dims back with one permute (its grad_fn is
        # PermuteBackward0), not with unsqueezes.
        r = r.unsqueeze(-1).permute([perm.index(d) for d in range(A.ndim)])
    return r


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:
    """Frobenius, nuclear, spectral (2, -2) or max column / row sum (1, -1, inf, -inf) norms."""
    if isinstance(ord, Tensor) and ord.ndim == 0:  # (a 0-d tensor is a Number to the parser)
        ord = ord.item()
    if not isinstance(ord, (str, int, float)):  # (PyTorch's argument parser)
        raise TypeError(f"linalg_matrix_norm() received an invalid combination of arguments - "
                        f"got (Tensor, ord={type(ord).__name__}), but expected one of:\n"
                        " * (Tensor input, Number ord, tuple of ints dim = (-2,-1), bool keepdim "
                        "= False, *, torch.dtype dtype = None, Tensor out = None)\n"
                        " * (Tensor input, str ord = \"fro\", tuple of ints dim = (-2,-1), bool "
                        "keepdim = False, *, torch.dtype dtype = None, Tensor out = None)")
    # (PyTorch checks the order before the input's rank and the dims)
    if ord not in ("fro", "nuc") and (
            isinstance(ord, str) or ord not in (1, -1, 2, -2, math.inf, -math.inf)):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    # (the spectral and nuclear norms take an SVD, which refuses float16 / bfloat16)
    check_matrix(A, "linalg.matrix_norm", low_ok=ord not in (2, -2, "nuc"))
    d0, d1 = _matrix_dims(A, dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return _norm_out(_vector_norm(A, 2, (d0, d1), keepdim), out)
    if ord == "nuc":
        return _norm_out(_spectral(A, d0, d1, keepdim, "sum"), out)
    if abs(ord) == 2:
        return _norm_out(_spectral(A, d0, d1, keepdim, "amax" if ord > 0 else "amin"), out)
    # 1: largest column sum of |a| (sum over rows d0); inf: largest row sum (over cols d1).
    # NOTE: like torch, the sum drops its dim first and amax / amin reduce the other one
    # directly, so the result's grad_fn is AmaxBackward0 / AminBackward0.
    summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
    col = _vector_norm(A, 1, summed, keepdim=keepdim)
    if not keepdim and summed < other:
        other -= 1
    if ord > 0 and col._shape[other] == 0:
        # NOTE: as PyTorch, the largest sum over no columns (rows) is 0 (amax refuses)
        return _norm_out(col.sum(other, keepdim=keepdim), out)
    r = col.amax(other, keepdim=keepdim) if ord > 0 else col.amin(other, keepdim=keepdim)
    return _norm_out(r, out)


def _norm_out(r: Tensor, out, fname: str = "linalg.matrix_norm") -> Tensor:
    """`out=` for the matrix norms and linalg.norm, which want the result's dtype exactly."""
    if isinstance(out, Tensor) and out._dtype is not r._dtype:  # (before the grad check)
        raise RuntimeError(f"{fname} expected out tensor dtype {type_name(r._dtype)} but got: "
                           f"{type_name(out._dtype)}")
    return _composite_out(r, out)


def _composite_out(r: Tensor, out) -> Tensor:
    """`out=` of a function PyTorch composes of other ops (cond, matrix_norm, norm): the
    result is copied into `out` by an ordinary copy_, recorded when it needs grad (`out`'s
    grad_fn is then CopyBackwards), where a primitive's `out=` refuses grad."""
    if not (isinstance(out, Tensor) and grad_mode.state.enabled
            and (r.requires_grad or out.requires_grad)):
        return write_out(r, out)
    write_out(r.detach(), out)  # (the resize, its warning and the cast checks)
    return out.copy_(r)


def _fmt(ord) -> str:
    return ord if isinstance(ord, str) else f"{ord:g}"


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None,
         out=None) -> Tensor:
    """A vector norm (int or 1-tuple `dim`, or 1-D input) or a matrix norm (2-tuple, 2-D)."""
    # (the dtype is checked by the vector or matrix norm it forwards to, after the dims)
    need_tensor(A, "linalg_norm")
    if isinstance(ord, str):  # a matrix norm, whatever the rank or the dims say
        dims = (-2, -1) if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
        if dim is not None and len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or "
                               f"2. Got {list(dims)}")
        if dim is None and A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        return _norm_out(matrix_norm(A, ord, dims, keepdim, dtype=dtype), out, "linalg.norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            # (PyTorch's linalg.norm passes its default order on as the float 2.0, which
            # its node shows as `_saved_ord`)
            r = vector_norm(A, 2.0 if ord is None else ord, dims, keepdim, dtype=dtype)
            return _norm_out(r, out, "linalg.norm")
        if len(dims) == 2:
            r = matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
            return _norm_out(r, out, "linalg.norm")
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                           f"{list(dims)}")
    if ord is None:
        return _norm_out(vector_norm(A, 2.0, None, keepdim, dtype=dtype), out, "linalg.norm")
    if A.ndim == 1:
        return _norm_out(vector_norm(A, ord, None, keepdim, dtype=dtype), out, "linalg.norm")
    if A.ndim == 2:
        return _norm_out(matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype), out, "linalg.norm")
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D "
                       f"or 2D. Got {A.ndim}D.")


@autocast_op("linalg_cond")
def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """Condition number: s_max / s_min for p in (None, 2), s_min / s_max for -2, else
    matrix_norm(A, p) * matrix_norm(inv(A), p)."""
    if isinstance(A, Tensor) and A.ndim < 2:  # (before the dtype; the wording differs by order)
        where, what = (f"linalg.cond(ord={p})", "tensor A") if isinstance(p, str) else \
            ("linalg.cond", "tensor")
        raise RuntimeError(f"{where}: The input {what} must have at least 2 dimensions.")
    if p in ("fro", "nuc") or isinstance(p, (int, float)) and abs(p) in (1, math.inf):
        _check_square_cond(A, p)
    elif p not in (None, 2, -2):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if isinstance(A, Tensor) and A.numel() == 0:
        # NOTE: as PyTorch, an empty matrix's condition number is 0, before any dtype check
        # (an integer one's is an integer 0)
        return _composite_out(zeros(A._shape[:-2], dtype=A._dtype.to_real(),
                                    device=A.device), out)
    # (the dtype is checked by the function each order takes: the SVD, or inv)
    check_float(A, "linalg.svd" if p in (None, 2, -2, "nuc") else "linalg.inv")
    check_matrix(A, "linalg.cond", low_ok=True)
    if p in (None, 2, -2):
        s = svdvals(A)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s._shape[-1] - 1, 1)
        r = (big / small if p != -2 else small / big).squeeze(-1)
        return _composite_out(r, out)
    if p == "nuc":
        # NOTE: as PyTorch, from the singular values: sum(s) * sum(1 / s), so a singular
        # matrix gives a huge number or nan (0 * inf), not the inverse's inf
        s = svdvals(A)
        return _composite_out(s.sum(-1) * s.reciprocal().sum(-1), out)
    from .solvers import inv_ex

    # NOTE: as PyTorch, a singular matrix's condition number is inf, not an error: its
    # inverse is taken as all inf, and 0 * inf (a zero matrix) is mapped to inf too.
    inverse, info = inv_ex(A)
    inverse = inverse.masked_fill((info > 0)[..., None, None], math.inf)
    with np.errstate(invalid="ignore"):
        r = matrix_norm(A, p) * matrix_norm(inverse, p)
    return _composite_out(r.nan_to_num(math.inf, math.inf, -math.inf), out)


def _check_square_cond(A: Tensor, p) -> None:
    if A._shape[-1] != A._shape[-2]:
        # (PyTorch names the order as C++ prints it: an int as is, a float as %f, inf as inf)
        shown = p if isinstance(p, (str, int)) or math.isinf(p) else f"{p:f}"
        raise RuntimeError(f"linalg.cond(ord={shown}): A must be batches of square matrices, "
                           f"but they are {A._shape[-2]} by {A._shape[-1]} matrices")


@autocast_op("linalg_matrix_rank")
def matrix_rank(A: Tensor, *args, atol=None, rtol=None, hermitian: bool = False, tol=UNSET,
                out=None) -> Tensor:
    """Number of singular values above max(atol, rtol * largest), as int64 (no gradient).
    PyTorch's older overload matrix_rank(A, tol, hermitian=False) is taken too (tol: an
    absolute tolerance)."""
    atol, rtol, hermitian = legacy_tolerances("linalg_matrix_rank", "tol", A, args, tol, atol,
                                              rtol, hermitian)
    if isinstance(A, Tensor) and A.ndim < 2:  # (the rank first, in PyTorch's own words)
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if isinstance(A, Tensor) and (A._dtype._kind < 2 or A._dtype in (dt.float16, dt.bfloat16)):
        raise RuntimeError("This function doesn't handle types other than float and double")
    check_matrix(A, "linalg.eigh" if hermitian else "linalg.matrix_rank", square=hermitian)
    from ..ops.creation import empty, tensor

    if A.device.type == "meta":
        return empty(A._shape[:-2], dtype=dt.int64, device=A.device)
    with grad_mode.no_grad():
        s = (eigvalsh(A).abs() if hermitian else svdvals(A)).numpy()
    a, r = _tols(A, atol, rtol)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    rank = (s > np.maximum(a, r * smax)).sum(-1).astype(np.int64)
    return write_out(tensor(rank), out)
