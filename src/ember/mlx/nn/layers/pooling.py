"""Pooling layers, channels last (inputs (N, *spatial, C)): MaxPool1d/2d/3d and
AvgPool1d/2d/3d. Padding fills with -inf (max) or 0 (average: padded zeros count in
the mean, as in MLX). Windows are gathered as strided slices stacked on a new axis, so
the gradient is the reduction's own (max splits ties evenly, as MLX's does)."""

from __future__ import annotations

import math

from ... import core as mx
from .base import Module

# NOTE: each public layer spells out its own __init__ (a one-line call of the shared one)
# so that a wrong argument's TypeError names the layer, as MLX's does.


def _per_dim(v, nd: int, cls: str, name: str) -> list:
    word = "integer" if nd == 1 else "integers"
    msg = (f"[{cls}] '{name}' must be an integer or a tuple containing {nd} {word}")
    if isinstance(v, list | tuple):
        if len(v) != nd:
            raise ValueError(msg)
        return list(v)
    if not isinstance(v, int):
        raise ValueError(msg)
    return [v] * nd


def _window_counts(x: mx.array, kernel: list, stride: list) -> list:
    """How many windows fit along each spatial axis of x (N, *spatial, C); raises as
    MLX's window extraction does for a wrong rank or a kernel longer than its axis."""
    if x.ndim < 3:
        raise ValueError("To extract sliding windows at least 1 spatial dimension (3 total) "
                         f"is needed but the input only has {x.ndim} dimensions.")
    spatial = x.shape[1:-1]
    if len(spatial) != len(kernel):
        raise ValueError(
            "To extract sliding windows the window shapes and strides must have the same "
            f"number of spatial dimensions as the signal but the signal has {len(spatial)} "
            f"dims and the window shape has {len(kernel)} and strides have {len(stride)}.")
    # NOTE: floor division, as MLX's: a kernel up to one stride longer than its axis
    # gives no windows, a longer one a negative count that MLX's as_strided refuses
    out = [(s - k) // st + 1 for s, k, st in zip(spatial, kernel, stride)]
    if any(n < 0 for n in out):
        raise ValueError("[as_strided] Negative dimensions not allowed.")
    return out


def _windows(x: mx.array, kernel: list, stride: list) -> mx.array:
    """(N, *out, C, prod(kernel)): every window of x, the kernel offsets last."""
    out = _window_counts(x, kernel, stride)
    if 0 in out:
        return mx.zeros((x.shape[0], *out, x.shape[-1], math.prod(kernel)), x.dtype)
    parts = []
    for offset in _offsets(kernel):
        idx = tuple(slice(o, o + st * (n - 1) + 1, st)
                    for o, st, n in zip(offset, stride, out))
        parts.append(x[(slice(None), *idx)])
    return mx.stack(parts, axis=-1)


def _offsets(kernel: list) -> list:
    offsets = [()]
    for k in kernel:
        offsets = [o + (i,) for o in offsets for i in range(k)]
    return offsets


class _Pool(Module):
    _nd = 1
    _reduce = staticmethod(mx.max)
    _fill = -math.inf

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        cls, nd = type(self).__name__, self._nd
        kernel = _per_dim(kernel_size, nd, cls, "kernel_size")
        stride = kernel if stride is None else _per_dim(stride, nd, cls, "stride")
        padding = _per_dim(padding, nd, cls, "padding")
        for name, values in (("kernel_size", kernel), ("stride", stride)):
            if any(v <= 0 for v in values):
                raise ValueError(f"[{cls}] '{name}' must be positive but got "
                                 f"{tuple(values)}.")
        if any(p < 0 for p in padding):
            raise ValueError(f"[{cls}] 'padding' must be non-negative but got "
                             f"{tuple(padding)}.")
        # NOTE: the state tree is MLX's: padding as (low, high) pairs, and the
        # reduced axes (the spatial ones, counted from the channel axis).
        self._kernel_size, self._stride = kernel, stride
        self._padding = [(p, p) for p in padding]
        self._axes = tuple(range(-nd - 1, -1))

    def _extra_repr(self) -> str:
        return (f"kernel_size={tuple(self._kernel_size)}, stride={tuple(self._stride)}, "
                f"padding={tuple(p for p, _ in self._padding)}")

    def __call__(self, x: mx.array) -> mx.array:
        if any(p for p, _ in self._padding):
            widths = [(0, 0)] + list(self._padding) + [(0, 0)]
            x = mx.pad(x, widths, constant_values=self._fill)
        return self._reduce(_windows(x, self._kernel_size, self._stride), axis=-1)


class MaxPool1d(_Pool):
    """Max over windows of inputs (N, L, C)."""

    _nd = 1

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)


class MaxPool2d(_Pool):
    """Max over windows of inputs (N, H, W, C)."""

    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)


class MaxPool3d(_Pool):
    """Max over windows of inputs (N, D, H, W, C)."""

    _nd = 3

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)


class AvgPool1d(_Pool):
    """Mean over windows of inputs (N, L, C)."""

    _nd, _reduce, _fill = 1, staticmethod(mx.mean), 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)


class AvgPool2d(_Pool):
    """Mean over windows of inputs (N, H, W, C)."""

    _nd, _reduce, _fill = 2, staticmethod(mx.mean), 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)


class AvgPool3d(_Pool):
    """Mean over windows of inputs (N, D, H, W, C)."""

    _nd, _reduce, _fill = 3, staticmethod(mx.mean), 0

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__(kernel_size, stride, padding)
