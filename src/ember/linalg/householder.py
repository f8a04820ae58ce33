"""geqrf and ormqr: QR in LAPACK's Householder form, and multiplying by the Q it encodes.

geqrf returns the packed factorization (R on and above the diagonal, the Householder vectors
below it, their scalars in `tau`), as LAPACK's xGEQRF and PyTorch do. PyTorch has no derivative
for it (a GeqrfBackward0 node whose backward raises); ember's results do not require grad (a
refusing node would be a primitive of its own). ormqr multiplies a matrix by Q = H_1 ... H_k
(or its conjugate transpose) from either side; it is composed from `householder_product` and
matmul, so its gradients come from those.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..ops._arg_parser_text import need_tensor
from ..ops._common import type_name, write_out
from ..ops._return_types import return_type
from ..ops.creation import empty, empty_strided, from_numpy
from ..ops.registry import rename_node
from ._common import fortran, fortran_strides
from .matrix_functions import householder_product

__all__ = ["geqrf", "ormqr"]

GeqrfResult = return_type("geqrf", ["a", "tau"])
def _check_kernel_dtype(x: Tensor, kernel: str) -> None:
    if x._dtype._kind < 2 or x._dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(x._dtype)}\'')


def _geqrf_arrays(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Householder QR of each matrix of `a` (..., m, n): (packed, tau), packed column-major."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    packed = np.array(a, copy=True)
    tau = np.zeros(batch + (min(m, n),), a.dtype)
    if min(m, n) > 0:
        for idx in np.ndindex(*batch):
            # NOTE: NumPy's "raw" QR is xGEQRF on the transposed (Fortran) matrix: it returns
            # the packed factor transposed, and computes float32 in float64 (PyTorch calls
            # sgeqrf), so float32 results can differ from PyTorch's in the last bits.
            h, t = np.linalg.qr(a[idx], mode="raw")
            packed[idx] = h.T
            tau[idx] = t
    return fortran(packed), tau


def _geqrf_tensors(x: Tensor) -> tuple[Tensor, Tensor]:
    h, tau = _geqrf_arrays(x.detach().resolve_conj().numpy())
    if h.size == 0:  # (an empty array's NumPy strides are 0; PyTorch's are LAPACK's)
        return (empty_strided(h.shape, fortran_strides(h.shape), dtype=x.dtype),
                empty(tau.shape, dtype=x.dtype))
    return from_numpy(h), from_numpy(tau)


def geqrf(input: Tensor, *, out=None) -> GeqrfResult:
    """(a, tau): LAPACK's packed Householder QR of each matrix of `input` (..., m, n)."""
    need_tensor(input, "geqrf")
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_kernel_dtype(input, "geqrf_cpu")
    return write_out(GeqrfResult(*_geqrf_tensors(input)), out)


def _check_ormqr(A: Tensor, tau: Tensor, C: Tensor, left: bool) -> None:
    """PyTorch's checks, in its order (CPU kernel)."""
    if A.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if C.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if C.shape[side] != A.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != min(C.shape[side], A.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}]"
                           ", input.shape[-1])")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError("torch.ormqr: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{A.dim()}")
    if A.dim() != C.dim():
        raise RuntimeError("torch.ormqr: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {C.dim()} and input.ndim is equal "
                           f"to {A.dim()}")
    for what, t, cut in (("tau", tau, -1), ("other", C, -2)):
        if A.dim() > 2 and tuple(t.shape[:cut]) != tuple(A.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {what} to be equal to "
                               f"input.shape[:-2], but got {list(t.shape[:cut])}")
    for what, t in (("tau", tau), ("other", C)):
        if t._dtype != A._dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {what} to have the same dtype, "
                               f"but input has dtype{type_name(A._dtype)} and {what} has dtype "
                               f"{type_name(t._dtype)}")
    _check_kernel_dtype(A, "ormqr_cpu")


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False, *, out=None) -> Tensor:
    """op(Q) @ other (left) or other @ op(Q), with Q = H_1 ... H_k from geqrf's (input, tau)
    and op(Q) = Q^H when `transpose`: Q is never formed by LAPACK, but is here (a composite)."""
    A, tau, C = input, input2, input3
    _check_ormqr(A, tau, C, left)
    m, k = A.shape[-2], tau.shape[-1]
    v = A[..., :, :k]
    if m > k:  # complete the reflectors with zero columns to get the square Q (m, m)
        from ..ops.creation import zeros
        from ..ops.join import cat

        v = cat([v, zeros(A.shape[:-2] + (m, m - k), dtype=A.dtype, device=A.device)], -1)
    q = householder_product(v, tau)
    if transpose:
        q = q.mH
    r = q @ C if left else C @ q
    # column-major per matrix, as LAPACK writes it: a fresh tensor, not a view
    laid = empty_strided(r.shape, fortran_strides(r.shape), dtype=r.dtype, device=r.device)
    r = laid.copy_(r)
    if r.grad_fn is not None:
        rename_node(r.grad_fn, "OrmqrBackward0")
    return write_out(r, out)
