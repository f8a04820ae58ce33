"""Geometric(probs | logits): the number of failures before the first success, sampled
by inversion of one uniform in [tiny, 1) per draw."""

from __future__ import annotations

from .. import _dtype as dt
from .. import _grad_mode
from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .probs_logits import BinaryProbsLogits, expand_probs_or_logits, set_probs_or_logits
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbsLogits, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        set_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None:
            # (beyond unit_interval: a zero probability never succeeds)
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Geometric, batch_shape, _instance)
        expand_probs_or_logits(new, self, new.batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        from ..ops.creation import zeros_like

        return zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = dt.finfo(self.probs.dtype).tiny
        with _grad_mode.no_grad():
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        from ..ops.ternary import where

        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # a sure success scores 0 at value 0 (not 0 * log(0) = nan)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits

        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
