"""Grid sampling (`grid_sample`'s 4-d and 5-d cases) as primitives.

`grid_sampler(input, grid)` reads `input` (N, C, H, W) at the points `grid`
(N, Ho, Wo, 2) holds, normalised to [-1, 1], with bilinear, nearest or bicubic
interpolation and zeros / border / reflection padding, and the same for (N, C, D, H, W)
volumes (bilinear and nearest): one primitive, the input's rank picks PyTorch's node name
(GridSampler2DBackward0 / GridSampler3DBackward0). It has one backward primitive
that returns the input's and the grid's gradients together (they share every gather);
it is used when no graph of the backward is wanted. Under `create_graph=True` the VJP
builds the same gradients from differentiable ops instead (`sampling_graph.py`), so
gradients of gradients work as in PyTorch.

The kernels follow the arithmetic of PyTorch's CPU kernels step by step, including
where its compiled code fuses a multiply and an add into one rounding (`_fma`), so
float32 results agree bit for bit for bilinear and nearest (bicubic within a few ulps);
gradients scattered into the input are added in the order PyTorch adds them
(`_scatter`). PyTorch has two kernels: a vectorised one for 2-d float32 / float64 and a
scalar loop for volumes and for 2-d half / bfloat16; `_Axis.scalar` picks whose rounding
is followed. Everything is vectorised over batch, channels and output points.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode
from .._core import forward_mode_active
from .._tensor import Tensor
from ._batching import batch_size, batched
from ._fma import fma as fused_multiply_add
from .double_backward import double_backward
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    defvjp_joint,
    jvp_by_vjp,
    nondifferentiable,
)

MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_grad_state = _grad_mode.state
_A = -0.75  # the cubic convolution constant PyTorch uses
# PyTorch's kernels work on SIMD vectors of this many points (256 bits: the same in its
# AVX2 build and its AVX512 one, the tests agree with both); it fixes the order in which
# gradients reach a shared input pixel, so it only affects rounding.
_LANES = {np.dtype(np.float32): 8, np.dtype(np.float64): 4}


def _fma(a, b, c):
    """a * b + c rounded once (a fused multiply-add), in the arrays' precision."""
    a = np.asarray(a)
    if a.dtype == np.float32:
        r = np.multiply(a, b, dtype=np.float64)  # exact: 24 + 24 bits fit in 53
        r += c
        return r.astype(np.float32)
    shape = np.broadcast_shapes(a.shape, np.shape(b), np.shape(c))
    t = a.dtype.type
    return fused_multiply_add(*(np.broadcast_to(np.asarray(x, dtype=t), shape) for x in (a, b, c)))


class _Axis:
    """Unnormalising and padding the coordinates of one spatial axis of `size` pixels.

    `scalar` follows the rounding of PyTorch's scalar loop (its 3-d sampler, and its 2-d
    one in half and bfloat16: separate multiply and add, reflection by fmod of the span)
    instead of its vectorised 2-d kernel (fused multiply-add, reflection over twice the
    span)."""

    def __init__(self, size: int, align: bool, padding: int, t, scalar: bool = False) -> None:
        self.t, self.align, self.padding, self.scalar = t, align, padding, scalar
        self.size = t(size)
        self.max_val = t(size - 1)
        self.scale = t(size - 1) / t(2) if align else t(size) / t(2)
        self.low = t(0) if align else t(-0.5)
        self.twice_span = t(size - 1) * t(2) if align else t(size) * t(2)
        self.empty = size <= 1 if align else size <= 0

    def unnormalize(self, g):
        t = self.t
        if self.scalar:
            if self.align:
                return ((g + t(1)) / t(2)) * self.max_val
            return ((g + t(1)) * self.size - t(1)) / t(2)
        if self.align:
            return (g + t(1)) * self.scale
        return _fma(g + t(1), self.scale, t(-0.5))

    def clip(self, x):
        if self.scalar:  # min(max_val, max(x, 0)) with C++'s comparisons: NaN becomes max_val
            lo = np.where(x < 0, self.t(0), x)
            return np.where(lo < self.max_val, lo, self.max_val)
        return np.fmin(self.max_val, np.fmax(x, self.t(0)))  # NaN becomes 0

    def _reflect(self, x):
        """(reflected x, the sign of d reflected / d x)."""
        t = self.t
        if self.empty:
            return np.zeros_like(x), np.zeros_like(x)
        shifted = x - self.low
        a = np.abs(shifted)
        if self.scalar:  # fold by the span, mirroring on odd folds
            span = self.twice_span / t(2)
            extra = np.fmod(a, span)
            odd = np.fmod(np.floor(a / span), t(2)) != 0
            sign = np.where(odd ^ (shifted < 0), t(-1), t(1))
            return np.where(odd, (span - extra) + self.low, extra + self.low), sign
        flips = np.trunc(a / self.twice_span)
        extra = _fma(-flips, self.twice_span, a)
        other = self.twice_span - extra
        more = extra > other
        sign = np.where(more ^ (shifted < 0), t(-1), t(1))
        return np.where(more, other, extra) + self.low, sign

    def coords(self, x):
        """Padding applied to unnormalised coordinates."""
        if self.padding == 1:
            return self.clip(x)
        if self.padding == 2:
            return self.clip(self._reflect(x)[0])
        return x

    def apply(self, g):
        return self.coords(self.unnormalize(g))

    def apply_grad(self, g):
        """The coordinates and d coordinates / d grid."""
        x = self.unnormalize(g)
        mult = np.full_like(x, self.scale)
        if self.padding == 0:
            return x, mult
        if self.padding == 2:
            x, sign = self._reflect(x)
            mult = sign * mult
        if self.scalar:  # (a NaN stays NaN, with the multiplier of an inside point)
            low, high = x <= 0, x >= self.max_val
            res = np.where(low, self.t(0), np.where(high, self.max_val, x))
            return res, mult * np.where(low | high, self.t(0), self.t(1))  # (keeps -0.0)
        lo = np.fmax(x, self.t(0))
        res = np.fmin(lo, self.max_val)
        inside = (lo != 0) & (res != self.max_val)  # the borders count as outside
        return res, np.where(inside, mult, self.t(0))


def _scalar_loop(nd: int, t) -> bool:
    """Whether PyTorch samples with its scalar loop: always in 3-d, and in 2-d for half and
    bfloat16 (its vectorised kernel takes float32 and float64 only)."""
    return nd == 3 or np.dtype(t) not in _LANES


def _axes(shape, align: bool, padding: int, t) -> list[_Axis]:
    """One `_Axis` per spatial dim of `shape`, in grid-coordinate order (x first)."""
    scalar = _scalar_loop(len(shape) - 2, t)
    return [_Axis(n, align, padding, t, scalar) for n in reversed(shape[2:])]


def _flat_index(pos, sizes):
    """Flat in-plane index of integer coordinates (x, y[, z]) and whether all are inside."""
    idx = 0
    inside = True
    for p, n in zip(reversed(pos), sizes):
        ok = (p > -1) & (p < n)  # (False for NaN and infinities, which index nothing)
        inside = inside & ok
        idx = idx * n + np.clip(np.where(ok, p, 0), 0, n - 1).astype(np.int64)
    return idx, inside


def _gather(pixels, idx, inside):
    """pixels (N, S, C) (channels last: a gather reads C contiguous values per point)
    read at idx (N, P): (N, P, C), zero where not `inside`."""
    n, s, c = pixels.shape
    rows = (idx + (np.arange(n, dtype=np.int64) * s)[:, None]).ravel()
    vals = pixels.reshape(n * s, c).take(rows, axis=0).reshape(idx.shape + (c,))
    return np.where(inside[..., None], vals, pixels.dtype.type(0))


def _scatter(shape, dtype, adds, lanes=None):
    """Sum contributions into a zero (N, C, S) array in PyTorch's order.

    `adds` lists (idx (N, P), inside (N, P), values (N, P, C)) per tap; within one plane
    PyTorch walks the points a vector of lanes at a time and, per vector, every tap in
    turn, so contributions are ordered (chunk, tap, lane) before one sequential add. Its
    scalar loop is `lanes=1`: point by point, every tap of a point in turn.
    """
    n, c, s = shape
    p = adds[0][0].shape[1]
    lanes = lanes or _LANES.get(np.dtype(dtype), 8)
    chunks = -(-p // lanes)
    pad = chunks * lanes - p

    def arrange(a, fill):  # (N, P, ...) -> (N, chunks, 1, lanes, ...)
        if pad:
            a = np.concatenate([a, np.full((n, pad) + a.shape[2:], fill, a.dtype)], 1)
        return a.reshape((n, chunks, 1, lanes) + a.shape[2:])

    idx = np.concatenate([arrange(i, 0) for i, _, _ in adds], 2)  # (N, chunks, taps, lanes)
    ok = np.concatenate([arrange(np.broadcast_to(m, i.shape), False) for i, m, _ in adds], 2)
    vals = np.concatenate([arrange(v, 0) for _, _, v in adds], 2)  # (N, chunks, taps, L, C)
    base = (np.arange(n * c, dtype=np.int64) * s).reshape(n, 1, 1, 1, c)
    flat_idx = idx[..., None] + base
    keep = np.broadcast_to(ok[..., None], flat_idx.shape)
    out = np.zeros(n * c * s, dtype)
    np.add.at(out, flat_idx[keep], vals[keep])
    return out.reshape(shape)


# --- interpolation weights ---------------------------------------------------------------

def _cubic(tx, t):
    """The four cubic convolution weights of the taps at -1, 0, 1, 2 for offsets tx."""
    a = t(_A)

    def outer(x):  # 1 < |x| < 2
        return _fma(_fma(_fma(a, x, -t(5) * a), x, t(8) * a), x, -t(4) * a)

    def inner(x):  # |x| <= 1
        return _fma(_fma(a + t(2), x, -(a + t(3))) * x, x, t(1))

    return [outer(tx + t(1)), inner(tx), inner(t(1) - tx), outer(t(2) - tx)]


def _cubic_grad(tx, t):
    """d weight / d tx of `_cubic`'s four weights."""
    a = t(_A)
    x0, x1, x2, x3 = t(-1) - tx, t(0) - tx, t(1) - tx, t(2) - tx
    return [_fma(_fma(t(-3) * a, x0, -t(10) * a), x0, -t(8) * a),
            _fma(t(-3) * (a + t(2)), x1, -t(2) * (a + t(3))) * x1,
            _fma(t(3) * (a + t(2)), x2, -t(2) * (a + t(3))) * x2,
            _fma(_fma(t(3) * a, x3, -t(10) * a), x3, t(8) * a)]


def _linear_taps(pos):
    """Per axis: (floor, weight of the low tap, weight of the high tap)."""
    out = []
    for x in pos:
        lo = np.floor(x)
        frac = x - lo
        out.append((lo, np.subtract(frac.dtype.type(1), frac), frac))
    return out


def _scalar_taps(pos):
    """`_linear_taps` as PyTorch's scalar loop rounds them: the low tap's weight is
    (floor + 1) - x, not 1 - (x - floor)."""
    out = []
    for x in pos:
        lo = np.floor(x)
        out.append((lo, (lo + x.dtype.type(1)) - x, x - lo))
    return out


def _corner_weights(taps, corner, scalar=False):
    """Weight of one corner (bits pick low/high per axis), multiplied as PyTorch orders it:
    y-weight times x-weight in its vectorised 2-d kernel, x * y (* z) in its scalar loop."""
    axes = range(len(taps)) if scalar else reversed(range(len(taps)))
    w = None
    for k in axes:
        f = taps[k][2] if corner[k] else taps[k][1]
        w = f if w is None else w * f
    return w


def _corners(nd: int):
    """Corner order of PyTorch's kernels: x varies fastest, then y, then z."""
    return [tuple((i >> k) & 1 for k in range(nd)) for i in range(2 ** nd)]


# --- forward -------------------------------------------------------------------------------

def _prepare(inp, grid, align, padding):
    t = inp.dtype.type
    n, c = inp.shape[:2]
    sizes = inp.shape[2:]
    # (sizes spelled out, not -1: an empty batch has zero elements to infer them from)
    pixels = np.ascontiguousarray(inp.reshape(n, c, math.prod(sizes)).transpose(0, 2, 1))
    g = grid.reshape(n, math.prod(grid.shape[1:-1]), grid.shape[-1])  # (N, S, C) / (N, P, d)
    axes = _axes(inp.shape, align, padding, t)
    return t, pixels, sizes, [g[..., k] for k in range(len(axes))], axes


def _sample_kernel(inp, grid, *, mode, padding, align):
    t, pixels, sizes, gs, axes = _prepare(inp, grid, align, padding)
    nd = len(axes)
    if mode == 1:  # nearest (round half to even)
        pos = [np.rint(ax.apply(g)) for ax, g in zip(axes, gs)]
        out = _gather(pixels, *_flat_index(pos, sizes))
    elif mode == 0 and axes[0].scalar:
        out = _scalar_linear_forward(pixels, sizes, [ax.apply(g) for ax, g in zip(axes, gs)])
    elif mode == 0:
        taps = _linear_taps([ax.apply(g) for ax, g in zip(axes, gs)])
        out = None
        for corner in _corners(nd):
            pos = [taps[k][0] + corner[k] for k in range(nd)]
            v = _gather(pixels, *_flat_index(pos, sizes))
            w = _corner_weights(taps, corner)[..., None]
            out = v * w if out is None else _fma(v, w, out)
    else:
        out = _bicubic_forward(t, pixels, sizes, gs, axes)
    out = out.transpose(0, 2, 1).astype(inp.dtype, copy=False)
    return np.ascontiguousarray(out).reshape(inp.shape[:2] + grid.shape[1:-1])


def _scalar_linear_forward(pixels, sizes, pos):
    """PyTorch's scalar loop: out = 0, then += value * weight per in-bounds corner, unfused."""
    taps = _scalar_taps(pos)
    nd = len(pos)
    out = np.zeros(pos[0].shape + (pixels.shape[2],), pixels.dtype)
    for corner in _corners(nd):
        idx, inside = _flat_index([taps[k][0] + corner[k] for k in range(nd)], sizes)
        w = _corner_weights(taps, corner, True)[..., None]
        out += np.where(inside[..., None], _gather(pixels, idx, inside) * w, out.dtype.type(0))
    return out


def _bicubic_points(axes, gs, t):
    xs = [ax.unnormalize(g) for ax, g in zip(axes, gs)]
    lows = [np.floor(x) for x in xs]
    return xs, lows, [x - lo for x, lo in zip(xs, lows)]


def _bicubic_tap(axes, lows, i, j, sizes):
    """Flat index and in-bounds mask of the tap (x + i - 1, y + j - 1), padded."""
    px = axes[0].coords(lows[0] + (i - 1))
    py = axes[1].coords(lows[1] + (j - 1))
    return _flat_index([np.trunc(px), np.trunc(py)], sizes)


def _bicubic_forward(t, pixels, sizes, gs, axes):
    _, lows, fr = _bicubic_points(axes, gs, t)
    cx, cy = _cubic(fr[0], t), _cubic(fr[1], t)
    out = None
    for j in range(4):
        row = None
        for i in range(4):
            v = _gather(pixels, *_bicubic_tap(axes, lows, i, j, sizes))
            row = v * cx[i][..., None] if row is None else _fma(cx[i][..., None], v, row)
        out = cy[j][..., None] * row if out is None else _fma(cy[j][..., None], row, out)
    return out


# --- backward ------------------------------------------------------------------------------

def _sample_backward_kernel(g, inp, grid, *, mode, padding, align, input_grad):
    t, pixels, sizes, gs, axes = _prepare(inp, grid, align, padding)
    n, c = inp.shape[:2]
    nd = len(axes)
    scalar = axes[0].scalar
    go = g.reshape(n, c, math.prod(g.shape[2:])).astype(inp.dtype, copy=False)
    go = go.transpose(0, 2, 1)  # (N, P, C)
    shape = (n, c, pixels.shape[1])
    ggrid = np.zeros(gs[0].shape + (nd,), inp.dtype)
    adds = []
    if mode == 1:
        if input_grad:  # (the 3-d loop's backward clips as its grid gradient does: NaN stays)
            where = (lambda ax, gk: ax.apply_grad(gk)[0]) if scalar else _Axis.apply
            pos = [np.rint(where(ax, gk)) for ax, gk in zip(axes, gs)]
            adds.append(_flat_index(pos, sizes) + (go,))
    elif mode == 0:
        pairs = [ax.apply_grad(gk) for ax, gk in zip(axes, gs)]
        taps = (_scalar_taps if scalar else _linear_taps)([p[0] for p in pairs])
        vals = {}
        for corner in _corners(nd):
            pos = [taps[k][0] + corner[k] for k in range(nd)]
            idx, inside = _flat_index(pos, sizes)
            v = _gather(pixels, idx, inside)
            vals[corner] = (v, inside) if scalar else v
            if input_grad:
                adds.append((idx, inside, _corner_weights(taps, corner, scalar)[..., None] * go))
        mults = [p[1] for p in pairs]
        if scalar:
            ggrid = _scalar_linear_grid_grad(vals, taps, go, mults)
        else:
            ggrid = _linear_grid_grad(vals, taps, go, mults, t)
    else:
        ggrid = _bicubic_backward(t, pixels, sizes, gs, axes, go, adds, input_grad)
    lanes = 1 if scalar else None
    gin = _scatter(shape, inp.dtype, adds, lanes).reshape(inp.shape) if input_grad else None
    if gin is None:
        gin = np.zeros((0,), inp.dtype)
    return gin, ggrid.reshape(grid.shape)


def _linear_grid_grad(vals, taps, go, mults, t):
    """d out / d grid of (bi/tri)linear sampling, summed over channels in order."""
    nd = len(taps)
    n, p, c = go.shape
    acc = [np.zeros((n, p), go.dtype) for _ in range(nd)]
    for ch in range(c):  # channels are summed one after another, as PyTorch does
        gch = go[..., ch]
        for k in range(nd):
            # d/dx_k: for each pair of corners differing in axis k, (high - low) times the
            # weights of the other axes
            terms = []
            for corner in _corners(nd):
                if corner[k]:
                    continue
                hi = tuple(1 if m == k else corner[m] for m in range(nd))
                diff = vals[hi][..., ch] - vals[corner][..., ch]
                w = None
                for m in reversed(range(nd)):
                    if m != k:
                        f = taps[m][2] if corner[m] else taps[m][1]
                        w = f if w is None else w * f
                terms.append((diff, w))
            s = terms[0][0] * terms[0][1]
            for diff, w in terms[1:]:
                s = _fma(diff, w, s)
            acc[k] = _fma(s, gch, acc[k])
    return np.stack([a * m for a, m in zip(acc, mults)], -1)


def _scalar_linear_grid_grad(vals, taps, go, mults):
    """d out / d grid in PyTorch's scalar loop order: per channel, per in-bounds corner, each
    axis's sum gains or loses (value * the other axes' weights) * grad, unfused."""
    n, p, c = go.shape
    nd = len(taps)
    acc = [np.zeros((n, p), go.dtype) for _ in range(nd)]
    for ch in range(c):
        gch = go[..., ch]
        for corner in _corners(nd):
            val, inside = vals[corner]
            val = val[..., ch]
            for k in range(nd):
                term = val
                for m in range(nd):
                    if m != k:
                        term = term * (taps[m][2] if corner[m] else taps[m][1])
                term = term * gch
                moved = acc[k] + term if corner[k] else acc[k] - term
                acc[k] = np.where(inside, moved, acc[k])
    return np.stack([m * a for a, m in zip(acc, mults)], -1)


def _bicubic_backward(t, pixels, sizes, gs, axes, go, adds, input_grad):
    _, lows, fr = _bicubic_points(axes, gs, t)
    cx, cy = _cubic(fr[0], t), _cubic(fr[1], t)
    dx, dy = _cubic_grad(fr[0], t), _cubic_grad(fr[1], t)
    n, p, c = go.shape
    taps = []
    for i in range(4):
        for j in range(4):
            idx, inside = _bicubic_tap(axes, lows, i, j, sizes)
            if input_grad:  # PyTorch's order within a plane: (chunk, i, j, lane)
                adds.append((idx, inside, go * cx[i][..., None] * cy[j][..., None]))
            taps.append((i, j, _gather(pixels, idx, inside) * go))
    gx = np.zeros((n, p), go.dtype)
    gy = np.zeros((n, p), go.dtype)
    for ch in range(c):  # one running sum over channels and taps, in PyTorch's order
        for i, j, vg in taps:
            gx = _fma(-(vg[..., ch] * dx[i]), cy[j], gx)
            gy = _fma(-(vg[..., ch] * dy[j]), cx[i], gy)
    return np.stack([gx * axes[0].scale, gy * axes[1].scale], -1)


# --- primitives ----------------------------------------------------------------------------

def _meta(inp, grid, **_):
    return tuple(inp._shape[:2]) + tuple(grid._shape[1:-1]), inp._dtype


def _backward_meta(g, inp, grid, *, input_grad, **_):
    gin = tuple(inp._shape) if input_grad else (0,)
    return (gin, inp._dtype), (tuple(grid._shape), grid._dtype)


def _vjp(g, out, inp, grid, *, needs, mode, padding, align):
    if _grad_state.enabled or forward_mode_active():
        # a graph of the backward is wanted, or its tangent (forward over reverse): the
        # composite, whose ops all have derivatives
        return _vjp_with_graph(g, inp, grid, needs, mode, padding, align)
    want_in = bool(needs[0])
    gin, ggrid = apply(grid_sampler_backward_p, g, inp, grid, mode=mode, padding=padding,
                       align=align, input_grad=want_in)
    return (gin if want_in else None), ggrid


def _vjp_with_graph(g, inp, grid, needs, mode, padding, align):
    from .sampling_graph import grid_sample_vjp

    return grid_sample_vjp(g, inp, grid, needs, mode, padding, align)


def _sampler_name(args, params) -> str:
    """PyTorch's node names the kernel the input's rank picks (2-d or 3-d)."""
    return "GridSampler3DBackward0" if len(args[0]._shape) == 5 else "GridSampler2DBackward0"


# One primitive for the 2-d and 3-d cases (the spatial rank comes from the input; the
# kernels are written for any number of spatial dims), and one for their backward.
grid_sampler_p = Primitive("grid_sampler", _sample_kernel, _meta, grad_name=_sampler_name)
grid_sampler_backward_p = Primitive("grid_sampler_backward", _sample_backward_kernel,
                                    _backward_meta, n_outputs=2)
nondifferentiable(grid_sampler_backward_p)  # only run when no graph is built (sampling_graph)
defvjp_joint(grid_sampler_p, _vjp, (True, True))
jvp_by_vjp(grid_sampler_p, "the tangent of each tap's weight and gather is the VJP's own "
                           "graph (sampling_graph) transposed; a separate forward rule would "
                           "repeat it")


def _fold(x: Tensor, d, size: int) -> Tensor:
    """The batch folded into N (an unbatched argument repeated for each element)."""
    x = batched(x, d, size)
    return x.reshape((-1,) + tuple(x._shape[2:]))


def _sampler_batch(args, dims, **params):
    """Every batch element is more samples: fold the batch into N, and out again."""
    inp, grid = args
    size = batch_size(args, dims)
    out = bind(grid_sampler_p, _fold(inp, dims[0], size), _fold(grid, dims[1], size), **params)
    return out.reshape((size, -1) + tuple(out._shape[1:])), 0


def _sampler_backward_batch(args, dims, *, input_grad, **params):
    g, inp, grid = args
    size = batch_size(args, dims)
    gin, ggrid = bind(grid_sampler_backward_p, *(_fold(a, d, size) for a, d in zip(args, dims)),
                      input_grad=input_grad, **params)
    ggrid = ggrid.reshape((size, -1) + tuple(ggrid._shape[1:]))
    if not input_grad:
        return (gin, ggrid), (None, 0)
    return (gin.reshape((size, -1) + tuple(gin._shape[1:])), ggrid), (0, 0)


defbatch(grid_sampler_p, _sampler_batch)
defbatch(grid_sampler_backward_p, _sampler_backward_batch)


def _check(input: Tensor, grid: Tensor, mode: int) -> None:
    """PyTorch's checks of grid_sampler's arguments (all RuntimeError)."""
    if input.device != grid.device:
        raise RuntimeError(f"grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    if not input.dtype.is_floating_point and input.dim() in (4, 5) and grid.dtype != input.dtype:
        _refuse_kernel(input)  # (an integer input: its kernel's refusal comes first)
    if input.dtype != grid.dtype:
        # (PyTorch 2.13 reports this from its dtype check, in ScalarType names)
        raise RuntimeError(f"expected scalar type {dt.SCALAR_TYPE_NAMES[input.dtype.name]} but "
                           f"found {dt.SCALAR_TYPE_NAMES[grid.dtype.name]}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        # (PyTorch names the rank of the sampler it dispatched to: 2-d for a 4-d input,
        # the 3-d one for every other rank)
        want = 4 if input.dim() == 4 else 5
        raise RuntimeError(f"grid_sampler(): expected {want}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if input.dim() == 5 and mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    # (the 3-d loop also runs in half and bfloat16, every operation rounded to the dtype,
    # as NumPy's float16 and ml_dtypes' bfloat16 arithmetic round)
    # (bicubic's scalar loop in those dtypes is not followed here: refused as before)
    reduced = input.dtype in (dt.float16, dt.bfloat16) and mode != 2
    if input.dtype.np not in _LANES and not reduced:
        _refuse_kernel(input)


def _refuse_kernel(input: Tensor) -> None:
    kernel = "grid_sampler_2d_cpu_kernel_impl" if input.dim() == 4 else "grid_sampler3d_cpu"
    raise NotImplementedError(f'"{kernel}" not implemented for '
                              f"'{dt.SCALAR_TYPE_NAMES[input.dtype.name]}'")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """Sample `input` (N, C, *spatial) at the normalised points of `grid`; the mode and
    padding are the enum ints `nn.functional.grid_sample` passes (see MODES, PADDINGS)."""
    _check(input, grid, interpolation_mode)
    out = apply(grid_sampler_p, input, grid, mode=int(interpolation_mode),
                padding=int(padding_mode), align=bool(align_corners))
    # (PyTorch's derivative kernel takes both, and gives no gradient of the input's gradient)
    return double_backward(out, input, grid, zero=False)


TENSOR_METHODS: dict = {}
__all__ = ["grid_sampler"]
