"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (PyTorch's init and repr)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ... import ops
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _ntuple(n: int):
    def parse(x) -> tuple:
        # (PyTorch's rule: any iterable, a NumPy array or a range too, gives its elements)
        if isinstance(x, Iterable):
            return tuple(x)
        return (x,) * n

    return parse


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        # NOTE: both messages print a set, whose order follows the hash seed and the order
        # its items went in. Torch's two-item literal inserts "same" then "valid"; its
        # four-item one is a frozenset constant that torch's .pyc lists as zeros, reflect,
        # circular, replicate and the set copies. Built the same ways, ember's sets print
        # torch's order under any seed.
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = set(frozenset(("zeros", "reflect", "circular", "replicate")))
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._reversed_padding(kernel_size)
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + tuple(kernel_size)
        self.weight = Parameter(ops.creation.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _reversed_padding(self, kernel_size) -> list[int]:
        """F.pad amounts (last dim first) that the non-zero padding modes apply."""
        if isinstance(self.padding, str):
            out = [0, 0] * len(kernel_size)
            if self.padding == "same":
                for d, k, i in zip(self.dilation, kernel_size,
                                   range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    out[2 * i] = total // 2
                    out[2 * i + 1] = total - total // 2
            return out
        return [p for p in reversed(self.padding) for _ in range(2)]

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    _nd = 0
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        t = _ntuple(self._nd)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation), False,
                         t(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) inputs."""

    _nd = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) inputs."""

    _nd = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    _nd = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _nd = 0
    _fn = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        t = _ntuple(self._nd)
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding),
                         t(dilation), True, t(output_padding), groups, bias, padding_mode,
                         device, dtype)

    def _output_padding(self, input: Tensor, output_size, stride, padding, kernel_size,
                        num_spatial_dims: int, dilation=None) -> list:
        """The output padding that gives `output_size`: PyTorch's signature (subclasses that
        write their own forward call it with their geometry), checks and words."""
        if output_size is None:
            return _ntuple(1)(self.output_padding)
        nd = num_spatial_dims
        lead = 2 if input.dim() == nd + 2 else 1
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {lead + nd} elements (got {len(output_size)})")
        dilation = dilation if dilation is not None else (1,) * nd
        smallest = [(input.size(lead + d) - 1) * stride[d] - 2 * padding[d]
                    + dilation[d] * (kernel_size[d] - 1) + 1 for d in range(nd)]
        largest = [smallest[d] + stride[d] - 1 for d in range(nd)]
        for d in range(nd):
            if not smallest[d] <= output_size[d] <= largest[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to {largest} (for an input of "
                                 f"{input.size()[2:]})")
        return [output_size[d] - smallest[d] for d in range(nd)]

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for ConvTranspose{self._nd}d")
        opad = self._output_padding(input, output_size, self.stride, self.padding,
                                    self.kernel_size, self._nd, self.dilation)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, opad,
                              self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """The adjoint of Conv2d: upsamples (N, C_in, H, W) inputs."""

    _nd = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3
    _fn = staticmethod(F.conv_transpose3d)
