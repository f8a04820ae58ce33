"""Matrix structure ops: trace diag diag_embed tril triu cross, and the top-level
`ember.det / inverse / svd / ...` spellings of `ember.linalg` functions.

tril / triu / diag_embed / trace / cross are primitives with VJPs beside them; the
factorisations themselves live in `ember.linalg` (imported lazily here, since
`ember.linalg` is built on these ops).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .._view import broadcast_shapes, contiguous_strides, wrap_dim
from ..amp.autocast_mode import autocast_op
from ._arg_parser_text import as_method, called_as_method, need_int, tp_name
from ._common import c_type_name, type_name, write_exact, write_out
from ._linalg_batch import align, front
from .reduce import return_type
from .registry import (
    Primitive,
    apply,
    apply_given_,
    bind,
    check_inplace,
    defbatch,
    defjvp,
    deflinear,
    defvjp,
    keep_given,
)

_grad_state = _grad_mode.state

_LOW = (np.dtype(np.float16), dt.bfloat16.np)

# --- tril / triu -------------------------------------------------------------------------


def _keep(n: int, m: int, diagonal: int, lower: bool) -> np.ndarray:
    return np.tri(n, m, diagonal, dtype=bool) if lower else ~np.tri(n, m, diagonal - 1,
                                                                    dtype=bool)


def _triangle_kernel(a, *, diagonal, lower):
    keep = _keep(*a.shape[-2:], diagonal, lower)
    out = np.zeros(a.shape, a.dtype)
    np.copyto(out, a, where=keep)
    return out


def _triangle_meta(x, *, diagonal, lower):
    return x._shape, x._dtype, contiguous_strides(x._shape)


# tril and triu (`lower`): one triangle mask, which is also its own VJP
triangle_p = Primitive("triangle", _triangle_kernel, _triangle_meta,
                       grad_name=lambda args, params: (
                           "TrilBackward0" if params["lower"] else "TriuBackward0"))
defvjp(triangle_p, lambda g, out, x, *, diagonal, lower: apply(
    triangle_p, g, diagonal=diagonal, lower=lower), reads=((),))
deflinear(triangle_p)
defbatch(triangle_p, lambda args, dims, **params: (
    apply(triangle_p, front(args[0], dims[0]), **params), 0))


def _check_2d(x: Tensor, name: str) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def _check_diagonal(diagonal, name: str, method: bool) -> None:
    """PyTorch's parser takes an int (an __index__ object but no bool, or a one-element
    integer tensor of any shape) for `diagonal`. NOTE: it numbers the argument only when
    passed positionally; it is numbered here as that usual call's (1 for the method, 2 for
    the function)."""
    if isinstance(diagonal, Tensor):
        fits = diagonal.numel() == 1 and diagonal._dtype._kind == 1
    else:
        fits = not isinstance(diagonal, bool) and hasattr(type(diagonal), "__index__")
    if not fits:
        raise TypeError(f"{name}(): argument 'diagonal' (position {1 if method else 2}) must "
                        f"be int, not {tp_name(diagonal)}")


def tril(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """The lower triangle (on and below `diagonal`) of the last two dims; the rest zeroed."""
    _check_diagonal(diagonal, "tril", called_as_method())
    _check_2d(input, "tril")
    return write_exact(_triangle(input, int(diagonal), True), out)


def triu(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """The upper triangle (on and above `diagonal`) of the last two dims; the rest zeroed."""
    _check_diagonal(diagonal, "triu", called_as_method())
    _check_2d(input, "triu")
    return write_exact(_triangle(input, int(diagonal), False), out)


def _triangle(input: Tensor, diagonal: int, lower: bool) -> Tensor:
    r = apply(triangle_p, input, diagonal=diagonal, lower=lower)
    if r._grad_fn is not None:
        keep_given(r, diagonal=diagonal)  # (shown as PyTorch's int64: -1 as 2**64 - 1)
    return r


def _triangle_(self: Tensor, diagonal: int, lower: bool) -> Tensor:
    _check_diagonal(diagonal, "tril_" if lower else "triu_", True)
    _check_2d(self, "tril" if lower else "triu")
    if self.device.type == "cpu" and not (_grad_state.enabled and self._requires_grad):
        # NOTE: without a graph, zeros are written where they belong and nothing else is
        # touched (an assignment through a mask), so on an expanded view the result does
        # not depend on the order of the writes, and PyTorch, which writes the same way,
        # does not refuse it
        from .creation import tensor
        from .index_key import TENSOR_SLOT
        from .setitem import setitem_p

        check_inplace(self, aliased_ok=True)
        drop = tensor(~_keep(*self._shape[-2:], int(diagonal), lower))
        bind(setitem_p, self, 0, drop.expand(self._shape), key=TENSOR_SLOT)
        return self
    return apply_given_({"diagonal": int(diagonal)}, triangle_p, self, diagonal=int(diagonal),
                        lower=lower)


def tril_(self: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle_(self, diagonal, True)


def triu_(self: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle_(self, diagonal, False)


# --- diag_embed / diag / trace ----------------------------------------------------------

def _embed_shape(shape, offset: int, dim1: int, dim2: int) -> tuple[int, ...]:
    n = shape[-1] + abs(offset) if shape else abs(offset) + 1
    out = list(shape[:-1])
    for d in sorted((dim1, dim2)):
        out.insert(d, n)
    return tuple(out)


def _diag_embed_kernel(a, *, offset, dim1, dim2):
    k = a.shape[-1]
    n = k + abs(offset)
    tmp = np.zeros(a.shape[:-1] + (n, n), a.dtype)
    idx = np.arange(k)
    tmp[..., idx + max(-offset, 0), idx + max(offset, 0)] = a
    return np.ascontiguousarray(np.moveaxis(tmp, (-2, -1), (dim1, dim2)))


diag_embed_p = Primitive(
    "diag_embed", _diag_embed_kernel,
    lambda x, *, offset, dim1, dim2: (_embed_shape(x._shape, offset, dim1, dim2), x._dtype))
defvjp(diag_embed_p, lambda g, out, x, *, offset, dim1, dim2: g.diagonal(offset, dim1, dim2),
       reads=((),))
deflinear(diag_embed_p)
defbatch(diag_embed_p, lambda args, dims, *, offset, dim1, dim2: (
    apply(diag_embed_p, front(args[0], dims[0]), offset=offset, dim1=dim1 + 1, dim2=dim2 + 1),
    0))


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose (dim1, dim2) diagonals at `offset` hold input's last dim; zeros elsewhere."""
    nd = input.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input if input.ndim else input.reshape(1)
    r = apply(diag_embed_p, x, offset=int(offset), dim1=d1, dim2=d2)
    if r._grad_fn is not None:
        keep_given(r, dim1=dim1, dim2=dim2, offset=int(offset))
    return r


def diag(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """1-D input: a square matrix with it on a diagonal; 2-D input: a copy of a diagonal."""
    diagonal = need_int(diagonal, "diag", "diagonal", 2)
    if input.ndim == 1:
        if isinstance(out, Tensor) and not dt.can_cast(input._dtype, out._dtype):
            raise RuntimeError(f"diag: result type {type_name(input._dtype)} can't be cast to "
                               f"the desired out= type {type_name(out._dtype)}")
        return write_exact(diag_embed(input, diagonal), out)  # (PyTorch's node: dims -2, -1)
    if input.ndim == 2:
        from .copy import clone_contiguous

        return write_exact(clone_contiguous(input.diagonal(diagonal)), out)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def _trace_kernel(a):
    if a.dtype in _LOW:
        return np.asarray(np.trace(a, dtype=np.float32)).astype(a.dtype)
    acc = np.int64 if a.dtype.kind in "iu" else a.dtype
    return np.asarray(np.trace(a, dtype=acc))


def _trace_vjp(g, out, x, *, in_shape):
    from .creation import eye

    n, m = in_shape
    return g * eye(n, m, dtype=g.dtype, device=g.device)


trace_p = Primitive(
    "trace", _trace_kernel,
    lambda x: ((), dt.int64 if x._dtype._kind < 2 else x._dtype))
defvjp(trace_p, _trace_vjp, reads=((),), in_shape=True)  # (the input's shape only, as PyTorch)
deflinear(trace_p)
# the kernel (NumPy's trace) sums the first two dims: a batch sums each matrix's diagonal
defbatch(trace_p, lambda args, dims: (front(args[0], dims[0]).diagonal(0, -2, -1).sum(-1), 0))


@autocast_op("trace")
def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a matrix (integers sum in int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input._dtype is dt.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return apply(trace_p, input)


# --- cross ------------------------------------------------------------------------------

def _cross_kernel(a, b, *, dim):
    if a.dtype in _LOW:
        return np.cross(a.astype(np.float32), b.astype(np.float32), axis=dim).astype(a.dtype)
    return np.asarray(np.cross(a, b, axis=dim))


def _cj(x: Tensor) -> Tensor:
    return x.conj() if x._dtype.is_complex else x


cross_p = Primitive("linalg_cross", _cross_kernel,
                    lambda a, b, *, dim: (broadcast_shapes(a._shape, b._shape), a._dtype),
                    grad_name="LinalgCrossBackward0")
defvjp(cross_p,
       lambda g, out, a, b, *, dim: apply(cross_p, _cj(b), g, dim=dim),
       lambda g, out, a, b, *, dim: apply(cross_p, g, _cj(a), dim=dim),
       reads=((1,), (0,)))


def _cross_jvp(primals, tangents, out, *, dim):
    (a, b), (ta, tb) = primals, tangents
    da = None if ta is None else apply(cross_p, ta, b, dim=dim)
    db = None if tb is None else apply(cross_p, a, tb, dim=dim)
    return db if da is None else da if db is None else da + db


def _cross_batch(args, dims, *, dim):
    # `dim` is negative: it names the same dim once the batch dims lead
    return apply(cross_p, *align(args, dims, (0, 0)), dim=dim), 0


defjvp(cross_p, _cross_jvp)
defbatch(cross_p, _cross_batch)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """Cross product of 3-vectors along `dim`, broadcasting the other dims."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    if input._shape[d] != 3 or other._shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input._shape[d]} and "
            f"{other._shape[d]}"
        )
    broadcast_shapes(input._shape, other._shape)
    # NOTE: PyTorch's order: shapes, then `out`'s dtype (the input's, never promoted), then
    # its kernel refusing bool, then the two dtypes compared.
    if isinstance(out, Tensor) and out._dtype is not input._dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(input._dtype)}, "
                           f"but got {c_type_name(out._dtype)} instead")
    if input._dtype is dt.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._dtype)} but found "
                           f"{type_name(other._dtype)}")
    r = apply(cross_p, input, other, dim=d - input.ndim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def cross(input: Tensor, other: Tensor, dim: int | None = None, *, out=None) -> Tensor:
    """torch.cross: like linalg.cross, but `dim=None` picks the first dim of size 3."""
    if dim is None:
        warn_at_user(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.", once=True)
        # (the first dim of size 3 in `input` itself, before any broadcasting)
        dim = next((i for i, n in enumerate(input._shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim, out=out)


# --- top-level spellings of ember.linalg functions --------------------------------------

def _operand(x, name: str, arg: str = "input") -> None:
    """PyTorch's parser error for a non-tensor operand, under the top-level name (the
    linalg function each forwards to would name itself)."""
    if not isinstance(x, Tensor):
        from ._arg_parser_text import not_tensor

        raise not_tensor(name, arg, 1, x)


def det(input: Tensor) -> Tensor:
    _operand(input, "det")
    from ..linalg import det as f

    return f(input)


def logdet(input: Tensor) -> Tensor:
    _operand(input, "logdet")
    from ..linalg.solvers import logdet as f

    return f(input)


def slogdet(input: Tensor, *, out=None):
    """torch.slogdet: linalg.slogdet's pair, named `torch.return_types.slogdet`."""
    _operand(input, "slogdet")
    from ..linalg import slogdet as f
    from ..linalg._common import exact_out

    return exact_out(SlogdetTuple(*f(input)), out)


@autocast_op("inverse")
def inverse(input: Tensor, *, out=None) -> Tensor:
    _operand(input, "inverse")
    from ..linalg import inv

    return inv(input, out=out)



@autocast_op("cholesky")
def cholesky(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """linalg.cholesky under its deprecated name: warns once, and names itself in errors."""
    from ..linalg import LinAlgError
    from ..linalg import cholesky as f

    warn_at_user(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
        "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs.", once=True)
    if isinstance(input, Tensor):  # the shape, then the dtype: its own kernel's words
        shape = input._shape
        if len(shape) < 2:
            raise RuntimeError("cholesky: The input tensor A must have at least 2 dimensions.")
        if shape[-1] != shape[-2]:
            raise RuntimeError(f"cholesky: A must be batches of square matrices, but they are "
                               f"{shape[-2]} by {shape[-1]} matrices")
        if input._dtype._kind < 2:
            raise NotImplementedError(f'"cholesky_cpu" not implemented for '
                                      f"'{type_name(input._dtype)}'")
    try:  # (unlike linalg.cholesky, this one casts its result into `out`)
        res = f(input, upper=upper)
        if res._grad_fn is not None:  # (its own node in PyTorch, not linalg.cholesky's)
            from .registry import rename_node

            rename_node(res._grad_fn, "CholeskyBackward0")
        return write_out(res, out)
    except LinAlgError as e:
        msg = str(e)
        raise type(e)(msg.replace("linalg.cholesky:", "cholesky:", 1)) from None


QRTuple = return_type("qr", ["Q", "R"])
SVDTuple = return_type("svd", ["U", "S", "V"])
SlogdetTuple = return_type("slogdet", ["sign", "logabsdet"])


@autocast_op("qr")
def qr(input: Tensor, some: bool = True, *, out=None):
    """torch.qr: reduced (some=True) or complete QR."""
    from ..linalg import qr as f
    from ..linalg._common import exact_out

    return exact_out(QRTuple(*f(input, "reduced" if some else "complete")), out)


@autocast_op("svd")
def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: returns V (not V^H); with compute_uv=False, U and V are zero matrices."""
    _operand(input, "svd")
    from ..linalg import svd as f
    from ..linalg import svdvals
    from ..linalg._common import exact_out

    if not compute_uv:
        from .creation import zeros

        m, n = input._shape[-2:]
        s = svdvals(input)
        kw = dict(dtype=input._dtype, device=input.device)
        return exact_out(SVDTuple(zeros(input._shape[:-2] + (m, m), **kw), s,
                                  zeros(input._shape[:-2] + (n, n), **kw)), out)
    U, S, Vh = f(input, full_matrices=not some)
    return exact_out(SVDTuple(U, S, Vh.mH), out)


@autocast_op("pinverse")
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    _operand(input, "pinverse")
    from ..linalg import pinv

    return pinv(input, rtol=rcond)


def matrix_power(input: Tensor, n: int, *, out=None) -> Tensor:
    _operand(input, "matrix_power")
    from ..linalg import matrix_power as f

    return f(input, n, out=out)


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """torch.lu (deprecated in PyTorch, kept by programs): packed LU, pivots (and infos)."""
    from ..linalg import lu_factor_ex

    LU, piv, info = lu_factor_ex(A, pivot=pivot, check_errors=not get_infos)
    return write_out((LU, piv, info) if get_infos else (LU, piv), out)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out=None):
    _operand(LU_data, "lu_unpack", "LU_data")
    from ..linalg.lu import lu_unpack as f

    return f(LU_data, LU_pivots, unpack_data, unpack_pivots, out=out)


@autocast_op("cholesky_solve")
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """X with A X = input, given A's Cholesky factor `input2` (lower, or upper if `upper`)."""
    from ..linalg.solvers import cholesky_solve as f

    return f(input, input2, upper, out=out)


@autocast_op("cholesky_inverse")
def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """A^-1 from A's Cholesky factor `input` (lower, or upper if `upper`)."""
    from ..linalg.solvers import cholesky_inverse as f

    return f(input, upper, out=out)


@autocast_op("triangular_solve")
def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None):
    """(solution, cloned_coefficient) of A X = input for triangular A (deprecated in PyTorch)."""
    from ..linalg.solvers import triangular_solve as f

    return f(input, A, upper, transpose, unitriangular, out=out)


def matrix_exp(input: Tensor) -> Tensor:
    """linalg.matrix_exp (the `torch.matrix_exp` / `Tensor.matrix_exp` spelling)."""
    _operand(input, "matrix_exp")
    from ..linalg.matrix_functions import matrix_exp as f

    return f(input)


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """linalg.householder_product under LAPACK's name (`torch.orgqr` / `Tensor.orgqr`)."""
    from ..linalg.matrix_functions import householder_product as f

    return f(input, input2)


def geqrf(input: Tensor, *, out=None):
    """(a, tau): LAPACK's packed Householder QR (`torch.geqrf` / `Tensor.geqrf`)."""
    from ..linalg.householder import geqrf as f

    return f(input, out=out)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False, *, out=None) -> Tensor:
    """Multiply `input3` by the Q that geqrf's (input, input2) encode (`torch.ormqr`)."""
    from ..linalg.householder import ormqr as f

    return f(input, input2, input3, left, transpose, out=out)


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(E, X): k extreme eigenpairs of a symmetric (generalized) problem by LOBPCG."""
    from ..linalg.lobpcg import lobpcg as f

    return f(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
             ortho_fparams, ortho_bparams)


def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    """linalg.lu_solve(LU_data, LU_pivots, input) (deprecated in PyTorch)."""
    from ..linalg import lu_solve as f

    warn_at_user(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)", once=True)
    return f(LU_data, LU_pivots, input, out=out)


def _method(fn):
    """`fn` as a Tensor method: a copy whose code is named `Tensor.<name>` (so
    `called_as_method` sees the form) and whose own name stays the op's (which Python's
    messages print, as PyTorch's do)."""
    method = as_method(fn)
    method.__qualname__ = fn.__qualname__
    return method


TENSOR_METHODS = {
    "cholesky_solve": cholesky_solve, "cholesky_inverse": cholesky_inverse,
    "triangular_solve": triangular_solve, "lu_solve": lu_solve,
    "tril": _method(tril), "triu": _method(triu), "tril_": tril_, "triu_": triu_, "diag": diag,
    "diag_embed": diag_embed, "trace": trace, "cross": cross, "det": det, "logdet": logdet,
    "slogdet": slogdet, "inverse": inverse, "cholesky": cholesky, "qr": qr, "svd": svd,
    "pinverse": pinverse, "matrix_power": matrix_power, "lu": lu, "matrix_exp": matrix_exp,
    "orgqr": orgqr, "geqrf": geqrf, "ormqr": ormqr,
}

__all__ = [
    "tril", "triu", "diag", "diag_embed", "trace", "cross", "det", "logdet", "slogdet",
    "inverse", "cholesky", "qr", "svd", "pinverse", "matrix_power", "lu", "lu_unpack",
    "cholesky_solve", "cholesky_inverse", "triangular_solve", "lu_solve", "matrix_exp",
    "orgqr", "geqrf", "ormqr", "lobpcg",
]
