"""matrix_exp (a primitive: PyTorch's Taylor kernel on NumPy arrays, and its exact Frechet
derivative as VJP and JVP) and householder_product (composed from matmul and elementwise
ops, so its gradients come from the pieces)."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import contiguous_strides
from ..amp.autocast_mode import autocast_op
from ..ops._common import type_name, write_out
from ..ops._linalg_batch import leading
from ..ops.creation import arange, eye, zeros_like
from ..ops.join import cat
from ..ops.registry import Primitive, apply, defbatch, defjvp, defvjp
from ._common import check_float, check_matrix

__all__ = ["matrix_exp", "householder_product"]

# NOTE: PyTorch's matrix_exp (Bader, Blanes and Casas, "Computing the matrix exponential with
# an optimized Taylor polynomial approximation", Mathematics 7 (2019) 1174) picks, per matrix of
# the batch, the lowest Taylor degree of 1, 2, 4, 8, 12 whose 1-norm bound holds, else degree 18
# after halving the matrix s times and squaring s times. Its float32 bounds admit errors of a few
# 1e-6, so an exact-to-rounding exponential (a Pade approximant) prints other float32 digits;
# ember evaluates the same polynomials in the same order, so the rounding errors match too.
# The 1-norm bound of each degree (1, 2, 4, 8, 12, 18), for single and double precision
_THETAS_SINGLE = (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                  5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00)
_THETAS_DOUBLE = (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                  4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00)

# Degree 8: T8(A) = I + A + y2 A^2 + (x3 A^2 + A4)(x4 I + x5 A + x6 A^2 + x7 A4), with
# A4 = A^2 (x1 A + x2 A^2), from the paper's closed form in sqrt(177)
_R177 = 13.30413469565007072504
_X3 = 2.0 / 3.0
_T8 = dict(x1=_X3 * (1 + _R177) / 88, x2=_X3 * (1 + _R177) / 352,
           x4=(-271 + 29 * _R177) / (315 * _X3), x5=(-11 + 11 * _R177) / (1260 * _X3),
           x6=(-99 + 11 * _R177) / (5040 * _X3), x7=(89 - _R177) / (5040 * _X3),
           y2=(857 - 58 * _R177) / 630)

# Degrees 12 and 18: row i holds the weights of (I, A, A^2, A^3[, A^6]) in B_i; then
# T12 = B0 + (B1 + B2') B2' with B2' = B2 + B3^2, and
# T18 = B1 + (B2 + B3') B3' with B3' = B3 + B0 B4
_T12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))
_T18 = ((0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.0),
        (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))


def _combination(mats: list[np.ndarray], weights, single: bool) -> np.ndarray:
    """sum_j weights[j] * mats[j], added left to right onto zeros, with the weights rounded
    to the working precision first (as a float32 kernel holds them)."""
    out = np.zeros_like(mats[0])
    for w, m in zip(weights, mats):
        out = out + m * (float(np.float32(w)) if single else w)
    return out


def _powers(A: np.ndarray, count: int) -> list[np.ndarray]:
    """The first `count` of I, A, A^2, A^3, A^6."""
    out = [np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape), A]
    if count > 2:
        out.append(A @ A)
    if count > 3:
        out.append(A @ out[2])
    if count > 4:
        out.append(out[3] @ out[3])
    return out[:count]


def _taylor(A: np.ndarray, degree: int, single: bool) -> np.ndarray:
    """The optimized Taylor polynomial of exp of the given degree, at A."""
    if degree == 1:
        return _combination(_powers(A, 2), (1.0, 1.0), single)
    if degree == 2:
        return _combination(_powers(A, 3), (1.0, 1.0, 0.5), single)
    if degree == 4:
        p = _powers(A, 3)
        tail = p[2] @ _combination(p, (1 / 2.0, 1 / 6.0, 1 / 24.0), single)
        return _combination(p + [tail], (1.0, 1.0, 0.0, 1.0), single)
    if degree == 8:
        c = {k: float(np.float32(v)) if single else v for k, v in _T8.items()}
        x3 = float(np.float32(_X3)) if single else _X3
        p = _powers(A, 3)
        a4 = p[2] @ _combination(p[1:], (c["x1"], c["x2"]), single)
        a8 = _combination([p[2], a4], (x3, 1.0), single) @ \
            _combination(p + [a4], (c["x4"], c["x5"], c["x6"], c["x7"]), single)
        return _combination(p + [a4, a8], (1.0, 1.0, c["y2"], 0.0, 1.0), single)
    if degree == 12:
        p = _powers(A, 4)
        b = [_combination(p, row, single) for row in _T12]
        b2 = b[2] + b[3] @ b[3]
        return b[0] + (b[1] + b2) @ b2
    p = _powers(A, 5)
    b = [_combination(p, row, single) for row in _T18]
    b3 = b[3] + b[0] @ b[4]
    return b[1] + (b[2] + b3) @ b3


def _exp_scaled(A: np.ndarray, norm: float, theta: float, single: bool) -> np.ndarray:
    """exp(A) of one matrix by degree 18 after s halvings, then s squarings."""
    ftype = np.float32 if single else np.float64
    scale = np.log2(ftype(norm) / ftype(theta))
    s = int(max(0.0, math.ceil(scale))) if np.isfinite(scale) else 0  # (NaN, inf: no rescue)
    r = _taylor(A / float(2 ** s), 18, single)
    for _ in range(s):
        r = r @ r
    return r


def _degree_index(norm: float, thetas) -> int:
    """0..4 for the Taylor degree 1, 2, 4, 8, 12 whose bound holds; 5 for scale and square
    (also for NaN, which then propagates)."""
    if norm >= thetas[4] or norm != norm:
        return 5
    return next(i for i in range(5) if norm <= thetas[i])


def _matrix_exp_kernel(a: np.ndarray) -> np.ndarray:
    """exp of each matrix of the batch, by the lowest Taylor degree whose bound holds for its
    1-norm (see the NOTE above)."""
    n = a.shape[-1]
    if n <= 1:
        return np.exp(a)
    single = a.dtype in (np.float32, np.complex64)
    thetas = _THETAS_SINGLE if single else _THETAS_DOUBLE
    flat = a.reshape(-1, n, n)
    norms = np.abs(flat).sum(-2).max(-1).tolist()  # each matrix's 1-norm
    groups: dict[int, list[int]] = {}
    for i, v in enumerate(norms):
        groups.setdefault(_degree_index(v, thetas), []).append(i)
    out = np.empty_like(flat)
    for k, idx in groups.items():
        if k < 5:
            out[idx] = _taylor(flat[idx], (1, 2, 4, 8, 12)[k], single)
        else:  # each matrix squares its own number of times
            for i in idx:
                out[i] = _exp_scaled(flat[i], norms[i], thetas[5], single)
    return out.reshape(a.shape)


def _frechet(A: Tensor, E: Tensor) -> Tensor:
    """The derivative of exp at A in direction E: the top-right block of exp([[A, E], [0, A]])
    (PyTorch's rule for both modes; its VJP is this at (A^H, gradient))."""
    n = A.shape[-1]
    block = cat([cat([A, E], -1), cat([zeros_like(A), A], -1)], -2)
    return matrix_exp(block)[..., :n, n:]


matrix_exp_p = Primitive("linalg_matrix_exp", _matrix_exp_kernel,
                         lambda A: (A._shape, A._dtype, contiguous_strides(A._shape)),
                         grad_name="LinalgMatrixExpBackward0")
defvjp(matrix_exp_p, lambda g, out, A: _frechet(A.mH, g), reads=((0,),))
defjvp(matrix_exp_p, lambda primals, tangents, out: _frechet(primals[0], tangents[0]))
defbatch(matrix_exp_p, leading(matrix_exp_p))


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) of square matrices (batched), by PyTorch's optimized Taylor polynomials with
    scaling and squaring (see the NOTE above)."""
    check_matrix(A, "linalg.matrix_exp", square=True, low_ok=True)
    if A.dtype in (dt.float16, dt.bfloat16):
        # NOTE: PyTorch's CPU kernel returns garbage (inf) here; the float32 result, rounded
        # once, is what it means to compute
        return matrix_exp(A.float()).to(A.dtype)
    return apply(matrix_exp_p, A)


@autocast_op("linalg_householder_product")
def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i is column
    i of A (m, n) below the diagonal with a 1 on it (LAPACK's orgqr)."""
    if not isinstance(A, Tensor):
        check_float(A, "linalg.householder_product")  # (the TypeError)
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 "
                           "dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError("torch.linalg.householder_product: Expected tau to have one "
                           f"dimension less than input, but got tau.ndim equal to {tau.ndim} "
                           f"and input.ndim is equal to {A.ndim}")
    if A.ndim > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError("torch.linalg.householder_product: Expected batch dimensions of tau "
                           f"to be equal to input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {type_name(tau.dtype)} "
                           f"does not match input dtype {type_name(A.dtype)}")
    check_float(A, "linalg.householder_product")  # (after the shapes, as PyTorch checks)
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(A.shape)
    rows = arange(m, device=A.device)
    for i in reversed(range(k)):
        below = (rows > i).to(A.dtype)
        v = A[..., :, i] * below + (rows == i).to(A.dtype)  # (..., m)
        vq = (v.conj().unsqueeze(-1) * q).sum(-2, keepdim=True)  # v^H Q: (..., 1, n)
        q = q - tau[..., i, None, None] * v.unsqueeze(-1) * vq
    if q._grad_fn is not None:  # (PyTorch's one node for the product)
        from ..ops.registry import rename_node

        rename_node(q._grad_fn, "LinalgHouseholderProductBackward0")
    return write_out(q, out)
