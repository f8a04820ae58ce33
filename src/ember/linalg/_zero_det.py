"""The sign of a zero determinant: det and slogdet of singular matrices as PyTorch forms them
(det P times the product over U's diagonal), which NumPy's sign * exp(logdet) does not keep."""

from __future__ import annotations

import numpy as np


def _lu_signs(a: np.ndarray, transpose: bool):
    """(det P, diagonal of U) of the LU factorization of the (k, n, n) batch `a`, or of its
    transposes."""
    from .lu import _lu_kernel  # (lu.py imports solvers.py, which imports this: at call time)

    lu, piv, _ = _lu_kernel(np.swapaxes(a, -1, -2) if transpose else a)
    swaps = (piv != np.arange(1, piv.shape[-1] + 1)).sum(-1)
    return np.where(swaps % 2 == 1, -1, 1).astype(a.dtype), np.diagonal(lu, 0, -2, -1)


def signed_zeros(a: np.ndarray, value: np.ndarray, from_diag) -> np.ndarray:
    """`value` with its zeros (singular matrices) recomputed as det P times the product over
    U's diagonal of from_diag(diagonal): NumPy's det is sign * exp(logdet) and loses the
    sign of zero that PyTorch's product of pivots keeps (det of [[1, 2], [2, 4]] is -0.0)."""
    zero = value == 0
    if not zero.any():
        return value
    # PyTorch factors A^T for a real row-major A (which LAPACK reads, column-major, as A^T)
    transpose = a.dtype.kind != "c" and a.flags.c_contiguous
    value = np.array(value, copy=True)
    flat = a.reshape((-1,) + a.shape[-2:])[zero.reshape(-1)]
    sign_p, diag = _lu_signs(flat, transpose)
    prods = np.empty(sign_p.shape, a.dtype)
    for i, (s, d) in enumerate(zip(sign_p, from_diag(diag))):
        p = a.dtype.type(1)
        for x in d:  # (in order: the sign of a zero product depends on every factor's)
            p = p * x
        prods[i] = s * p
    value.reshape(-1)[zero.reshape(-1)] = prods
    return value


def sgn(d: np.ndarray) -> np.ndarray:
    """x / |x|, and 0 for 0 (PyTorch's sgn)."""
    mag = np.abs(d)
    return np.where(mag == 0, 0, d / np.where(mag == 0, 1, mag)).astype(d.dtype)
