"""Normalization layers, over the last (channels) axis as MLX lays data out:
LayerNorm, RMSNorm, GroupNorm, InstanceNorm and BatchNorm (whose running statistics
are parameters that are always frozen)."""

from __future__ import annotations

from ... import core as mx
from ...core import fast
from .base import Module


def _check_eps(name: str, eps: float) -> None:
    if eps <= 0.0:
        raise ValueError(f"[{name}] 'eps' must be positive but got {eps}.")


class LayerNorm(Module):
    """Normalizes the last axis to zero mean and unit variance, then (with `affine`)
    scales by `weight` and shifts by `bias`."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = True,
                 bias: bool = True) -> None:
        super().__init__()
        _check_eps("LayerNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            if bias:
                self.bias = mx.zeros((dims,))
        self.eps = eps
        self.dims = dims

    def _extra_repr(self) -> str:
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        return fast.layer_norm(x, self.get("weight"), self.get("bias"), self.eps)


class RMSNorm(Module):
    """Divides the last axis by its root mean square, then scales by `weight`."""

    def __init__(self, dims: int, eps: float = 1e-5) -> None:
        super().__init__()
        _check_eps("RMSNorm", eps)
        self.weight = mx.ones((dims,))
        self.eps = eps

    def _extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"

    def __call__(self, x: mx.array) -> mx.array:
        return fast.rms_norm(x, self["weight"], self.eps)


class GroupNorm(Module):
    """Normalizes groups of channels over all positions. MLX's default groups the
    channels strided (channel c in group c % num_groups); `pytorch_compatible=True`
    groups them contiguously, as PyTorch does."""

    def __init__(self, num_groups: int, dims: int, eps: float = 1e-5, affine: bool = True,
                 pytorch_compatible: bool = False) -> None:
        super().__init__()
        _check_eps("GroupNorm", eps)
        if num_groups <= 0:
            raise ValueError(f"The number of groups ({num_groups}) must be a positive "
                             "integer.")
        if dims <= 0:
            raise ValueError(f"The number of features ({dims}) must be a positive integer.")
        if dims % num_groups:
            raise ValueError(f"The number of features ({dims}) must be evenly divisible by "
                             f"the number of groups ({num_groups}).")
        if affine:
            self.bias = mx.zeros((dims,))
            self.weight = mx.ones((dims,))
        self.num_groups = num_groups
        self.dims = dims
        self.eps = eps
        self.pytorch_compatible = pytorch_compatible

    def _extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.dims}, eps={self.eps}, "
                f"affine={'weight' in self}, pytorch_compatible={self.pytorch_compatible}")

    def __call__(self, x: mx.array) -> mx.array:
        batch, *rest, dims = x.shape
        g = self.num_groups
        if self.pytorch_compatible:
            size = dims // g
            y = x.reshape(batch, -1, g, size).transpose(0, 2, 1, 3).reshape(batch, g, -1)
            y = fast.layer_norm(y, None, None, self.eps)
            y = y.reshape(batch, g, -1, size).transpose(0, 2, 1, 3).reshape(x.shape)
        else:
            y = x.reshape(batch, -1, g)
            mean = mx.mean(y, axis=1, keepdims=True)
            var = mx.var(y, axis=1, keepdims=True)
            y = ((y - mean) * mx.rsqrt(var + self.eps)).reshape(x.shape)
        return self.weight * y + self.bias if "weight" in self else y


class InstanceNorm(Module):
    """Normalizes each channel of each example over its positions (inputs N, ..., C)."""

    def __init__(self, dims: int, eps: float = 1e-5, affine: bool = False) -> None:
        super().__init__()
        _check_eps("InstanceNorm", eps)
        if affine:
            self.weight = mx.ones((dims,))
            self.bias = mx.zeros((dims,))
        self.dims = dims
        self.eps = eps

    def _extra_repr(self) -> str:
        return f"{self.dims}, eps={self.eps}, affine={'weight' in self}"

    def __call__(self, x: mx.array) -> mx.array:
        if x.ndim < 3:
            raise ValueError("InstanceNorm expects inputs with at least 3 dimensions "
                             f"(N, ..., C) but the input has {x.ndim} dimensions.")
        n, c = x.shape[0], x.shape[-1]
        y = mx.swapaxes(x.reshape(n, -1, c), 1, 2)  # (N, C, positions)
        y = mx.swapaxes(fast.layer_norm(y, None, None, self.eps), 1, 2).reshape(x.shape)
        return self.weight * y + self.bias if "weight" in self else y


class BatchNorm(Module):
    """Normalizes each channel over the batch (and positions) of inputs (N, C),
    (N, L, C) or (N, H, W, C). In training it uses the batch's statistics and updates
    `running_mean` / `running_var` (momentum `momentum`, unbiased variance); in eval
    mode it uses those. The running statistics are parameters but never trainable."""

    _STATS = ["running_mean", "running_var"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, track_running_stats: bool = True) -> None:
        super().__init__()
        _check_eps("BatchNorm", eps)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = mx.ones((num_features,))
            self.bias = mx.zeros((num_features,))
        if track_running_stats:
            self.running_mean = mx.zeros((num_features,))
            self.running_var = mx.ones((num_features,))
            self.freeze(keys=self._STATS, recurse=False)

    def unfreeze(self, *args, **kwargs) -> BatchNorm:
        super().unfreeze(*args, **kwargs)
        self.freeze(keys=self._STATS, recurse=False)
        return self

    def _extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={'weight' in self}, track_running_stats={self.track_running_stats}")

    def __call__(self, x: mx.array) -> mx.array:
        if not 2 <= x.ndim <= 4:
            raise ValueError("Expected input tensor to have 2, 3 or 4 dimensions, but got "
                             f"{x.ndim}")
        axes = tuple(range(x.ndim - 1))
        if self.training and x.size // x.shape[-1] == 1:
            raise ValueError("BatchNorm training requires more than one value per channel.")
        mean, var = mx.mean(x, axis=axes), mx.var(x, axis=axes)
        if self.training and self.track_running_stats:
            mu = self.momentum
            unbiased = mx.var(x, axis=axes, ddof=1)
            self.running_mean = (1 - mu) * self.running_mean + mu * mean
            self.running_var = (1 - mu) * self.running_var + mu * unbiased
        elif self.track_running_stats:
            mean, var = self.running_mean, self.running_var
        y = (x - mean) * mx.rsqrt(var + self.eps)
        return self.weight * y + self.bias if "weight" in self else y
