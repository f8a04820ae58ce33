"""`HalfSymmetric`: |X| for X ~ Base(0, scale), a family symmetric about 0 (HalfCauchy's
Cauchy, HalfNormal's Normal), as PyTorch builds them: a TransformedDistribution (an
AbsTransform of the base) with the base's density doubled on [0, inf)."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..ops.creation import as_tensor, zeros_like
from ..ops.ternary import where
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import delegated

__all__ = ["HalfSymmetric"]


class HalfSymmetric(TransformedDistribution):
    """A subclass names its base family (`_base`) and gives the mean and variance."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: type
    # NOTE: torch's HalfCauchy casts a scored value to the scale's dtype first (as_tensor);
    # its HalfNormal does not (a float64 value then scores in float64)
    _cast_value = False

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    scale = delegated("base_dist", "scale")

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        if self._cast_value:
            value = as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
