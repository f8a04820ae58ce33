"""Grid sampling written with differentiable ember ops (gather, floor, clamp, min ...).

`grid_sampler_2d/3d` run one fused NumPy kernel forward and backward; when a graph of
the backward is wanted (`create_graph=True`, e.g. a gradient penalty), their VJP
rebuilds the output with this composite and differentiates it instead, so gradients
of gradients come from the composite's ops. Its values agree with the kernel's.
"""

from __future__ import annotations

import ember as E

from .._tensor import Tensor


def _unnormalize(g: Tensor, size: int, align: bool) -> Tensor:
    if align:
        return (g + 1) * ((size - 1) / 2)
    return (g + 1) * (size / 2) - 0.5


def _reflect(x: Tensor, size: int, align: bool) -> Tensor:
    low, span2 = (0.0, 2.0 * (size - 1)) if align else (-0.5, 2.0 * size)
    if span2 <= 0:
        return x * 0
    d = (x - low).abs()
    extra = d - (d / span2).trunc().detach() * span2
    return E.minimum(extra, span2 - extra) + low


def _pad(x: Tensor, size: int, padding: int, align: bool) -> Tensor:
    if padding == 2:
        x = _reflect(x, size, align)
    if padding:
        x = x.clamp(0, size - 1)
    return x


def _read(planes: Tensor, pos, sizes) -> Tensor:
    """planes (N, C, S) at integer-valued coordinates pos (x, y[, z]) of shape (N, P);
    zero where a point falls outside."""
    n, c, s = planes.shape
    flat = None
    inside = None
    for p, size in zip(reversed(pos), sizes):
        ok = (p > -1) & (p < size)
        inside = ok if inside is None else inside & ok
        q = p.clamp(0, size - 1).long()
        flat = q if flat is None else flat * size + q
    idx = flat.unsqueeze(1).expand(n, c, flat.shape[1])
    return planes.gather(2, idx) * inside.unsqueeze(1).to(planes.dtype)


def _cubic(t: Tensor):
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample_graph(inp: Tensor, grid: Tensor, mode: int, padding: int, align: bool) -> Tensor:
    """The value of grid_sampler(inp, grid, ...) as a graph of differentiable ops."""
    n, c = inp.shape[:2]
    sizes = tuple(inp.shape[2:])
    nd = len(sizes)
    planes = inp.reshape(n, c, -1)
    g = grid.reshape(n, -1, nd)
    axis_sizes = [sizes[nd - 1 - k] for k in range(nd)]  # coordinate k runs along this dim
    raw = [_unnormalize(g[..., k], axis_sizes[k], align) for k in range(nd)]
    if mode == 2:  # bicubic: 4 x 4 taps, padding applied to each tap's coordinates
        lows = [r.floor().detach() for r in raw]
        cx, cy = _cubic(raw[0] - lows[0]), _cubic(raw[1] - lows[1])
        out = 0
        for j in range(4):
            row = 0
            for i in range(4):
                px = _pad(lows[0] + (i - 1), axis_sizes[0], padding, align).detach().trunc()
                py = _pad(lows[1] + (j - 1), axis_sizes[1], padding, align).detach().trunc()
                row = row + cx[i].unsqueeze(1) * _read(planes, [px, py], sizes)
            out = out + cy[j].unsqueeze(1) * row
    else:
        pos = [_pad(r, axis_sizes[k], padding, align) for k, r in enumerate(raw)]
        if mode == 1:
            out = _read(planes, [p.detach().round() for p in pos], sizes)
        else:
            lows = [p.floor().detach() for p in pos]
            fracs = [p - lo for p, lo in zip(pos, lows)]
            out = 0
            for corner in range(2 ** nd):
                bits = [(corner >> k) & 1 for k in range(nd)]
                w = 1
                for k in range(nd):
                    w = w * (fracs[k] if bits[k] else 1 - fracs[k])
                at = [lows[k] + bits[k] for k in range(nd)]
                out = out + w.unsqueeze(1) * _read(planes, at, sizes)
    return out.reshape((n, c) + tuple(grid.shape[1:-1]))
