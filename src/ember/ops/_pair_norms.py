"""The sums inside cdist's direct route (no matmul), rounded as PyTorch's per-pair kernel
rounds them, so that its distances are the same bits and not a few ulps away.

PyTorch's CPU kernel walks the M coordinates of each pair in order, `agg = agg + map(|a - b|)`
in the input's dtype, and finishes with `sqrt(agg)` (p = 2) or `std::pow(agg, 1.0 / p)`:

- the adds go left to right (NumPy's pairwise sum of 8 or more terms does not);
- p = 2 in PyTorch's vectorised builds (AVX2 / AVX512): the compiler runs the loop over
  16-byte chunks (4 float32 or 2 float64 coordinates) as a rounded square then an in-order
  add, and contracts the leftover coordinates' `agg + d * d` into one fused multiply-add;
- other p: the term is C's `pow(|d|, p)` in the dtype (float32's powf, p read as a float),
  and the root `pow(agg, 1.0 / p)` in double, rounded once to the dtype (ember's float64
  power is NumPy's, which differs from C's in the last bit of ~5% of elements).
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, _wrap
from ._fma import fma
from .binary import binary_p, member
from .power import _pow_grad_base, _pow_grad_exp, _pow_jvp
from .reduce import _sum_vjp, reduce_p, reduction
from .registry import apply, defjvp, deflinear, defvjp

_BLOCK = 4096  # rows summed at a time: their transposed terms stay in cache
_CHUNK_BYTES = 16  # the leftover coordinates after the compiler's 16-byte chunks are fused


def _c_pow_kernel(a, b):
    """`pow(a, b)` for a float array and a number: float32 in double, rounded once (what
    C's powf returns but in rare ties); float64 by NumPy's power (C's pow differs from it
    in the last bit of ~5% of elements: a per-element call of C's pow cost 40x)."""
    with np.errstate(all="ignore"):
        if a.dtype == np.float64:
            return np.power(a, float(b))
        return np.power(a.astype(np.float64), float(b)).astype(a.dtype)


c_pow_fn = member("cdist_c_pow", _c_pow_kernel, "PowBackward0")
defvjp(c_pow_fn, _pow_grad_base, _pow_grad_exp)
defjvp(c_pow_fn, _pow_jvp)


def c_pow(x: Tensor, e: float) -> Tensor:
    """x ** e (a float number) as C's pow rounds it (float32; float64 within an ulp of it),
    differentiable as `pow`."""
    return apply(binary_p, x, float(e), fn=c_pow_fn)


def _in_order_kernel(a, *, dims, keepdim):
    """The last dim's sum, added left to right in the array's dtype. NumPy's own sum along
    a contiguous axis of 8 or more terms is pairwise; along the outer axis of a block of
    rows transposed, it adds each term into the block's running sums in order, one call a
    block (blocks of _BLOCK rows, whose transposed copy stays in cache; a last block of one
    row would be reduced along its contiguous axis: a single row is accumulated)."""
    m = a.shape[-1]
    rows = a.reshape(math.prod(a.shape[:-1]), m)
    out = np.zeros(rows.shape[0], a.dtype)
    for i in range(0, rows.shape[0] if m else 0, _BLOCK):
        block = rows[i:i + _BLOCK]
        if len(block) == 1:
            out[i] = np.add.accumulate(block[0])[-1]
        else:
            np.add.reduce(np.ascontiguousarray(block.T), axis=0, out=out[i:i + _BLOCK])
    out = out.reshape(a.shape[:-1])
    return out[..., None] if keepdim else out


IN_ORDER_SUM = reduction("sum_in_order", _in_order_kernel, grad_name="SumBackward1")
defvjp(IN_ORDER_SUM, _sum_vjp, reads=((),), in_shape=True)
deflinear(IN_ORDER_SUM)


def in_order_sum(t: Tensor) -> Tensor:
    """The sum over the last dim, added left to right (differentiable as `sum`)."""
    return apply(reduce_p, t, fn=IN_ORDER_SUM, dims=(t.ndim - 1,), keepdim=False)


def squared_sum(d: Tensor) -> Tensor:
    """sum(d * d) over the last dim as PyTorch's vectorised p = 2 kernel rounds it: squares
    rounded and added in order over the whole 16-byte chunks, the rest fused (see above)."""
    from .ternary import addcmul

    m = d.shape[-1]
    if m == 0:
        return (d * d).sum(-1)
    cut = max(m - m % max(1, _CHUNK_BYTES // d.element_size()), 1)
    head = d[..., :cut] if cut < m else d  # (no whole chunk: an fma onto 0 is the square)
    s = in_order_sum(head * head)
    for k in range(cut, m):
        s = addcmul(s, d[..., k], d[..., k])
    return s


def p_root(s: Tensor, p: float) -> Tensor:
    """s ** (1 / p) as PyTorch finishes a p-norm: C's pow in double, rounded to s's dtype."""
    if s.dtype.is_floating_point and s.element_size() < 8:
        return c_pow(s.double(), 1.0 / p).to(s.dtype)
    return c_pow(s, 1.0 / p)


def _direct_block(u: np.ndarray, v: np.ndarray, p: float, out: np.ndarray) -> None:
    """`out` (r1 x r2) = the sums of `_cdist_direct` for x1 rows `u` and x2 rows `v`: each
    term of |u[i, k] - v[j, k]| added in k order, as `in_order_sum` and `squared_sum` add.
    The differences are made coordinate-major (M x rows x r2), a block of u's rows at a time,
    so the sum runs down a contiguous M x <= _BLOCK array with no transposed copy and the
    terms stay in cache."""
    m, (r1, r2) = u.shape[1], out.shape
    step = max(1, _BLOCK // max(r2, 1))
    ut, vt = np.ascontiguousarray(u.T)[:, :, None], v.T[:, None, :]
    # p = 2: squares rounded over the whole 16-byte chunks, the rest fused (squared_sum)
    cut = max(m - m % max(1, _CHUNK_BYTES // u.itemsize), 1) if p == 2 else m
    for i in range(0, r1, step):
        ui = ut[:, i:i + step]
        # (in C order: NumPy adds down M in order only along a contiguous array's first dim)
        d = np.subtract(ui, vt, out=np.empty((m, ui.shape[1], r2), u.dtype))
        if p == 0:
            out[i:i + step] = np.count_nonzero(d, axis=0)
            continue
        if p == 2:
            a = np.multiply(d[:cut], d[:cut])
        else:
            a = np.abs(d, out=d)
            if p != 1:  # c_pow's bits, 0 where the difference is 0 (as _cdist_direct)
                a = np.where(a == 0, 0, _c_pow_kernel(np.where(a == 0, 1, a), p)).astype(
                    a.dtype, copy=False)
        rows = out[i:i + step].reshape(-1)
        if rows.size == 1:
            rows[0] = np.add.accumulate(a.reshape(-1))[-1]
        else:
            np.add.reduce(a.reshape(a.shape[0], -1), axis=0, out=rows)
        for k in range(cut, m):
            rows[:] = fma(d[k].reshape(-1), d[k].reshape(-1), rows)


def direct_distances(x1: Tensor, x2: Tensor, p: float) -> Tensor | None:
    """cdist's direct route for any p but inf, for CPU inputs that need no graph:
    `_cdist_direct`'s bits (p as that reads it), without its passes over the (r1, r2, M)
    differences, the transposed copy of them and a dozen small ops. None where the batch
    dims do not broadcast.

    # NOTE: for p = 2 a NaN distance's sign bit can differ from the composite's: NaN + NaN
    # keeps one operand's sign, and NumPy's vector loop and its tail take different ones,
    # so it depends on where a pair falls in its block (both differ from PyTorch's NaN
    # bits in about 1% of NaN results; |d| makes every other p's NaN positive)."""
    u, v = x1._array(), x2._array()
    try:
        batch = np.broadcast_shapes(u.shape[:-2], v.shape[:-2])
    except ValueError:
        return None  # (the composite says so in PyTorch's words)
    u = np.broadcast_to(u, batch + u.shape[-2:]).reshape((-1,) + u.shape[-2:])
    v = np.broadcast_to(v, batch + v.shape[-2:]).reshape((-1,) + v.shape[-2:])
    s = np.zeros((u.shape[0], u.shape[1], v.shape[1]), u.dtype)
    with np.errstate(all="ignore"):  # (inf - inf and overflow: IEEE's NaN and inf, unsaid)
        for b in range(s.shape[0]):
            _direct_block(u[b], v[b], p, s[b])
        if p == 2:
            s = np.sqrt(s)  # (s >= +0 or NaN: the guarded root's bits)
        elif p not in (0, 1):  # p_root: C's pow in double, rounded once; 0 kept 0
            zero = s == 0
            s = np.where(zero, 0, _c_pow_kernel(np.where(zero, 1, s).astype(np.float64),
                                                1.0 / p)).astype(s.dtype)
    return _wrap(s.reshape(batch + s.shape[1:]))
