"""Convolution layers, channels last (inputs (N, *spatial, C)): Conv1d/2d/3d with
weights (out, *kernel, in / groups) (the transposed ones are in convolution_transpose.py,
as in MLX). Weights are drawn from U(-k, k), k = 1/sqrt(fan_in); biases start
at zero. Reprs print the arguments as MLX stores them (2-d and 3-d layers keep
kernel_size, stride and padding as tuples, dilation as given)."""

from __future__ import annotations

import math

from ... import core as mx
from .base import Module

# NOTE: each public layer spells out its own __init__ (a call of the shared one) so that a
# wrong argument's TypeError names the layer, as MLX's does.


def _tuple(v, nd: int):
    return v if nd == 1 or not isinstance(v, int) else (v,) * nd


def _draw_weight(nd: int, in_channels: int, out_channels: int, kernel_size,
                groups: int = 1) -> mx.array:
    """A layer's weight (out, *kernel, in / groups) from U(-s, s), s = 1/sqrt(fan_in).

    NOTE: as MLX's layer code does, a 1-d layer takes its arguments as they are (a tuple
    kernel fails in the fan-in's arithmetic, a tuple stride in `mx.conv1d`'s binding);
    the 2-d and 3-d layers have made an int a tuple and read the kernel's first `nd`
    sizes for the fan-in (a shorter tuple: IndexError)."""
    kernel = (kernel_size,) if nd == 1 else kernel_size
    fan_in = in_channels // groups
    for i in range(nd):
        fan_in = fan_in * kernel[i]
    scale = math.sqrt(1 / fan_in)
    return mx.random.uniform(low=-scale, high=scale,
                             shape=(out_channels, *kernel, in_channels // groups))


class _ConvNd(Module):
    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True) -> None:
        super().__init__()
        if in_channels % groups:
            raise ValueError(f"The number of input channels ({in_channels}) must be "
                             f"divisible by the number of groups ({groups})")
        nd = self._nd
        kernel_size, stride, padding = (_tuple(v, nd) for v in (kernel_size, stride, padding))
        self.weight = _draw_weight(nd, in_channels, out_channels, kernel_size, groups)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.dilation = dilation
        self.stride = stride
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
        # (the public functions: their bindings refuse what MLX's refuse)
        if self._nd == 3:
            y = mx.conv3d(x, self.weight, self.stride, self.padding, self.dilation)
        else:
            conv = mx.conv1d if self._nd == 1 else mx.conv2d
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
