"""Transposed convolution layers, channels last (inputs (N, *spatial, C_in)):
ConvTranspose1d/2d/3d with weights (out, *kernel, in), drawn from U(-k, k),
k = 1/sqrt(fan_in); biases start at zero. A module of its own, as in MLX, so the classes'
paths (`mlx.nn.layers.convolution_transpose.ConvTranspose2d`) print as MLX's."""

from __future__ import annotations

from ... import core as mx
from .base import Module
from .convolution import _draw_weight, _tuple

# NOTE: each public layer spells out its own __init__ (a call of the shared one) so that a
# wrong argument's TypeError names the layer, as MLX's does.


class _ConvTransposeNd(Module):
    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, output_padding=0, bias: bool = True) -> None:
        super().__init__()
        nd = self._nd
        kernel_size, stride, padding, output_padding = (
            _tuple(v, nd) for v in (kernel_size, stride, padding, output_padding))
        self.weight = _draw_weight(nd, in_channels, out_channels, kernel_size)
        if bias:
            self.bias = mx.zeros((out_channels,))
        self.padding = padding
        self.stride = stride
        self.dilation = dilation
        self.output_padding = output_padding

    def _extra_repr(self) -> str:
        kernel = self.weight.shape[1] if self._nd == 1 else self.weight.shape[1:-1]
        return (f"{self.weight.shape[-1]}, {self.weight.shape[0]}, kernel_size={kernel}, "
                f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}, "
                f"output_padding={self.output_padding}, bias={'bias' in self}")

    def __call__(self, x: mx.array) -> mx.array:
        conv = (mx.conv_transpose1d, mx.conv_transpose2d,  # (their bindings' checks too)
                mx.conv_transpose3d)[self._nd - 1]
        y = conv(x, self.weight, self.stride, self.padding, self.dilation,
                 self.output_padding)
        return y + self.bias if "bias" in self else y


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution over inputs (N, L, C_in)."""

    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, output_padding=0, bias: bool = True) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, bias)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution over inputs (N, H, W, C_in)."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, output_padding=0, bias: bool = True) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, bias)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution over inputs (N, D, H, W, C_in)."""

    _nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, output_padding=0, bias: bool = True) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         output_padding, bias)
