"""The gradients of grid sampling written with differentiable ember ops.

`grid_sampler` runs fused NumPy kernels forward and backward. When a graph of the
backward is wanted (`create_graph=True`, e.g. a gradient penalty), its VJP uses this
instead: the same gradients as gathers, scatter-adds and products of the interpolation
weights, so they can be differentiated again. Sampling reads taps t with weights
W_t = prod_k w_k(frac_k); then d out / d input scatters g * W_t to each tap, and
d out / d grid_k = sum_t (g . V_t) * w_k'(frac_k) * prod_(m != k) w_m * d pos_k / d grid_k.
"""

from __future__ import annotations

import itertools
import math

from .._tensor import Tensor
from .creation import zeros
from .index_ops import _add_at, _take  # (no bounds check: the indices are in range)
from .join import stack
from .ternary import where

_A = -0.75  # the cubic convolution constant


def _scale(size: int, align: bool) -> float:
    return (size - 1) / 2 if align else size / 2


def _reflect(x: Tensor, size: int, align: bool):
    """Reflected coordinates and the sign of their derivative."""
    low, span2 = (0.0, 2.0 * (size - 1)) if align else (-0.5, 2.0 * size)
    if span2 <= 0:
        return x * 0, x.detach() * 0
    d = x - low
    a = d.abs()
    extra = a - (a / span2).trunc().detach() * span2
    other = span2 - extra
    more = (extra > other).detach()
    sign = where(more ^ (d < 0).detach(), -1.0, 1.0).to(x.dtype)
    return where(more, other, extra) + low, sign


def _position(g: Tensor, size: int, padding: int, align: bool):
    """A coordinate in pixels, padded, and its derivative d pos / d g (a constant)."""
    scale = _scale(size, align)
    x = (g + 1) * scale if align else (g + 1) * scale - 0.5
    mult = x.detach() * 0 + scale
    if padding == 0:
        return x, mult
    if padding == 2:
        x, sign = _reflect(x, size, align)
        mult = mult * sign
    x = x.clamp(0, size - 1)
    inside = ((x > 0) & (x < size - 1)).detach()  # the borders count as outside, as in torch
    return x, where(inside, mult, 0.0).to(mult.dtype)


def _cubic(t: Tensor):
    a = _A

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic_grad(t: Tensor):
    a = _A

    def near(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    return [far(t + 1), near(t), -near(1 - t), -far(2 - t)]


def _flat(pos, sizes):
    """Flat in-plane index (N, P) of integer-valued coordinates and whether all are inside."""
    flat = inside = None
    for p, size in zip(reversed(pos), sizes):
        ok = (p > -1) & (p < size)
        inside = ok if inside is None else inside & ok
        q = p.clamp(0, size - 1).long()
        flat = q if flat is None else flat * size + q
    return flat, inside


def grid_sample_vjp(g: Tensor, inp: Tensor, grid: Tensor, needs, mode: int, padding: int,
                    align: bool):
    """(d input, d grid) of grid sampling for the cotangent g, as differentiable ops."""
    n, c = inp.shape[:2]
    sizes = tuple(inp.shape[2:])
    nd = len(sizes)
    planes = inp.reshape(n, c, math.prod(sizes))  # (sizes spelled out: an empty batch)
    gout = g.reshape(n, c, math.prod(g.shape[2:]))
    coords = grid.reshape(n, math.prod(grid.shape[1:-1]), nd)
    p = coords.shape[1]
    axis_sizes = [sizes[nd - 1 - k] for k in range(nd)]  # coordinate k runs along this dim
    axes = []  # per axis: [(tap offset or index, weight, d weight / d frac)], d pos / d grid
    for k in range(nd):
        gk = coords[..., k]
        if mode == 2:  # bicubic: no padding of the coordinate; taps padded one by one
            scale = _scale(axis_sizes[k], align)
            pos = (gk + 1) * scale if align else (gk + 1) * scale - 0.5
            low = pos.floor().detach()
            frac = pos - low
            taps = []
            for i, (w, dw) in enumerate(zip(_cubic(frac), _cubic_grad(frac))):
                at = low + (i - 1)
                if padding == 2:
                    at = _reflect(at, axis_sizes[k], align)[0]
                if padding:
                    at = at.clamp(0, axis_sizes[k] - 1)
                taps.append((at.detach().trunc(), w, dw))
            axes.append((taps, pos.detach() * 0 + scale))
            continue
        pos, mult = _position(gk, axis_sizes[k], padding, align)
        if mode == 1:
            one = pos.detach() * 0 + 1
            axes.append(([(pos.detach().round(), one, one * 0)], mult * 0))
            continue
        low = pos.floor().detach()
        frac = pos - low
        unit = frac.detach() * 0 + 1
        axes.append(([(low, 1 - frac, -unit), (low + 1, frac, unit)], mult))
    gin = zeros(n, c, planes.shape[2], dtype=inp.dtype, device=inp.device) if needs[0] else None
    ggrid = [0] * nd
    # corners: x varies fastest, as torch's kernels order them
    for combo in itertools.product(*(range(len(a[0])) for a in reversed(axes))):
        taps = [axes[k][0][combo[nd - 1 - k]] for k in range(nd)]
        flat, inside = _flat([t[0] for t in taps], sizes)
        mask = inside.to(inp.dtype)
        idx = flat.unsqueeze(1).expand(n, c, p)
        weight = 1
        for t in taps:
            weight = weight * t[1]
        if needs[0]:
            gin = _add_at(gin, 2, idx, gout * (weight * mask).unsqueeze(1))
        if needs[1] and mode != 1:
            gv = (gout * _take(planes, 2, idx)).sum(1) * mask  # (N, P)
            for k in range(nd):
                part = taps[k][2]
                for m in range(nd):
                    if m != k:
                        part = part * taps[m][1]
                ggrid[k] = ggrid[k] + gv * part
    d_inp = gin.reshape(inp.shape) if needs[0] else None
    d_grid = None
    if needs[1]:
        cols = [ggrid[k] * axes[k][1] if mode != 1 else coords[..., k].detach() * 0
                for k in range(nd)]
        d_grid = stack(cols, -1).reshape(grid.shape)
    return d_inp, d_grid
