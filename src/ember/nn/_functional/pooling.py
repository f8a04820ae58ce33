"""Pooling composites of `ember.nn.functional`: power-average (LP) pooling, built as PyTorch
builds it from average pooling, and the 3-d adaptive poolings and `*_with_indices` forms
(the poolings themselves are in ember.ops.pooling; fractional max pooling in
fractional_pool.py)."""

from __future__ import annotations

import math

import ember as E

from ..._tensor import Tensor
from ...ops.activation import relu
from ...ops.pooling import (
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from .fractional_pool import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "fractional_max_pool2d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_POOLS = {1: (avg_pool1d, max_pool1d), 2: (avg_pool2d, max_pool2d), 3: (avg_pool3d, max_pool3d)}


def _lp_pool(nd: int, input: Tensor, norm_type, kernel_size, stride, ceil_mode: bool) -> Tensor:
    """(sum over each window of x**p) ** (1/p), as PyTorch computes it: the average of x**p
    times the window's size (its full size, also for a window that ceil_mode cuts short),
    negative averages clamped to 0 by sign * relu(abs); p = +-inf is max pooling of |x|."""
    avg, mx = _POOLS[nd]
    if isinstance(norm_type, (int, float)):
        if norm_type == math.inf:
            return mx(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -math.inf:
            return -mx(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if nd == 1:
        size = kernel_size  # (torch multiplies by it as given: an int)
    else:
        ks = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
        if len(ks) > nd:
            raise ValueError(f"too many values to unpack (expected {nd})")
        if len(ks) < nd:
            raise ValueError(f"not enough values to unpack (expected {nd}, got {len(ks)})")
        size = math.prod(ks)
    powered = input.pow(norm_type)
    # (average pooling sums each window in order, as PyTorch's, which LPPool calls too)
    out = avg(powered, kernel_size, stride, 0, ceil_mode)
    return (E.sign(out) * relu(E.abs(out))).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, L) or (C, L) inputs."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, H, W) or (C, H, W) inputs."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, D, H, W) or (C, D, H, W) inputs."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices) of adaptive max pooling, whatever `return_indices` says."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices) of adaptive max pooling, whatever `return_indices` says."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices) of adaptive max pooling, whatever `return_indices` says."""
    return adaptive_max_pool3d(input, output_size, True)
