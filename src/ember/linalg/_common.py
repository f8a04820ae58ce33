"""Shared pieces of `ember.linalg`: argument checks with PyTorch's messages, the
LAPACK-style column-major result layout, and the `LinAlgError` type."""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..ops._arg_parser_text import need_tensor, not_tensor
from ..ops._common import type_name
from ..ops._common import write_exact as exact_out  # noqa: F401 (the linalg modules' name)


class _LinAlgError(RuntimeError):
    """A matrix had no factorisation / inverse (singular, not positive-definite...).
    Named as PyTorch names it (`torch._C._LinAlgError`, so `type(e).__name__` agrees);
    `LinAlgError` is the public alias, as `torch.linalg.LinAlgError` is."""


LinAlgError = _LinAlgError


def svd_np(a: np.ndarray, **kw):
    """`np.linalg.svd(a, **kw)`, failing as PyTorch's gesdd does: LinAlgError naming the
    first matrix of the batch with a non-finite value (NumPy says "SVD did not converge")."""
    try:
        return np.linalg.svd(a, **kw)
    except np.linalg.LinAlgError:
        flat = a.reshape((-1,) + a.shape[-2:])
        bad = next((i for i, m in enumerate(flat) if not np.isfinite(m).all()), None)
        if bad is None:
            raise _LinAlgError("linalg.svd: The algorithm failed to converge because the "
                               "input matrix is ill-conditioned or has too many repeated "
                               "singular values.") from None
        raise _LinAlgError(f"linalg.svd: {batch_prefix(a.shape, bad)}The algorithm failed to "
                           "converge because the input matrix contained non-finite "
                           "values.") from None


def torch_args(schema: str, *, names: dict | None = None, flags: tuple = ()):
    """Decorator: a call PyTorch's argument parser refuses fails here with its TypeError
    (a non-Tensor where a Tensor goes, a flag in `flags` that is not a bool, missing or extra
    arguments, an unexpected keyword), named by its schema name `schema` and its argument
    names (`names` maps ember's parameter names to PyTorch's where they differ; both
    spellings are accepted as keywords). Calls that bind pay one frame and the type tests."""
    names = names or {}
    alias = {v: k for k, v in names.items()}

    def wrap(fn):
        params = [p for p in inspect.signature(fn).parameters.values() if p.name != "out"]
        pos = {p.name: i for i, p in enumerate(params)
               if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
        typed = [(p.name, pos.get(p.name), Tensor if p.name not in flags else bool)
                 for p in params if p.name in flags or p.annotation in ("Tensor", Tensor)]

        def check_types(args, kwargs):
            for name, i, kind in typed:
                if i is not None and i < len(args):
                    where, v = f" (position {i + 1})", args[i]
                elif name in kwargs:
                    where, v = "", kwargs[name]
                else:
                    continue
                if not (type(v) is bool if kind is bool else isinstance(v, Tensor)):
                    raise TypeError(f"{schema}(): argument '{names.get(name, name)}'{where} "
                                    f"must be {kind.__name__}, not {type(v).__name__}")

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if alias and not alias.keys().isdisjoint(kwargs):
                kwargs = {alias.get(k, k): v for k, v in kwargs.items()}
            check_types(args, kwargs)
            try:
                return fn(*args, **kwargs)
            except TypeError:
                msg = _parser_error(schema, params, pos, names, args, kwargs)
                if msg is None:
                    raise
                raise TypeError(msg) from None

        return call

    return wrap


def _parser_error(schema, params, pos, names, args, kwargs) -> str | None:
    """PyTorch's python_arg_parser message for a call that does not bind (None if it does)."""
    def shown(p):
        return names.get(p.name, p.name)

    required = [p for p in params if p.default is inspect.Parameter.empty]
    if len(args) > len(pos):
        if len(required) != len(pos):
            return (f"{schema}() takes from {len(required)} to {len(pos)} positional arguments "
                    f"but {len(args)} were given")
        return (f"{schema}() takes {len(pos)} positional argument{'' if len(pos) == 1 else 's'}"
                f" but {len(args)} {'was' if len(args) == 1 else 'were'} given")
    for i, p in enumerate(params):
        if i < len(args) and p.name in pos:
            if p.name in kwargs:
                return f"{schema}() got multiple values for argument '{shown(p)}'"
        elif p.name not in kwargs and p.default is inspect.Parameter.empty:
            # (PyTorch lists every required argument from the first missing one on, and
            # its plural is inverted: "1 ... arguments", "2 ... argument")
            missing = [f'"{shown(q)}"' for q in params[i:] if q.default is inspect.Parameter.empty]
            return (f"{schema}() missing {len(missing)} required positional argument"
                    f"{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")
    known = {p.name for p in params} | {"out"}
    extra = [k for k in kwargs if k not in known]
    if extra:
        return f"{schema}() got an unexpected keyword argument '{extra[0]}'"
    return None


# NOTE: most of PyTorch's linalg functions check only for a floating dtype, and a float16 /
# bfloat16 input then finds no CPU kernel: NotImplementedError naming that kernel. The others
# (inv, slogdet, matrix_norm, ...) refuse low precision up front, in their own name.
_LOW_PRECISION_KERNEL = {
    "linalg.cholesky": "cholesky_cpu", "linalg.cholesky_ex": "cholesky_cpu",
    "linalg.det": "lu_cpu", "linalg.solve": "lu_cpu", "linalg.solve_ex": "lu_cpu",
    "linalg.lu_factor": "lu_cpu", "linalg.lu_factor_ex": "lu_cpu", "linalg.lu": "lu_cpu",
    "linalg.lu_solve": "linalg.lu_solve_cpu", "linalg.qr": "geqrf_cpu",
    "linalg.svd": "linalg_svd_cpu", "linalg.eigh": "linalg_eigh_cpu",
    "linalg.eigvalsh": "linalg_eigh_cpu", "linalg.eig": "linalg_eig_out_cpu",
    "linalg.eigvals": "linalg_eig_out_cpu", "linalg.solve_triangular": "triangular_solve_cpu",
    "linalg.householder_product": "orgqr_cpu",
}
# functions that check their input under another function's name (the one they forward to)
_CHECKED_AS = {
    "linalg.inv_ex": "linalg.inv", "linalg.cholesky_ex": "linalg.cholesky",
    "linalg.solve_ex": "linalg.solve", "linalg.lu_solve": "torch.linalg.lu_solve",
    "linalg.eigvalsh": "linalg.eigh",
}
# NOTE: an integer or bool input passes the floating check of a few functions (those whose
# kernel does the dispatch itself) and then finds no CPU kernel: NotImplementedError naming
# it. Others refuse it under the name of the function they forward to.
_INTEGER_KERNEL = {
    "linalg.eigh": "linalg_eigh_cpu", "linalg.eigvalsh": "linalg_eigh_cpu",
    "linalg.solve_triangular": "triangular_solve_cpu", "linalg.householder_product": "orgqr_cpu",
}


def check_float(A: Tensor, fname: str, low_ok: bool = False) -> None:
    """Linalg functions take floating or complex tensors, and (mostly) not float16/bfloat16."""
    need_tensor(A, fname, "A", None)
    d = A._dtype
    if d._kind < 2:
        kernel = _INTEGER_KERNEL.get(fname)
        if kernel is not None:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(d)}\'')
        raise RuntimeError(f"{_CHECKED_AS.get(fname, fname)}: Expected a floating point or "
                           f"complex tensor as input. Got {type_name(d)}")
    if not low_ok and d in (dt.float16, dt.bfloat16):
        kernel = _LOW_PRECISION_KERNEL.get(fname)
        if kernel is not None:
            raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(d)}\'')
        raise RuntimeError(f"{_CHECKED_AS.get(fname, fname)}: Low precision dtypes not "
                           f"supported. Got {type_name(d)}")


def check_matrix(A: Tensor, fname: str, square: bool = False, low_ok: bool = False) -> None:
    """A batch of matrices (at least 2-D), optionally square, of a floating dtype.

    The shape is checked before the dtype, as PyTorch's meta functions do."""
    if not isinstance(A, Tensor):
        check_float(A, fname)  # (the TypeError)
    name = _CHECKED_AS.get(fname, fname)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A._shape[-1] != A._shape[-2]:
        raise RuntimeError(
            f"{name}: A must be batches of square matrices, but they are {A._shape[-2]} by "
            f"{A._shape[-1]} matrices"
        )
    check_float(A, fname, low_ok)


def check_same_dtype(fname: str, A: Tensor, B: Tensor, a: str = "A", b: str = "B") -> None:
    if A._dtype is not B._dtype:
        raise RuntimeError(
            f"{fname}: Expected {a} and {b} to have the same dtype, but found {a} of type "
            f"{type_name(A._dtype)} and {b} of type {type_name(B._dtype)} instead"
        )


def fortran(r: np.ndarray) -> np.ndarray:
    """`r` laid out column-major per matrix (LAPACK's layout, and PyTorch's for these results).

    The returned array is a transposed view of a fresh buffer, never of an input.
    """
    if r.ndim < 2:
        return np.ascontiguousarray(r)
    return np.ascontiguousarray(np.swapaxes(r, -1, -2)).swapaxes(-1, -2)


def fortran_strides(shape) -> tuple[int, ...]:
    """Strides of a batch of column-major matrices of `shape` (for meta rules)."""
    shape = tuple(shape)
    if len(shape) < 2:
        return (1,) * len(shape)
    rows, cols = shape[-2], shape[-1]
    st = [1] * len(shape)
    st[-2], st[-1] = 1, max(rows, 1)
    acc = max(rows, 1) * max(cols, 1)
    for i in range(len(shape) - 3, -1, -1):
        st[i] = acc
        acc *= max(shape[i], 1)
    return tuple(st)


def batch_prefix(shape, index: int) -> str:
    """PyTorch's "(Batch element i): " prefix for errors in batched inputs."""
    return f"(Batch element {index}): " if len(shape) > 2 else ""


def first_failure(a: np.ndarray, ok) -> tuple[int, np.ndarray]:
    """The first matrix of a batch for which `ok(matrix)` is False, and its flat index."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        if not ok(m):
            return i, m
    return 0, flat[0]


def eps(d: dt.dtype) -> float:
    return float(np.finfo(d.to_real().np).eps)


def hermitian_part(dA, uplo: str):
    """The Hermitian matrix a kernel that reads only the `uplo` triangle of its input sees
    in `dA` (LAPACK's eigh and friends): that triangle, mirrored, the diagonal's real part."""
    low = dA.tril(-1) if uplo == "L" else dA.triu(1).mH
    d = dA.diagonal(0, -2, -1)
    if d.dtype.is_complex:
        d = d.real.to(d.dtype)
    from ..ops.linalg_ops import diag_embed

    return low + low.mH + diag_embed(d)



# PyTorch's parser names the first tensor of these `A` or `x`; the others `input`.
_OPERAND = {"det": "A", "inv": "A", "inv_ex": "A", "slogdet": "A", "qr": "A", "svd": "A",
            "svdvals": "A", "lu_factor": "A", "lu_factor_ex": "A", "lu": "A", "solve": "A",
            "solve_ex": "A", "ldl_factor": "A", "ldl_factor_ex": "A", "vecdot": "x",
            "vander": "x", "lu_solve": "LU", "ldl_solve": "LD"}
_MISSING = object()
# The ATen op PyTorch names when it refuses `out=` on a result that needs grad (the one
# linalg.<name> runs); the others name themselves as ember's functions do.
_OUT_OP = {"solve": "_linalg_solve_ex", "solve_ex": "_linalg_solve_ex",
           "solve_triangular": "linalg_solve_triangular", "lu_solve": "linalg_lu_solve",
           "lu": "linalg_lu", "lu_factor": "linalg_lu_factor_ex",
           "lu_factor_ex": "linalg_lu_factor_ex", "pinv": "linalg_pinv", "cross": "linalg_cross",
           "eigh": "_linalg_eigh", "eigvalsh": "_linalg_eigh", "eig": "linalg_eig",
           "svd": "_linalg_svd", "svdvals": "_linalg_svd", "inv": "linalg_inv_ex",
           "inv_ex": "linalg_inv_ex", "det": "_linalg_det", "slogdet": "_linalg_slogdet",
           "cholesky": "linalg_cholesky_ex", "cholesky_ex": "linalg_cholesky_ex",
           "qr": "linalg_qr", "vector_norm": "linalg_vector_norm",
           "householder_product": "linalg_householder_product", "multi_dot": "mm"}
_OUT_GRAD = "(): functions with out=... arguments don't support automatic differentiation"


def refuses_non_tensor(fn, name: str, parses_operand: bool = True):
    """`fn` (ember.linalg.`name`), refusing a non-tensor first argument (a list, a number)
    or an unknown keyword with PyTorch's parser's TypeError (unless `fn` words those
    itself), raised where ember's code met it; and naming the ATen op PyTorch names when
    it refuses `out=` for a result that needs grad."""
    arg = _OPERAND.get(name, "input")
    out_op = _OUT_OP.get(name)
    unknown = f"{fn.__name__}() got an unexpected keyword argument"

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, AttributeError) as e:
            if not parses_operand:
                raise
            if str(e).startswith(unknown):
                raise TypeError(f"linalg_{name}(){str(e)[len(fn.__name__) + 2:]}") from None
            x = args[0] if args else kwargs.get(arg, _MISSING)
            if x is not _MISSING and not isinstance(x, Tensor):
                raise not_tensor(f"linalg_{name}", arg, 1, x) from None
            raise
        except RuntimeError as e:
            head, sep, rest = str(e).partition(_OUT_GRAD)
            if out_op is None or not sep or not head.isidentifier():
                raise
            raise RuntimeError(out_op + sep + rest) from None

    # (pickle finds a function by module and qualified name: point both at this wrapper)
    call.__module__, call.__qualname__ = "ember.linalg", name
    return call
