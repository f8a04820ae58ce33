"""HalfNormal(scale): |X| for X ~ Normal(0, scale) (half_symmetric.py builds it)."""

from __future__ import annotations

import math

from .._tensor import Tensor
from .half_symmetric import HalfSymmetric
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(HalfSymmetric):
    _base = Normal

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
