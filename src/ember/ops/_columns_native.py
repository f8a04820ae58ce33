"""im2col and col2im (ops/columns.py) in C: the convolutions' own (csrc/conv_columns.c), a
sample at a time over the kernel threads, for float32 / float64; the NumPy kernels' values
(a copy of each value read; each tap's columns added in order onto zeros)."""

from __future__ import annotations

import math

import numpy as np

from ..native import calls
from . import _conv_kernels as K
from ._conv_native import _params as _conv_params


def _params(x: np.ndarray | None, n: int, c: int, image: tuple, k, dl, pd, st, dtype):
    """conv.c's geometry array of a groups-1 convolution of these windows over `n` samples
    (`x`: the image whose strides im2col reads; col2im writes a C-order one): the
    convolutions' own, kept per geometry and layout (`_conv_native._params`)."""
    x_shape = (n, c) + tuple(image)
    geo = K.geometry(x_shape, k, st, tuple((p, p) for p in pd), dl, 1)
    return _conv_params(x, geo, n, c, c, x_shape, 1, 1, dtype.itemsize)


def _call(lib, name: str, src: np.ndarray, out: np.ndarray, params: np.ndarray) -> None:
    calls.entry(lib, f"{name}_{calls.SUFFIX[src.dtype]}", [calls.P, calls.P, calls.P])(
        calls.ptr(src), calls.ptr(params), calls.ptr(out))


def im2col_native(lib, x, *, image, k, dl, pd, st, blocks):
    if x.dtype not in calls.SUFFIX:
        return NotImplemented
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    x4 = np.ascontiguousarray(x).reshape((math.prod(lead), c, h, w))
    out = np.empty(lead + (c * k[0] * k[1], blocks[0] * blocks[1]), x.dtype)
    if out.size:
        _call(lib, "unfold_columns", x4, out, _params(x4, x4.shape[0], c, (h, w), k, dl, pd,
                                                      st, x.dtype))
    return out


def col2im_native(lib, cols, *, image, k, dl, pd, st, blocks):
    if cols.dtype not in calls.SUFFIX:
        return NotImplemented
    lead = cols.shape[:-2]
    c = cols.shape[-2] // (k[0] * k[1])
    src = np.ascontiguousarray(cols).reshape((math.prod(lead),) + cols.shape[-2:])
    out = np.empty(lead + (c,) + tuple(image), cols.dtype)
    if out.size:
        _call(lib, "fold_columns", src, out, _params(None, src.shape[0], c, image, k, dl, pd,
                                                     st, cols.dtype))
    return out
