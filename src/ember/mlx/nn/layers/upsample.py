"""Upsampling, channels last (inputs (N, *spatial, C)): `Upsample` and the functions
`upsample_nearest`, `upsample_linear` and `upsample_cubic`, as MLX 0.32.4 has them.

Along each spatial axis an output position reads a few input positions ("taps"), each
with a weight. Taps and weights depend only on the sizes and the scale, so they are
made in NumPy float32 with MLX's roundings (the same float32 operations, in the same
order); only the gathers and the weighted sums run on arrays, and carry gradients.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from ... import core as mx
from .base import Module

F32 = np.float32
Taps = list[tuple[np.ndarray, np.ndarray]]  # per tap: (input indices, weights), shape (M,)


# -- taps and weights along one axis of n inputs --------------------------------------------

def _coords(n: int, scale: float, align_corners: bool) -> np.ndarray:
    """The source coordinate of each of the int(scale * n) outputs (float32)."""
    m = int(scale * n)
    i = np.arange(m, dtype=F32)
    if align_corners:  # first and last outputs sit on the first and last inputs
        return i * F32((n - 1) / max(m - 1, 1))
    step = 1 / scale  # output centres mapped onto input centres
    return i * F32(step) - F32(((m - 1) * step - n + 1) / 2)


def _nearest_index(n: int, scale: float) -> np.ndarray:
    m = int(scale * n)
    i = np.arange(m, dtype=F32)
    if m > n:
        return np.round((i + F32(0.5)) * F32(n / m) - F32(0.5)).astype(np.uint32)
    return (i * F32(n / m)).astype(np.uint32)


def _linear_taps(n: int, scale: float, align_corners: bool) -> Taps:
    c = np.clip(_coords(n, scale, align_corners), F32(0), F32(n - 1))
    lo, hi = np.floor(c), np.ceil(c)
    w = c - lo
    return [(lo, F32(1) - w), (hi, w)]


def _keys_near(x: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel on |x| <= 1."""
    return ((F32(a + 2.0) * x - F32(a + 3.0)) * x * x + F32(1)).astype(F32)


def _keys_far(x: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic kernel on 1 < |x| <= 2."""
    return ((((x - F32(5)) * x + F32(8)) * x - F32(4)) * F32(a)).astype(F32)


def _cubic_taps(n: int, scale: float, align_corners: bool) -> Taps:
    # NOTE: a = -0.75 (OpenCV's and PyTorch's bicubic), taps ordered as MLX sums them
    c = _coords(n, scale, align_corners)
    l1 = np.floor(c)
    r1 = np.floor(c + F32(1))
    l2, r2 = l1 - F32(1), r1 + F32(1)
    weights = [_keys_near(np.abs(c - l1), -0.75), _keys_near(np.abs(c - r1), -0.75),
               _keys_far(np.abs(c - l2), -0.75), _keys_far(np.abs(c - r2), -0.75)]
    return [(np.clip(i, F32(0), F32(n - 1)), w) for i, w in zip((l1, r1, l2, r2), weights)]


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(F32(1) - x, F32(0))


def _keys_half(x: np.ndarray) -> np.ndarray:
    """Keys' cubic kernel with a = -0.5 (PIL's, PyTorch's antialiased bicubic)."""
    return np.where(x <= 1, _keys_near(x, -0.5),
                    np.where(x <= 2, _keys_far(x, -0.5), F32(0))).astype(F32)


def _antialiased_taps(kernel: Callable, radius: float) -> Callable:
    """Taps of `kernel` widened by 1 / scale when shrinking (a low-pass filter): taps that
    fall outside the input get weight 0 and each output's weights are renormalized."""
    def taps(n: int, scale: float, align_corners: bool) -> Taps:
        c = _coords(n, scale, align_corners)
        widen = 1.0 / scale if scale < 1 else 1.0
        reach = math.ceil(radius * widen) + 1
        idxs, weights = [], []
        for k in range(-reach + 1, reach):
            idx = np.floor(c) + F32(k)
            w = kernel(np.abs(c - idx) / F32(widen))
            weights.append(np.where((idx >= 0) & (idx < n), w, F32(0)).astype(F32))
            idxs.append(idx)
        total = sum(weights)
        total = np.where(total > 0, total, F32(1)).astype(F32)
        return [(np.clip(i, F32(0), F32(n - 1)), w / total) for i, w in zip(idxs, weights)]
    return taps


# -- gathering and weighting ------------------------------------------------------------------

def _spatial(x: mx.array, scale_factor: tuple) -> list:
    if x.ndim - 2 != len(scale_factor):
        raise ValueError("A scale needs to be provided for each spatial dimension")
    return list(x.shape[1:-1])


def _along(w: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """`w` shaped to broadcast along `axis` of an ndim-d array."""
    shape = [1] * ndim
    shape[axis] = -1
    return w.reshape(shape)


def _take(x: mx.array, idx: np.ndarray, axis: int) -> mx.array:
    return mx.take(x, mx.array(idx.astype(np.uint32)), axis=axis)


def _separable(x: mx.array, scale_factor: tuple, taps: Callable,
               align_corners: bool) -> mx.array:
    """Interpolate one axis after the other (MLX's order for linear without
    align_corners, and for antialiasing)."""
    out = x
    for axis, (n, s) in enumerate(zip(_spatial(x, scale_factor), scale_factor), start=1):
        out = sum(_take(out, i, axis) * mx.array(_along(w, axis, x.ndim))
                  for i, w in taps(n, s, align_corners))
    return out


def _joint(x: mx.array, scale_factor: tuple, taps: Callable,
           align_corners: bool) -> mx.array:
    """Sum over every combination of the axes' taps (MLX's order for cubic, and for
    linear with align_corners): the weight of a combination is the product of its
    axes' weights."""
    per_axis = [taps(n, s, align_corners)
                for n, s in zip(_spatial(x, scale_factor), scale_factor)]
    out = 0
    for combo in itertools.product(*per_axis):
        sample, weight = x, F32(1)
        for axis, (i, w) in enumerate(combo, start=1):
            sample = _take(sample, i, axis)
            w = _along(w, axis, x.ndim)
            weight = w if axis == 1 else weight * w
        out = out + mx.array(weight) * sample
    return out


# -- the public functions and layer ----------------------------------------------------------

def _check_antialias(align_corners: bool, antialias: bool) -> None:
    if antialias and align_corners:
        raise ValueError(
            "[Upsample] antialias=True with align_corners=True is not supported. Use "
            "align_corners=False for antialiased interpolation.")


def upsample_nearest(x: mx.array, scale_factor: tuple) -> mx.array:
    """Each output copies its nearest input (integer scales: every input repeated)."""
    spatial = _spatial(x, scale_factor)
    if tuple(map(int, scale_factor)) == scale_factor:
        for axis, s in enumerate(scale_factor, start=1):
            x = mx.repeat(x, int(s), axis=axis)
        return x
    for axis, (n, s) in enumerate(zip(spatial, scale_factor), start=1):
        x = mx.take(x, mx.array(_nearest_index(n, s)), axis=axis)
    return x


def upsample_linear(x: mx.array, scale_factor: tuple, align_corners: bool = False,
                    antialias: bool = False) -> mx.array:
    """(Multi-)linear interpolation; `antialias` low-pass filters when shrinking."""
    _check_antialias(align_corners, antialias)
    if antialias:
        return _separable(x, scale_factor, _antialiased_taps(_triangle, 1.0), align_corners)
    if not align_corners:
        return _separable(x, scale_factor, _linear_taps, align_corners)
    return _joint(x, scale_factor, _linear_taps, align_corners)


def upsample_cubic(x: mx.array, scale_factor: tuple, align_corners: bool = False,
                   antialias: bool = False) -> mx.array:
    """(Multi-)cubic interpolation (Keys, a = -0.75; a = -0.5 with `antialias`)."""
    _check_antialias(align_corners, antialias)
    if antialias:
        return _separable(x, scale_factor, _antialiased_taps(_keys_half, 2.0), align_corners)
    return _joint(x, scale_factor, _cubic_taps, align_corners)


class Upsample(Module):
    """Scale the spatial axes (1 to ndim - 2) of channels-last inputs by `scale_factor`
    (one float, or one per spatial axis), by "nearest", "linear" or "cubic"
    interpolation. `align_corners` maps the corner outputs onto the corner inputs;
    `antialias` (linear and cubic) filters when shrinking."""

    def __init__(self, scale_factor: float | tuple,
                 mode: Literal["nearest", "linear", "cubic"] = "nearest",
                 align_corners: bool = False, antialias: bool = False) -> None:
        super().__init__()
        if mode not in ["nearest", "linear", "cubic"]:
            raise ValueError(f"[Upsample] Got unsupported upsampling algorithm: {mode}")
        if antialias and mode == "nearest":
            raise ValueError("[Upsample] Antialiasing is not supported for nearest neighbor "
                             "upsampling")
        if isinstance(scale_factor, list | tuple):
            scale_factor = tuple(map(float, scale_factor))
        else:
            scale_factor = float(scale_factor)
        _check_antialias(align_corners, antialias)
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.antialias = antialias

    def _extra_repr(self) -> str:
        text = (f"scale_factor={self.scale_factor}, mode={self.mode!r}, "
                f"align_corners={self.align_corners}")
        return text + ", antialias=True" if self.antialias else text

    def __call__(self, x: mx.array) -> mx.array:
        dims = x.ndim - 2
        if dims <= 0:
            raise ValueError(
                f"[Upsample] The input should have at least 1 spatial dimension which means "
                f"it should be at least 3D but {x.ndim}D was provided")
        scale = self.scale_factor
        if isinstance(scale, tuple):
            if len(scale) != dims:
                raise ValueError(
                    f"[Upsample] One scale per spatial dimension is required but "
                    f"scale_factor={scale} and the number of spatial dimensions were {dims}")
        else:
            scale = (scale,) * dims
        if self.mode == "nearest":
            return upsample_nearest(x, scale)
        if self.mode == "linear":
            return upsample_linear(x, scale, self.align_corners, self.antialias)
        return upsample_cubic(x, scale, self.align_corners, self.antialias)
