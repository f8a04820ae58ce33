"""Max pooling's native kernels (csrc/pool.c): the Python side, beside the NumPy twins of
ops/pooling.py.

1-d, 2-d and 3-d max pooling and 2-d adaptive max pooling of float32 and float64 run in C
(1-d as 2-d over a unit row); float16 / bfloat16 (the NumPy twin computes those in float32
and rounds once) and integer inputs stay on NumPy. The input is read through its strides
(transposed, channels-last and negative-stride layouts without a copy); values and indices
come out contiguous.
"""

from __future__ import annotations

import numpy as np

from ..native import calls


def _element_strides(x: np.ndarray) -> tuple[int, ...] | None:
    s = x.strides
    if any(v % x.itemsize for v in s):
        return None
    return tuple(v // x.itemsize for v in s)


def _planes(x: np.ndarray, nd: int) -> tuple[int, ...] | None:
    """(n, c) and the element strides (batch, channel, row, column) of an (n, c, ...) or
    (c, ...) input, a unit row for 1-d; None for strides that are not whole elements."""
    st = _element_strides(x)
    if st is None:
        return None
    lead = x.shape[:-nd]
    n, c = (1,) + lead if len(lead) == 1 else lead
    sn, sc = ((0,) + st[:1]) if len(lead) == 1 else st[:2]
    sh, sw = (0, st[-1]) if nd == 1 else st[-2:]
    return n, c, sn, sc, sh, sw


def _volumes(x: np.ndarray) -> tuple[int, ...] | None:
    """(n, c) and the element strides (batch, channel, depth, row, column) of an
    (n, c, d, h, w) or (c, d, h, w) input; None for strides that are not whole elements."""
    st = _element_strides(x)
    if st is None:
        return None
    lead = x.shape[:-3]
    n, c = (1,) + lead if len(lead) == 1 else lead
    sn, sc = ((0,) + st[:1]) if len(lead) == 1 else st[:2]
    return (n, c, sn, sc) + st[-3:]


def adaptive_max_pool_native(lib, x, *, out_size):
    out = out_size
    sfx = calls.suffix(x)
    if sfx is None or len(out) != 2 or x.ndim not in (3, 4):
        return NotImplemented
    planes = _planes(x, 2)
    if planes is None:
        return NotImplemented
    shape = x.shape[:-2] + tuple(out)
    values, index = np.empty(shape, x.dtype), np.empty(shape, np.int64)
    p = np.array(planes + x.shape[-2:] + tuple(out), np.int64)
    calls.entry(lib, f"adaptive_maxpool2d_{sfx}", [calls.P] * 4)(
        calls.ptr(x), calls.ptr(values), calls.ptr(index), calls.ptr(p))
    return values, index


def max_pool_native(lib, x, *, kernel, stride, padding, dilation, ceil_mode):
    from ._pool_shapes import pool_out as _pool_out

    nd = len(kernel)
    sfx = calls.suffix(x)
    if sfx is None or nd not in (1, 2, 3) or x.ndim not in (nd + 1, nd + 2):
        return NotImplemented
    planes = _planes(x, nd) if nd < 3 else _volumes(x)
    if planes is None:
        return NotImplemented
    lead = x.shape[:-nd]
    sp = x.shape[-nd:]
    out = tuple(_pool_out(sp[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                for i in range(nd))
    # the spatial dims as (h, w), a unit row for 1-d; (d, h, w) for 3-d
    if nd == 1:
        geo = (1, sp[0], 1, out[0], 1, kernel[0], 1, stride[0], 0, padding[0], 1, dilation[0])
    else:
        geo = (*sp, *out, *kernel, *stride, *padding, *dilation)
    values = np.empty(lead + out, x.dtype)
    index = np.empty(lead + out, np.int64)
    p = np.array(planes + geo, np.int64)
    calls.entry(lib, f"maxpool{2 if nd < 3 else 3}d_{sfx}", [calls.P] * 4)(
        calls.ptr(x), calls.ptr(values), calls.ptr(index), calls.ptr(p))
    return values, index


def max_pool_backward_native(lib, g, index, *, shape, nd):
    sfx = calls.suffix(g)
    if sfx is None or nd not in (1, 2, 3) or index.dtype != np.int64:
        return NotImplemented
    g = np.ascontiguousarray(g)
    index = np.ascontiguousarray(index)
    lead = tuple(shape[:-nd])
    planes = int(np.prod(lead, dtype=np.int64))
    plane = int(np.prod(shape[-nd:], dtype=np.int64))
    cells = int(np.prod(g.shape[len(lead):], dtype=np.int64))
    if g.shape[:len(lead)] != lead or index.shape != g.shape:
        return NotImplemented
    dx = np.empty(tuple(shape), g.dtype)
    bad = calls.entry(lib, f"maxpool_backward_{sfx}",
                      [calls.P] * 3 + [calls.I64] * 3, calls.INT)(
        calls.ptr(g), calls.ptr(index), calls.ptr(dx), planes, plane, cells)
    return NotImplemented if bad else dx
