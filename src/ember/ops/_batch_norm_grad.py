"""Batch norm's backward with batch statistics, in the order PyTorch's CPU kernel computes it.

From the input x, its batch mean and 1 / std (rstd), per channel: S = sum(dy) and
D = sum((x - mean) dy); dbias = S, dweight = D rstd, and
dx = ((dy - S / count) - (x - mean) k) rstd w with k = D rstd^2 / count.

PyTorch takes one of two kernels, and each rounds its own way (established against torch
2.13 element by element):
- planes (a contiguous input with spatial dims): each (sample, channel) plane reduced in
  vectors of W lanes (W: 32 bytes of the dtype, the 256-bit vectors that kernel runs on):
  the lanes start from the plane's first W values, whole vectors are added lane by lane
  (the products rounded first), a last partial vector's products are fused into their
  lanes, and the lanes fold in halves; a plane shorter than W adds in order. The planes'
  sums add in double. dweight = D rstd in double; k = ((D rounded) rstd) rstd / count in the
  dtype; the mean gradient S / count in double, rounded; dx = fma(-(x - mean), k, dy - that)
  times rstd, times w.
- rows ((N, C) inputs, channels-last ones read as (N * H * W, C)): per thread chunk of
  rows, per channel, dy summed and fma(x - mean, dy, acc) in the dtype, row after row; the
  chunks add in double and round; dweight = D rstd, k and the mean gradient all in the
  dtype; dx fused as above on the channels that fill whole vectors, unfused on the rest.
16-bit inputs run the same in float (PyTorch's own 16-bit kernels are not matched).
"""

from __future__ import annotations

import numpy as np

from ._fma import fma
from ._parallel import workers

VECTOR_BYTES = 32  # PyTorch's batch norm backward runs on 256-bit vectors


def lanes(dtype) -> int:
    return VECTOR_BYTES // np.dtype(dtype).itemsize


def _fold(v: np.ndarray) -> np.ndarray:
    """(P, W) lanes folded in halves: lane k + lane k + w for w = W/2 ... 1."""
    w = v.shape[1] // 2
    while w >= 1:
        v = v[:, :w] + v[:, w:2 * w]
        w //= 2
    return v[:, 0]


def plane_sums(dy: np.ndarray, xm: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(sum(dy), sum(xm dy)) of each row of (P, L) arrays, in the vector order above."""
    p, length = dy.shape
    prod = xm * dy
    if length < width:
        return _in_order(dy), _in_order(prod)
    full = length - length % width
    # whole vectors: NumPy's reduction over a middle axis adds them one after the other
    s = np.add.reduce(dy[:, :full].reshape(p, -1, width), axis=1)
    d = np.add.reduce(prod[:, :full].reshape(p, -1, width), axis=1)
    if full < length:
        k = length - full
        s[:, :k] += dy[:, full:]
        d[:, :k] = fma(xm[:, full:], dy[:, full:], d[:, :k])
    return _fold(s), _fold(d)


def _in_order(a: np.ndarray) -> np.ndarray:
    out = a[:, 0].copy()
    for j in range(1, a.shape[1]):
        out += a[:, j]
    return out


def planes_backward(dy3, x3, mean, rstd, weight):
    """(dx, dweight, dbias) of (n, C, L) arrays by the planes kernel."""
    n, c, length = dy3.shape
    t = dy3.dtype.type
    xm3 = x3 - mean.reshape(1, c, 1)
    s, d = plane_sums(dy3.reshape(n * c, length), xm3.reshape(n * c, length), lanes(t))
    wide = np.float64
    total_s = np.add.reduce(s.reshape(n, c).astype(wide), axis=0)
    total_d = np.add.reduce(d.reshape(n, c).astype(wide), axis=0)
    count = n * length
    dbias = total_s.astype(t)
    dweight = (total_d * rstd.astype(wide)).astype(t)
    k = total_d.astype(t) * rstd * rstd / t(count)
    grad_mean = (total_s / count).astype(t)
    v = (1, c, 1)
    dx = fma(-xm3, k.reshape(v), dy3 - grad_mean.reshape(v)) * rstd.reshape(v)
    if weight is not None:
        dx *= weight.reshape(v)
    return dx, dweight, dbias


def rows_backward(dy2, x2, mean, rstd, weight, dot_rows=None, dx_rows=None):
    """(dx, dweight, dbias) of (rows, C) arrays by the rows kernel. `dot_rows(x, dy, mean,
    acc)` does a chunk's fused products in C; without it a loop over rows does them.
    `dx_rows(x, dy, mean, k, grad_mean, rstd, weight, full)` computes dx in C, where given."""
    rows, c = dy2.shape
    t = dy2.dtype.type
    chunk = -(-rows // max(1, min(workers(), rows)))
    total_s = np.zeros(c, np.float64)
    total_d = np.zeros(c, np.float64)
    for lo in range(0, rows, chunk):
        total_s += np.add.reduce(dy2[lo:lo + chunk], axis=0)
        acc = np.zeros(c, dy2.dtype)
        if dot_rows is not None:
            dot_rows(np.ascontiguousarray(x2[lo:lo + chunk]),
                     np.ascontiguousarray(dy2[lo:lo + chunk]), mean, acc)
        else:
            for x_row, dy_row in zip(x2[lo:lo + chunk], dy2[lo:lo + chunk]):
                acc = fma(x_row - mean, dy_row, acc)
        total_d += acc
    s, d = total_s.astype(t), total_d.astype(t)
    dweight = d * rstd
    k = dweight * rstd / t(rows)
    grad_mean = s / t(rows)
    full = c - c % lanes(t)
    if dx_rows is not None:
        return dx_rows(x2, dy2, mean, k, grad_mean, rstd, weight, full), dweight, s
    xm = x2 - mean
    fused = fma(-xm[:, :full], k[:full], dy2[:, :full] - grad_mean[:full])
    plain = (dy2[:, full:] - grad_mean[full:]) - xm[:, full:] * k[full:]
    dx = np.concatenate([fused, plain], axis=1) * rstd
    if weight is not None:
        dx *= weight
    return dx, dweight, s
