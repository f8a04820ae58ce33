"""Lazy BatchNorm and InstanceNorm: `num_features` is read from the first input's dim 1.

Until then `weight`/`bias` are `UninitializedParameter`s and `running_mean`/`running_var`
`UninitializedBuffer`s (only `num_batches_tracked`, whose shape never depends on the input,
is a real tensor), and the module becomes its eager class after the first forward, as in
PyTorch. Like PyTorch's, the lazy InstanceNorm classes default to `affine=True` and
`track_running_stats=True`, unlike the eager ones.
"""

from __future__ import annotations

from ... import _dtype as dt
from ... import _grad_mode as grad_mode
from ..._tensor import Tensor
from ...ops import creation
from ..parameter import UninitializedBuffer, UninitializedParameter
from .batchnorm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
)
from .lazy import LazyModuleMixin

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _LazyNormBase(LazyModuleMixin):
    """The shared lazy part of the norm layers: placeholders, then shapes (C,) from dim 1."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *,
                 bias: bool = True) -> None:
        # affine and tracking off here: no tensors that the placeholders replace at once
        super().__init__(0, eps, momentum, False, False, device, dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = creation.tensor(0, dtype=dt.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Give every placeholder the shape (input.shape[1],) and reset them."""
        if not self.has_uninitialized_params():
            return
        with grad_mode.no_grad():
            self.num_features = input.shape[1]
            shape = (self.num_features,)
            if self.affine:
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize(shape)
            if self.track_running_stats:
                self.running_mean.materialize(shape)
                self.running_var.materialize(shape)
            self.reset_parameters()


def _lazy_norm(eager: type) -> type:
    return type(f"Lazy{eager.__name__}", (_LazyNormBase, eager),
                {"cls_to_become": eager, "__module__": __name__,
                 "__doc__": f"`{eager.__name__}` whose `num_features` is read from its first "
                            "input's dim 1."})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
