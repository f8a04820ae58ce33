"""Bernoulli(probs | logits): a coin per batch element, scored through the stable
log-sigmoid form (binary cross-entropy with logits)."""

from __future__ import annotations

from .. import _grad_mode
from .._tensor import Size, Tensor
from ..ops.bernoulli import bernoulli
from ..ops.creation import arange
from . import constraints
from .exp_family import ExponentialFamily
from .probs_logits import BinaryProbsLogits, expand_probs_or_logits, set_probs_or_logits
from .utils import broadcast_all

__all__ = ["Bernoulli"]


def _bce_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    from ..nn.functional import binary_cross_entropy_with_logits

    return binary_cross_entropy_with_logits(logits, target, reduction="none")


class Bernoulli(BinaryProbsLogits, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        set_probs_or_logits(self, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Bernoulli, batch_shape, _instance)
        expand_probs_or_logits(new, self, new.batch_shape)
        return new

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        from ..ops.ternary import where

        m = (self.probs >= 0.5).to(self.probs)
        return where(self.probs == 0.5, float("nan"), m)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with _grad_mode.no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self) -> Tensor:
        return _bce_with_logits(self.logits, self.probs)

    @property
    def _natural_params(self) -> tuple:
        return (self.probs.logit(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp().log1p()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
