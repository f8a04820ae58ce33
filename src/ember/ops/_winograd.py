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

The padded input is split into its four (row, column) parity planes, where the tiles'
rows and columns, which overlap by two, become offsets of one, so each transform is a
few whole-array additions. Two layouts: channels first for wide planes, where a tile
row is computed over the flattened plane with one extra column per row (dropped at the
end; the products are that much wider, 1/tw), and channels last for narrow ones, whose
extra column would cost more than the transposing copies in and out.

Rounding is that of a reordered sum (the transforms' coefficients are 0, +-1 and
+-1/2). A non-finite input can turn into NaN where the direct sum gives +-inf, so the
callers redo a result that is not finite by the direct path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._algorithms import deterministic_only
from ._parallel import one_blas_thread, over_batch

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_GG = np.kron(_G, _G)  # (16, 9): G g G^T of a kernel flattened row by row

# The products shrink by c o per tile and the transforms cost about c + o, so the
# channels' harmonic mean decides. Measured (one thread, batch 32-64, ms for forward /
# weight gradient, im2col -> Winograd channels first | last):
#   16 -> 16 at 32x32    2.3/2.9 -> 2.3/2.4 | 2.5/2.5  (left out: a wash)
#   32 -> 32 at 32x32    7.2/8.2 -> 6.8/6.0 | 6.8/7.4
#   32 -> 64 at 26x26  14.4/14.7 -> 11.6/12.3 | 11.8/11.7
#   64 -> 64 at 16x16    6.2/6.3 -> 4.7/4.9 | 4.3/4.5
#   128 -> 128 at 8x8    5.8/5.5 -> 4.4/4.7 | 3.4/3.6
MIN_MEAN_CHANNELS = 32
FIRST_MIN_TILES = 14  # tiles per row from which the channels-first layout is used


def applies(geo, c: int, o: int, dtype) -> bool:
    """Whether this convolution is a 3x3, stride-1, undilated, ungrouped 2-d one on
    enough channels, in float32 or float64, and deterministic algorithms are off (they
    pin the direct sum of products, the reference the Winograd products round apart
    from)."""
    return (not deterministic_only()
            and geo.k == (3, 3) and geo.stride == (1, 1) and geo.dilation == (1, 1)
            and geo.groups == 1 and 2 * c * o >= MIN_MEAN_CHANNELS * (c + o)
            and np.dtype(dtype) in (np.float32, np.float64))


def _tiles(geo) -> tuple[int, int]:
    return -(-geo.out[0] // 2), -(-geo.out[1] // 2)


def _bt(d0, d1, d2, d3, out) -> None:
    """B^T d along one axis, of its four rows: out[0..3]."""
    np.subtract(d0, d2, out=out[0])
    np.add(d1, d2, out=out[1])
    np.subtract(d2, d1, out=out[2])
    np.subtract(d1, d3, out=out[3])


def _at(m0, m1, m2, m3, out) -> None:
    """A^T m along one axis, of its four rows: out[0..1]."""
    np.add(m0, m1, out=out[0])
    out[0] += m2
    np.subtract(m1, m2, out=out[1])
    out[1] -= m3


def _a(z0, z1, out) -> None:
    """A z along one axis, of its two rows, with the sign of row 3 left out (the caller
    restores it on the sum): out[0..3]."""
    np.copyto(out[0], z0)
    np.add(z0, z1, out=out[1])
    np.subtract(z0, z1, out=out[2])
    np.copyto(out[3], z1)


def _planes(a: np.ndarray, pads, lead: int, q: np.ndarray) -> None:
    """q[pr, pc] = the (row, column) parity planes of `a` padded by `pads` (lo, hi) per
    spatial dim, zeros around; `a`'s spatial dims follow its first `lead` dims, and q's
    follow its first 2 + `lead`."""
    h, w = a.shape[lead:lead + 2]
    (plo, _), (qlo, _) = pads
    q.fill(0)
    keep = (slice(None),) * lead
    for pr in range(2):
        s = (pr - plo) % 2  # the first row of `a` on padded rows of parity pr
        i0, ni = (s + plo) // 2, len(range(s, h, 2))
        for pc in range(2):
            u = (pc - qlo) % 2
            j0, nj = (u + qlo) // 2, len(range(u, w, 2))
            q[(pr, pc) + keep + (slice(i0, i0 + ni), slice(j0, j0 + nj))] = \
                a[keep + (slice(s, None, 2), slice(u, None, 2))]


@dataclass(frozen=True)
class _Plan:
    """One convolution's tiling: tile rows and columns, the layout, and the scratch a
    chunk of the batch needs."""

    geo: object
    c: int
    o: int

    @property
    def tiles(self) -> tuple[int, int]:
        return _tiles(self.geo)

    @property
    def first(self) -> bool:
        """Channels first (wide planes) or last."""
        return self.tiles[1] >= FIRST_MIN_TILES

    @property
    def cols(self) -> int:
        """Tiles per row as computed: one more in the channels-first layout."""
        tw = self.tiles[1]
        return tw + 1 if self.first else tw

    @property
    def sizes(self) -> tuple[int, int, int]:
        """Per-sample scratch elements: (planes and row transforms, or the output's
        transforms; transformed input; products)."""
        (th, tw), c, o = self.tiles, self.c, self.o
        planes = 4 * (th + 1) * (tw + 1) * c + 8 * th * (tw + 1) * c
        return max(planes, 12 * th * self.cols * o), 16 * th * self.cols * c, \
            16 * th * self.cols * o

    def run(self, x: np.ndarray, flops: int, body) -> list:
        """`over_batch` of `body(lo, hi, p, scratch, v, m, acc)` over x's batch: p tiles
        in the chunk, the chunk's scratch, v its inputs' transforms (16, C, p) or
        (16, p, C) by the layout, and m room for 16 (O, p) or (p, O) products."""
        na, nv, nm = self.sizes
        th = self.tiles[0]

        def chunk(lo, hi, buf, acc):
            b = hi - lo
            p = b * th * self.cols
            scratch, m = buf[:b * na], buf[b * (na + nv):b * (na + nv + nm)]
            v = buf[b * na:b * (na + nv)]
            if self.first:
                v = _input_first(x[lo:hi], self.geo, scratch, v.reshape(16, self.c, p))
            else:
                v = _input_last(x[lo:hi], self.geo, scratch, v.reshape(16, p, self.c))
            return body(lo, hi, p, scratch, v, m, acc)

        return over_batch(x.shape[0], (nv + nm) * x.itemsize, flops, chunk, na + nv + nm,
                          x.dtype)


def _input_last(x: np.ndarray, geo, first: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v (16, b th tw, C) = B^T d B of every 4x4 tile (stride 2) of x (b, C, H, W),
    padded, channels last (`first` is scratch)."""
    b, c = x.shape[:2]
    th, tw = _tiles(geo)
    nq = 4 * b * (th + 1) * (tw + 1) * c
    q = first[:nq].reshape(2, 2, b, th + 1, tw + 1, c)
    r = first[nq:nq + 8 * b * th * (tw + 1) * c].reshape(4, 2, b, th, tw + 1, c)
    _planes(x.transpose(0, 2, 3, 1), geo.padding, 1, q)
    # a tile's rows 0..3 are the even plane's row t, the odd's t, even's t+1, odd's t+1
    _bt(q[0][:, :, :th], q[1][:, :, :th], q[0][:, :, 1:], q[1][:, :, 1:], r)
    even, odd = r[:, 0], r[:, 1]  # and its columns, the same on the column parities
    _bt(even[..., :tw, :], odd[..., :tw, :], even[..., 1:, :], odd[..., 1:, :],
        v.reshape(4, 4, b, th, tw, c).transpose(1, 0, 2, 3, 4, 5))
    return v


def _input_first(x: np.ndarray, geo, first: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v (16, C, b th (tw+1)) = B^T d B of every 4x4 tile (stride 2) of x (b, C, H, W),
    padded, channels first; each row of tiles has one more, whose values are never
    used (`first` is scratch)."""
    b, c = x.shape[:2]
    th, tw = _tiles(geo)
    nq = 4 * c * b * (th + 1) * (tw + 1)
    f = c * b * th * (tw + 1)
    q = first[:nq].reshape(2, 2, c, b, th + 1, tw + 1)
    r = first[nq:nq + 8 * f].reshape(4, 2, c, b, th, tw + 1)
    _planes(x.transpose(1, 0, 2, 3), geo.padding, 2, q)
    _bt(q[0][..., :th, :], q[1][..., :th, :], q[0][..., 1:, :], q[1][..., 1:, :], r)
    # columns over the flattened planes: a tile row's extra column mixes in the next row
    even, odd = r.reshape(4, 2, f)[:, 0], r.reshape(4, 2, f)[:, 1]
    vf = v.reshape(4, 4, f)
    _bt(even[:, :-1], odd[:, :-1], even[:, 1:], odd[:, 1:], vf[:, :, :-1].transpose(1, 0, 2))
    vf[:, :, -1] = 0  # (scratch could hold a NaN, and the weight gradient sums 0 times it)
    return v


def _kernel_transform(w: np.ndarray) -> np.ndarray:
    """U (16, O, C) = G g G^T of every (out, in) channel pair of w (O, C, 3, 3): one
    product with the 16x9 matrix G (x) G (its entries are exact in any float type)."""
    o, c = w.shape[:2]
    with one_blas_thread:  # (OpenBLAS's threads would spin on past this small product)
        return (_GG.astype(w.dtype) @ w.reshape(o * c, 9).T).reshape(16, o, c)


def forward(x: np.ndarray, w: np.ndarray, geo, out: np.ndarray, flops: int) -> None:
    """out (N, O, oh, ow) = conv(x, w), for a geometry `applies` accepts."""
    o = w.shape[0]
    plan = _Plan(geo, x.shape[1], o)
    (th, _), cols, (oh, ow) = plan.tiles, plan.cols, geo.out
    u = _kernel_transform(w)

    def chunk(lo, hi, p, scratch, v, m, acc):
        b = hi - lo
        s = scratch[:8 * p * o].reshape(2, 4, p * o)
        y = scratch[8 * p * o:12 * p * o].reshape(2, 2, p * o)
        if plan.first:
            np.matmul(u, v, out=m.reshape(16, o, p))
        else:
            np.matmul(v, u.transpose(0, 2, 1), out=m.reshape(16, p, o))
        m = m.reshape(4, 4, p * o)
        _at(m[0], m[1], m[2], m[3], s)  # A^T m A: rows i, then columns j
        _at(s[:, 0], s[:, 1], s[:, 2], s[:, 3], y.transpose(1, 0, 2))
        dst = out[lo:hi]
        if plan.first:
            y = y.reshape(2, 2, o, b, th, cols).transpose(0, 1, 3, 2, 4, 5)
        else:
            y = y.reshape(2, 2, b, th, cols, o).transpose(0, 1, 2, 5, 3, 4)
        for i in range(2):
            for j in range(2):
                np.copyto(dst[:, :, i::2, j::2],
                          y[i, j, :, :, :len(range(i, oh, 2)), :len(range(j, ow, 2))])

    plan.run(x, flops, chunk)


def weight_grad(x: np.ndarray, gy: np.ndarray, geo, flops: int) -> np.ndarray:
    """The gradient (O, C, 3, 3) of sum(gy * conv(x, w)) in w, for a geometry `applies`
    accepts."""
    c, o = x.shape[1], gy.shape[1]
    plan = _Plan(geo, c, o)
    (th, _), cols = plan.tiles, plan.cols

    def chunk(lo, hi, p, scratch, v, d, acc):
        b = hi - lo
        # A gy A^T over gy's parity planes (zeros past its end, and in the extra column)
        z = scratch[:4 * p * o]
        if plan.first:
            _planes(gy[lo:hi].transpose(1, 0, 2, 3), ((0, 0), (0, 0)), 2,
                    z.reshape(2, 2, o, b, th, cols))
        else:
            _planes(gy[lo:hi].transpose(0, 2, 3, 1), ((0, 0), (0, 0)), 1,
                    z.reshape(2, 2, b, th, cols, o))
        z = z.reshape(2, 2, p * o)
        e = scratch[4 * p * o:12 * p * o].reshape(4, 2, p * o)
        _a(z[0], z[1], e)
        _a(e[:, 0], e[:, 1], d.reshape(4, 4, p * o).transpose(1, 0, 2))
        if plan.first:
            part = np.matmul(d.reshape(16, o, p), v.transpose(0, 2, 1))
        else:
            part = np.matmul(d.reshape(16, p, o).transpose(0, 2, 1), v)
        return part if acc is None else np.add(acc, part, out=acc)

    parts = plan.run(x, flops, chunk)
    du = parts[0].astype(np.float64)
    for part in parts[1:]:
        du += part
    du = du.reshape(4, 4, o * c)
    du[3] *= -1
    du[:, 3] *= -1
    with one_blas_thread:
        gw = _GG.T @ du.reshape(16, o * c)  # G^T dU G
    return np.ascontiguousarray(gw.T, dtype=x.dtype).reshape(o, c, 3, 3)
