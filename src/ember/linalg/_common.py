"""Shared pieces of `ember.linalg`: argument checks with PyTorch's messages, the
LAPACK-style column-major result layout, and the `LinAlgError` type."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..ops._common import type_name


class LinAlgError(RuntimeError):
    """A matrix had no factorisation / inverse (singular, not positive-definite...)."""


def check_float(A: Tensor, fname: str, low_ok: bool = False) -> None:
    """Linalg functions take floating or complex tensors, and (mostly) not float16/bfloat16."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{fname}(): argument 'A' must be Tensor, not {type(A).__name__}")
    d = A._dtype
    if d._kind < 2:
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got {type_name(d)}"
        )
    if not low_ok and d in (dt.float16, dt.bfloat16):
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {type_name(d)}")


def check_matrix(A: Tensor, fname: str, square: bool = False, low_ok: bool = False) -> None:
    """A batch of matrices (at least 2-D), optionally square, of a floating dtype."""
    check_float(A, fname, low_ok)
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and A._shape[-1] != A._shape[-2]:
        raise RuntimeError(
            f"{fname}: A must be batches of square matrices, but they are {A._shape[-2]} by "
            f"{A._shape[-1]} matrices"
        )


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
