"""SyncBatchNorm: batch normalisation whose training statistics cover every process's batch.

Outside data-parallel training (no process group, one process, or eval) it is BatchNorm,
step for step. Inside one, each process reduces its batch to per-channel counts, sums and
sums of squares; one all-reduce gives every process the whole batch's mean and variance,
and the backward pass all-reduces the two per-channel sums the input gradient needs. The
weight and bias gradients stay local, as PyTorch's: DistributedDataParallel averages them
with the other parameters' gradients.

PyTorch syncs only on an accelerator and refuses a CPU tensor when a process group is
initialised ("SyncBatchNorm expected input tensor to be on GPU..."); ember's processes are
CPU processes on MPI, so it syncs there, with the same arithmetic.
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...autograd import Function
from ...autograd.grad_mode import no_grad
from .batchnorm import _BatchNorm
from .module import Module


def _channel_view(x: Tensor) -> tuple[np.ndarray, tuple[int, ...]]:
    """x as (C, rest) float64 NumPy, and the axes other than the channel's."""
    a = x.detach().numpy().astype(np.float64)
    return np.moveaxis(a, 1, 0).reshape(a.shape[1], -1), (0, *range(2, x.dim()))


def _all_reduce(values: np.ndarray, group) -> np.ndarray:
    from ... import distributed as dist

    t = ops.creation.tensor(values)
    dist.all_reduce(t, group=group)
    return t.numpy()


def _per_channel(v: np.ndarray, x: Tensor) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (x.dim() - 2))


class _SyncBatchNormFn(Function):
    """y = (x - mean) * invstd * weight + bias with the whole world's batch statistics."""

    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        flat, _ = _channel_view(x)
        local = np.stack([np.full(flat.shape[0], flat.shape[1], np.float64),
                          flat.sum(1), (flat * flat).sum(1)])
        count, total, squares = _all_reduce(local, group)
        if (count <= 1).any() and running_mean is not None:
            raise ValueError("Expected more than 1 value per channel when training, got "
                             f"input size {list(x.shape)} over every process")
        mean = total / count
        var = np.maximum(squares / count - mean * mean, 0.0)
        invstd = 1.0 / np.sqrt(var + eps)
        if running_mean is not None:
            with no_grad():
                dtype = running_mean.dtype
                unbiased = var * count / np.maximum(count - 1, 1)
                running_mean.mul_(1 - momentum).add_(
                    ops.creation.tensor(mean, dtype=dtype) * momentum)
                running_var.mul_(1 - momentum).add_(
                    ops.creation.tensor(unbiased, dtype=dtype) * momentum)
        xhat = (x.detach().numpy() - _per_channel(mean, x)) * _per_channel(invstd, x)
        y = xhat
        if weight is not None:
            y = y * _per_channel(weight.detach().numpy().astype(np.float64), x)
        if bias is not None:
            y = y + _per_channel(bias.detach().numpy().astype(np.float64), x)
        ctx.stats = (mean, invstd, count, group)
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return ops.creation.tensor(y.astype(x.dtype.np))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        mean, invstd, count, group = ctx.stats
        g, _ = _channel_view(grad)
        xmu = _channel_view(x)[0] - mean[:, None]
        sum_dy, sum_dy_xmu = g.sum(1), (g * xmu).sum(1)
        grad_weight = ops.creation.tensor((sum_dy_xmu * invstd).astype(x.dtype.np)) \
            if weight is not None and ctx.needs_input_grad[1] else None
        grad_bias = ops.creation.tensor(sum_dy.astype(x.dtype.np)) \
            if ctx.has_bias and ctx.needs_input_grad[2] else None
        grad_input = None
        if ctx.needs_input_grad[0]:
            total_dy, total_dy_xmu = _all_reduce(np.stack([sum_dy, sum_dy_xmu]), group)
            w = weight.detach().numpy().astype(np.float64) if weight is not None else 1.0
            scale = invstd * w
            dx = (g - (total_dy / count)[:, None]
                  - xmu * (invstd * invstd * total_dy_xmu / count)[:, None]) * scale[:, None]
            shape = (x.shape[1], x.shape[0], *x.shape[2:])
            grad_input = ops.creation.tensor(
                np.moveaxis(dx.reshape(shape), 0, 1).astype(x.dtype.np))
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over N-D inputs (N >= 2) with its statistics shared by every process of
    the process group in training."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        from ... import distributed as dist

        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        group = None
        if self.training and dist.is_available() and dist.is_initialized():
            group = self.process_group or dist.group.WORLD
            if dist.get_world_size(group) <= 1:
                group = None
        if group is None:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        stats = (self.running_mean, self.running_var) if self.track_running_stats else \
            (None, None)
        return _SyncBatchNormFn.apply(input, self.weight, self.bias, *stats, self.eps, factor,
                                      group)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """`module` with every BatchNorm*d in it replaced by a SyncBatchNorm sharing its
        parameters and buffers (a BatchNorm given alone comes back as a new module)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group,
                      bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


__all__ = ["SyncBatchNorm"]
