"""interpolate's resampling passes in C (csrc/resample.c): the Python side.

float32 and float64 CPU arrays (16-bit inputs reach here as float32, as the NumPy path
computes them); the input is made contiguous first. `library()` is None where native
kernels are off (`EMBER_KERNELS=numpy`) or cannot be built: the caller then keeps its
NumPy path, which stays the reference.
"""

from __future__ import annotations

import math

import numpy as np

from ...native import calls, kernels


def spatial_last(a: np.ndarray, channels_last: bool):
    """(the array to resample, the axis of spatial dim 0, the permutation back): a
    channels-last (n, c, *spatial) is read as the contiguous (n, *spatial, c)."""
    if not channels_last:
        return a, 2, None
    perm = (0, *range(2, a.ndim), 1)
    return a.transpose(perm), 1, tuple(np.argsort(perm))


def library():
    """The resample family's libraries, or None (native kernels off or unavailable)."""
    return kernels.library("resample")


def _taps(idx: np.ndarray, w: np.ndarray, valid, dtype):
    """The taps as the kernel reads them: contiguous int64 indices, weights in `dtype`,
    and the count of valid taps per output (None: every tap)."""
    count = None if valid is None else np.ascontiguousarray(valid.sum(axis=1), np.int64)
    return (np.ascontiguousarray(idx, np.int64), np.ascontiguousarray(w, dtype), count)


def _geometry(shape: tuple, axis: int, n_out: int, k: int, fused: bool) -> np.ndarray:
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
    return np.array([outer, shape[axis], inner, n_out, k, int(fused)], np.int64)


def resample_pass(lib, a: np.ndarray, axis: int, taps, fused: bool) -> np.ndarray:
    """One dim of `a` through its taps: linear's fused two taps, or their ordered sum."""
    sfx = calls.suffix(a)
    a = np.ascontiguousarray(a)
    idx, w, count = _taps(*taps, a.dtype)
    out = np.empty(a.shape[:axis] + (idx.shape[0],) + a.shape[axis + 1:], a.dtype)
    p = _geometry(a.shape, axis, idx.shape[0], idx.shape[1], fused)
    calls.entry(lib, f"resample_pass_{sfx}", [calls.P] * 6)(
        calls.ptr(a), calls.ptr(out), calls.ptr(idx), calls.ptr(w), calls.ptr(count),
        calls.ptr(p))
    return out


def resample_bilinear(lib, a: np.ndarray, h_taps, w_taps, channels_last: bool) -> np.ndarray:
    """Bilinear in one step (four fused taps per output) over the last two dims of
    (planes, h, w), or over dims 1, 2 of a channels-last (n, h, w, c)."""
    sfx = calls.suffix(a)
    a = np.ascontiguousarray(a)
    hi, hw, _ = _taps(*h_taps, a.dtype)
    wi, ww, _ = _taps(*w_taps, a.dtype)
    inner = a.shape[-1] if channels_last else 1
    planes = a.shape[0] if channels_last else math.prod(a.shape[:-2])
    h, w = a.shape[1:3] if channels_last else a.shape[-2:]
    size = (hi.shape[0], wi.shape[0])
    out = np.empty((planes, *size, a.shape[-1]) if channels_last else a.shape[:-2] + size,
                   a.dtype)
    p = np.array([planes, h, w, *size, inner], np.int64)
    calls.entry(lib, f"resample_bilinear_{sfx}", [calls.P] * 7)(
        calls.ptr(a), calls.ptr(out), calls.ptr(hi), calls.ptr(hw), calls.ptr(wi),
        calls.ptr(ww), calls.ptr(p))
    return out


def resample_pass_backward(lib, g: np.ndarray, axis: int, n_in: int, taps) -> np.ndarray:
    """The gradient of one pass: each output's gradient times its weights added into its
    taps' positions, outputs and taps in order."""
    sfx = calls.suffix(g)
    g = np.ascontiguousarray(g)
    idx, w, count = _taps(*taps, g.dtype)
    dx = np.empty(g.shape[:axis] + (n_in,) + g.shape[axis + 1:], g.dtype)
    p = _geometry(dx.shape, axis, idx.shape[0], idx.shape[1], False)
    calls.entry(lib, f"resample_pass_backward_{sfx}", [calls.P] * 6)(
        calls.ptr(g), calls.ptr(dx), calls.ptr(idx), calls.ptr(w), calls.ptr(count),
        calls.ptr(p))
    return dx
