"""`linalg.ldl_factor` / `ldl_factor_ex` / `ldl_solve`: the Bunch-Kaufman LDL^T
factorisation of a symmetric (Hermitian) matrix from its lower triangle, as LAPACK's
sytrf / hetrf stores it (L's columns below D's 1x1 and 2x2 blocks, 1-based pivots,
negative for a 2x2 block), and the solve from it (sytrs / hetrs). Kernels in NumPy, one
column at a time as LAPACK's unblocked sytf2 / sytrs run; PyTorch has no derivative for
either (a NotImplemented node, as its)."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..ops._common import has_values, type_name
from ..ops._return_types import return_type
from ..ops.registry import Primitive, apply, batch_by_loop, derivative_not_implemented

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch-Kaufman's pivot threshold
LDLFactorExResult = return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
LDLFactorResult = return_type("linalg_ldl_factor", ["LD", "pivots"])


def _conj(x, herm: bool):
    return np.conj(x) if herm else x


def _first_max(v: np.ndarray) -> int:
    """BLAS i?amax: the first index of the largest |re| + |im| (|x| for reals)."""
    a = np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)
    return int(np.argmax(a))


def _cabs1(x) -> float:
    return abs(x.real) + abs(x.imag) if isinstance(x, complex) or np.iscomplexobj(x) \
        else abs(x)


def _factor_one(a: np.ndarray, herm: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK ?sytf2 / ?hetf2 with uplo='L' on one matrix (a copy): (LD, 1-based pivots,
    info)."""
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        akk = a[k, k].real if herm else a[k, k]
        absakk = _cabs1(akk)
        if k < n - 1:
            imax = k + 1 + _first_max(a[k + 1:, k])
            colmax = _cabs1(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                row = a[imax, k:imax]
                jmax = k + _first_max(row)
                rowmax = _cabs1(a[imax, jmax])
                if imax < n - 1:
                    jmax = imax + 1 + _first_max(a[imax + 1:, imax])
                    rowmax = max(rowmax, _cabs1(a[jmax, imax]))
                aii = a[imax, imax].real if herm else a[imax, imax]
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif _cabs1(aii) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                if kp < n - 1:
                    a[kp + 1:, kk], a[kp + 1:, kp] = a[kp + 1:, kp].copy(), a[kp + 1:, kk].copy()
                seg = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = _conj(a[kp, kk + 1:kp], herm)
                a[kp, kk + 1:kp] = _conj(seg, herm)
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if herm:
                    a[kk, kk], a[kp, kp] = a[kk, kk].real, a[kp, kp].real
                if kstep == 2:
                    if herm:
                        a[k, k] = a[k, k].real
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    d11 = 1 / (a[k, k].real if herm else a[k, k])
                    x = a[k + 1:, k].copy()
                    for j in range(k + 1, n):  # (rank-1 update of the lower triangle)
                        t = -d11 * _conj(x[j - k - 1], herm)
                        a[j:, j] += x[j - k - 1:] * t
                        if herm:
                            a[j, j] = a[j, j].real
                    a[k + 1:, k] *= d11
            elif k < n - 2:
                d21 = a[k + 1, k]
                if herm:
                    d = abs(d21)
                    d11 = a[k + 1, k + 1].real / d
                    d22 = a[k, k].real / d
                    tt = 1 / (d11 * d22 - 1)
                    d21 = d21 / d
                    d = tt / d
                else:
                    d11 = a[k + 1, k + 1] / d21
                    d22 = a[k, k] / d21
                    tt = 1 / (d11 * d22 - 1)
                    d21 = tt / d21
                for j in range(k + 2, n):
                    if herm:
                        wk = d * (d11 * a[j, k] - d21 * a[j, k + 1])
                        wkp1 = d * (d22 * a[j, k + 1] - np.conj(d21) * a[j, k])
                        a[j:, j] -= a[j:, k] * np.conj(wk) + a[j:, k + 1] * np.conj(wkp1)
                        a[j, j] = a[j, j].real
                    else:
                        wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                        wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
                        a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
                    a[j, k], a[j, k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return np.tril(a), ipiv, info


def _factor_kernel(A, *, hermitian):
    herm = hermitian and np.iscomplexobj(A)
    batch = A.shape[:-2]
    flat = A.reshape((-1,) + A.shape[-2:])
    lds, pivs, infos = [], [], []
    for m in flat:
        ld, piv, info = _factor_one(np.array(m, copy=True), herm)
        lds.append(ld)
        pivs.append(piv)
        infos.append(info)
    n = A.shape[-1]
    return (np.array(lds, A.dtype).reshape(A.shape),
            np.array(pivs, np.int32).reshape(batch + (n,)),
            np.array(infos, np.int32).reshape(batch))


def _factor_meta(A, *, hermitian):
    return ((tuple(A._shape), A._dtype), (tuple(A._shape[:-1]), dt.int32),
            (tuple(A._shape[:-2]), dt.int32))


ldl_factor_p = Primitive("linalg_ldl_factor_ex", _factor_kernel, _factor_meta, n_outputs=3)
derivative_not_implemented(ldl_factor_p, "linalg_ldl_factor_ex", (True,))
batch_by_loop(ldl_factor_p, "the kernel runs LAPACK's column loop one matrix at a time")


def _check_square(A: Tensor, name: str) -> None:
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f'"ldl_factor_kernel_cpu" not implemented for '
                                  f"'{type_name(A.dtype)}'")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {type_name(A.dtype)}")


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """(LD, pivots, info): the Bunch-Kaufman factorisation of the symmetric (hermitian:
    Hermitian) matrices whose lower triangles A holds; info > 0 marks an exactly singular
    D (its 1-based position)."""
    _check_square(A, "torch.linalg.ldl_factor_ex")
    LD, pivots, info = apply(ldl_factor_p, A, hermitian=bool(hermitian))
    if check_errors:
        _raise_info(info, "torch.linalg.ldl_factor_ex")
    return LDLFactorExResult(LD, pivots, info)


def _raise_info(info: Tensor, name: str) -> None:
    if info.device.type == "meta" or not has_values(info):
        return  # (under vmap the codes are not readable here: nothing is raised)
    bad = info.numpy().reshape(-1)
    if bad.size and bad.max() > 0:
        code = int(bad[np.flatnonzero(bad > 0)[0]])
        raise RuntimeError(f"false INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/"
                           f"ATen/native/BatchLinearAlgebra.cpp\":1642, please report a bug "
                           f"to PyTorch. {name}: Unknown error code: {code}.")


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """(LD, pivots) of ldl_factor_ex, raising where D is singular (PyTorch's words)."""
    _check_square(A, "torch.linalg.ldl_factor_ex")
    LD, pivots, info = apply(ldl_factor_p, A, hermitian=bool(hermitian))
    _raise_info(info, "torch.linalg.ldl_factor")
    return LDLFactorResult(LD, pivots)


def _solve_one(a: np.ndarray, ipiv: np.ndarray, b: np.ndarray, herm: bool) -> np.ndarray:
    """LAPACK ?sytrs / ?hetrs with uplo='L' on one system (b a copy, n x nrhs)."""
    n = a.shape[0]
    k = 0
    while k < n:  # L D y = b
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            if k < n - 1:
                b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] = b[k] / (a[k, k].real if herm else a[k, k])
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(a[k + 2:, k], b[k])
                b[k + 2:] -= np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / (_conj(akm1k, herm))
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1 = b[k] / _conj(akm1k, herm)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T x = y
        if ipiv[k] > 0:
            if k < n - 1:
                b[k] -= _conj(a[k + 1:, k], herm) @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                b[k] -= _conj(a[k + 1:, k], herm) @ b[k + 1:]
                b[k - 1] -= _conj(a[k + 1:, k - 1], herm) @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _solve_kernel(LD, pivots, B, *, hermitian):
    herm = hermitian and np.iscomplexobj(LD)
    dtype = np.result_type(LD.dtype, B.dtype)
    batch = np.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    LDb = np.broadcast_to(LD, batch + LD.shape[-2:]).reshape((-1,) + LD.shape[-2:])
    Pb = np.broadcast_to(pivots, batch + pivots.shape[-1:]).reshape((-1,) + pivots.shape[-1:])
    Bb = np.broadcast_to(B, batch + B.shape[-2:]).reshape((-1,) + B.shape[-2:])
    out = [_solve_one(a, p.astype(np.int64), np.array(b, dtype, copy=True), herm)
           for a, p, b in zip(LDb, Pb, Bb)]
    return np.array(out, dtype).reshape(batch + B.shape[-2:])


def _solve_meta(LD, pivots, B, *, hermitian):
    batch = tuple(np.broadcast_shapes(tuple(LD._shape[:-2]), tuple(pivots._shape[:-1]),
                                      tuple(B._shape[:-2])))
    return batch + tuple(B._shape[-2:]), B._dtype


ldl_solve_p = Primitive("linalg_ldl_solve", _solve_kernel, _solve_meta)
derivative_not_implemented(ldl_solve_p, "linalg_ldl_solve", (True, False, True))
batch_by_loop(ldl_solve_p, "the kernel runs LAPACK's row loop one system at a time")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out=None) -> Tensor:
    """X with A X = B, from A's ldl_factor (LD, pivots)."""
    name = "torch.linalg.ldl_solve"
    if LD.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor LD must have at least 2 dimensions.")
    if LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{LD.shape[-2]} by {LD.shape[-1]} matrices")
    if B.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{B.dim()}, "
                         f"{B.dim() - 1}], but got -2)")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{type_name(B.dtype)} and A of type {type_name(LD.dtype)} instead.")
    if B.shape[-2] != LD.shape[-1]:
        n = LD.shape[-1]
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by "
                           f"{n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    broadcast_shapes(B._shape[:-2], LD._shape[:-2])  # (PyTorch's message names B's size first)
    return apply(ldl_solve_p, LD, pivots, B, hermitian=bool(hermitian))
