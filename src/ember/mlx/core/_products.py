"""MLX's products beyond `_ops`: kron, vecdot, 1-D convolution, the gathered / segmented /
block-masked matmuls, and the Walsh-Hadamard transform. Each is composed from `mx` ops, so
each has MLX's dtype rules and ember's derivatives."""

from __future__ import annotations

import math

import ember as E

from . import _dtypes as D
from . import _ops as O
from ._array import _wrap, array


def _arr(x) -> array:
    return x if isinstance(x, array) else array(x)


def kron(a, b, /) -> array:
    """The Kronecker product (the lower-rank operand gets leading 1s)."""
    a, b = _arr(a), _arr(b)
    n = max(a.ndim, b.ndim)
    sa = (1,) * (n - a.ndim) + a.shape
    sb = (1,) * (n - b.ndim) + b.shape
    ea = O.reshape(a, [x for d in sa for x in (d, 1)])
    eb = O.reshape(b, [x for d in sb for x in (1, d)])
    return O.reshape(O.multiply(ea, eb), [x * y for x, y in zip(sa, sb)])


def vecdot(a, b, /, *, axis: int = -1) -> array:
    """sum(conj(a) * b) along `axis` (read against `a`'s dimensions)."""
    a, b = _arr(a), _arr(b)
    if not -a.ndim <= axis < a.ndim:
        raise IndexError("[vecdot] axis is out of bounds.")
    if axis % a.ndim >= b.ndim:
        raise ValueError("[vecdot] axis is out of bounds.")
    if a._dtype.kind == "c":
        a = _wrap(E.conj(a._t).resolve_conj(), a._dtype)
    return O.sum(O.multiply(a, b), axis)


def convolve(a, v, /, mode: str = "full") -> array:
    """The discrete convolution of two 1-D float arrays ("full", "same" or "valid"); the
    longer one is the signal."""
    a, v = _arr(a), _arr(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("[convolve] Inputs must be 1D.")
    if v.size > a.size:
        a, v = v, a
    dt = D.promote_types(a._dtype, v._dtype)
    if dt.kind != "f":
        raise ValueError(f"[conv] Invalid input array with type {dt.name}. Convolution "
                         "currently only supports floating point types")
    n, m = a.size, v.size
    pad = {"full": m - 1, "same": None, "valid": 0}.get(mode, -1)
    if pad == -1:
        raise ValueError("[convolve] Invalid mode.")
    x = a.astype(dt)._t.reshape(1, 1, n)
    w = E.flip(v.astype(dt)._t, (0,)).reshape(1, 1, m)
    if mode == "same":
        lo = (m - 1) // 2
        x = E.nn.functional.pad(x, [m - 1 - lo, lo])
        pad = 0
    return _wrap(E.nn.functional.conv1d(x, w, padding=pad).reshape(-1), dt)


def _gathered(x: array, indices) -> array:
    if indices is None:
        return x
    flat = O.reshape(x, (-1, *x.shape[-2:]))
    return O.take(flat, indices, 0)


def gather_mm(a, b, /, lhs_indices=None, rhs_indices=None, *,
              sorted_indices: bool = False) -> array:
    """`a[lhs_indices] @ b[rhs_indices]`, the indices running over the flattened batch
    dimensions (a missing index set takes the operand's batch as it is)."""
    return O.matmul(_gathered(_arr(a), lhs_indices), _gathered(_arr(b), rhs_indices))


def _blocks(mask: array, block: int, rows: int, cols: int) -> array:
    m = O.repeat(O.repeat(mask, block, -2), block, -1)
    return m[..., :rows, :cols]


def block_masked_mm(a, b, /, block_size: int = 64, mask_out=None, mask_lhs=None,
                    mask_rhs=None) -> array:
    """`a @ b` with `block_size` square blocks of the operands and of the output masked
    (bool masks drop blocks, float masks scale them)."""
    a, b = _arr(a), _arr(b)
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if mask_lhs is not None:
        a = O.multiply(a, _blocks(_arr(mask_lhs).astype(a._dtype), block_size, m, k))
    if mask_rhs is not None:
        b = O.multiply(b, _blocks(_arr(mask_rhs).astype(b._dtype), block_size, k, n))
    out = O.matmul(a, b)
    if mask_out is not None:
        out = O.multiply(out, _blocks(_arr(mask_out).astype(out._dtype), block_size, m, n))
    return out


def segmented_mm(a, b, /, segments) -> array:
    """For each [start, end) pair in `segments` (..., 2), `a[:, start:end] @
    b[start:end]`: one (M, N) result per segment."""
    a, b, seg = _arr(a), _arr(b), _arr(segments)
    k = O.arange(a.shape[-1])
    lo, hi = O.expand_dims(seg[..., 0], -1), O.expand_dims(seg[..., 1], -1)
    inside = O.logical_and(O.greater_equal(k, lo), O.less(k, hi)).astype(a._dtype)
    return O.einsum("mk,...k,kn->...mn", a, inside, b)


def hadamard_transform(a, scale: float | None = None) -> array:
    """The Walsh-Hadamard transform along the last axis (Sylvester order), times `scale`
    (1/sqrt(n) by default). Sizes n = 2^k only: MLX's n = 12, 20, 28 * 2^k, built on
    its own fixed base matrices, are not here."""
    a = O._float(_arr(a))
    n = a.shape[-1] if a.ndim else 1
    k = n.bit_length() - 1
    if n != 1 << k:
        if any(n % m == 0 and (n // m) & (n // m - 1) == 0 for m in (12, 20, 28)):
            raise NotImplementedError(f"[hadamard] ember supports n = 2^k only (got n = {n}).")
        raise ValueError("[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).")
    scale = 1.0 / math.sqrt(n) if scale is None else scale
    t = a._t.reshape(*a.shape[:-1], *([2] * k))
    for j in range(k):
        d = a.ndim - 1 + j
        x0, x1 = E.select(t, d, 0), E.select(t, d, 1)
        t = E.stack([x0 + x1, x0 - x1], dim=d)
    return O.multiply(_wrap(t.reshape(a.shape), a._dtype), scale)


__all__ = ["block_masked_mm", "convolve", "gather_mm", "hadamard_transform", "kron",
           "segmented_mm", "vecdot"]
