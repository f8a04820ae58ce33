"""Winograd's F(2x2, 3x3): 3x3 stride-1 convolutions with 2.25x fewer multiplications.

Each 2x2 block of outputs is computed from the 4x4 input tile under it: the tile is
transformed (B^T d B), multiplied element by element with the transformed kernel
(G g G^T), summed over the input channels, and transformed back (A^T m A). Summed over
channels, the element-wise products are 16 matrix products, (tiles, C) by (C, O), one
per position of the 4x4 transform, with 4/9 of im2col's multiplications. The
transforms take only additions and are done over whole chunks of the batch at once.
The weight gradient is the same computation's adjoint: for each of the 16 positions,
the transformed inputs times the transformed output gradient (A dY A^T), summed over
the tiles, then brought back to 3x3 by G^T and G.

Layouts are channels last (the tile transforms then run over long contiguous rows):
the padded input is split into its four (row, column) parity planes, where the tiles'
rows and columns, which overlap by two, become offsets of one.

Rounding is that of a reordered sum (the transforms' coefficients are 0, +-1 and
+-1/2). A non-finite input can turn into NaN where the direct sum gives +-inf, so the
callers redo a result that is not finite by the direct path.
"""

from __future__ import annotations

import numpy as np

from ._parallel import over_batch

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_GG = np.kron(_G, _G)  # (16, 9): G g G^T of a kernel flattened row by row

# The products shrink by c o per tile and the transforms cost about c + o, so the
# channels' harmonic mean decides. Measured (one thread, batch 32-64, ms for forward and
# weight gradient, im2col -> Winograd): 32 -> 32 at 32x32 7.1/8.1 -> 7.6/8.3 (mean 32,
# left out); 32 -> 64 at 26x26 14.4/14.6 -> 13.1/12.7; 64 -> 64 at 16x16 6.2/6.3 ->
# 4.7/4.9; 128 -> 128 at 8x8 5.9/5.6 -> 4.1/4.3.
MIN_MEAN_CHANNELS = 40


def applies(geo, c: int, o: int, dtype) -> bool:
    """Whether this convolution is a 3x3, stride-1, undilated, ungrouped 2-d one on
    enough channels, in float32 or float64."""
    return (geo.k == (3, 3) and geo.stride == (1, 1) and geo.dilation == (1, 1)
            and geo.groups == 1 and 2 * c * o >= MIN_MEAN_CHANNELS * (c + o)
            and np.dtype(dtype) in (np.float32, np.float64))


def _tiles(geo) -> tuple[int, int]:
    return -(-geo.out[0] // 2), -(-geo.out[1] // 2)


def _sizes(geo, c: int, o: int) -> tuple[int, int, int]:
    """Per-sample scratch elements: (planes and row transforms, or the output's
    transforms; transformed input; products)."""
    th, tw = _tiles(geo)
    planes = 4 * (th + 1) * (tw + 1) * c + 8 * th * (tw + 1) * c
    return max(planes, 12 * th * tw * o), 16 * th * tw * c, 16 * th * tw * o


def _transform_input(x: np.ndarray, geo, first: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v (16, b th tw, C) = B^T d B of every 4x4 tile of x (b, C, H, W), padded, at
    stride 2 (`first` is scratch)."""
    b, c, h, w = x.shape
    th, tw = _tiles(geo)
    (plo, _), (qlo, _) = geo.padding
    nq = 4 * b * (th + 1) * (tw + 1) * c
    q = first[:nq].reshape(2, 2, b, th + 1, tw + 1, c)
    r = first[nq:nq + 8 * b * th * (tw + 1) * c].reshape(4, 2, b, th, tw + 1, c)
    q.fill(0)
    xt = x.transpose(0, 2, 3, 1)
    for pr in range(2):
        s = (pr - plo) % 2  # the first row of x on padded rows of parity pr
        i0, ni = (s + plo) // 2, len(range(s, h, 2))
        for pc in range(2):
            u = (pc - qlo) % 2
            j0, nj = (u + qlo) // 2, len(range(u, w, 2))
            q[pr, pc, :, i0:i0 + ni, j0:j0 + nj] = xt[:, s::2, u::2]
    # rows: a tile's rows 0..3 are the even plane's row t, the odd's t, even's t+1, odd's t+1
    (e0, e1), (o0, o1) = (q[0][:, :, :th], q[0][:, :, 1:]), (q[1][:, :, :th], q[1][:, :, 1:])
    np.subtract(e0, e1, out=r[0])
    np.add(o0, e1, out=r[1])
    np.subtract(e1, o0, out=r[2])
    np.subtract(o0, o1, out=r[3])
    # columns, the same on the column parities
    v6 = v.reshape(4, 4, b, th, tw, c)
    (e0, e1), (o0, o1) = ((r[:, 0, :, :, :tw], r[:, 0, :, :, 1:]),
                          (r[:, 1, :, :, :tw], r[:, 1, :, :, 1:]))
    np.subtract(e0, e1, out=v6[:, 0])
    np.add(o0, e1, out=v6[:, 1])
    np.subtract(e1, o0, out=v6[:, 2])
    np.subtract(o0, o1, out=v6[:, 3])
    return v


def _kernel_transform(w: np.ndarray) -> np.ndarray:
    """U (16, C, O) = G g G^T of every (out, in) channel pair of w (O, C, 3, 3): one
    product with the 16x9 matrix G (x) G (its entries are exact in any float type),
    returned as a transposed view, which the products read as it is."""
    o, c = w.shape[:2]
    u = _GG.astype(w.dtype) @ w.reshape(o * c, 9).T
    return u.reshape(16, o, c).transpose(0, 2, 1)


def forward(x: np.ndarray, w: np.ndarray, geo, out: np.ndarray, flops: int) -> None:
    """out (N, O, oh, ow) = conv(x, w), for a geometry `applies` accepts."""
    n, c = x.shape[:2]
    o = w.shape[0]
    th, tw = _tiles(geo)
    oh, ow = geo.out
    u = _kernel_transform(w)
    na, nv, nm = _sizes(geo, c, o)

    def chunk(lo, hi, buf, acc):
        b = hi - lo
        p = b * th * tw
        first = buf[:b * na]
        v = _transform_input(x[lo:hi], geo, first, buf[b * na:b * (na + nv)].reshape(16, p, c))
        m = np.matmul(v, u, out=buf[b * (na + nv):b * (na + nv + nm)].reshape(16, p, o))
        m = m.reshape(4, 4, p, o)
        s = first[:8 * p * o].reshape(2, 4, p, o)
        y = first[8 * p * o:12 * p * o].reshape(b, th, 2, tw, 2, o)
        # A^T m A: rows, then columns (the column parity j of each output tile)
        np.add(m[0], m[1], out=s[0])
        s[0] += m[2]
        np.subtract(m[1], m[2], out=s[1])
        s[1] -= m[3]
        s5 = s.reshape(2, 4, b, th, tw, o)
        even, odd = (y[:, :, :, :, j].transpose(2, 0, 1, 3, 4) for j in range(2))
        np.add(s5[:, 0], s5[:, 1], out=even)
        even += s5[:, 2]
        np.subtract(s5[:, 1], s5[:, 2], out=odd)
        odd -= s5[:, 3]
        np.copyto(out[lo:hi], y.reshape(b, 2 * th, 2 * tw, o)[:, :oh, :ow].transpose(0, 3, 1, 2))

    over_batch(n, (nv + nm) * x.itemsize, flops, chunk, na + nv + nm, x.dtype)


def weight_grad(x: np.ndarray, gy: np.ndarray, geo, flops: int) -> np.ndarray:
    """The gradient (O, C, 3, 3) of sum(gy * conv(x, w)) in w, for a geometry `applies`
    accepts."""
    n, c = x.shape[:2]
    o = gy.shape[1]
    th, tw = _tiles(geo)
    oh, ow = geo.out
    na, nv, nm = _sizes(geo, c, o)

    def chunk(lo, hi, buf, acc):
        b = hi - lo
        p = b * th * tw
        v = _transform_input(x[lo:hi], geo, buf[:b * na], buf[b * na:b * (na + nv)].reshape(
            16, p, c))
        # A gy A^T, with the sign of row 3 and of column 3 left out (restored on the sum)
        z = buf[:4 * p * o].reshape(b, th, 2, tw, 2, o)
        if (2 * th, 2 * tw) != (oh, ow):
            z.fill(0)
        np.copyto(z.reshape(b, 2 * th, 2 * tw, o)[:, :oh, :ow], gy[lo:hi].transpose(0, 2, 3, 1))
        e = buf[4 * p * o:12 * p * o].reshape(4, b, th, tw, 2, o)
        z0, z1 = z[:, :, 0], z[:, :, 1]
        np.copyto(e[0], z0)
        np.add(z0, z1, out=e[1])
        np.subtract(z0, z1, out=e[2])
        np.copyto(e[3], z1)
        d = buf[b * (na + nv):b * (na + nv + nm)].reshape(4, 4, b, th, tw, o)
        f0, f1 = e[..., 0, :], e[..., 1, :]
        np.copyto(d[:, 0], f0)
        np.add(f0, f1, out=d[:, 1])
        np.subtract(f0, f1, out=d[:, 2])
        np.copyto(d[:, 3], f1)
        part = np.matmul(v.transpose(0, 2, 1), d.reshape(16, p, o))
        return part if acc is None else np.add(acc, part, out=acc)

    parts = over_batch(n, (nv + nm) * x.itemsize, flops, chunk, na + nv + nm, x.dtype)
    du = parts[0].astype(np.float64)
    for part in parts[1:]:
        du += part
    du = du.reshape(4, 4, c * o)
    du[3] *= -1
    du[:, 3] *= -1
    gw = (_GG.T @ du.reshape(16, c * o)).reshape(9, c, o)  # G^T dU G
    return np.ascontiguousarray(gw.transpose(2, 1, 0), dtype=x.dtype).reshape(o, c, 3, 3)
