"""NumPy kernels of the convolution primitives: im2col from a strided view into a reused
buffer, batched BLAS products, and direct paths for 1x1 and depthwise convolutions.

Layouts: x (N, C, *S), w (O, C/g, *k), out (N, O, *out), with K = prod(k) taps and
L = prod(out) output positions. The batch is cut into chunks small enough for a chunk's
buffer to stay in cache, and the chunks are shared out to ember's kernel threads (one
OpenBLAS thread each), so the copies run in parallel as well as the products. A chunk's
im2col buffer is laid out (C, *k, b, *out): read as (b, g, C/g*K, L) it feeds the
forward product, which writes (b, g, O/g, L) straight into the output, and read as
(g, C/g*K, b*L) it feeds the weight gradient as one product per chunk. Two variants
copy longer runs where they pay (measured per shape; see benchmarks/README.md, issue
20): channels-last columns (b, L, K*C) from 64 channels, and at stride 1 in 2-d the
flattened padded plane, where each tap is one contiguous run at a constant offset.
3x3 stride-1 convolutions on enough channels take Winograd's products instead
(`_winograd.py`), the input gradient as the flipped kernel's full convolution.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _winograd
from ._parallel import over_batch


@dataclass(frozen=True)
class Geometry:
    """One convolution's shape: the spatial parameters and the sizes derived from them."""

    k: tuple
    stride: tuple
    padding: tuple  # (low, high) per spatial dim
    dilation: tuple
    groups: int
    out: tuple

    def __hash__(self) -> int:
        # (kept after the first: plans and parameter arrays are looked up by geometry
        # several times a call, and the dataclass's own hash builds a tuple each time)
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.k, self.stride, self.padding, self.dilation, self.groups, self.out))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def nd(self) -> int:
        return len(self.k)

    @property
    def taps(self) -> int:
        return math.prod(self.k)

    @property
    def positions(self) -> int:
        return math.prod(self.out)

    @property
    def padded(self) -> bool:
        return any(lo or hi for lo, hi in self.padding)

    @property
    def pointwise(self) -> bool:
        """A 1x1 kernel at stride 1 without padding: the convolution is a plain product."""
        return (all(k == 1 for k in self.k) and all(s == 1 for s in self.stride)
                and not self.padded)


def out_size(size: int, k: int, s: int, d: int, lo: int, hi: int) -> int:
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


_GEOMETRIES_MOST = 4096  # geometries kept (a program's convolutions have a few shapes)
_geometries: dict = {}


def geometry(x_shape, k, stride, padding, dilation, groups) -> Geometry:
    """The Geometry of a convolution of x_shape by a kernel of spatial size k: made once per
    distinct call and kept (a convolution's kernels ask for it two or three times a call,
    and making a frozen dataclass costs microseconds)."""
    try:
        key = (tuple(x_shape[2:]), tuple(k), stride, padding, dilation, groups)
        got = _geometries.get(key)
    except TypeError:  # (lists among the params: not a key)
        key = got = None
    if got is None:
        out = tuple(out_size(x_shape[2 + i], k[i], stride[i], dilation[i], *padding[i])
                    for i in range(len(k)))
        got = Geometry(tuple(k), tuple(stride), tuple(tuple(p) for p in padding),
                       tuple(dilation), groups, out)
        if key is not None:
            if len(_geometries) >= _GEOMETRIES_MOST:
                _geometries.clear()
            _geometries[key] = got
    return got


def with_out(geo: Geometry, out) -> Geometry:
    """`geo` with the output size `out` (an adjoint's: the output gradient's spatial
    shape, which a transposed convolution's output padding makes larger), kept as
    `geometry` keeps its results."""
    out = tuple(out)
    if out == geo.out:
        return geo
    key = ("out", geo, out)
    got = _geometries.get(key)
    if got is None:
        if len(_geometries) >= _GEOMETRIES_MOST:
            _geometries.clear()
        got = _geometries[key] = Geometry(geo.k, geo.stride, geo.padding, geo.dilation,
                                          geo.groups, out)
    return got


def add_channel_bias(out: np.ndarray, b: np.ndarray) -> np.ndarray:
    """out (N, C, ...), a fresh array in the dtype the convolution computes in (float32 for
    16-bit inputs), plus b (C,) along the channels, in place. NOTE: PyTorch adds a 16-bit
    convolution's bias before its one rounding to the 16-bit type (checked for every
    convolution kind), so callers round after this."""
    b = b.reshape((-1,) + (1,) * (out.ndim - 2))
    np.add(out, b.astype(out.dtype, copy=False), out=out)
    return out


# --- im2col and col2im ------------------------------------------------------------------

def _pad(x: np.ndarray, geo: Geometry) -> np.ndarray:
    """x with zeros added around its spatial dims (x itself when there is no padding)."""
    if not geo.padded:
        return x
    shape = x.shape[:2] + tuple(x.shape[2 + i] + lo + hi for i, (lo, hi) in
                                enumerate(geo.padding))
    xp = np.zeros(shape, x.dtype)
    inner = tuple(slice(lo, lo + x.shape[2 + i]) for i, (lo, _) in enumerate(geo.padding))
    xp[(slice(None), slice(None)) + inner] = x
    return xp


def windows(xp: np.ndarray, geo: Geometry) -> np.ndarray:
    """The read-only view (b, C, *k, *out) of every receptive field of a padded input."""
    s, nd = xp.strides, geo.nd
    return as_strided(
        xp, xp.shape[:2] + geo.k + geo.out,
        s[:2] + tuple(s[2 + i] * geo.dilation[i] for i in range(nd))
        + tuple(s[2 + i] * geo.stride[i] for i in range(nd)), writeable=False)


def im2col(x: np.ndarray, geo: Geometry, buf: np.ndarray) -> np.ndarray:
    """Copy the receptive fields of samples `x` (b, C, *S) into `buf`, laid out
    (C, *k, b, *out); returns that array."""
    nd, b, c = geo.nd, x.shape[0], x.shape[1]
    cols = buf[:c * geo.taps * b * geo.positions].reshape((c,) + geo.k + (b,) + geo.out)
    view = windows(_pad(x, geo), geo)
    perm = (1,) + tuple(range(2, 2 + nd)) + (0,) + tuple(range(2 + nd, 2 + 2 * nd))
    np.copyto(cols, view.transpose(perm))
    return cols


def col2im(part, geo: Geometry, dst: np.ndarray) -> None:
    """Add each kernel tap's contribution `part(t, tap)` (b, C, *out) into `dst`
    (b, C, *S), a fresh zero array: the adjoint of im2col, one strided add per tap."""
    nd = geo.nd
    if geo.padded:
        xp = np.zeros(dst.shape[:2] + tuple(dst.shape[2 + i] + lo + hi for i, (lo, hi) in
                                            enumerate(geo.padding)), dst.dtype)
    else:
        xp = dst
    for t, tap in enumerate(itertools.product(*(range(k) for k in geo.k))):
        sl = tuple(slice(tap[i] * geo.dilation[i],
                         tap[i] * geo.dilation[i] + geo.stride[i] * (geo.out[i] - 1) + 1,
                         geo.stride[i]) for i in range(nd))
        region = xp[(slice(None), slice(None)) + sl]
        np.add(region, part(t, tap), out=region)
    if geo.padded:
        crop = tuple(slice(lo, lo + dst.shape[2 + i]) for i, (lo, _) in
                     enumerate(geo.padding))
        np.copyto(dst, xp[(slice(None), slice(None)) + crop])


def _depthwise(geo: Geometry, c: int, o: int) -> bool:
    return geo.groups == c == o and c > 1


def _depthwise_chunk(x: np.ndarray, wt: np.ndarray, geo: Geometry, dst: np.ndarray) -> None:
    """dst = the depthwise convolution of samples x with per-channel taps wt (C, K): one
    multiply-add per tap. At stride 1 each tap is a constant offset into the flattened
    padded plane, so the passes run over long contiguous rows; the columns between the
    output rows are computed and dropped."""
    c, nd = x.shape[1], geo.nd
    xp = _pad(x, geo)
    taps = list(itertools.product(*(range(k) for k in geo.k)))
    if all(s == 1 for s in geo.stride):
        plane = xp.shape[2:]
        pstride = tuple(int(np.prod(plane[i + 1:], dtype=np.int64)) for i in range(nd))
        span = sum((geo.out[i] - 1) * pstride[i] for i in range(nd)) + 1
        flat = np.ascontiguousarray(xp).reshape(xp.shape[:2] + (-1,))
        acc = np.empty(flat.shape[:2] + (span,), x.dtype)
        tmp = np.empty_like(acc)
        for t, tap in enumerate(taps):
            off = sum(tap[i] * geo.dilation[i] * pstride[i] for i in range(nd))
            part = np.multiply(flat[:, :, off:off + span], wt[:, t:t + 1],
                               out=acc if t == 0 else tmp)
            if t:
                np.add(acc, part, out=acc)
        it = acc.itemsize
        np.copyto(dst, as_strided(acc, dst.shape, acc.strides[:2] + tuple(
            p * it for p in pstride), writeable=False))
        return
    view = windows(xp, geo)
    tmp = np.empty_like(dst)
    for t, tap in enumerate(taps):
        part = view[(slice(None), slice(None)) + tap]
        scale = wt[:, t].reshape((c,) + (1,) * nd)
        if t == 0:
            np.multiply(part, scale, out=dst)
        else:
            np.add(dst, np.multiply(part, scale, out=tmp), out=dst)


def _depthwise_weight_chunk(x: np.ndarray, gy: np.ndarray, geo: Geometry,
                            acc: np.ndarray | None) -> np.ndarray:
    """acc (C, K) += the depthwise weight gradient of samples x at stride 1: per tap one
    sum of products over the flattened padded plane (a constant offset per tap, as in
    `_depthwise_chunk`), against the output gradient spread out to the plane's row
    stride with zeros between its rows (rows of the plane, not of `out`, 2.5x faster
    than the grouped product of im2col columns)."""
    b, c, nd = x.shape[0], x.shape[1], geo.nd
    xp = _pad(x, geo)
    plane = xp.shape[2:]
    pstride = tuple(int(np.prod(plane[i + 1:], dtype=np.int64)) for i in range(nd))
    span = sum((geo.out[i] - 1) * pstride[i] for i in range(nd)) + 1
    flat = np.ascontiguousarray(xp).reshape(b, c, -1)
    wide = np.zeros((b, c, span), x.dtype)
    it = wide.itemsize
    np.copyto(as_strided(wide, gy.shape, wide.strides[:2] + tuple(p * it for p in pstride)),
              gy)
    part = np.empty((c, geo.taps), x.dtype)
    for t, tap in enumerate(itertools.product(*(range(k) for k in geo.k))):
        off = sum(tap[i] * geo.dilation[i] * pstride[i] for i in range(nd))
        part[:, t] = np.einsum("bcs,bcs->bc", wide, flat[:, :, off:off + span]).sum(0)
    return part if acc is None else np.add(acc, part, out=acc)


# --- channels last ----------------------------------------------------------------------
# With the channels last, one receptive field's row of taps is a contiguous run of kw * C
# elements of the padded input, so im2col copies long runs instead of rows of `out` (8 to
# 32 elements here); the products read the columns transposed, and the forward still
# writes (O, L) per sample. It costs one transposing copy of the input per chunk, which
# pays from about 64 channels (measured: 0.6-1.1 ms less per 3x3 product at 64-128
# channels, a wash at 32).

LAST_MIN_CHANNELS = 64


def _last(geo: Geometry, c: int, min_channels: int = LAST_MIN_CHANNELS) -> bool:
    """Whether the channels-last columns serve this (ungrouped) convolution."""
    return geo.groups == 1 and geo.taps > 1 and c >= min_channels


def _last_scratch(x_shape, geo: Geometry) -> tuple[int, int]:
    """Per-sample scratch elements: (columns, padded channels-last input)."""
    c = x_shape[1]
    plane = int(np.prod([x_shape[2 + i] + lo + hi for i, (lo, hi) in
                         enumerate(geo.padding)], dtype=np.int64))
    return geo.positions * geo.taps * c, plane * c


def _padded_last(x: np.ndarray, geo: Geometry, buf: np.ndarray) -> np.ndarray:
    """x (b, C, *S) copied into `buf` as (b, *padded S, C), zeros around."""
    b, c, nd = x.shape[0], x.shape[1], geo.nd
    sp = tuple(x.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(geo.padding))
    xp = buf[:b * c * int(np.prod(sp, dtype=np.int64))].reshape((b,) + sp + (c,))
    for i, (lo, hi) in enumerate(geo.padding):
        pre = (slice(None),) * (1 + i)
        if lo:
            xp[pre + (slice(0, lo),)] = 0
        if hi:
            xp[pre + (slice(sp[i] - hi, sp[i]),)] = 0
    inner = tuple(slice(lo, lo + x.shape[2 + i]) for i, (lo, _) in enumerate(geo.padding))
    np.copyto(xp[(slice(None),) + inner], x.transpose((0,) + tuple(range(2, 2 + nd)) + (1,)))
    return xp


def im2col_last(x: np.ndarray, geo: Geometry, buf: np.ndarray) -> np.ndarray:
    """The receptive fields of samples x (b, C, *S) as (b, L, K C) columns, taps then
    channels along a row (the weight's order once its channels are moved last)."""
    b, c, nd = x.shape[0], x.shape[1], geo.nd
    ncols = b * geo.positions * geo.taps * c
    xp = _padded_last(x, geo, buf[ncols:])
    s = xp.strides
    view = as_strided(xp, (b,) + geo.out + geo.k + (c,),
                      (s[0],) + tuple(s[1 + i] * geo.stride[i] for i in range(nd))
                      + tuple(s[1 + i] * geo.dilation[i] for i in range(nd)) + (s[-1],),
                      writeable=False)
    cols = buf[:ncols].reshape((b,) + geo.out + geo.k + (c,))
    np.copyto(cols, view)
    return cols.reshape(b, geo.positions, geo.taps * c)


def _weight_last(w: np.ndarray) -> np.ndarray:
    """w (O, C, *k) as (O, K C): taps then channels along a row."""
    nd = w.ndim - 2
    return np.ascontiguousarray(w.transpose((0,) + tuple(range(2, 2 + nd)) + (1,))).reshape(
        w.shape[0], -1)


def _col2im_last(cols: np.ndarray, geo: Geometry, dst: np.ndarray, buf: np.ndarray) -> None:
    """dst (b, C, *S) = the adjoint of `im2col_last` applied to cols (b, L, K C): one add
    per tap into a padded channels-last buffer, whose rows of C are contiguous."""
    b, c, nd = dst.shape[0], dst.shape[1], geo.nd
    sp = tuple(dst.shape[2 + i] + lo + hi for i, (lo, hi) in enumerate(geo.padding))
    xp = buf[:b * c * int(np.prod(sp, dtype=np.int64))].reshape((b,) + sp + (c,))
    xp.fill(0)
    cols = cols.reshape((b,) + geo.out + geo.k + (c,))
    for tap in itertools.product(*(range(k) for k in geo.k)):
        sl = tuple(slice(tap[i] * geo.dilation[i],
                         tap[i] * geo.dilation[i] + geo.stride[i] * (geo.out[i] - 1) + 1,
                         geo.stride[i]) for i in range(nd))
        region = xp[(slice(None),) + sl]
        np.add(region, cols[(Ellipsis,) + tap + (slice(None),)], out=region)
    inner = tuple(slice(lo, lo + dst.shape[2 + i]) for i, (lo, _) in enumerate(geo.padding))
    np.copyto(dst, xp[(slice(None),) + inner].transpose((0, nd + 1) + tuple(range(1, nd + 1))))


# --- the three products -----------------------------------------------------------------

def forward(x: np.ndarray, w: np.ndarray, geo: Geometry) -> np.ndarray:
    """conv(x, w): (N, O, *out)."""
    n, c = x.shape[:2]
    o, g = w.shape[0], geo.groups
    L, K = geo.positions, geo.taps
    if x.size == 0 or w.size == 0:  # an empty batch or no input channels: sums of nothing
        return np.zeros((n, o) + geo.out, x.dtype)
    out = np.empty((n, o) + geo.out, x.dtype)
    flops = 2 * n * o * (c // g) * K * L
    if _depthwise(geo, c, o):
        wt = w.reshape(c, K)

        def depthwise(lo, hi, buf, acc):
            _depthwise_chunk(x[lo:hi], wt, geo, out[lo:hi])

        over_batch(n, 8 * x[:1].nbytes, flops, depthwise)
        return out
    out4 = out.reshape(n, g, o // g, L)
    wg = w.reshape(g, o // g, (c // g) * K)
    if geo.pointwise:
        x4 = x.reshape(n, g, c // g, L)

        def pointwise(lo, hi, buf, acc):
            np.matmul(wg, x4[lo:hi], out=out4[lo:hi])

        over_batch(n, x[:1].nbytes, flops, pointwise)
        return out
    if _winograd.applies(geo, c, o, x.dtype):
        _winograd.forward(x, w, geo, out, flops)
        if _finite(out):
            return out
    if _wide_forward(geo, c):
        _forward_wide(x, w, geo, out, flops)
        return out
    if _last(geo, c):
        w2 = _weight_last(w)
        ncols, nplane = _last_scratch(x.shape, geo)

        def last(lo, hi, buf, acc):
            cols = im2col_last(x[lo:hi], geo, buf)
            np.matmul(w2, cols.transpose(0, 2, 1), out=out4[lo:hi, 0])

        over_batch(n, ncols * x.itemsize, flops, last, ncols + nplane, x.dtype)
        return out
    per = c * K * L

    def general(lo, hi, buf, acc):
        cols = im2col(x[lo:hi], geo, buf).reshape(g, (c // g) * K, hi - lo, L)
        np.matmul(wg, cols.transpose(2, 0, 1, 3), out=out4[lo:hi])

    over_batch(n, per * x.itemsize, flops, general, per, x.dtype)
    return out


def _finite(a: np.ndarray) -> bool:
    """Whether every element of `a` is finite (its sum is, without a mask the size of
    `a`; a sum that overflows only sends the caller to its exact path)."""
    return bool(np.isfinite(np.add.reduce(a, axis=None)))


def _flat_plane(geo: Geometry, h: int, w: int):
    """A 2-d stride-1 convolution over the flattened padded plane (h, w before padding):
    the padded height and width, the columns per channel of the widened output (its rows
    at the padded width), the span one tap's run covers, and each tap's offset."""
    (plo, phi), (qlo, qhi) = geo.padding
    hp, wp = h + plo + phi, w + qlo + qhi
    oh, ow = geo.out
    offs = [i * geo.dilation[0] * wp + j * geo.dilation[1]
            for i, j in itertools.product(range(geo.k[0]), range(geo.k[1]))]
    return hp, wp, oh * wp, (oh - 1) * wp + ow, offs


def _wide_forward(geo: Geometry, c: int) -> bool:
    """A 2-d stride-1 ungrouped kernel on 8 to 63 channels: `_forward_wide` serves it."""
    return (geo.nd == 2 and geo.groups == 1 and geo.taps > 1 and 8 <= c < LAST_MIN_CHANNELS
            and all(s == 1 for s in geo.stride))


def _forward_wide(x: np.ndarray, w: np.ndarray, geo: Geometry, out: np.ndarray,
                  flops: int) -> None:
    """out = conv(x, w) at stride 1 over the flattened padded plane: each tap's im2col
    row is one contiguous run of the plane at a constant offset (a copy of whole rows,
    not of rows of `out`), and the product computes every column of the padded width,
    the columns past the output's dropped in the copy out (for 32 channels at 32x32,
    6% more product for an im2col 3x cheaper: 7.5 -> 6.8 ms)."""
    n, c = x.shape[:2]
    o, K = w.shape[0], geo.taps
    (oh, ow), (h, wd) = geo.out, x.shape[2:]
    hp, wp, lw, span, offs = _flat_plane(geo, h, wd)
    (plo, phi), (qlo, qhi) = geo.padding
    w2 = w.reshape(o, c * K)
    ncols, nplane, nout = c * K * lw, c * hp * wp, o * lw

    def wide(lo, hi, buf, acc):
        b = hi - lo
        cols = buf[:b * ncols].reshape(b, c, K, lw)
        cols[..., span:] = 0  # (past the last row: columns that are dropped)
        xp = buf[b * ncols:b * (ncols + nplane)].reshape(b, c, hp, wp)
        if geo.padded:
            xp[:, :, :plo] = 0
            xp[:, :, hp - phi:] = 0
            xp[:, :, :, :qlo] = 0
            xp[:, :, :, wp - qhi:] = 0
        xp[:, :, plo:plo + h, qlo:qlo + wd] = x[lo:hi]
        flat = xp.reshape(b, c, hp * wp)
        for t, off in enumerate(offs):
            cols[:, :, t, :span] = flat[:, :, off:off + span]
        res = buf[b * (ncols + nplane):b * (ncols + nplane + nout)].reshape(b, o, lw)
        np.matmul(w2, cols.reshape(b, c * K, lw), out=res)
        np.copyto(out[lo:hi], res.reshape(b, o, oh, wp)[..., :ow])

    over_batch(n, ncols * x.itemsize, flops, wide, ncols + nplane + nout, x.dtype)


def input_grad(gy: np.ndarray, w: np.ndarray, geo: Geometry, x_shape) -> np.ndarray:
    """The adjoint of `forward` in x (col2im of w^T gy): (N, C, *S). Also the transposed
    convolution."""
    n, o = gy.shape[:2]
    c, g = x_shape[1], geo.groups
    L, K = geo.positions, geo.taps
    if gy.size == 0 or w.size == 0:
        return np.zeros(tuple(x_shape), gy.dtype)
    full = _as_full_convolution(geo, x_shape, o, gy.dtype)
    # (a non-finite weight takes col2im, which never multiplies it by the full convolution's
    # zero padding: an input element no window reaches through that tap stays finite, as
    # in PyTorch's backward; checking the weight costs a pass over it only)
    if full is not None and not geo.pointwise and np.isfinite(w).all():
        return forward(gy, _flipped(w, g), full)
    flops = 2 * n * o * (c // g) * K * L
    g4 = gy.reshape(n, g, o // g, L)
    if _depthwise(geo, c, o):
        wt = w.reshape(c, K)
        dx = np.zeros(tuple(x_shape), gy.dtype)

        def depthwise(lo, hi, buf, acc):
            src = gy[lo:hi]
            tmp = np.empty_like(src)

            def part(t, tap):
                return np.multiply(src, wt[:, t].reshape((c,) + (1,) * geo.nd), out=tmp)

            col2im(part, geo, dx[lo:hi])

        over_batch(n, 2 * dx[:1].nbytes, flops, depthwise)
        return dx
    strided = any(s != 1 for s in geo.stride)
    if _last(geo, c, LAST_MIN_CHANNELS // 2 if strided else LAST_MIN_CHANNELS):
        w2 = _weight_last(w)
        ncols, nplane = _last_scratch(x_shape, geo)
        g3 = gy.reshape(n, o, L)

        def last(lo, hi, buf, acc):
            cols = buf[:(hi - lo) * ncols].reshape(hi - lo, L, K * c)
            np.matmul(g3[lo:hi].transpose(0, 2, 1), w2, out=cols)
            _col2im_last(cols, geo, dx[lo:hi], buf[(hi - lo) * ncols:])

        dx = np.empty(tuple(x_shape), gy.dtype)
        over_batch(n, ncols * gy.itemsize, flops, last, ncols + nplane, gy.dtype)
        return dx
    dx = np.zeros(tuple(x_shape), gy.dtype)
    wt = w.reshape(g, o // g, (c // g) * K).transpose(0, 2, 1)
    if geo.pointwise:
        dx4 = dx.reshape(n, g, c // g, L)

        def pointwise(lo, hi, buf, acc):
            np.matmul(wt, g4[lo:hi], out=dx4[lo:hi])

        over_batch(n, dx[:1].nbytes, flops, pointwise)
        return dx
    # (the widened product's zero columns stay zero only for a finite weight)
    if geo.nd == 2 and all(s == 1 for s in geo.stride) and c >= 4 and np.isfinite(w).all():
        _col2im_wide(gy, wt, geo, dx, flops)
        return dx
    per = c * K * L

    def general(lo, hi, buf, acc):
        b = hi - lo
        cols = buf[:b * per].reshape(b, g, (c // g) * K, L)
        np.matmul(wt, g4[lo:hi], out=cols)
        cols = cols.reshape((b, c) + geo.k + geo.out)
        col2im(lambda t, tap: cols[(slice(None), slice(None)) + tap], geo, dx[lo:hi])

    over_batch(n, per * gy.itemsize, flops, general, per, gy.dtype)
    return dx


def _col2im_wide(gy: np.ndarray, wt: np.ndarray, geo: Geometry, dx: np.ndarray,
                 flops: int) -> None:
    """dx (zeros) += the 2-d stride-1 input gradient, col2im over the flattened padded
    plane. The output gradient is widened to the padded width with zero columns, so each
    tap's columns are one contiguous run of the plane at a constant offset: the adds
    run over long rows instead of rows of `out` (measured 2x faster), for a product wider
    by the padded width over the output's (8% on the MNIST CNN's 26 -> 24)."""
    n, o = gy.shape[:2]
    c, g, K = dx.shape[1], geo.groups, geo.taps
    (oh, ow), (h, w) = geo.out, dx.shape[2:]
    hp, wp, lw, span, offs = _flat_plane(geo, h, w)
    (plo, phi), (qlo, qhi) = geo.padding
    ncols, nwide = c * K * lw, o * lw
    nplane = c * hp * wp if geo.padded else 0

    def wide(lo, hi, buf, acc):
        b = hi - lo
        gw = buf[b * ncols:b * (ncols + nwide)].reshape(b, o, oh, wp)
        gw[..., ow:] = 0
        gw[..., :ow] = gy[lo:hi]
        cols = buf[:b * ncols].reshape(b, g, (c // g) * K, lw)
        np.matmul(wt, gw.reshape(b, g, o // g, lw), out=cols)
        cols = cols.reshape(b, c, K, lw)
        if geo.padded:
            plane = buf[b * (ncols + nwide):b * (ncols + nwide + nplane)].reshape(
                b, c, hp, wp)
            plane.fill(0)
        else:
            plane = dx[lo:hi]
        flat = plane.reshape(b, c, hp * wp)
        for t, off in enumerate(offs):
            region = flat[:, :, off:off + span]
            np.add(region, cols[:, :, t, :span], out=region)
        if geo.padded:
            np.copyto(dx[lo:hi], plane[:, :, plo:plo + h, qlo:qlo + w])

    over_batch(n, ncols * gy.itemsize, flops, wide, ncols + nwide + nplane, gy.dtype)


def _as_full_convolution(geo: Geometry, x_shape, o: int, dtype) -> Geometry | None:
    """At stride 1 the input gradient is itself a convolution: of the output gradient,
    padded by the kernel's reach less the forward padding, with the flipped kernel. Its
    product writes dx directly (no zero fill, no scatter-add per tap). It computes every
    input position's sum, so where x is much larger than the output (no padding) col2im,
    which does the output's, is faster (measured: 1.35x the other way at "same" padding,
    0.87x at 26x26 -> 24x24), unless the full convolution takes Winograd's products (4/9
    of the multiplications: 17.5 -> 14.9 ms there). None where col2im is the better or
    only choice."""
    if any(s != 1 for s in geo.stride):
        return None
    # padded so that the result spans x (a transposed convolution's output padding
    # included: rows no window reached get zeros)
    pads = tuple((d * (k - 1) - lo, size - out + lo) for d, k, (lo, _), size, out in
                 zip(geo.dilation, geo.k, geo.padding, x_shape[2:], geo.out))
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        return None
    full = geometry((0, o) + tuple(geo.out), geo.k, geo.stride, pads, geo.dilation,
                    geo.groups)
    if math.prod(x_shape[2:]) > 1.1 * geo.positions and \
            not _winograd.applies(full, o, x_shape[1], dtype):
        return None
    return full


def _flipped(w: np.ndarray, groups: int) -> np.ndarray:
    """The weight of the transposed convolution: (C, O/g, *k), each group's in and out
    channels swapped and every kernel dim reversed."""
    o, cg = w.shape[:2]
    nd = w.ndim - 2
    wg = w.reshape((groups, o // groups, cg) + w.shape[2:]).swapaxes(1, 2)
    wg = wg[(Ellipsis,) + (slice(None, None, -1),) * nd]
    return np.ascontiguousarray(wg).reshape((groups * cg, o // groups) + w.shape[2:])


def weight_grad(x: np.ndarray, gy: np.ndarray, geo: Geometry, w_shape) -> np.ndarray:
    """The adjoint of `forward` in w (gy times the im2col columns, summed over the batch):
    w_shape."""
    n, c = x.shape[:2]
    o, g = gy.shape[1], geo.groups
    L, K = geo.positions, geo.taps
    if x.size == 0 or gy.size == 0:
        return np.zeros(tuple(w_shape), x.dtype)
    flops = 2 * n * o * (c // g) * K * L
    g4 = gy.reshape(n, g, o // g, L)
    if _winograd.applies(geo, c, o, x.dtype):
        total = _winograd.weight_grad(x, gy, geo, flops)
        if _finite(total):
            return total
    if _depthwise(geo, c, o) and all(s == 1 for s in geo.stride):
        parts = over_batch(n, 3 * x[:1].nbytes, flops,
                           lambda lo, hi, buf, acc: _depthwise_weight_chunk(
                               x[lo:hi], gy[lo:hi], geo, acc))
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        # The zeros between the spread rows meet inputs no window reads; an inf there
        # would turn them into NaN: a non-finite result is redone by the exact path.
        if np.isfinite(total).all():
            return total.reshape(w_shape)
    if _last(geo, c, LAST_MIN_CHANNELS if any(s != 1 for s in geo.stride)
             else LAST_MIN_CHANNELS // 2):
        ncols, nplane = _last_scratch(x.shape, geo)

        def last(lo, hi, buf, acc):
            cols = im2col_last(x[lo:hi], geo, buf)
            gg = np.ascontiguousarray(g4[lo:hi, 0].transpose(1, 0, 2)).reshape(o, -1)
            part = np.matmul(gg, cols.reshape(-1, K * c))
            return part if acc is None else np.add(acc, part, out=acc)

        parts = over_batch(n, ncols * x.itemsize, flops, last, ncols + nplane, x.dtype)
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        nd = geo.nd
        return np.ascontiguousarray(total.reshape((o,) + geo.k + (c,)).transpose(
            (0, nd + 1) + tuple(range(1, nd + 1))))
    per = c * K * L

    def general(lo, hi, buf, acc):
        b = hi - lo
        if g == 1 and c * K <= 32:
            # few rows of columns (a stem's 3 channels): a product per sample, summed,
            # instead of copying the output gradient to (O, b L) (1.3 -> 1.05 ms there)
            cols = im2col(x[lo:hi], geo, buf).reshape(c * K, b, L)
            part = np.matmul(g4[lo:hi, 0], cols.transpose(1, 2, 0)).sum(0)[None]
        else:
            cols = im2col(x[lo:hi], geo, buf).reshape(g, (c // g) * K, b * L)
            gg = np.ascontiguousarray(g4[lo:hi].transpose(1, 2, 0, 3)).reshape(
                g, o // g, b * L)
            part = np.matmul(gg, cols.transpose(0, 2, 1))
        return part if acc is None else np.add(acc, part, out=acc)

    parts = over_batch(n, per * x.itemsize, flops, general, per, x.dtype)
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total.reshape(w_shape)
