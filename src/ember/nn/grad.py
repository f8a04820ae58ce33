"""torch.nn.grad: a convolution's gradient with respect to its input or its weight, given
the output's gradient (what the convolution's backward computes, called directly). They
bind the same primitives conv's VJP binds, so they are differentiable again."""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.conv import _pairs, _tuple, conv_input_grad_p, conv_weight_grad_p
from ..ops.registry import apply

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _params(nd: int, kernel, stride, padding, dilation, groups) -> dict:
    dilation = _tuple(dilation, nd, "dilation")
    stride = _tuple(stride, nd, "stride")
    return dict(stride=stride, padding=_pairs(padding, kernel, dilation, nd, stride),
                dilation=dilation, groups=groups)


def _input(nd: int, input_size, weight: Tensor, grad_output: Tensor, stride, padding,
           dilation, groups) -> Tensor:
    p = _params(nd, tuple(weight.shape[2:]), stride, padding, dilation, groups)
    return apply(conv_input_grad_p, grad_output, weight, x_shape=tuple(input_size), **p)


def _weight(nd: int, input: Tensor, weight_size, grad_output: Tensor, stride, padding,
            dilation, groups) -> Tensor:
    p = _params(nd, tuple(weight_size)[2:], stride, padding, dilation, groups)
    return apply(conv_weight_grad_p, input, grad_output, w_shape=tuple(weight_size), **p)


def conv1d_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups=1) -> Tensor:
    """d(conv1d)/d(input) applied to grad_output, for an input of shape `input_size`."""
    return _input(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                  dilation=1, groups=1) -> Tensor:
    """d(conv1d)/d(weight) applied to grad_output, for a weight of shape `weight_size`."""
    return _weight(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups=1) -> Tensor:
    """d(conv2d)/d(input) applied to grad_output, for an input of shape `input_size`."""
    return _input(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                  dilation=1, groups=1) -> Tensor:
    """d(conv2d)/d(weight) applied to grad_output, for a weight of shape `weight_size`."""
    return _weight(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0,
                 dilation=1, groups=1) -> Tensor:
    """d(conv3d)/d(input) applied to grad_output, for an input of shape `input_size`."""
    return _input(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0,
                  dilation=1, groups=1) -> Tensor:
    """d(conv3d)/d(weight) applied to grad_output, for a weight of shape `weight_size`."""
    return _weight(3, input, weight_size, grad_output, stride, padding, dilation, groups)
