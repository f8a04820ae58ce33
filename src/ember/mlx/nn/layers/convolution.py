"""Convolution layers, channels last (inputs (N, *spatial, C)): Conv1d/2d/3d with
weights (out, *kernel, in / groups) (the transposed ones are in convolution_transpose.py,
as in MLX). Weights are drawn from U(-k, k), k = 1/sqrt(fan_in); biases start
at zero. Reprs print the arguments as MLX stores them (2-d and 3-d layers keep
kernel_size, stride and padding as tuples, dilation as given)."""

from __future__ import annotations

import math

from ... import core as mx
from ...core import _conv, random
from .base import Module

# NOTE: each public layer spells out its own __init__ (a call of the shared one) so that a
# wrong argument's TypeError names the layer, as MLX's does.


def _tuple(v, nd: int):
    return v if nd == 1 or not isinstance(v, int) else (v,) * nd


class _ConvNd(Module):
    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True) -> None:
        super().__init__()
        if in_channels % groups:
            raise ValueError(f"The number of input channels ({in_channels}) must be "
                             f"divisible by the number of groups ({groups})")
        nd = self._nd
        kernel = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
        k = math.sqrt(1 / (in_channels // groups * math.prod(kernel)))
        self.weight = random.uniform(-k, k, (out_channels, *kernel, in_channels // groups))
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = _tuple(padding, nd)
        self.dilation = dilation
        self.stride = _tuple(stride, nd)
        self.groups = groups

    def _kernel_repr(self):
        return self.weight.shape[1] if self._nd == 1 else self.weight.shape[1:-1]

    def _extra_repr(self) -> str:
        groups = f"groups={self.groups}, " if self._nd < 3 else ""
        return (f"{self.weight.shape[-1] * self.groups}, {self.weight.shape[0]}, "
                f"kernel_size={self._kernel_repr()}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, {groups}"
                f"bias={'bias' in self}")

    def __call__(self, x: mx.array) -> mx.array:
        conv = (_conv.conv1d, _conv.conv2d, _conv.conv3d)[self._nd - 1]
        y = conv(x, self.weight, self.stride, self.padding, self.dilation, self.groups)
        return y + self.bias if "bias" in self else y


class Conv1d(_ConvNd):
    """1-d convolution over inputs (N, L, C_in)."""

    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias)


class Conv2d(_ConvNd):
    """2-d convolution over inputs (N, H, W, C_in)."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias)


class Conv3d(_ConvNd):
    """3-d convolution over inputs (N, D, H, W, C_in) (no groups, as in MLX)."""

    _nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, bias: bool = True) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         1, bias)

    def _extra_repr(self) -> str:
        return (f"{self.weight.shape[-1]}, {self.weight.shape[0]}, "
                f"kernel_size={self._kernel_repr()}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, bias={'bias' in self}")
